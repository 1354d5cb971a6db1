import { isFerryError } from '../errors.ts';
import type { EpochEntry } from '../log/leader-epoch-cache.ts';
import { checkedSnapshot } from '../log/producer-state.ts';
import type { MetricsRegistry } from '../metrics/index.ts';
import type { Logger } from '../observability/logger.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { bytesEqual } from '../util/bytes.ts';
import type { Uuid } from '../util/uuid.ts';
import { tieredSegmentKey } from './keys.ts';
import { type TieredSegmentSummary, verifySection } from './segment-object.ts';
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
  /** Set when the last tiered segment's producer state is corrupt in the store: `producers` is null, and this says what was lost. */
  readonly producersLost?: ProducerStateLoss;
}

/** A last tiered segment whose producer state is unreadable for good: the rebuild goes on without it (de-duplication state only, no records). */
export interface ProducerStateLoss {
  /** The tiered segment object's key. */
  readonly segmentKey: string;
  /** What failed: the section's checksum, or its decoding as the snapshot at the segment's end. */
  readonly reason: string;
}

/**
 * Reads of the producers section at most, while each answer is unusable and differs from the one
 * before: a byte flipped on the way changes between reads, a corrupt object answers the same bytes
 * twice. Each read is one ranged GET of a small section, made only after a failed check.
 */
const PRODUCERS_READS_MAX = 3;
/** The counter of rebuilds that started without the tiered producer state (docs/metrics.md). */
export const PRODUCER_STATE_LOST_METRIC = 'ferry_tier_producer_state_lost_total';

/**
 * [K2] What a rebuild of `topicId`/`partition` starts from: the tier record's tiered end, its
 * segments' leader epochs and the last segment's producer state (one ranged GET, checked against
 * its XXH64 and decoded); null when nothing was ever tiered (the rebuild reads the whole chain, as
 * before tiering). A producer state the store holds corrupt is left out (`producersLost`): a
 * partition is still taken over. A store error throws: a blip gives nothing up.
 */
export async function tierStartOf(records: TierRecords, store: ObjectStore, prefix: string, topicId: Uuid, partition: number): Promise<TierStart | null> {
  const record = await records.read(topicId, partition);
  const segments = copiedSegments(record);
  const last = segments.at(-1);
  // Retention took every tiered segment: the log still starts at its start, never again at 0 (its records are gone for good).
  if (last === undefined) return record.startOffset > 0 ? { offset: record.startOffset, epochs: [], producers: null } : null;
  const key = tieredSegmentKey(prefix, topicId, partition, last.baseOffset, last.endOffset, last.uploadId);
  const start = { offset: tieredEnd(record), epochs: mergedEpochs(segments) };
  const producers = await readProducers(store, key, last, start.offset);
  return producers instanceof Uint8Array ? { ...start, producers } : { ...start, producers: null, producersLost: { segmentKey: key, reason: producers.reason } };
}

/**
 * The producers section of `segment` (object `key`) as the state at `offset`, or why the store holds it corrupt: the same
 * unusable bytes read twice (PRODUCERS_READS_MAX). Throws what the store throws, a read that was not
 * whole (a length other than the section's), and unusable answers that never repeat (the path
 * corrupts them, not the store): those are not the object's fault, and retrying may succeed.
 */
async function readProducers(store: ObjectStore, key: string, segment: CopiedSegment, offset: number): Promise<Uint8Array | { reason: string }> {
  const section = segment.sections.producers!;
  const summary = summaryOf(segment);
  let previous: Uint8Array | null = null;
  let failure: unknown;
  for (let read = 0; read < PRODUCERS_READS_MAX; read++) {
    const { body } = await store.get(key, { range: { start: section.position, end: section.position + section.length } });
    if (body.length !== section.length) verifySection('producers', body, summary); // throws: a short read proves nothing of the object
    const corruption = producersCorruption(body, summary, offset);
    if (corruption === null) return body;
    if (previous !== null && bytesEqual(previous, body)) return { reason: corruption.message };
    [previous, failure] = [body, corruption];
  }
  throw failure;
}

/** The CorruptObject error of a whole producers section that fails its checksum or is no snapshot at `offset` (the tiered end); null when usable. */
function producersCorruption(body: Uint8Array, summary: TieredSegmentSummary, offset: number): Error | null {
  try {
    verifySection('producers', body, summary);
    checkedSnapshot(body, offset); // as PartitionLog.startAt will decode it: a checksum computed over garbage at upload passes the first check
    return null;
  } catch (error) {
    if (isFerryError(error, 'CorruptObject')) return error;
    throw error;
  }
}

/**
 * Says that a rebuild of `topic`-`partition` starts at the tiered end without the producer state
 * `start.producersLost` names, in one warning and PRODUCER_STATE_LOST_METRIC. No record is lost:
 * only de-duplication below the tiered end, so a producer's retry of a batch from before it may be
 * appended again. A rebuild that restarts after racing GC [K2] reads the tier again and counts again.
 */
export function reportProducerStateLost(report: { logger: Logger; metrics: MetricsRegistry | undefined }, topic: string, partition: number, start: TierStart): void {
  const loss = start.producersLost;
  if (loss === undefined) return;
  report.metrics?.counter(PRODUCER_STATE_LOST_METRIC, "Rebuilds that started at the tiered end without its producer state (the last tiered segment's was corrupt)").add();
  report.logger.warn(
    { component: 'tier', topic, partition, segment: loss.segmentKey, tieredEnd: start.offset },
    `${topic}-${partition}: the producer state of tiered segment ${loss.segmentKey} is corrupt in the store (${loss.reason}): the log starts at the tiered end ${start.offset} without it; no record is lost, only de-duplication state (a producer's retry of a batch below ${start.offset} may be appended again)`,
  );
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
