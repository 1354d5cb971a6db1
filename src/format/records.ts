/**
 * Decoding the records inside a batch (Kafka's DefaultRecord), one at a time, validating as it
 * goes: every length is checked against what remains of its record before it is used, and the
 * batch's declared record count against what is there.
 *
 * record: length varint, attributes int8, timestampDelta varlong, offsetDelta varint,
 *         keyLength varint (-1 = null), key, valueLen varint (-1 = null), value,
 *         headerCount varint, headers: headerKeyLength varint, headerKey (UTF-8),
 *         headerValueLength varint (-1 = null), headerValue
 */
import { CorruptRecordError } from '../errors.ts';
import { readVarint, readVarlong, VarintCursor } from './varint.ts';

export interface RecordHeader {
  key: string;
  value: Uint8Array | null;
}

/** One record, with key, value and header values as views into the batch (or its decompressed records). */
export interface Record {
  /** The record's offset in its partition. */
  offset: number;
  /** Milliseconds since the epoch: the producer's (CreateTime) or the leader's (LogAppendTime). */
  timestamp: number;
  /** The key, or null. */
  key: Uint8Array | null;
  /** The value, or null (a tombstone). */
  value: Uint8Array | null;
  /** Its headers, in order (keys may repeat). */
  headers: RecordHeader[];
}

/** What the iterator needs to know about its batch; plain numbers so this file needs no RecordBatch. */
export interface RecordsSource {
  /** The records: the batch's own bytes, or its decompressed records section. */
  data: Uint8Array;
  /** Where the first record starts in `data`. */
  start: number;
  recordCount: number;
  baseOffset: number;
  lastOffsetDelta: number;
  baseTimestamp: number;
  /** The batch's maxTimestamp when its timestampType is LogAppendTime, else null. */
  logAppendTime: number | null;
  /** The batch's position in its source buffer, reported by errors. */
  batchPosition: number;
}

/** The smallest header: headerKeyLength and headerValueLength, one byte each. */
const HEADER_MIN_BYTES = 2;
const NULL_LENGTH = -1;

// Header keys are decoded like Kafka's Utils.utf8: malformed bytes become U+FFFD, not errors.
const utf8Decoder = new TextDecoder();
/** Keys up to this many bytes take the ASCII loop; TextDecoder's call cost wins beyond. */
const SHORT_KEY_MAX_BYTES = 64;
const ASCII_MAX = 0x7f;

function decodeUtf8(data: Uint8Array, start: number, end: number): string {
  if (end - start <= SHORT_KEY_MAX_BYTES) {
    let text = '';
    for (let index = start; index < end; index++) {
      const byte = data[index]!;
      if (byte > ASCII_MAX) return utf8Decoder.decode(data.subarray(start, end));
      text += String.fromCharCode(byte);
    }
    return text;
  }
  return utf8Decoder.decode(data.subarray(start, end));
}

export class RecordIterator implements IterableIterator<Record> {
  private readonly source: RecordsSource;
  private readonly cursor: VarintCursor;
  private index = 0;
  private previousOffsetDelta = -1;

  constructor(source: RecordsSource) {
    this.source = source;
    this.cursor = new VarintCursor(source.start, source.data.length, source.batchPosition);
  }

  [Symbol.iterator](): IterableIterator<Record> {
    return this;
  }

  next(): IteratorResult<Record> {
    const { data, recordCount } = this.source;
    const end = data.length;
    if (this.index === recordCount) {
      if (this.cursor.position !== end) {
        throw this.corrupt('recordCount', `${end - this.cursor.position} bytes follow the last of ${recordCount} records at byte ${this.cursor.position}`);
      }
      return { done: true, value: undefined };
    }
    if (this.cursor.position >= end) {
      throw this.corrupt('recordCount', `batch declares ${recordCount} records but holds ${this.index}`);
    }
    const record = this.readRecord(end);
    this.index++;
    return { done: false, value: record };
  }

  private readRecord(end: number): Record {
    const { data } = this.source;
    const cursor = this.cursor;
    const recordStart = cursor.position;
    cursor.end = end;
    const length = readVarint(data, cursor, 'length');
    const bodyStart = cursor.position;
    if (length < 1 || length > end - bodyStart) {
      throw this.corrupt('length', `record ${this.index} at byte ${recordStart} declares ${length} bytes; ${end - bodyStart} remain`);
    }
    const bodyEnd = bodyStart + length;
    cursor.end = bodyEnd;
    cursor.position++; // attributes: unused by record v2
    const timestampDelta = readVarlong(data, cursor, 'timestampDelta');
    const offsetDelta = this.readOffsetDelta();
    const key = this.readBytes('keyLength');
    const value = this.readBytes('valueLen');
    const headers = this.readHeaders();
    if (cursor.position !== bodyEnd) {
      throw this.corrupt('length', `record ${this.index} at byte ${recordStart} declares ${length} bytes but its fields take ${cursor.position - bodyStart}`);
    }
    return { offset: this.source.baseOffset + offsetDelta, timestamp: this.timestampOf(timestampDelta), key, value, headers };
  }

  private readOffsetDelta(): number {
    const position = this.cursor.position;
    const offsetDelta = readVarint(this.source.data, this.cursor, 'offsetDelta');
    // Offsets rise within a batch; compaction may leave gaps but never reorders.
    if (offsetDelta <= this.previousOffsetDelta || offsetDelta > this.source.lastOffsetDelta) {
      throw this.corrupt('offsetDelta', `offsetDelta ${offsetDelta} at byte ${position} is not in (${this.previousOffsetDelta}, lastOffsetDelta ${this.source.lastOffsetDelta}]`);
    }
    this.previousOffsetDelta = offsetDelta;
    return offsetDelta;
  }

  private timestampOf(timestampDelta: number): number {
    const { logAppendTime, baseTimestamp } = this.source;
    if (logAppendTime !== null) return logAppendTime;
    const timestamp = baseTimestamp + timestampDelta;
    if (!Number.isSafeInteger(timestamp)) {
      throw this.corrupt('timestampDelta', `baseTimestamp ${baseTimestamp} + timestampDelta ${timestampDelta} is not a safe integer`);
    }
    return timestamp;
  }

  /** A length-prefixed byte field (-1 = null) as a view into the records. */
  private readBytes(field: string): Uint8Array | null {
    const { data } = this.source;
    const cursor = this.cursor;
    const position = cursor.position;
    const length = readVarint(data, cursor, field);
    if (length === NULL_LENGTH) return null;
    if (length < NULL_LENGTH || length > cursor.end - cursor.position) {
      throw this.corrupt(field, `${field} ${length} at byte ${position}; ${cursor.end - cursor.position} bytes remain in the record`);
    }
    const start = cursor.position;
    cursor.position = start + length;
    return data.subarray(start, start + length);
  }

  private readHeaders(): RecordHeader[] {
    const cursor = this.cursor;
    const position = cursor.position;
    const headerCount = readVarint(this.source.data, cursor, 'headerCount');
    // Bounded by the bytes left, so a lying count cannot make us loop or allocate much.
    if (headerCount < 0 || headerCount * HEADER_MIN_BYTES > cursor.end - cursor.position) {
      throw this.corrupt('headerCount', `headerCount ${headerCount} at byte ${position}; ${cursor.end - cursor.position} bytes remain in the record`);
    }
    const headers: RecordHeader[] = [];
    for (let index = 0; index < headerCount; index++) {
      headers.push({ key: this.readHeaderKey(), value: this.readBytes('headerValueLength') });
    }
    return headers;
  }

  /** Decoded straight from the records: a subarray per key would cost more than the decoding. */
  private readHeaderKey(): string {
    const { data } = this.source;
    const cursor = this.cursor;
    const position = cursor.position;
    const length = readVarint(data, cursor, 'headerKeyLength');
    if (length < 0 || length > cursor.end - cursor.position) {
      throw this.corrupt('headerKeyLength', `headerKeyLength ${length} at byte ${position}; ${cursor.end - cursor.position} bytes remain in the record`);
    }
    const start = cursor.position;
    cursor.position = start + length;
    return decodeUtf8(data, start, start + length);
  }

  private corrupt(field: string, detail: string): CorruptRecordError {
    return new CorruptRecordError(field, this.source.batchPosition, detail);
  }
}
