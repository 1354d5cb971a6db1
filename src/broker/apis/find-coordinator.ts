import type { KafkaReader } from '../protocol/reader.ts';
import type { KafkaWriter } from '../protocol/writer.ts';
import type { ApiCodec } from './api.ts';

// FindCoordinator (key 10), versions 0-2; 3 is the first flexible version (not supported).
// Request v0:   key STRING
// Request v1-2: key STRING, key_type INT8
// Response v0:   error_code INT16, node_id INT32, host STRING, port INT32
// Response v1-2: throttle_time_ms INT32, error_code INT16, error_message NULLABLE_STRING,
//                node_id INT32, host STRING, port INT32

/** key_type: what `key` names. */
export const CoordinatorKeyType = {
  GROUP: 0,
  TRANSACTION: 1,
} as const;

export interface FindCoordinatorRequest {
  /** A group id (key_type GROUP) or a transactional id (TRANSACTION). */
  readonly key: string;
  /** GROUP in v0, which has no key_type. */
  readonly keyType: number;
}

export interface FindCoordinatorResponse {
  readonly throttleTimeMs: number;
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
}

export const findCoordinatorCodec: ApiCodec<FindCoordinatorRequest, FindCoordinatorResponse> = {
  key: 10,
  name: 'FindCoordinator',
  minVersion: 0,
  maxVersion: 2,
  flexibleFrom: 3,
  decodeRequest(reader: KafkaReader, version: number): FindCoordinatorRequest {
    const key = reader.string();
    const keyType = version >= 1 ? reader.int8() : CoordinatorKeyType.GROUP;
    return { key, keyType };
  },
  encodeResponse(writer: KafkaWriter, version: number, response: FindCoordinatorResponse): void {
    if (version >= 1) writer.int32(response.throttleTimeMs);
    writer.int16(response.errorCode);
    if (version >= 1) writer.nullableString(response.errorMessage);
    writer.int32(response.nodeId).string(response.host).int32(response.port);
  },
};
