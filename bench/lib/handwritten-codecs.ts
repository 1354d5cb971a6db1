/**
 * The baseline for bench/codec.bench.ts: Ferry's own hand-written codecs for Produce (v0-v8),
 * Fetch (v0-v11) and Metadata (v0-v8) as they were at commit af710f1, before the schema-driven
 * codec (src/protocol/message-codec.ts) replaced them. Kept here unchanged apart from
 * imports and names (prefixed `handwritten`), so the bench can time the interpreter against
 * the code it replaced. Not used by the broker.
 */
import { assert } from '../../src/util/assert.ts';
import type { ApiCodec } from '../../src/broker/apis/api.ts';
import { ProtocolError } from '../../src/protocol/errors.ts';
import type { KafkaReader } from '../../src/protocol/reader.ts';
import type { KafkaWriter } from '../../src/protocol/writer.ts';

// ---- src/broker/apis/produce.ts at af710f1 ----

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
const PRODUCE_TOPIC_BYTES_MIN = 2 + 4;
/** Smallest partition: index INT32 and a null NULLABLE_BYTES (int32 length -1). */
const PRODUCE_PARTITION_BYTES_MIN = 4 + 4;

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

function readProducePartition(reader: KafkaReader): ProducePartitionData {
  const index = reader.int32();
  const records = reader.nullableBytes();
  return { index, records };
}

function readProduceTopic(reader: KafkaReader): ProduceTopicData {
  const name = reader.string();
  const partitionData = reader.array(readProducePartition, PRODUCE_PARTITION_BYTES_MIN);
  return { name, partitionData };
}

function writeRecordError(writer: KafkaWriter, recordError: BatchIndexAndErrorMessage): void {
  writer.int32(recordError.batchIndex).nullableString(recordError.batchIndexErrorMessage);
}

function writeProducePartition(writer: KafkaWriter, version: number, partition: ProducePartitionResponse): void {
  writer.int32(partition.index).int16(partition.errorCode).int64(partition.baseOffset);
  if (version >= 2) writer.int64(partition.logAppendTimeMs);
  if (version >= 5) writer.int64(partition.logStartOffset);
  if (version >= 8) writer.array(partition.recordErrors, writeRecordError).nullableString(partition.errorMessage);
}

function writeProduceTopic(writer: KafkaWriter, version: number, topic: ProduceTopicResponse): void {
  writer.string(topic.name);
  writer.array(topic.partitionResponses, (w, partition) => writeProducePartition(w, version, partition));
}

export const handwrittenProduceCodec: ApiCodec<ProduceRequest, ProduceResponse> = {
  key: 0,
  name: 'Produce',
  minVersion: 0,
  maxVersion: 8,
  flexibleFrom: 9,
  decodeRequest(reader: KafkaReader, version: number): ProduceRequest {
    const transactionalId = version >= 3 ? reader.nullableString() : null;
    const acks = reader.int16();
    const timeoutMs = reader.int32();
    const topicData = reader.array(readProduceTopic, PRODUCE_TOPIC_BYTES_MIN);
    return { transactionalId, acks, timeoutMs, topicData };
  },
  encodeResponse(writer: KafkaWriter, version: number, response: ProduceResponse): void {
    writer.array(response.responses, (w, topic) => writeProduceTopic(w, version, topic));
    if (version >= 1) writer.int32(response.throttleTimeMs);
  },
};

// ---- src/broker/apis/fetch.ts at af710f1 ----

// Fetch (key 1), versions 0-11; 12 is the first flexible version (not supported).
// Request:
//   replica_id INT32, max_wait_ms INT32, min_bytes INT32,
//   max_bytes INT32 (v3+), isolation_level INT8 (v4+), session_id INT32 (v7+), session_epoch INT32 (v7+),
//   topics [topic STRING, partitions [partition INT32, current_leader_epoch INT32 (v9+), fetch_offset INT64,
//           log_start_offset INT64 (v5+), partition_max_bytes INT32]],
//   forgotten_topics_data [topic STRING, partitions [INT32]] (v7+),
//   rack_id STRING (v11+)
// Response:
//   throttle_time_ms INT32 (v1+), error_code INT16 (v7+), session_id INT32 (v7+),
//   responses [topic STRING, partitions [partition_index INT32, error_code INT16, high_watermark INT64,
//              last_stable_offset INT64 (v4+), log_start_offset INT64 (v5+),
//              aborted_transactions NULLABLE [producer_id INT64, first_offset INT64] (v4+),
//              preferred_read_replica INT32 (v11+), records RECORDS]]
//   RECORDS is NULLABLE_BYTES: int32 length, then whole record batches (legacy message sets before v4
//   as far as the client is concerned; Ferry's log holds magic 2 batches).

/** The smallest topic on the wire: an empty name (int16 length) and an empty partitions array (int32 count). */
const FETCH_TOPIC_BYTES_MIN = 2 + 4;
/** partition INT32, fetch_offset INT64, partition_max_bytes INT32. */
const PARTITION_BYTES_V0 = 4 + 8 + 4;
const CURRENT_LEADER_EPOCH_BYTES = 4;
const LOG_START_OFFSET_BYTES = 8;
const FORGOTTEN_PARTITION_BYTES = 4;
/** RECORDS' length is an int32: the batches of one partition response cannot add up to more. */
const RECORDS_BYTES_MAX = 0x7fff_ffff;

/** Kafka's defaults for fields a version does not carry. */
const MAX_BYTES_DEFAULT = 0x7fff_ffff;
const NO_SESSION_ID = 0;
/** session_epoch -1 (FINAL_EPOCH): a full fetch with no session. */
const FINAL_EPOCH = -1;
const NO_LEADER_EPOCH = -1;
const NO_LOG_START_OFFSET = -1;

export const IsolationLevel = {
  READ_UNCOMMITTED: 0,
  READ_COMMITTED: 1,
} as const;

export interface FetchRequestPartition {
  readonly partition: number;
  /** v9+; -1 otherwise (no fencing). */
  readonly currentLeaderEpoch: number;
  readonly fetchOffset: number;
  /** v5+, set only by followers; -1 otherwise. */
  readonly logStartOffset: number;
  readonly partitionMaxBytes: number;
}

export interface FetchRequestTopic {
  readonly topic: string;
  readonly partitions: readonly FetchRequestPartition[];
}

export interface ForgottenTopic {
  readonly topic: string;
  readonly partitions: readonly number[];
}

export interface FetchRequest {
  /** -1 from a consumer, the follower's broker id from a replica. */
  readonly replicaId: number;
  readonly maxWaitMs: number;
  readonly minBytes: number;
  /** v3+; 0x7fffffff otherwise. */
  readonly maxBytes: number;
  /** v4+ (IsolationLevel); READ_UNCOMMITTED otherwise. Not validated here. */
  readonly isolationLevel: number;
  /** v7+; 0 otherwise. */
  readonly sessionId: number;
  /** v7+; -1 otherwise. */
  readonly sessionEpoch: number;
  readonly topics: readonly FetchRequestTopic[];
  /** v7+; empty otherwise. */
  readonly forgottenTopicsData: readonly ForgottenTopic[];
  /** v11+; '' otherwise. */
  readonly rackId: string;
}

export interface AbortedTransaction {
  readonly producerId: number;
  readonly firstOffset: number;
}

export interface FetchResponsePartition {
  readonly partitionIndex: number;
  readonly errorCode: number;
  readonly highWatermark: number;
  /** v4+. */
  readonly lastStableOffset: number;
  /** v5+. */
  readonly logStartOffset: number;
  /** v4+; null when none is known (READ_UNCOMMITTED). */
  readonly abortedTransactions: readonly AbortedTransaction[] | null;
  /** v11+; -1: none. */
  readonly preferredReadReplica: number;
  /**
   * Whole record batches, as views of the log (never copied: each goes out as its own chunk).
   * An empty list is a zero-length records field; null is a null one. Kafka's brokers never send
   * null (an error partition gets empty records) and neither should Ferry: kafkajs's v0-v3 decoder
   * steps back one byte on a null and misreads the rest of the response.
   */
  readonly records: readonly Uint8Array[] | null;
}

export interface FetchResponseTopic {
  readonly topic: string;
  readonly partitions: readonly FetchResponsePartition[];
}

export interface FetchResponse {
  readonly throttleTimeMs: number;
  /** v7+: a fetch session error. */
  readonly errorCode: number;
  /** v7+; 0: no session. */
  readonly sessionId: number;
  readonly responses: readonly FetchResponseTopic[];
}

function partitionBytesMin(version: number): number {
  return PARTITION_BYTES_V0 + (version >= 9 ? CURRENT_LEADER_EPOCH_BYTES : 0) + (version >= 5 ? LOG_START_OFFSET_BYTES : 0);
}

function readFetchPartition(reader: KafkaReader, version: number): FetchRequestPartition {
  const partition = reader.int32();
  const currentLeaderEpoch = version >= 9 ? reader.int32() : NO_LEADER_EPOCH;
  const fetchOffset = reader.int64();
  const logStartOffset = version >= 5 ? reader.int64() : NO_LOG_START_OFFSET;
  const partitionMaxBytes = reader.int32();
  return { partition, currentLeaderEpoch, fetchOffset, logStartOffset, partitionMaxBytes };
}

function readFetchTopic(reader: KafkaReader, version: number): FetchRequestTopic {
  const topic = reader.string();
  const partitions = reader.array((r) => readFetchPartition(r, version), partitionBytesMin(version));
  return { topic, partitions };
}

function readForgottenTopic(reader: KafkaReader): ForgottenTopic {
  const topic = reader.string();
  const partitions = reader.array((r) => r.int32(), FORGOTTEN_PARTITION_BYTES);
  return { topic, partitions };
}

/** RECORDS: the int32 total, then each batch as a chunk of its own (no copy). */
function writeRecords(writer: KafkaWriter, records: readonly Uint8Array[] | null): void {
  if (records === null) {
    writer.int32(-1);
    return;
  }
  let totalBytes = 0;
  for (const batch of records) totalBytes += batch.length;
  assert(totalBytes <= RECORDS_BYTES_MAX, `records of ${totalBytes} bytes exceed ${RECORDS_BYTES_MAX}`);
  writer.int32(totalBytes);
  for (const batch of records) writer.view(batch);
}

function writeFetchPartition(writer: KafkaWriter, version: number, partition: FetchResponsePartition): void {
  writer.int32(partition.partitionIndex).int16(partition.errorCode).int64(partition.highWatermark);
  if (version >= 4) writer.int64(partition.lastStableOffset);
  if (version >= 5) writer.int64(partition.logStartOffset);
  if (version >= 4) {
    writer.nullableArray(partition.abortedTransactions, (w, aborted) => {
      w.int64(aborted.producerId).int64(aborted.firstOffset);
    });
  }
  if (version >= 11) writer.int32(partition.preferredReadReplica);
  writeRecords(writer, partition.records);
}

export const handwrittenFetchCodec: ApiCodec<FetchRequest, FetchResponse> = {
  key: 1,
  name: 'Fetch',
  minVersion: 0,
  maxVersion: 11,
  flexibleFrom: 12,
  decodeRequest(reader: KafkaReader, version: number): FetchRequest {
    const replicaId = reader.int32();
    const maxWaitMs = reader.int32();
    const minBytes = reader.int32();
    const maxBytes = version >= 3 ? reader.int32() : MAX_BYTES_DEFAULT;
    const isolationLevel = version >= 4 ? reader.int8() : IsolationLevel.READ_UNCOMMITTED;
    const sessionId = version >= 7 ? reader.int32() : NO_SESSION_ID;
    const sessionEpoch = version >= 7 ? reader.int32() : FINAL_EPOCH;
    const topics = reader.array((r) => readFetchTopic(r, version), FETCH_TOPIC_BYTES_MIN);
    const forgottenTopicsData = version >= 7 ? reader.array(readForgottenTopic, FETCH_TOPIC_BYTES_MIN) : [];
    const rackId = version >= 11 ? reader.string() : '';
    return { replicaId, maxWaitMs, minBytes, maxBytes, isolationLevel, sessionId, sessionEpoch, topics, forgottenTopicsData, rackId };
  },
  encodeResponse(writer: KafkaWriter, version: number, response: FetchResponse): void {
    if (version >= 1) writer.int32(response.throttleTimeMs);
    if (version >= 7) writer.int16(response.errorCode).int32(response.sessionId);
    writer.array(response.responses, (w, topic) => {
      w.string(topic.topic);
      w.array(topic.partitions, (pw, partition) => writeFetchPartition(pw, version, partition));
    });
  },
};

// ---- src/broker/apis/metadata.ts at af710f1 ----

// Metadata (key 3), versions 0-8; 9 is the first flexible version (not supported).
// Request:
//   topics [name STRING]                          v0: empty = all topics; v1+: NULLABLE array, null = all
//   allow_auto_topic_creation BOOLEAN             v4+ (before: true)
//   include_cluster_authorized_operations BOOLEAN v8
//   include_topic_authorized_operations BOOLEAN   v8
// Response:
//   throttle_time_ms INT32                        v3+
//   brokers [node_id INT32, host STRING, port INT32, rack NULLABLE_STRING (v1+)]
//   cluster_id NULLABLE_STRING                    v2+
//   controller_id INT32                           v1+
//   topics [error_code INT16, name STRING, is_internal BOOLEAN (v1+),
//           partitions [error_code INT16, partition_index INT32, leader_id INT32, leader_epoch INT32 (v7+),
//                       replica_nodes [INT32], isr_nodes [INT32], offline_replicas [INT32] (v5+)],
//           topic_authorized_operations INT32 (v8+)]
//   cluster_authorized_operations INT32           v8+

/** Smallest request topic on the wire: an empty STRING (int16 length). */
const REQUEST_TOPIC_BYTES_MIN = 2;

export interface MetadataRequestTopic {
  readonly name: string;
}

export interface MetadataRequest {
  /** null = every topic. Version 0's empty array means every topic too, and decodes to null. */
  readonly topics: readonly MetadataRequestTopic[] | null;
  readonly allowAutoTopicCreation: boolean;
  readonly includeClusterAuthorizedOperations: boolean;
  readonly includeTopicAuthorizedOperations: boolean;
}

export interface MetadataResponseBroker {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
  readonly rack: string | null;
}

export interface MetadataResponsePartition {
  readonly errorCode: number;
  readonly partitionIndex: number;
  readonly leaderId: number;
  readonly leaderEpoch: number;
  readonly replicaNodes: readonly number[];
  readonly isrNodes: readonly number[];
  readonly offlineReplicas: readonly number[];
}

export interface MetadataResponseTopic {
  readonly errorCode: number;
  readonly name: string;
  readonly isInternal: boolean;
  readonly partitions: readonly MetadataResponsePartition[];
  /** Kafka's "not requested" is -2147483648 (INT32_MIN). */
  readonly topicAuthorizedOperations: number;
}

export interface MetadataResponse {
  readonly throttleTimeMs: number;
  readonly brokers: readonly MetadataResponseBroker[];
  readonly clusterId: string | null;
  readonly controllerId: number;
  readonly topics: readonly MetadataResponseTopic[];
  readonly clusterAuthorizedOperations: number;
}

function readTopics(reader: KafkaReader, version: number): MetadataRequestTopic[] | null {
  const position = reader.position;
  const count = reader.arrayLength(REQUEST_TOPIC_BYTES_MIN);
  if (version === 0 && count < 0) throw new ProtocolError('null topics array in Metadata v0', position);
  if (count < 0 || (version === 0 && count === 0)) return null;
  return Array.from({ length: count }, () => ({ name: reader.string() }));
}

function writeBroker(writer: KafkaWriter, version: number, broker: MetadataResponseBroker): void {
  writer.int32(broker.nodeId).string(broker.host).int32(broker.port);
  if (version >= 1) writer.nullableString(broker.rack);
}

function writeInt32(writer: KafkaWriter, value: number): void {
  writer.int32(value);
}

function writeMetadataPartition(writer: KafkaWriter, version: number, partition: MetadataResponsePartition): void {
  writer.int16(partition.errorCode).int32(partition.partitionIndex).int32(partition.leaderId);
  if (version >= 7) writer.int32(partition.leaderEpoch);
  writer.array(partition.replicaNodes, writeInt32).array(partition.isrNodes, writeInt32);
  if (version >= 5) writer.array(partition.offlineReplicas, writeInt32);
}

function writeMetadataTopic(writer: KafkaWriter, version: number, topic: MetadataResponseTopic): void {
  writer.int16(topic.errorCode).string(topic.name);
  if (version >= 1) writer.boolean(topic.isInternal);
  writer.array(topic.partitions, (w, partition) => writeMetadataPartition(w, version, partition));
  if (version >= 8) writer.int32(topic.topicAuthorizedOperations);
}

export const handwrittenMetadataCodec: ApiCodec<MetadataRequest, MetadataResponse> = {
  key: 3,
  name: 'Metadata',
  minVersion: 0,
  maxVersion: 8,
  flexibleFrom: 9,
  decodeRequest(reader: KafkaReader, version: number): MetadataRequest {
    const topics = readTopics(reader, version);
    const allowAutoTopicCreation = version >= 4 ? reader.boolean() : true;
    const includeClusterAuthorizedOperations = version >= 8 ? reader.boolean() : false;
    const includeTopicAuthorizedOperations = version >= 8 ? reader.boolean() : false;
    return { topics, allowAutoTopicCreation, includeClusterAuthorizedOperations, includeTopicAuthorizedOperations };
  },
  encodeResponse(writer: KafkaWriter, version: number, response: MetadataResponse): void {
    if (version >= 3) writer.int32(response.throttleTimeMs);
    writer.array(response.brokers, (w, broker) => writeBroker(w, version, broker));
    if (version >= 2) writer.nullableString(response.clusterId);
    if (version >= 1) writer.int32(response.controllerId);
    writer.array(response.topics, (w, topic) => writeMetadataTopic(w, version, topic));
    if (version >= 8) writer.int32(response.clusterAuthorizedOperations);
  },
};
