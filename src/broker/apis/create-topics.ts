import type { KafkaReader } from '../protocol/reader.ts';
import type { KafkaWriter } from '../protocol/writer.ts';
import type { ApiCodec } from './api.ts';

// CreateTopics (key 19), versions 0-4; 5 is the first flexible version (not supported).
// Request v0:   topics [name STRING, num_partitions INT32, replication_factor INT16,
//                       assignments [partition_index INT32, broker_ids [INT32]],
//                       configs [name STRING, value NULLABLE_STRING]],
//               timeout_ms INT32
// Request v1-4: as v0, then validate_only BOOLEAN
// Response v0:   topics [name STRING, error_code INT16]
// Response v1:   topics [name STRING, error_code INT16, error_message NULLABLE_STRING]
// Response v2-4: throttle_time_ms INT32, topics [name STRING, error_code INT16, error_message NULLABLE_STRING]
//
// num_partitions and replication_factor are -1 when assignments are given or the broker's defaults are
// wanted (v4 allows -1 without assignments, KIP-464).

/** One topic on the wire: name INT16 + num_partitions INT32 + replication_factor INT16 + two array lengths. */
const TOPIC_BYTES_MIN = 2 + 4 + 2 + 4 + 4;
/** One assignment: partition_index INT32 + broker_ids length INT32. */
const ASSIGNMENT_BYTES_MIN = 4 + 4;
const BROKER_ID_BYTES = 4;
/** One config: name length INT16 + value length INT16. */
const CONFIG_BYTES_MIN = 2 + 2;

export interface CreatableReplicaAssignment {
  readonly partitionIndex: number;
  readonly brokerIds: readonly number[];
}

export interface CreatableTopicConfig {
  readonly name: string;
  readonly value: string | null;
}

export interface CreatableTopic {
  readonly name: string;
  readonly numPartitions: number;
  readonly replicationFactor: number;
  readonly assignments: readonly CreatableReplicaAssignment[];
  readonly configs: readonly CreatableTopicConfig[];
}

export interface CreateTopicsRequest {
  readonly topics: readonly CreatableTopic[];
  readonly timeoutMs: number;
  /** v1+; false in v0. */
  readonly validateOnly: boolean;
}

export interface CreatableTopicResult {
  readonly name: string;
  readonly errorCode: number;
  /** Written in v1+ only. */
  readonly errorMessage: string | null;
}

export interface CreateTopicsResponse {
  readonly throttleTimeMs: number;
  readonly topics: readonly CreatableTopicResult[];
}

export const createTopicsCodec: ApiCodec<CreateTopicsRequest, CreateTopicsResponse> = {
  key: 19,
  name: 'CreateTopics',
  minVersion: 0,
  maxVersion: 4,
  flexibleFrom: 5,
  decodeRequest(reader: KafkaReader, version: number): CreateTopicsRequest {
    const topics = reader.array(readTopic, TOPIC_BYTES_MIN);
    const timeoutMs = reader.int32();
    const validateOnly = version >= 1 ? reader.boolean() : false;
    return { topics, timeoutMs, validateOnly };
  },
  encodeResponse(writer: KafkaWriter, version: number, response: CreateTopicsResponse): void {
    if (version >= 2) writer.int32(response.throttleTimeMs);
    writer.array(response.topics, (w, topic) => {
      w.string(topic.name).int16(topic.errorCode);
      if (version >= 1) w.nullableString(topic.errorMessage);
    });
  },
};

function readTopic(reader: KafkaReader): CreatableTopic {
  const name = reader.string();
  const numPartitions = reader.int32();
  const replicationFactor = reader.int16();
  const assignments = reader.array(readAssignment, ASSIGNMENT_BYTES_MIN);
  const configs = reader.array(readConfig, CONFIG_BYTES_MIN);
  return { name, numPartitions, replicationFactor, assignments, configs };
}

function readAssignment(reader: KafkaReader): CreatableReplicaAssignment {
  const partitionIndex = reader.int32();
  const brokerIds = reader.array((r) => r.int32(), BROKER_ID_BYTES);
  return { partitionIndex, brokerIds };
}

function readConfig(reader: KafkaReader): CreatableTopicConfig {
  const name = reader.string();
  const value = reader.nullableString();
  return { name, value };
}
