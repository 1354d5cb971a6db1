import type { EpochEntry } from '../log/leader-epoch-cache.ts';
import type { ObjectStore } from '../store/object-store.ts';
import type { Uuid } from '../util/uuid.ts';
import { tieredSegmentKey } from './keys.ts';
import { verifySection, type TieredSegmentSummary } from './segment-object.ts';
import { type CopiedSegment, copiedSegments, type TierRecords, tieredEnd } from './tier-record.ts';

/** Where a log rebuilt from the tail starts (docs/tier-protocol.md [K2]): the tiered end, with what the tier knows up to it. */
export interface TierStart {
  readonly offset: number;
  /** Every leader epoch of the tiered history, oldest first (OffsetForLeaderEpoch below the tail). */
  readonly epochs: readonly EpochEntry[];
  /** The producer state at `offset`: the last tiered segment's snapshot; null when retention took every segment (and the producers' last batches with them). */
  readonly producers: Uint8Array | null;
  /**
   * A start below the tiered end (the tier's objects could not be read, so the rebuild starts at
   * the record's start): the tiered end, which the rebuilt log must reach, else WAL GC took frames
   * it needs and it is no log to serve (review6). Absent: the start is the tiered end itself.
   */
  readonly mustReach?: number;
}

/**
 * [K2] What a rebuild of `topicId`/`partition` starts from: the tier record's tiered end, its
 * segments' leader epochs and the last segment's producer state (one ranged GET, checked against
 * its XXH64); null when nothing was ever tiered (the rebuild reads the whole chain, as before tiering).
 */
export async function tierStartOf(records: TierRecords, store: ObjectStore, prefix: string, topicId: Uuid, partition: number): Promise<TierStart | null> {
  const record = await records.read(topicId, partition);
  const segments = copiedSegments(record);
  const last = segments.at(-1);
  // Retention took every tiered segment: the log still starts at its start, never again at 0 (its records are gone for good).
  if (last === undefined) return record.startOffset > 0 ? { offset: record.startOffset, epochs: [], producers: null } : null;
  const section = last.sections.producers!;
  const key = tieredSegmentKey(prefix, topicId, partition, last.baseOffset, last.endOffset, last.uploadId);
  const { body } = await store.get(key, { range: { start: section.position, end: section.position + section.length } });
  verifySection('producers', body, summaryOf(last));
  return { offset: tieredEnd(record), epochs: mergedEpochs(segments), producers: body };
}

/** The leader epochs of consecutive segments as one history: each epoch once, from where it started. */
export function mergedEpochs(segments: readonly CopiedSegment[]): EpochEntry[] {
  const merged: EpochEntry[] = [];
  for (const segment of segments) {
    for (const entry of segment.epochs) if (merged.at(-1) === undefined || entry.epoch > merged.at(-1)!.epoch) merged.push(entry);
  }
  return merged;
}

function summaryOf(segment: CopiedSegment): TieredSegmentSummary {
  return { baseOffset: segment.baseOffset, endOffset: segment.endOffset, bytes: segment.bytes, maxTimestamp: segment.maxTimestamp, sections: segment.sections as TieredSegmentSummary['sections'] };
}
