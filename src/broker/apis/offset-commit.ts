import type { KafkaReader } from '../protocol/reader.ts';
import type { KafkaWriter } from '../protocol/writer.ts';
import type { ApiCodec } from './api.ts';

// OffsetCommit (key 8), versions 0-7; 8 is the first flexible version (not supported).
// Request v0:   group_id STRING, topics [name STRING, partitions [partition_index INT32,
//                 committed_offset INT64, committed_metadata NULLABLE_STRING]]
// Request v1:   group_id STRING, generation_id INT32, member_id STRING,
//               topics [name STRING, partitions [partition_index INT32, committed_offset INT64,
//                 commit_timestamp INT64, committed_metadata NULLABLE_STRING]]
// Request v2-4: group_id STRING, generation_id INT32, member_id STRING, retention_time_ms INT64,
//               topics [name STRING, partitions [partition_index INT32, committed_offset INT64,
//                 committed_metadata NULLABLE_STRING]]
// Request v5:   group_id STRING, generation_id INT32, member_id STRING,
//               topics [name STRING, partitions [partition_index INT32, committed_offset INT64,
//                 committed_metadata NULLABLE_STRING]]
// Request v6:   as v5, with committed_leader_epoch INT32 after committed_offset
// Request v7:   as v6, with group_instance_id NULLABLE_STRING after member_id
// Response v0-2: topics [name STRING, partitions [partition_index INT32, error_code INT16]]
// Response v3-7: throttle_time_ms INT32, topics [name STRING, partitions [partition_index INT32, error_code INT16]]

/** The smallest topic on the wire: an empty name (int16 length) and an empty partitions array (int32 count). */
const TOPIC_BYTES_MIN = 2 + 4;
/** partition_index INT32, committed_offset INT64, committed_metadata as null (int16 length). */
const PARTITION_BYTES_MIN = 4 + 8 + 2;
const LEADER_EPOCH_BYTES = 4;
const COMMIT_TIMESTAMP_BYTES = 8;
/** Kafka's defaults for fields a version does not carry. */
const NO_GENERATION_ID = -1;
const NO_LEADER_EPOCH = -1;
const NO_TIMESTAMP = -1;
const NO_RETENTION_TIME_MS = -1;

export interface OffsetCommitRequestPartition {
  readonly partitionIndex: number;
  readonly committedOffset: number;
  /** -1 before v6. */
  readonly committedLeaderEpoch: number;
  /** v1 only; -1 otherwise. */
  readonly commitTimestamp: number;
  readonly committedMetadata: string | null;
}

export interface OffsetCommitRequestTopic {
  readonly name: string;
  readonly partitions: readonly OffsetCommitRequestPartition[];
}

export interface OffsetCommitRequest {
  readonly groupId: string;
  /** -1 in v0 (and from a simple consumer that is not a group member). */
  readonly generationId: number;
  /** '' in v0. */
  readonly memberId: string;
  /** v7+; null otherwise. */
  readonly groupInstanceId: string | null;
  /** v2-v4; -1 otherwise (the broker's offsets.retention.minutes applies). */
  readonly retentionTimeMs: number;
  readonly topics: readonly OffsetCommitRequestTopic[];
}

export interface OffsetCommitResponsePartition {
  readonly partitionIndex: number;
  readonly errorCode: number;
}

export interface OffsetCommitResponseTopic {
  readonly name: string;
  readonly partitions: readonly OffsetCommitResponsePartition[];
}

export interface OffsetCommitResponse {
  readonly throttleTimeMs: number;
  readonly topics: readonly OffsetCommitResponseTopic[];
}

function partitionBytesMin(version: number): number {
  return PARTITION_BYTES_MIN + (version >= 6 ? LEADER_EPOCH_BYTES : 0) + (version === 1 ? COMMIT_TIMESTAMP_BYTES : 0);
}

function readPartition(reader: KafkaReader, version: number): OffsetCommitRequestPartition {
  const partitionIndex = reader.int32();
  const committedOffset = reader.int64();
  const committedLeaderEpoch = version >= 6 ? reader.int32() : NO_LEADER_EPOCH;
  const commitTimestamp = version === 1 ? reader.int64() : NO_TIMESTAMP;
  const committedMetadata = reader.nullableString();
  return { partitionIndex, committedOffset, committedLeaderEpoch, commitTimestamp, committedMetadata };
}

function readTopic(reader: KafkaReader, version: number): OffsetCommitRequestTopic {
  const name = reader.string();
  const partitions = reader.array((r) => readPartition(r, version), partitionBytesMin(version));
  return { name, partitions };
}

export const offsetCommitCodec: ApiCodec<OffsetCommitRequest, OffsetCommitResponse> = {
  key: 8,
  name: 'OffsetCommit',
  minVersion: 0,
  maxVersion: 7,
  flexibleFrom: 8,
  decodeRequest(reader: KafkaReader, version: number): OffsetCommitRequest {
    const groupId = reader.string();
    const generationId = version >= 1 ? reader.int32() : NO_GENERATION_ID;
    const memberId = version >= 1 ? reader.string() : '';
    const groupInstanceId = version >= 7 ? reader.nullableString() : null;
    const retentionTimeMs = version >= 2 && version <= 4 ? reader.int64() : NO_RETENTION_TIME_MS;
    const topics = reader.array((r) => readTopic(r, version), TOPIC_BYTES_MIN);
    return { groupId, generationId, memberId, groupInstanceId, retentionTimeMs, topics };
  },
  encodeResponse(writer: KafkaWriter, version: number, response: OffsetCommitResponse): void {
    if (version >= 3) writer.int32(response.throttleTimeMs);
    writer.array(response.topics, (w, topic) => {
      w.string(topic.name);
      w.array(topic.partitions, (pw, partition) => {
        pw.int32(partition.partitionIndex).int16(partition.errorCode);
      });
    });
  },
};
