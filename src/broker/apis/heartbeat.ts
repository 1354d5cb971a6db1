import type { KafkaReader } from '../protocol/reader.ts';
import type { KafkaWriter } from '../protocol/writer.ts';
import type { ApiCodec } from './api.ts';

// Heartbeat (key 12), versions 0-3; 4 is the first flexible version (not supported).
// Request v0-2: group_id STRING, generation_id INT32, member_id STRING
// Request v3:   group_id STRING, generation_id INT32, member_id STRING, group_instance_id NULLABLE_STRING
// Response v0:   error_code INT16
// Response v1-3: throttle_time_ms INT32, error_code INT16

export interface HeartbeatRequest {
  readonly groupId: string;
  readonly generationId: number;
  readonly memberId: string;
  /** Static membership (KIP-345), v3+; null before. */
  readonly groupInstanceId: string | null;
}

export interface HeartbeatResponse {
  readonly throttleTimeMs: number;
  readonly errorCode: number;
}

export const heartbeatCodec: ApiCodec<HeartbeatRequest, HeartbeatResponse> = {
  key: 12,
  name: 'Heartbeat',
  minVersion: 0,
  maxVersion: 3,
  flexibleFrom: 4,
  decodeRequest(reader: KafkaReader, version: number): HeartbeatRequest {
    const groupId = reader.string();
    const generationId = reader.int32();
    const memberId = reader.string();
    const groupInstanceId = version >= 3 ? reader.nullableString() : null;
    return { groupId, generationId, memberId, groupInstanceId };
  },
  encodeResponse(writer: KafkaWriter, version: number, response: HeartbeatResponse): void {
    if (version >= 1) writer.int32(response.throttleTimeMs);
    writer.int16(response.errorCode);
  },
};
