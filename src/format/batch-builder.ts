/**
 * Building one record batch v2 for the embedded producer, byte for byte as Kafka's producer
 * lays it out (MemoryRecordsBuilder): offsetDelta = index, baseTimestamp = the first record's
 * timestamp, record attributes 0. Sizes are computed first so an uncompressed batch is written
 * into one exactly-sized buffer; a compressed one encodes its records, compresses them, then
 * assembles header and compressed bytes.
 */
import { FerryError } from '../errors.ts';
import { assert } from '../util/assert.ts';
import { crc32c } from './crc32c/index.ts';
import { type BuildCompressionCodec, compress, compressionIdOf } from './compression.ts';
import {
  ATTRIBUTES_OFFSET,
  BASE_OFFSET_OFFSET,
  BASE_SEQUENCE_OFFSET,
  BASE_TIMESTAMP_OFFSET,
  BATCH_LENGTH_OFFSET,
  CRC_COVERED_FROM,
  CRC_OFFSET,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD_BYTES,
  MAGIC_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  NO_PARTITION_LEADER_EPOCH,
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  NO_SEQUENCE,
  PARTITION_LEADER_EPOCH_OFFSET,
  PRODUCER_EPOCH_OFFSET,
  PRODUCER_ID_OFFSET,
  RECORD_BATCH_HEADER_BYTES,
  RECORD_BATCH_MAGIC,
  RECORDS_COUNT_OFFSET,
  TRANSACTIONAL_FLAG_MASK,
  writeInt64,
} from './record-batch.ts';
import { sizeOfVarint, sizeOfVarlong, writeVarint, writeVarlong } from './varint.ts';

export type ProducerBytes = Uint8Array | string | null;

export interface ProducerHeader {
  key: string;
  value: ProducerBytes;
}

/** One record to produce: a value, and optionally a key, headers and a timestamp. */
export interface ProducerRecord {
  /** The record's key (a string is UTF-8): keyed records go to a partition by its murmur2 hash; none by default. */
  key?: ProducerBytes;
  /** The record's value (a string is UTF-8); null for a tombstone. */
  value: ProducerBytes;
  /** A list (keys may repeat, order kept) or an object (one value per key). */
  headers?: ProducerHeader[] | { [key: string]: ProducerBytes };
  /** Milliseconds since the epoch; BuildOptions.nowMs when absent. */
  timestamp?: number;
}

export interface BuildOptions {
  /** The timestamp of records without one: the caller's clock, so format/ never reads time. */
  nowMs: number;
  compression?: BuildCompressionCodec;
  baseOffset?: number;
  partitionLeaderEpoch?: number;
  producerId?: number;
  producerEpoch?: number;
  baseSequence?: number;
  isTransactional?: boolean;
}

/** batchLength is an int32: no batch can be larger. */
export const BATCH_BYTES_MAX = 0x7fff_ffff;
const NULL_LENGTH = -1;
const INT32_MAX = 0x7fff_ffff;
const INT16_MIN = -0x8000;
const INT16_MAX = 0x7fff;

const utf8Encoder = new TextEncoder();
/**
 * Strings up to this many UTF-16 units are measured and encoded in a JS loop; longer ones by
 * Buffer.byteLength and TextEncoder.encodeInto, whose per-call cost (~100 ns with the subarray)
 * only pays off on longer strings.
 */
const SHORT_STRING_MAX_CHARS = 64;
const REPLACEMENT_CHARACTER = 0xfffd;

/** A record with its strings measured, headers flattened, and timestamp resolved. */
interface PlannedRecord {
  timestamp: number;
  key: ProducerBytes;
  value: ProducerBytes;
  headers: ProducerHeader[];
  /** Bytes after the length varint. */
  bodyBytes: number;
}

/** One Kafka record batch v2 holding `records`, offsets from options.baseOffset (default 0). */
export function buildRecordBatch(records: readonly ProducerRecord[], options: BuildOptions): Uint8Array {
  checkOptions(records, options);
  const planned = planRecords(records, options.nowMs);
  const recordsBytes = planned.reduce((sum, record) => sum + sizeOfVarint(record.bodyBytes) + record.bodyBytes, 0);
  const codec = options.compression ?? 'none';
  let batch: Uint8Array;
  if (codec === 'none') {
    batch = allocateBatch(recordsBytes);
    writeRecords(planned, batch, RECORD_BATCH_HEADER_BYTES);
  } else {
    const encoded = new Uint8Array(recordsBytes);
    writeRecords(planned, encoded, 0);
    const compressed = compress(codec, encoded);
    batch = allocateBatch(compressed.length);
    batch.set(compressed, RECORD_BATCH_HEADER_BYTES);
  }
  writeHeader(batch, planned, options);
  return batch;
}

function allocateBatch(recordsBytes: number): Uint8Array {
  const size = RECORD_BATCH_HEADER_BYTES + recordsBytes;
  if (size > BATCH_BYTES_MAX) {
    throw new FerryError('RecordTooLarge', `record batch of ${size} bytes exceeds the int32 limit of ${BATCH_BYTES_MAX} bytes`);
  }
  return new Uint8Array(size);
}

function invalid(message: string): FerryError {
  return new FerryError('InvalidArgument', message);
}

function checkOptions(records: readonly ProducerRecord[], options: BuildOptions): void {
  if (records.length === 0) throw invalid('a record batch needs at least one record');
  if (records.length - 1 > INT32_MAX) throw invalid(`${records.length} records do not fit one batch`);
  checkInteger('nowMs', options.nowMs, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  const baseOffset = options.baseOffset ?? 0;
  checkInteger('baseOffset', baseOffset, 0, Number.MAX_SAFE_INTEGER - records.length);
  checkInteger('partitionLeaderEpoch', options.partitionLeaderEpoch ?? NO_PARTITION_LEADER_EPOCH, -1, INT32_MAX);
  checkInteger('producerId', options.producerId ?? NO_PRODUCER_ID, -1, Number.MAX_SAFE_INTEGER);
  checkInteger('producerEpoch', options.producerEpoch ?? NO_PRODUCER_EPOCH, INT16_MIN, INT16_MAX);
  checkInteger('baseSequence', options.baseSequence ?? NO_SEQUENCE, -1, INT32_MAX);
  const codec = options.compression ?? 'none';
  if (codec !== 'none' && codec !== 'gzip' && codec !== 'zstd') throw invalid(`cannot build a ${String(codec)} batch`);
}

function checkInteger(name: string, value: number, min: number, max: number): void {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw invalid(`${name} ${value} is not an integer in [${min}, ${max}]`);
  }
}

function planRecords(records: readonly ProducerRecord[], nowMs: number): PlannedRecord[] {
  const planned: PlannedRecord[] = [];
  const baseTimestamp = records[0]!.timestamp ?? nowMs;
  for (let index = 0; index < records.length; index++) {
    const record = records[index]!;
    const timestamp = record.timestamp ?? nowMs;
    if (!Number.isSafeInteger(timestamp)) throw invalid(`record ${index} timestamp ${timestamp} is not a safe integer`);
    const timestampDelta = timestamp - baseTimestamp;
    if (!Number.isSafeInteger(timestampDelta)) throw invalid(`record ${index} timestamp ${timestamp} is too far from ${baseTimestamp}`);
    const key = record.key ?? null;
    const value = record.value;
    const headers = headersOf(record.headers, index);
    let bodyBytes = 1 + sizeOfVarlong(timestampDelta) + sizeOfVarint(index);
    bodyBytes += sizeOfBytesField(key) + sizeOfBytesField(value) + sizeOfVarint(headers.length);
    for (const header of headers) bodyBytes += sizeOfBytesField(header.key) + sizeOfBytesField(header.value);
    if (bodyBytes > BATCH_BYTES_MAX) throw invalid(`record ${index} of ${bodyBytes} bytes exceeds the int32 limit`);
    planned.push({ timestamp, key, value, headers, bodyBytes });
  }
  return planned;
}

function headersOf(headers: ProducerRecord['headers'], index: number): ProducerHeader[] {
  if (headers === undefined) return [];
  const list = Array.isArray(headers) ? headers : Object.entries(headers).map(([key, value]) => ({ key, value }));
  for (const header of list) {
    if (typeof header.key !== 'string') throw invalid(`record ${index} has a header whose key is not a string`);
  }
  return list;
}

function byteLengthOf(bytes: Uint8Array | string): number {
  if (typeof bytes !== 'string') return bytes.length;
  return bytes.length <= SHORT_STRING_MAX_CHARS ? utf8LengthOf(bytes) : Buffer.byteLength(bytes, 'utf8');
}

/** UTF-8 length as TextEncoder writes it: a lone surrogate becomes U+FFFD (3 bytes). */
function utf8LengthOf(text: string): number {
  let length = 0;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit < 0x80) length += 1;
    else if (unit < 0x800) length += 2;
    else if (isSurrogatePair(text, index)) {
      length += 4;
      index++;
    } else length += 3;
  }
  return length;
}

function isSurrogatePair(text: string, index: number): boolean {
  const unit = text.charCodeAt(index);
  if (unit < 0xd800 || unit > 0xdbff) return false;
  const next = text.charCodeAt(index + 1); // NaN past the end
  return next >= 0xdc00 && next <= 0xdfff;
}

/** Writes `text` as UTF-8 the way TextEncoder does; returns the position after it. */
function writeUtf8(text: string, target: Uint8Array, position: number): number {
  for (let index = 0; index < text.length; index++) {
    let code = text.charCodeAt(index);
    if (code < 0x80) {
      target[position++] = code;
      continue;
    }
    if (code < 0x800) {
      target[position++] = 0xc0 | (code >> 6);
      target[position++] = 0x80 | (code & 0x3f);
      continue;
    }
    if (isSurrogatePair(text, index)) {
      code = 0x10000 + ((code - 0xd800) << 10) + (text.charCodeAt(++index) - 0xdc00);
      target[position++] = 0xf0 | (code >> 18);
      target[position++] = 0x80 | ((code >> 12) & 0x3f);
    } else {
      if (code >= 0xd800 && code <= 0xdfff) code = REPLACEMENT_CHARACTER;
      target[position++] = 0xe0 | (code >> 12);
    }
    target[position++] = 0x80 | ((code >> 6) & 0x3f);
    target[position++] = 0x80 | (code & 0x3f);
  }
  return position;
}

function sizeOfBytesField(bytes: ProducerBytes): number {
  if (bytes === null) return sizeOfVarint(NULL_LENGTH);
  const length = byteLengthOf(bytes);
  return sizeOfVarint(length) + length;
}

function writeRecords(planned: readonly PlannedRecord[], target: Uint8Array, start: number): void {
  const baseTimestamp = planned[0]!.timestamp;
  let position = start;
  for (let index = 0; index < planned.length; index++) {
    const record = planned[index]!;
    position = writeVarint(record.bodyBytes, target, position);
    const bodyStart = position;
    target[position++] = 0; // record attributes: unused in v2
    position = writeVarlong(record.timestamp - baseTimestamp, target, position);
    position = writeVarint(index, target, position);
    position = writeBytesField(record.key, target, position);
    position = writeBytesField(record.value, target, position);
    position = writeVarint(record.headers.length, target, position);
    for (const header of record.headers) {
      position = writeBytesField(header.key, target, position);
      position = writeBytesField(header.value, target, position);
    }
    assert(position - bodyStart === record.bodyBytes, `record ${index} took the bytes its plan said`);
  }
  assert(position === target.length, 'records fill their buffer exactly');
}

function writeBytesField(bytes: ProducerBytes, target: Uint8Array, position: number): number {
  if (bytes === null) return writeVarint(NULL_LENGTH, target, position);
  const length = byteLengthOf(bytes);
  position = writeVarint(length, target, position);
  if (typeof bytes === 'string') {
    // Straight into the batch, never via an encoded copy. Short strings (keys, header names)
    // by hand: a subarray for encodeInto costs more than encoding them.
    if (bytes.length <= SHORT_STRING_MAX_CHARS) {
      const end = writeUtf8(bytes, target, position);
      assert(end - position === length, 'writeUtf8 and utf8LengthOf agree');
    } else {
      const { written } = utf8Encoder.encodeInto(bytes, target.subarray(position, position + length));
      assert(written === length, 'TextEncoder and Buffer.byteLength agree on UTF-8 length');
    }
  } else {
    target.set(bytes, position);
  }
  return position + length;
}

function writeHeader(batch: Uint8Array, planned: readonly PlannedRecord[], options: BuildOptions): void {
  const view = new DataView(batch.buffer, batch.byteOffset, batch.byteLength);
  const maxTimestamp = planned.reduce((max, record) => Math.max(max, record.timestamp), planned[0]!.timestamp);
  const codecId = compressionIdOf(options.compression ?? 'none');
  const attributes = codecId | (options.isTransactional === true ? TRANSACTIONAL_FLAG_MASK : 0);
  writeInt64(view, BASE_OFFSET_OFFSET, options.baseOffset ?? 0);
  view.setInt32(BATCH_LENGTH_OFFSET, batch.length - LOG_OVERHEAD_BYTES);
  view.setInt32(PARTITION_LEADER_EPOCH_OFFSET, options.partitionLeaderEpoch ?? NO_PARTITION_LEADER_EPOCH);
  view.setInt8(MAGIC_OFFSET, RECORD_BATCH_MAGIC);
  view.setInt16(ATTRIBUTES_OFFSET, attributes);
  view.setInt32(LAST_OFFSET_DELTA_OFFSET, planned.length - 1);
  writeInt64(view, BASE_TIMESTAMP_OFFSET, planned[0]!.timestamp);
  writeInt64(view, MAX_TIMESTAMP_OFFSET, maxTimestamp);
  writeInt64(view, PRODUCER_ID_OFFSET, options.producerId ?? NO_PRODUCER_ID);
  view.setInt16(PRODUCER_EPOCH_OFFSET, options.producerEpoch ?? NO_PRODUCER_EPOCH);
  view.setInt32(BASE_SEQUENCE_OFFSET, options.baseSequence ?? NO_SEQUENCE);
  view.setInt32(RECORDS_COUNT_OFFSET, planned.length);
  // Last: the CRC covers everything after itself, records included.
  view.setUint32(CRC_OFFSET, crc32c(batch.subarray(CRC_COVERED_FROM)));
}
