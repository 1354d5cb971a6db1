/** Kafka record batch v2 views, building and parsing, varints, compression and CRC32C. */
export * from './crc32c/index.ts';
export {
  type BuildCompressionCodec,
  type CompressionCodec,
  COMPRESSION_CODECS,
  DECOMPRESSED_RECORDS_MAX_BYTES,
} from './compression.ts';
export {
  BATCH_LENGTH_MIN_BYTES,
  CRC_COVERED_FROM,
  LOG_OVERHEAD_BYTES,
  NO_PARTITION_LEADER_EPOCH,
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  NO_SEQUENCE,
  RECORD_BATCH_HEADER_BYTES,
  RECORD_BATCH_MAGIC,
  RecordBatch,
  type Record,
  type RecordHeader,
  type TimestampType,
} from './record-batch.ts';
export { parseBatchAt, RECORD_MIN_BYTES, splitBatches } from './batch-parse.ts';
export {
  BATCH_BYTES_MAX,
  type BuildOptions,
  buildRecordBatch,
  type ProducerBytes,
  type ProducerHeader,
  type ProducerRecord,
} from './batch-builder.ts';
export {
  readVarint,
  readVarlong,
  sizeOfVarint,
  sizeOfVarlong,
  VARINT_MAX_BYTES,
  VARLONG_MAX_BYTES,
  VarintCursor,
  writeVarint,
  writeVarlong,
} from './varint.ts';
export type { TopicId } from './topic-id.ts';
