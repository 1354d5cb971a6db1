import type { KafkaReader } from '../protocol/reader.ts';
import type { KafkaWriter } from '../protocol/writer.ts';
import type { ApiCodec } from './api.ts';

// ListOffsets (key 2), versions 0-5; 6 is the first flexible version (not supported).
// Request:
//   replica_id INT32                              -1 from consumers
//   isolation_level INT8                          v2+ (before: 0, READ_UNCOMMITTED)
//   topics [name STRING,
//           partitions [partition_index INT32, current_leader_epoch INT32 (v4+), timestamp INT64,
//                       max_num_offsets INT32 (v0 only)]]
// Response:
//   throttle_time_ms INT32                        v2+
//   topics [name STRING,
//           partitions [partition_index INT32, error_code INT16, old_style_offsets [INT64] (v0 only),
//                       timestamp INT64 (v1+), offset INT64 (v1+), leader_epoch INT32 (v4+)]]
//
// timestamp -1 asks for the latest offset (the high watermark), -2 for the earliest.

/** Smallest topic: an empty STRING (int16 length) and an empty array (int32 count). */
const TOPIC_BYTES_MIN = 2 + 4;
/** Smallest partition in v1-3: partition_index INT32 and timestamp INT64. */
const PARTITION_BYTES_MIN = 4 + 8;
/** Added to the smallest partition in v0 (max_num_offsets) and v4+ (current_leader_epoch). */
const PARTITION_EXTRA_INT32_BYTES = 4;

export interface ListOffsetsRequestPartition {
  readonly partitionIndex: number;
  /** -1 (unknown) before v4. */
  readonly currentLeaderEpoch: number;
  readonly timestamp: number;
  /** 1 after v0. */
  readonly maxNumOffsets: number;
}

export interface ListOffsetsRequestTopic {
  readonly name: string;
  readonly partitions: readonly ListOffsetsRequestPartition[];
}

export interface ListOffsetsRequest {
  readonly replicaId: number;
  readonly isolationLevel: number;
  readonly topics: readonly ListOffsetsRequestTopic[];
}

export interface ListOffsetsResponsePartition {
  readonly partitionIndex: number;
  readonly errorCode: number;
  /** v0's answer (up to max_num_offsets offsets, newest first); v1+ use timestamp and offset. */
  readonly oldStyleOffsets: readonly number[];
  readonly timestamp: number;
  readonly offset: number;
  readonly leaderEpoch: number;
}

export interface ListOffsetsResponseTopic {
  readonly name: string;
  readonly partitions: readonly ListOffsetsResponsePartition[];
}

export interface ListOffsetsResponse {
  readonly throttleTimeMs: number;
  readonly topics: readonly ListOffsetsResponseTopic[];
}

function readPartition(reader: KafkaReader, version: number): ListOffsetsRequestPartition {
  const partitionIndex = reader.int32();
  const currentLeaderEpoch = version >= 4 ? reader.int32() : -1;
  const timestamp = reader.int64();
  const maxNumOffsets = version === 0 ? reader.int32() : 1;
  return { partitionIndex, currentLeaderEpoch, timestamp, maxNumOffsets };
}

function readTopic(reader: KafkaReader, version: number): ListOffsetsRequestTopic {
  const name = reader.string();
  const partitionBytesMin = PARTITION_BYTES_MIN + (version === 0 || version >= 4 ? PARTITION_EXTRA_INT32_BYTES : 0);
  const partitions = reader.array((r) => readPartition(r, version), partitionBytesMin);
  return { name, partitions };
}

function writeInt64(writer: KafkaWriter, value: number): void {
  writer.int64(value);
}

function writePartition(writer: KafkaWriter, version: number, partition: ListOffsetsResponsePartition): void {
  writer.int32(partition.partitionIndex).int16(partition.errorCode);
  if (version === 0) writer.array(partition.oldStyleOffsets, writeInt64);
  if (version >= 1) writer.int64(partition.timestamp).int64(partition.offset);
  if (version >= 4) writer.int32(partition.leaderEpoch);
}

function writeTopic(writer: KafkaWriter, version: number, topic: ListOffsetsResponseTopic): void {
  writer.string(topic.name);
  writer.array(topic.partitions, (w, partition) => writePartition(w, version, partition));
}

export const listOffsetsCodec: ApiCodec<ListOffsetsRequest, ListOffsetsResponse> = {
  key: 2,
  name: 'ListOffsets',
  minVersion: 0,
  maxVersion: 5,
  flexibleFrom: 6,
  decodeRequest(reader: KafkaReader, version: number): ListOffsetsRequest {
    const replicaId = reader.int32();
    const isolationLevel = version >= 2 ? reader.int8() : 0;
    const topics = reader.array((r) => readTopic(r, version), TOPIC_BYTES_MIN);
    return { replicaId, isolationLevel, topics };
  },
  encodeResponse(writer: KafkaWriter, version: number, response: ListOffsetsResponse): void {
    if (version >= 2) writer.int32(response.throttleTimeMs);
    writer.array(response.topics, (w, topic) => writeTopic(w, version, topic));
  },
};
