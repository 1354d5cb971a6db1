import type { KafkaReader } from '../protocol/reader.ts';
import type { KafkaWriter } from '../protocol/writer.ts';
import type { ApiCodec } from './api.ts';

// Produce (key 0), versions 0-8; 9 is the first flexible version (not supported).
// Request:
//   transactional_id NULLABLE_STRING              v3+
//   acks INT16
//   timeout_ms INT32
//   topic_data [name STRING, partition_data [index INT32, records NULLABLE_BYTES]]
// Response:
//   responses [name STRING,
//              partition_responses [index INT32, error_code INT16, base_offset INT64,
//                                   log_append_time_ms INT64 (v2+), log_start_offset INT64 (v5+),
//                                   record_errors [batch_index INT32, batch_index_error_message NULLABLE_STRING] (v8+),
//                                   error_message NULLABLE_STRING (v8+)]]
//   throttle_time_ms INT32                        v1+
//
// The records are opaque here: a view of the request's bytes, handed on to the log without a copy.
// Versions 0-2 carry the old MessageSet formats (magic 0 in v0-1, magic 1 in v2; record batches,
// magic 2, need v3+). Ferry stores only magic 2 batches, so the handler rejects every batch that is
// not magic 2; the codec still decodes those versions so that the rejection is a Kafka error code.

/** Smallest topic: an empty STRING (int16 length) and an empty array (int32 count). */
const TOPIC_BYTES_MIN = 2 + 4;
/** Smallest partition: index INT32 and a null NULLABLE_BYTES (int32 length -1). */
const PARTITION_BYTES_MIN = 4 + 4;

export interface ProducePartitionData {
  readonly index: number;
  /** A view into the request frame (zero-copy). Null is legal on the wire; clients do not send it. */
  readonly records: Uint8Array | null;
}

export interface ProduceTopicData {
  readonly name: string;
  readonly partitionData: readonly ProducePartitionData[];
}

export interface ProduceRequest {
  /** null before v3. */
  readonly transactionalId: string | null;
  readonly acks: number;
  readonly timeoutMs: number;
  readonly topicData: readonly ProduceTopicData[];
}

export interface BatchIndexAndErrorMessage {
  readonly batchIndex: number;
  readonly batchIndexErrorMessage: string | null;
}

export interface ProducePartitionResponse {
  readonly index: number;
  readonly errorCode: number;
  readonly baseOffset: number;
  /** -1 unless the topic uses LogAppendTime. */
  readonly logAppendTimeMs: number;
  readonly logStartOffset: number;
  readonly recordErrors: readonly BatchIndexAndErrorMessage[];
  readonly errorMessage: string | null;
}

export interface ProduceTopicResponse {
  readonly name: string;
  readonly partitionResponses: readonly ProducePartitionResponse[];
}

export interface ProduceResponse {
  readonly responses: readonly ProduceTopicResponse[];
  readonly throttleTimeMs: number;
}

function readPartition(reader: KafkaReader): ProducePartitionData {
  const index = reader.int32();
  const records = reader.nullableBytes();
  return { index, records };
}

function readTopic(reader: KafkaReader): ProduceTopicData {
  const name = reader.string();
  const partitionData = reader.array(readPartition, PARTITION_BYTES_MIN);
  return { name, partitionData };
}

function writeRecordError(writer: KafkaWriter, recordError: BatchIndexAndErrorMessage): void {
  writer.int32(recordError.batchIndex).nullableString(recordError.batchIndexErrorMessage);
}

function writePartition(writer: KafkaWriter, version: number, partition: ProducePartitionResponse): void {
  writer.int32(partition.index).int16(partition.errorCode).int64(partition.baseOffset);
  if (version >= 2) writer.int64(partition.logAppendTimeMs);
  if (version >= 5) writer.int64(partition.logStartOffset);
  if (version >= 8) writer.array(partition.recordErrors, writeRecordError).nullableString(partition.errorMessage);
}

function writeTopic(writer: KafkaWriter, version: number, topic: ProduceTopicResponse): void {
  writer.string(topic.name);
  writer.array(topic.partitionResponses, (w, partition) => writePartition(w, version, partition));
}

export const produceCodec: ApiCodec<ProduceRequest, ProduceResponse> = {
  key: 0,
  name: 'Produce',
  minVersion: 0,
  maxVersion: 8,
  flexibleFrom: 9,
  decodeRequest(reader: KafkaReader, version: number): ProduceRequest {
    const transactionalId = version >= 3 ? reader.nullableString() : null;
    const acks = reader.int16();
    const timeoutMs = reader.int32();
    const topicData = reader.array(readTopic, TOPIC_BYTES_MIN);
    return { transactionalId, acks, timeoutMs, topicData };
  },
  encodeResponse(writer: KafkaWriter, version: number, response: ProduceResponse): void {
    writer.array(response.responses, (w, topic) => writeTopic(w, version, topic));
    if (version >= 1) writer.int32(response.throttleTimeMs);
  },
};
