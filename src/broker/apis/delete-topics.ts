import type { KafkaReader } from '../protocol/reader.ts';
import type { KafkaWriter } from '../protocol/writer.ts';
import type { ApiCodec } from './api.ts';

// DeleteTopics (key 20), versions 0-3; 4 is the first flexible version (not supported).
// Request v0-3:  topic_names [STRING], timeout_ms INT32
// Response v0:   responses [name STRING, error_code INT16]
// Response v1-3: throttle_time_ms INT32, responses [name STRING, error_code INT16]

/** One topic name on the wire: its length INT16. */
const TOPIC_NAME_BYTES_MIN = 2;

export interface DeleteTopicsRequest {
  readonly topicNames: readonly string[];
  readonly timeoutMs: number;
}

export interface DeletableTopicResult {
  readonly name: string;
  readonly errorCode: number;
}

export interface DeleteTopicsResponse {
  readonly throttleTimeMs: number;
  readonly responses: readonly DeletableTopicResult[];
}

export const deleteTopicsCodec: ApiCodec<DeleteTopicsRequest, DeleteTopicsResponse> = {
  key: 20,
  name: 'DeleteTopics',
  minVersion: 0,
  maxVersion: 3,
  flexibleFrom: 4,
  decodeRequest(reader: KafkaReader, _version: number): DeleteTopicsRequest {
    const topicNames = reader.array((r) => r.string(), TOPIC_NAME_BYTES_MIN);
    const timeoutMs = reader.int32();
    return { topicNames, timeoutMs };
  },
  encodeResponse(writer: KafkaWriter, version: number, response: DeleteTopicsResponse): void {
    if (version >= 1) writer.int32(response.throttleTimeMs);
    writer.array(response.responses, (w, result) => {
      w.string(result.name).int16(result.errorCode);
    });
  },
};
