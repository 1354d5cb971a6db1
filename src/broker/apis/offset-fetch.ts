import type { KafkaReader } from '../protocol/reader.ts';
import type { KafkaWriter } from '../protocol/writer.ts';
import type { ApiCodec } from './api.ts';

// OffsetFetch (key 9), versions 0-5; 6 is the first flexible version (not supported).
// Request v0-1: group_id STRING, topics [name STRING, partition_indexes [INT32]]
// Request v2-5: group_id STRING, topics NULLABLE [name STRING, partition_indexes [INT32]]  (null: every topic)
// Response v0-1: topics [name STRING, partitions [partition_index INT32, committed_offset INT64,
//                  metadata NULLABLE_STRING, error_code INT16]]
// Response v2:   as v0, then error_code INT16
// Response v3-4: throttle_time_ms INT32, then as v2
// Response v5:   as v3, with committed_leader_epoch INT32 after committed_offset

/** The smallest topic on the wire: an empty name (int16 length) and an empty partition_indexes array (int32 count). */
const TOPIC_BYTES_MIN = 2 + 4;
const PARTITION_INDEX_BYTES = 4;

export interface OffsetFetchRequestTopic {
  readonly name: string;
  readonly partitionIndexes: readonly number[];
}

export interface OffsetFetchRequest {
  readonly groupId: string;
  /** null (v2+): the committed offsets of every topic the group has. */
  readonly topics: readonly OffsetFetchRequestTopic[] | null;
}

export interface OffsetFetchResponsePartition {
  readonly partitionIndex: number;
  /** -1: nothing committed. */
  readonly committedOffset: number;
  /** v5+; -1 when unknown. */
  readonly committedLeaderEpoch: number;
  readonly metadata: string | null;
  readonly errorCode: number;
}

export interface OffsetFetchResponseTopic {
  readonly name: string;
  readonly partitions: readonly OffsetFetchResponsePartition[];
}

export interface OffsetFetchResponse {
  readonly throttleTimeMs: number;
  readonly topics: readonly OffsetFetchResponseTopic[];
  /** v2+: a group or coordinator error (before v2 it can only be put on every partition). */
  readonly errorCode: number;
}

function readTopic(reader: KafkaReader): OffsetFetchRequestTopic {
  const name = reader.string();
  const partitionIndexes = reader.array((r) => r.int32(), PARTITION_INDEX_BYTES);
  return { name, partitionIndexes };
}

function readTopics(reader: KafkaReader, version: number): OffsetFetchRequestTopic[] | null {
  const count = reader.arrayLength(TOPIC_BYTES_MIN);
  if (count < 0) return version >= 2 ? null : [];
  return Array.from({ length: count }, () => readTopic(reader));
}

function writePartition(writer: KafkaWriter, version: number, partition: OffsetFetchResponsePartition): void {
  writer.int32(partition.partitionIndex).int64(partition.committedOffset);
  if (version >= 5) writer.int32(partition.committedLeaderEpoch);
  writer.nullableString(partition.metadata).int16(partition.errorCode);
}

export const offsetFetchCodec: ApiCodec<OffsetFetchRequest, OffsetFetchResponse> = {
  key: 9,
  name: 'OffsetFetch',
  minVersion: 0,
  maxVersion: 5,
  flexibleFrom: 6,
  decodeRequest(reader: KafkaReader, version: number): OffsetFetchRequest {
    const groupId = reader.string();
    const topics = readTopics(reader, version);
    return { groupId, topics };
  },
  encodeResponse(writer: KafkaWriter, version: number, response: OffsetFetchResponse): void {
    if (version >= 3) writer.int32(response.throttleTimeMs);
    writer.array(response.topics, (w, topic) => {
      w.string(topic.name);
      w.array(topic.partitions, (pw, partition) => writePartition(pw, version, partition));
    });
    if (version >= 2) writer.int16(response.errorCode);
  },
};
