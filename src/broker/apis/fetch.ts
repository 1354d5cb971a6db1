import { assert } from '../../util/assert.ts';
import type { KafkaReader } from '../protocol/reader.ts';
import type { KafkaWriter } from '../protocol/writer.ts';
import type { ApiCodec } from './api.ts';

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
const TOPIC_BYTES_MIN = 2 + 4;
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

function readPartition(reader: KafkaReader, version: number): FetchRequestPartition {
  const partition = reader.int32();
  const currentLeaderEpoch = version >= 9 ? reader.int32() : NO_LEADER_EPOCH;
  const fetchOffset = reader.int64();
  const logStartOffset = version >= 5 ? reader.int64() : NO_LOG_START_OFFSET;
  const partitionMaxBytes = reader.int32();
  return { partition, currentLeaderEpoch, fetchOffset, logStartOffset, partitionMaxBytes };
}

function readTopic(reader: KafkaReader, version: number): FetchRequestTopic {
  const topic = reader.string();
  const partitions = reader.array((r) => readPartition(r, version), partitionBytesMin(version));
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

function writePartition(writer: KafkaWriter, version: number, partition: FetchResponsePartition): void {
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

export const fetchCodec: ApiCodec<FetchRequest, FetchResponse> = {
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
    const topics = reader.array((r) => readTopic(r, version), TOPIC_BYTES_MIN);
    const forgottenTopicsData = version >= 7 ? reader.array(readForgottenTopic, TOPIC_BYTES_MIN) : [];
    const rackId = version >= 11 ? reader.string() : '';
    return { replicaId, maxWaitMs, minBytes, maxBytes, isolationLevel, sessionId, sessionEpoch, topics, forgottenTopicsData, rackId };
  },
  encodeResponse(writer: KafkaWriter, version: number, response: FetchResponse): void {
    if (version >= 1) writer.int32(response.throttleTimeMs);
    if (version >= 7) writer.int16(response.errorCode).int32(response.sessionId);
    writer.array(response.responses, (w, topic) => {
      w.string(topic.topic);
      w.array(topic.partitions, (pw, partition) => writePartition(pw, version, partition));
    });
  },
};
