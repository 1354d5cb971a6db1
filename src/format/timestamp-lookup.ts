import type { RecordBatch } from './record-batch.ts';

/** A record found by its timestamp: ListOffsets answers both (Kafka's TimestampAndOffset). */
export interface TimestampAndOffset {
  readonly offset: number;
  readonly timestamp: number;
}

/**
 * The first record of `batch` at or above offset `from` whose timestamp reaches `timestamp`, as
 * Kafka's ListOffsets finds it: by record, not by batch (a batch's maxTimestamp only says that
 * some record of it reaches the timestamp). Null if none does. A LogAppendTime batch's records
 * all carry its maxTimestamp. Snappy and LZ4 batches are not decompressed here (Ferry keeps
 * batches as producers sent them and reads neither codec yet): their first record at or above
 * `from` stands in, with the batch's maxTimestamp, which can answer an offset a few records early.
 */
export function firstRecordAtOrAfter(batch: RecordBatch, timestamp: number, from: number): TimestampAndOffset | null {
  if (batch.maxTimestamp < timestamp || batch.lastOffset < from) return null;
  if (batch.timestampType === 'LogAppendTime' || batch.compression === 'snappy' || batch.compression === 'lz4') {
    return { offset: Math.max(batch.baseOffset, from), timestamp: batch.maxTimestamp };
  }
  for (const record of batch.records()) {
    if (record.offset >= from && record.timestamp >= timestamp) return { offset: record.offset, timestamp: record.timestamp };
  }
  return null;
}
