import { ProtocolError } from '../protocol/errors.ts';
import type { KafkaReader } from '../protocol/reader.ts';
import type { KafkaWriter } from '../protocol/writer.ts';
import type { ApiCodec } from './api.ts';

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

function writePartition(writer: KafkaWriter, version: number, partition: MetadataResponsePartition): void {
  writer.int16(partition.errorCode).int32(partition.partitionIndex).int32(partition.leaderId);
  if (version >= 7) writer.int32(partition.leaderEpoch);
  writer.array(partition.replicaNodes, writeInt32).array(partition.isrNodes, writeInt32);
  if (version >= 5) writer.array(partition.offlineReplicas, writeInt32);
}

function writeTopic(writer: KafkaWriter, version: number, topic: MetadataResponseTopic): void {
  writer.int16(topic.errorCode).string(topic.name);
  if (version >= 1) writer.boolean(topic.isInternal);
  writer.array(topic.partitions, (w, partition) => writePartition(w, version, partition));
  if (version >= 8) writer.int32(topic.topicAuthorizedOperations);
}

export const metadataCodec: ApiCodec<MetadataRequest, MetadataResponse> = {
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
    writer.array(response.topics, (w, topic) => writeTopic(w, version, topic));
    if (version >= 8) writer.int32(response.clusterAuthorizedOperations);
  },
};
