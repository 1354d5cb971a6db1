import { BATCH_LENGTH_OFFSET, LOG_OVERHEAD_BYTES, RECORD_BATCH_HEADER_BYTES, RecordBatch } from '../format/record-batch.ts';
import { isAckedAll, type PartitionHistory } from './history-index.ts';
import type { LogBatch } from './history.ts';

/** One batch of a partition as a log stores it: its offsets, its size, and its max timestamp where its bytes are at hand. */
export interface StoredBatch {
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly sizeBytes: number;
  /** The batch header's maxTimestamp (CreateTime, or the leader's stamp with LogAppendTime); null: its bytes are not known. */
  readonly maxTimestampMs: number | null;
}

/**
 * The batches of one partition incarnation that the run's data shows, by base and by last offset:
 * every final replica log's (a follower's too), every tier segment that read back whole, and every
 * acks=all batch its producer sent (its size only). Replicas hold a batch byte for byte
 * (follower-prefix), so any copy gives its size. What retention counts as a log's size.
 */
export class StoredBatches {
  readonly #byBase = new Map<number, StoredBatch>();
  readonly #byLast = new Map<number, StoredBatch>();

  constructor(partition: PartitionHistory) {
    for (const log of partition.replicaLogs) for (const batch of log.batches) this.#addBytes(batch);
    for (const segment of partition.tier?.segments ?? []) if (segment.problem === null) for (const batch of segment.batches) this.#addBytes(batch);
    for (const op of partition.produces) {
      if (!isAckedAll(op) || op.baseOffset === null || op.batchBytes === undefined || op.batchBytes <= 0) continue;
      this.#add({ baseOffset: op.baseOffset, lastOffset: op.baseOffset + op.values.length - 1, sizeBytes: op.batchBytes, maxTimestampMs: null });
    }
  }

  /**
   * The bytes of the batches that tile [fromOffset, toOffset) exactly; null when the data does not
   * show all of them (a batch missing, or one reaching past toOffset). Stops counting at `enoughBytes`.
   */
  bytesBetween(fromOffset: number, toOffset: number, enoughBytes = Infinity): number | null {
    let bytes = 0;
    let offset = fromOffset;
    while (offset < toOffset && bytes < enoughBytes) {
      const batch = this.#byBase.get(offset);
      if (batch === undefined) return null;
      bytes += batch.sizeBytes;
      offset = batch.lastOffset + 1;
    }
    return offset > toOffset ? null : bytes;
  }

  /** The batch whose last offset is `lastOffset`, if the data shows it. */
  endingAt(lastOffset: number): StoredBatch | undefined {
    return this.#byLast.get(lastOffset);
  }

  #addBytes(batch: LogBatch): void {
    this.#add({ baseOffset: batch.baseOffset, lastOffset: batch.lastOffset, sizeBytes: batch.bytes.length, maxTimestampMs: maxTimestampOf(batch.bytes) });
  }

  /** The first copy with a timestamp wins: copies agree on everything else. */
  #add(batch: StoredBatch): void {
    const known = this.#byBase.get(batch.baseOffset);
    if (known !== undefined && (known.maxTimestampMs !== null || batch.maxTimestampMs === null)) return;
    this.#byBase.set(batch.baseOffset, batch);
    this.#byLast.set(batch.lastOffset, batch);
  }
}

/** A batch's maxTimestamp, if its bytes are a whole record batch (hand-built histories carry other bytes). */
function maxTimestampOf(bytes: Uint8Array): number | null {
  if (bytes.length < RECORD_BATCH_HEADER_BYTES) return null;
  const batchLength = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getInt32(BATCH_LENGTH_OFFSET);
  return LOG_OVERHEAD_BYTES + batchLength === bytes.length ? new RecordBatch(bytes).maxTimestamp : null;
}
