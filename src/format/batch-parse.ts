/**
 * Framing and validating record batches in a buffer that arrived from outside: a produce
 * request, a segment file, a WAL frame. Checks here are the cheap, whole-batch ones (framing,
 * size, magic, CRC, header fields); the records themselves are validated by
 * RecordBatch.records(), which needs to walk them anyway.
 */
import { CorruptRecordError, FerryError } from '../errors.ts';
import { assert } from '../util/assert.ts';
import { crc32c } from './crc32c/index.ts';
import { compressionCodecOf } from './compression.ts';
import {
  ATTRIBUTES_OFFSET,
  BASE_OFFSET_OFFSET,
  BASE_TIMESTAMP_OFFSET,
  BATCH_LENGTH_MIN_BYTES,
  BATCH_LENGTH_OFFSET,
  COMPRESSION_CODEC_MASK,
  CRC_COVERED_FROM,
  CRC_OFFSET,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD_BYTES,
  MAGIC_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  PRODUCER_ID_OFFSET,
  RECORD_BATCH_HEADER_BYTES,
  RECORD_BATCH_MAGIC,
  RECORDS_COUNT_OFFSET,
  RecordBatch,
} from './record-batch.ts';

/** The smallest record: length, attributes, timestampDelta, offsetDelta, keyLength, valueLen, headerCount. */
export const RECORD_MIN_BYTES = 7;

function readInt32At(buffer: Uint8Array, position: number): number {
  return (buffer[position]! << 24) | (buffer[position + 1]! << 16) | (buffer[position + 2]! << 8) | buffer[position + 3]!;
}

function hex32(value: number): string {
  return `0x${(value >>> 0).toString(16).padStart(8, '0')}`;
}

/**
 * The batch starting at `position` in `buffer`, validated, as a view sharing `buffer`'s memory.
 * Returns null when the buffer ends before the whole batch (the caller reads more, or treats it
 * as a torn tail). Throws CorruptRecordError when the bytes are there but wrong, and
 * FerryError('RecordTooLarge') for a batch over `maxBatchBytes`; both are decided from the first
 * 12 bytes where they can be, so a caller never buffers a batch it will reject.
 */
export function parseBatchAt(buffer: Uint8Array, position: number, maxBatchBytes: number): RecordBatch | null {
  assert(Number.isSafeInteger(position) && position >= 0, `batch position ${position} is not a byte index`);
  const remaining = buffer.length - position;
  if (remaining < LOG_OVERHEAD_BYTES) return null;
  const batchLength = readInt32At(buffer, position + BATCH_LENGTH_OFFSET);
  if (batchLength < BATCH_LENGTH_MIN_BYTES) {
    throw new CorruptRecordError('batchLength', position, `batchLength ${batchLength} at byte ${position + BATCH_LENGTH_OFFSET} is below the minimum ${BATCH_LENGTH_MIN_BYTES}`);
  }
  const sizeInBytes = LOG_OVERHEAD_BYTES + batchLength;
  if (sizeInBytes > maxBatchBytes) {
    throw new FerryError('RecordTooLarge', `record batch at byte ${position} is ${sizeInBytes} bytes, over the maximum of ${maxBatchBytes} bytes`);
  }
  if (remaining < sizeInBytes) return null;
  const magic = (buffer[position + MAGIC_OFFSET]! << 24) >> 24;
  if (magic !== RECORD_BATCH_MAGIC) {
    throw new CorruptRecordError('magic', position, `magic ${magic} at byte ${position + MAGIC_OFFSET}: only record batch v${RECORD_BATCH_MAGIC} is supported`);
  }
  const bytes = buffer.subarray(position, position + sizeInBytes);
  checkCrc(bytes, position);
  const batch = new RecordBatch(bytes, position);
  checkHeader(batch);
  return batch;
}

function checkCrc(bytes: Uint8Array, position: number): void {
  const stored = readInt32At(bytes, CRC_OFFSET) >>> 0;
  const computed = crc32c(bytes.subarray(CRC_COVERED_FROM));
  if (stored !== computed) {
    throw new CorruptRecordError(
      'crc',
      position,
      `crc at byte ${position + CRC_OFFSET} is ${hex32(stored)}, expected ${hex32(computed)} over bytes ${position + CRC_COVERED_FROM}..${position + bytes.length}`,
    );
  }
}

/** Header fields the CRC cannot vouch for: ones a buggy producer could have written wrong. */
function checkHeader(batch: RecordBatch): void {
  const position = batch.position;
  const corrupt = (field: string, offset: number, detail: string): CorruptRecordError => new CorruptRecordError(field, position, `${field} at byte ${position + offset} ${detail}`);
  if (compressionCodecOf(batch.attributes & COMPRESSION_CODEC_MASK) === undefined) {
    throw corrupt('attributes', ATTRIBUTES_OFFSET, `has unknown compression type id ${batch.attributes & COMPRESSION_CODEC_MASK}`);
  }
  const lastOffsetDelta = batch.lastOffsetDelta;
  if (lastOffsetDelta < 0) throw corrupt('lastOffsetDelta', LAST_OFFSET_DELTA_OFFSET, `is negative: ${lastOffsetDelta}`);
  checkSafeInt64(batch.baseOffset, () => corrupt('baseOffset', BASE_OFFSET_OFFSET, 'is outside the safe integer range'));
  checkSafeInt64(batch.lastOffset, () => corrupt('lastOffsetDelta', LAST_OFFSET_DELTA_OFFSET, 'puts lastOffset outside the safe integer range'));
  checkSafeInt64(batch.baseTimestamp, () => corrupt('baseTimestamp', BASE_TIMESTAMP_OFFSET, 'is outside the safe integer range'));
  checkSafeInt64(batch.maxTimestamp, () => corrupt('maxTimestamp', MAX_TIMESTAMP_OFFSET, 'is outside the safe integer range'));
  checkSafeInt64(batch.producerId, () => corrupt('producerId', PRODUCER_ID_OFFSET, 'is outside the safe integer range'));
  checkRecordCount(batch, (detail) => corrupt('recordCount', RECORDS_COUNT_OFFSET, detail));
}

function checkSafeInt64(value: number, error: () => CorruptRecordError): void {
  if (!Number.isSafeInteger(value)) throw error();
}

/**
 * Each record has its own offsetDelta in [0, lastOffsetDelta], and an uncompressed record takes
 * at least RECORD_MIN_BYTES: a count beyond either is a lie, caught before anyone iterates.
 */
function checkRecordCount(batch: RecordBatch, corrupt: (detail: string) => CorruptRecordError): void {
  const recordCount = batch.recordCount;
  if (recordCount < 0) throw corrupt(`is negative: ${recordCount}`);
  if (recordCount > batch.lastOffsetDelta + 1) {
    throw corrupt(`${recordCount} exceeds lastOffsetDelta ${batch.lastOffsetDelta} + 1`);
  }
  const recordsBytes = batch.sizeInBytes - RECORD_BATCH_HEADER_BYTES;
  if (batch.compression === 'none' && recordCount * RECORD_MIN_BYTES > recordsBytes) {
    throw corrupt(`${recordCount} records cannot fit in ${recordsBytes} bytes`);
  }
}

/**
 * A buffer that must hold whole valid batches and nothing else (a produce request's records),
 * split into views sharing its memory. A trailing partial batch is corrupt here, not torn.
 */
export function splitBatches(buffer: Uint8Array, maxBatchBytes: number): RecordBatch[] {
  if (buffer.length === 0) throw new FerryError('InvalidArgument', 'records are empty: expected at least one record batch');
  const batches: RecordBatch[] = [];
  let position = 0;
  // Bounded: every batch advances by at least RECORD_BATCH_HEADER_BYTES.
  while (position < buffer.length) {
    const batch = parseBatchAt(buffer, position, maxBatchBytes);
    if (batch === null) throw truncatedAt(buffer, position);
    batches.push(batch);
    position += batch.sizeInBytes;
  }
  return batches;
}

function truncatedAt(buffer: Uint8Array, position: number): CorruptRecordError {
  const remaining = buffer.length - position;
  const needed = remaining < LOG_OVERHEAD_BYTES ? LOG_OVERHEAD_BYTES : LOG_OVERHEAD_BYTES + readInt32At(buffer, position + BATCH_LENGTH_OFFSET);
  return new CorruptRecordError('batchLength', position, `truncated: ${remaining} bytes of ${needed}`);
}
