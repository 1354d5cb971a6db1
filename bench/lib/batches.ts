import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { SeededRandom } from './random.ts';

/** Kafka's producer default `batch.size`: a batch is closed before it would exceed this. */
export const PRODUCER_BATCH_BYTES_MAX = 16 * 1024;
/** Any fixed instant, for benches where timestamps do not affect what is measured (retention runs none). */
const BATCH_TIMESTAMP_MS = 1_700_000_000_000;
const PAYLOAD_SEED = 0xfe77;

export interface BenchBatch {
  readonly bytes: Uint8Array;
  readonly recordCount: number;
  readonly valueBytes: number;
}

/**
 * One uncompressed v2 batch of records with `valueBytes` random bytes of value each (no key,
 * no headers, as kafka-producer-perf-test's --record-size), `recordCount` of them.
 */
export function buildBenchBatch(valueBytes: number, recordCount: number, nowMs = BATCH_TIMESTAMP_MS): BenchBatch {
  const random = new SeededRandom(PAYLOAD_SEED + valueBytes);
  const records = Array.from({ length: recordCount }, () => ({ value: random.fill(new Uint8Array(valueBytes)) }));
  return { bytes: buildRecordBatch(records, { nowMs }), recordCount, valueBytes };
}

/**
 * The fullest batch of `valueBytes` records that stays within `batchBytesMax`, as a producer fills
 * one, its records stamped `nowMs` (a bench where retention runs passes the run's own time).
 */
export function buildFullBatch(valueBytes: number, batchBytesMax = PRODUCER_BATCH_BYTES_MAX, nowMs = BATCH_TIMESTAMP_MS): BenchBatch {
  let recordCount = Math.max(1, Math.floor(batchBytesMax / valueBytes));
  let batch = buildBenchBatch(valueBytes, recordCount, nowMs);
  while (batch.bytes.length > batchBytesMax && recordCount > 1) {
    recordCount--;
    batch = buildBenchBatch(valueBytes, recordCount, nowMs);
  }
  return batch;
}
