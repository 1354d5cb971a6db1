/**
 * Kafka record batch v2 (magic 2), read and patched in place. A RecordBatch is a view over
 * exactly one batch's bytes (a subarray of the buffer it arrived in: docs/design.md contract 2); it
 * copies nothing, and the only writes it makes are the two the leader is allowed (contract 1):
 * baseOffset and partitionLeaderEpoch, both outside the CRC.
 *
 * baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32 | magic int8 | crc uint32 |
 * attributes int16 | lastOffsetDelta int32 | baseTimestamp int64 | maxTimestamp int64 |
 * producerId int64 | producerEpoch int16 | baseSequence int32 | recordCount int32 | records
 *
 * The CRC is CRC32C over attributes..end. Offsets, timestamps and producerId are int64 on the
 * wire and safe-integer JS numbers here; parseBatchAt rejects batches where they are not.
 */
import { assert } from '../util/assert.ts';
import { crc32c } from './crc32c/index.ts';
import { type CompressionCodec, compressionCodecOf, decompress } from './compression.ts';
import { type Record, RecordIterator } from './records.ts';

export type { CompressionCodec } from './compression.ts';
export type { Record, RecordHeader } from './records.ts';

// Field positions within a batch, Kafka's names (DefaultRecordBatch).
export const BASE_OFFSET_OFFSET = 0;
export const BATCH_LENGTH_OFFSET = 8;
export const PARTITION_LEADER_EPOCH_OFFSET = 12;
export const MAGIC_OFFSET = 16;
export const CRC_OFFSET = 17;
export const ATTRIBUTES_OFFSET = 21;
export const LAST_OFFSET_DELTA_OFFSET = 23;
export const BASE_TIMESTAMP_OFFSET = 27;
export const MAX_TIMESTAMP_OFFSET = 35;
export const PRODUCER_ID_OFFSET = 43;
export const PRODUCER_EPOCH_OFFSET = 51;
export const BASE_SEQUENCE_OFFSET = 53;
export const RECORDS_COUNT_OFFSET = 57;
export const RECORDS_OFFSET = 61;

/** baseOffset + batchLength: the bytes before what batchLength counts. */
export const LOG_OVERHEAD_BYTES = 12;
export const RECORD_BATCH_HEADER_BYTES = RECORDS_OFFSET;
/** The smallest legal batchLength: a header with no records. */
export const BATCH_LENGTH_MIN_BYTES = RECORD_BATCH_HEADER_BYTES - LOG_OVERHEAD_BYTES;
export const RECORD_BATCH_MAGIC = 2;
/** The CRC covers attributes through the end of the batch. */
export const CRC_COVERED_FROM = ATTRIBUTES_OFFSET;

// attributes bits
export const COMPRESSION_CODEC_MASK = 0x07;
export const TIMESTAMP_TYPE_MASK = 0x08;
export const TRANSACTIONAL_FLAG_MASK = 0x10;
export const CONTROL_FLAG_MASK = 0x20;
export const DELETE_HORIZON_FLAG_MASK = 0x40;

/** Kafka's TimestampType names. */
export type TimestampType = 'CreateTime' | 'LogAppendTime';

/** The sentinel Kafka writes for "no producer id / epoch / sequence" and "no leader epoch". */
export const NO_PRODUCER_ID = -1;
export const NO_PRODUCER_EPOCH = -1;
export const NO_SEQUENCE = -1;
export const NO_PARTITION_LEADER_EPOCH = -1;

const TWO_POW_32 = 0x1_0000_0000;

assert(RECORD_BATCH_HEADER_BYTES === 61, 'record batch v2 header is 61 bytes');
assert(BATCH_LENGTH_MIN_BYTES === 49, 'smallest batchLength is 49 bytes');
assert(CRC_OFFSET + 4 === CRC_COVERED_FROM, 'the CRC covers everything after itself');

export function readInt64(view: DataView, offset: number): number {
  return view.getInt32(offset) * TWO_POW_32 + view.getUint32(offset + 4);
}

export function writeInt64(view: DataView, offset: number, value: number): void {
  assert(Number.isSafeInteger(value), `int64 ${value} is not a safe integer`);
  view.setInt32(offset, Math.floor(value / TWO_POW_32));
  view.setUint32(offset + 4, value >>> 0);
}

/**
 * A batch's fixed header (RECORD_BATCH_HEADER_BYTES), read without its records: what a walk
 * over a log needs that only looks at offsets, producers and timestamps (a producer-state replay
 * reads 61 bytes of each batch instead of all of it). RecordBatch is a BatchHeader with its bytes.
 */
export class BatchHeader {
  protected readonly view: DataView;

  /** `header` holds at least the fixed header; bytes past it are not looked at. */
  constructor(header: Uint8Array) {
    assert(header.length >= RECORD_BATCH_HEADER_BYTES, `a batch needs ${RECORD_BATCH_HEADER_BYTES} bytes, got ${header.length}`);
    this.view = new DataView(header.buffer, header.byteOffset, header.byteLength);
  }

  get baseOffset(): number {
    return readInt64(this.view, BASE_OFFSET_OFFSET);
  }
  get batchLength(): number {
    return this.view.getInt32(BATCH_LENGTH_OFFSET);
  }
  /** The whole batch's size: its log overhead and batchLength. */
  get sizeInBytes(): number {
    return LOG_OVERHEAD_BYTES + this.batchLength;
  }
  get partitionLeaderEpoch(): number {
    return this.view.getInt32(PARTITION_LEADER_EPOCH_OFFSET);
  }
  get magic(): number {
    return this.view.getInt8(MAGIC_OFFSET);
  }
  get crc(): number {
    return this.view.getUint32(CRC_OFFSET);
  }
  get attributes(): number {
    return this.view.getInt16(ATTRIBUTES_OFFSET);
  }
  get lastOffsetDelta(): number {
    return this.view.getInt32(LAST_OFFSET_DELTA_OFFSET);
  }
  get lastOffset(): number {
    return this.baseOffset + this.lastOffsetDelta;
  }
  get nextOffset(): number {
    return this.lastOffset + 1;
  }
  get baseTimestamp(): number {
    return readInt64(this.view, BASE_TIMESTAMP_OFFSET);
  }
  get maxTimestamp(): number {
    return readInt64(this.view, MAX_TIMESTAMP_OFFSET);
  }
  get producerId(): number {
    return readInt64(this.view, PRODUCER_ID_OFFSET);
  }
  get producerEpoch(): number {
    return this.view.getInt16(PRODUCER_EPOCH_OFFSET);
  }
  get baseSequence(): number {
    return this.view.getInt32(BASE_SEQUENCE_OFFSET);
  }
  get recordCount(): number {
    return this.view.getInt32(RECORDS_COUNT_OFFSET);
  }
}

/**
 * One record batch v2. The constructor trusts its bytes (it asserts only the framing); use
 * parseBatchAt or splitBatches for bytes from outside.
 */
export class RecordBatch extends BatchHeader {
  /** Exactly this batch: LOG_OVERHEAD_BYTES + batchLength bytes. */
  readonly bytes: Uint8Array;
  /** Where the batch starts in the buffer it was parsed from; errors report it. */
  readonly position: number;

  constructor(bytes: Uint8Array, position = 0) {
    super(bytes);
    this.bytes = bytes;
    this.position = position;
    assert(LOG_OVERHEAD_BYTES + this.batchLength === bytes.length, 'batchLength frames the view exactly');
  }

  get compression(): CompressionCodec {
    const codec = compressionCodecOf(this.attributes & COMPRESSION_CODEC_MASK);
    assert(codec !== undefined, 'parseBatchAt rejects unknown compression ids');
    return codec;
  }
  get timestampType(): TimestampType {
    return (this.attributes & TIMESTAMP_TYPE_MASK) === 0 ? 'CreateTime' : 'LogAppendTime';
  }
  get isTransactional(): boolean {
    return (this.attributes & TRANSACTIONAL_FLAG_MASK) !== 0;
  }
  get isControl(): boolean {
    return (this.attributes & CONTROL_FLAG_MASK) !== 0;
  }
  get hasDeleteHorizonMs(): boolean {
    return (this.attributes & DELETE_HORIZON_FLAG_MASK) !== 0;
  }

  /** The leader assigns offsets by rewriting this field; it lies outside the CRC. */
  setBaseOffset(offset: number): void {
    assert(Number.isSafeInteger(offset) && offset >= 0, `baseOffset ${offset} is not a non-negative safe integer`);
    assert(Number.isSafeInteger(offset + this.lastOffsetDelta), `lastOffset of baseOffset ${offset} is not safe`);
    writeInt64(this.view, BASE_OFFSET_OFFSET, offset);
  }

  /** The leader stamps its epoch here; it lies outside the CRC. */
  setPartitionLeaderEpoch(epoch: number): void {
    assert(epoch === (epoch | 0), `partitionLeaderEpoch ${epoch} is not an int32`);
    this.view.setInt32(PARTITION_LEADER_EPOCH_OFFSET, epoch);
  }

  /**
   * A topic with message.timestamp.type=LogAppendTime (docs/design.md contract 1): the leader marks the
   * batch's timestamps as its own and sets maxTimestamp to its append time; both lie inside the
   * CRC, which is computed again over the bytes as they are (a compressed batch stays compressed).
   * Readers then take every record's timestamp to be maxTimestamp (Kafka's rule).
   */
  setLogAppendTime(appendTimeMs: number): void {
    assert(Number.isSafeInteger(appendTimeMs) && appendTimeMs >= 0, `append time ${appendTimeMs} is not a non-negative safe integer`);
    this.view.setInt16(ATTRIBUTES_OFFSET, this.attributes | TIMESTAMP_TYPE_MASK);
    writeInt64(this.view, MAX_TIMESTAMP_OFFSET, appendTimeMs);
    this.view.setUint32(CRC_OFFSET, this.computeCrc());
  }

  /** CRC32C of attributes..end, as the crc field should hold it. */
  computeCrc(): number {
    return crc32c(this.bytes.subarray(CRC_COVERED_FROM));
  }

  isCrcValid(): boolean {
    return this.computeCrc() === this.crc;
  }

  /**
   * The records, decoded lazily and validated as they go (CorruptRecordError naming the field).
   * Compressed batches are decompressed first (gzip, zstd; snappy and lz4 throw 'InvalidArgument'
   * for now). Byte positions in error details count from the batch start, or from the start of
   * the decompressed records for a compressed batch.
   */
  records(): IterableIterator<Record> {
    const codec = this.compression;
    const compressed = codec !== 'none';
    const data = compressed ? decompress(codec, this.bytes.subarray(RECORDS_OFFSET), this.position) : this.bytes;
    return new RecordIterator({
      data,
      start: compressed ? 0 : RECORDS_OFFSET,
      recordCount: this.recordCount,
      baseOffset: this.baseOffset,
      lastOffsetDelta: this.lastOffsetDelta,
      baseTimestamp: this.baseTimestamp,
      logAppendTime: this.timestampType === 'LogAppendTime' ? this.maxTimestamp : null,
      batchPosition: this.position,
    });
  }
}
