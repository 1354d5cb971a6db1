import { decodeControlRecord } from '../control/control-record.ts';
import { ControlStore } from '../control/control-store.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { tieredSegmentKey } from '../tier/keys.ts';
import { decodeTieredSegment } from '../tier/segment-object.ts';
import { copiedSegments, type CopiedSegment, type TierRecord, TierRecords, tieredEnd } from '../tier/tier-record.ts';
import type { ReadRecord, TieredPartition, TieredSegment, TierRecordWrite } from './history.ts';
import { retriedRead } from './wal-audit.ts';
import { batchValues } from './batch-values.ts';
import type { RunFor } from './workload.ts';

/** Tier records are control records (ControlStore's root, no cluster prefix in the simulation): `control/tier/<topicId>/<partition>`. */
const TIER_RECORD_KEY = /^control\/tier\/([^/]+)\/(\d+)$/;
/** How long the audit's reads of the tier may take (simulated ms), as the WAL audit's. */
const AUDIT_READ_MS_MAX = 600_000;

/**
 * Every tier record write that took effect, in the store's order: told by the shared store itself
 * (MemoryStore's onPut), so a write whose answer a fault lost is there too, and no broker's view
 * of its answers decides what the record's history was.
 */
export class TierRecordWrites {
  readonly writes: TierRecordWrite[] = [];
  readonly #nowMs: () => number;

  /** `nowMs`: simulated ms on the ops' time base. */
  constructor(nowMs: () => number) {
    this.#nowMs = nowMs;
  }

  /** A put of `body` to `key` took effect (any key: only tier records are kept). */
  put(key: string, body: Uint8Array): void {
    const match = TIER_RECORD_KEY.exec(key);
    if (match === null) return;
    const record = decodeControlRecord<TierRecord>(body).value;
    const segments = record.segments.map(({ baseOffset, endOffset, uploadId, leaderEpoch, state }) => ({ baseOffset, endOffset, uploadId, leaderEpoch, state }));
    const merging =
      record.merging === undefined
        ? {}
        : { merging: { baseOffset: record.merging.baseOffset, endOffset: record.merging.endOffset, uploadId: record.merging.uploadId, leaderEpoch: record.merging.leaderEpoch } };
    this.writes.push({ topicId: match[1]!, partition: Number(match[2]), atMs: this.#nowMs(), leaderEpoch: record.leaderEpoch, segments, ...merging });
  }
}

/** A partition of a final topic, with the incarnation its final leader serves. */
export interface TierAuditTarget {
  readonly topic: string;
  readonly partition: number;
  readonly topicId: string;
}

/**
 * Reads the final tier of each target: its tier record (through `control`, a view without
 * faults of the store the records live in) and every copied segment's object (through `tier`),
 * each decoded whole with decodeTieredSegment. Store faults of the shared store are retried.
 */
export async function auditTier(tier: ObjectStore, control: ObjectStore, targets: readonly TierAuditTarget[], runFor: RunFor): Promise<TieredPartition[]> {
  const records = new TierRecords(new ControlStore(control, ''));
  const audited: TieredPartition[] = [];
  let done = false;
  const read = async () => {
    for (const target of targets) {
      const record = await retriedRead(() => records.read(target.topicId, target.partition));
      audited.push(await auditPartition(tier, target, record));
    }
    done = true;
  };
  const reading = read();
  await runFor(AUDIT_READ_MS_MAX, () => done);
  await reading;
  return audited;
}

async function auditPartition(tier: ObjectStore, target: TierAuditTarget, record: TierRecord): Promise<TieredPartition> {
  const counted = new Set(copiedSegments(record).map((segment) => segment.uploadId));
  const segments: TieredSegment[] = [];
  for (const entry of record.segments) {
    if (entry.state !== 'copied') continue;
    segments.push(await auditSegment(tier, target, entry, counted.has(entry.uploadId)));
  }
  return { ...target, startOffset: record.startOffset, tieredEnd: tieredEnd(record), segments };
}

async function auditSegment(tier: ObjectStore, target: TierAuditTarget, entry: CopiedSegment, counted: boolean): Promise<TieredSegment> {
  const { baseOffset, endOffset, uploadId, leaderEpoch } = entry;
  const about = { baseOffset, endOffset, uploadId, leaderEpoch, counted };
  const key = tieredSegmentKey('', target.topicId, target.partition, baseOffset, endOffset, uploadId);
  const body = await retriedRead(() => tier.get(key)).then(
    (result) => result.body,
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );
  if (typeof body === 'string') return { ...about, batches: [], records: [], problem: `object ${key} not read: ${body}` };
  let decoded: ReturnType<typeof decodeTieredSegment>;
  try {
    decoded = decodeTieredSegment(body);
  } catch (error) {
    return { ...about, batches: [], records: [], problem: `object ${key} does not decode: ${error instanceof Error ? error.message : String(error)}` };
  }
  const { summary } = decoded;
  if (summary.baseOffset !== baseOffset || summary.endOffset !== endOffset) {
    return { ...about, batches: [], records: [], problem: `object ${key} holds [${summary.baseOffset}, ${summary.endOffset}), its entry names [${baseOffset}, ${endOffset})` };
  }
  const records: ReadRecord[] = [];
  for (const batch of decoded.batches) {
    for (const { offset, value } of batchValues(batch)) records.push({ offset, value });
  }
  return { ...about, batches: decoded.batches.map((batch) => ({ baseOffset: batch.baseOffset, lastOffset: batch.lastOffset, bytes: batch.bytes })), records, problem: null };
}
