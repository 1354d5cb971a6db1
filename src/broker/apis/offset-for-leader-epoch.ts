import type { KafkaReader } from '../protocol/reader.ts';
import type { KafkaWriter } from '../protocol/writer.ts';
import type { ApiCodec } from './api.ts';

// OffsetForLeaderEpoch (key 23), versions 0-4; 4 is flexible (compact strings and arrays, tagged
// fields after every struct). Kafka's schema: clients/src/main/resources/common/message/
// OffsetForLeaderEpoch{Request,Response}.json (a copy in test/fixtures/kafka-messages).
// Request:
//   replica_id INT32                              v3+ (before: -2, a "debug" consumer)
//   topics [topic STRING,
//           partitions [partition INT32, current_leader_epoch INT32 (v2+, before: -1), leader_epoch INT32]]
// Response:
//   throttle_time_ms INT32                        v2+
//   topics [topic STRING,
//           partitions [error_code INT16, partition INT32, leader_epoch INT32 (v1+), end_offset INT64]]
//
// KIP-101 / KIP-320: a consumer asks where the epoch of its position ended; a position past that
// end offset means the log was truncated under it (a leader change lost records it had seen).

const FLEXIBLE_FROM = 4;
/** replica_id before v3, when the field did not exist. */
const REPLICA_ID_DEFAULT = -2;
const NO_LEADER_EPOCH = -1;
/** Smallest topic: an empty name and an empty partitions array (int16 + int32; flexible: 1 + 1 + tag buffer 1). */
const TOPIC_BYTES_MIN = 2 + 4;
const TOPIC_BYTES_MIN_FLEXIBLE = 1 + 1 + 1;
/** partition and leader_epoch; current_leader_epoch from v2; a tag buffer in flexible versions. */
const PARTITION_BYTES_V0 = 4 + 4;
const CURRENT_LEADER_EPOCH_BYTES = 4;
const TAG_BUFFER_BYTES_MIN = 1;

export interface OffsetForLeaderEpochRequestPartition {
  readonly partition: number;
  /** v2+; -1 otherwise (no fencing). */
  readonly currentLeaderEpoch: number;
  /** The epoch whose end offset is asked for. */
  readonly leaderEpoch: number;
}

export interface OffsetForLeaderEpochRequestTopic {
  readonly topic: string;
  readonly partitions: readonly OffsetForLeaderEpochRequestPartition[];
}

export interface OffsetForLeaderEpochRequest {
  /** v3+: -1 from a consumer, the follower's broker id from a replica; -2 before v3. */
  readonly replicaId: number;
  readonly topics: readonly OffsetForLeaderEpochRequestTopic[];
}

export interface OffsetForLeaderEpochResponsePartition {
  readonly errorCode: number;
  readonly partition: number;
  /** v1+: the largest epoch <= the one asked for; -1 if unknown. */
  readonly leaderEpoch: number;
  /** Where that epoch ended; -1 if unknown. */
  readonly endOffset: number;
}

export interface OffsetForLeaderEpochResponseTopic {
  readonly topic: string;
  readonly partitions: readonly OffsetForLeaderEpochResponsePartition[];
}

export interface OffsetForLeaderEpochResponse {
  readonly throttleTimeMs: number;
  readonly topics: readonly OffsetForLeaderEpochResponseTopic[];
}

function partitionBytesMin(version: number): number {
  return PARTITION_BYTES_V0 + (version >= 2 ? CURRENT_LEADER_EPOCH_BYTES : 0) + (version >= FLEXIBLE_FROM ? TAG_BUFFER_BYTES_MIN : 0);
}

function readPartition(reader: KafkaReader, version: number): OffsetForLeaderEpochRequestPartition {
  const partition = reader.int32();
  const currentLeaderEpoch = version >= 2 ? reader.int32() : NO_LEADER_EPOCH;
  const leaderEpoch = reader.int32();
  if (version >= FLEXIBLE_FROM) reader.skipTaggedFields();
  return { partition, currentLeaderEpoch, leaderEpoch };
}

function readTopic(reader: KafkaReader, version: number): OffsetForLeaderEpochRequestTopic {
  const flexible = version >= FLEXIBLE_FROM;
  const topic = flexible ? reader.compactString() : reader.string();
  const read = (r: KafkaReader) => readPartition(r, version);
  const partitions = flexible ? reader.compactArray(read, partitionBytesMin(version)) : reader.array(read, partitionBytesMin(version));
  if (flexible) reader.skipTaggedFields();
  return { topic, partitions };
}

function writePartition(writer: KafkaWriter, version: number, partition: OffsetForLeaderEpochResponsePartition): void {
  writer.int16(partition.errorCode).int32(partition.partition);
  if (version >= 1) writer.int32(partition.leaderEpoch);
  writer.int64(partition.endOffset);
  if (version >= FLEXIBLE_FROM) writer.emptyTaggedFields();
}

function writeTopic(writer: KafkaWriter, version: number, topic: OffsetForLeaderEpochResponseTopic): void {
  const write = (w: KafkaWriter, partition: OffsetForLeaderEpochResponsePartition) => writePartition(w, version, partition);
  if (version >= FLEXIBLE_FROM) writer.compactString(topic.topic).compactArray(topic.partitions, write).emptyTaggedFields();
  else writer.string(topic.topic).array(topic.partitions, write);
}

export const offsetForLeaderEpochCodec: ApiCodec<OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse> = {
  key: 23,
  name: 'OffsetForLeaderEpoch',
  minVersion: 0,
  maxVersion: 4,
  flexibleFrom: FLEXIBLE_FROM,
  decodeRequest(reader: KafkaReader, version: number): OffsetForLeaderEpochRequest {
    const replicaId = version >= 3 ? reader.int32() : REPLICA_ID_DEFAULT;
    const read = (r: KafkaReader) => readTopic(r, version);
    const topics = version >= FLEXIBLE_FROM ? reader.compactArray(read, TOPIC_BYTES_MIN_FLEXIBLE) : reader.array(read, TOPIC_BYTES_MIN);
    if (version >= FLEXIBLE_FROM) reader.skipTaggedFields();
    return { replicaId, topics };
  },
  encodeResponse(writer: KafkaWriter, version: number, response: OffsetForLeaderEpochResponse): void {
    if (version >= 2) writer.int32(response.throttleTimeMs);
    const write = (w: KafkaWriter, topic: OffsetForLeaderEpochResponseTopic) => writeTopic(w, version, topic);
    if (version >= FLEXIBLE_FROM) writer.compactArray(response.topics, write).emptyTaggedFields();
    else writer.array(response.topics, write);
  },
};
