import { ProtocolError } from '../protocol/errors.ts';
import type { KafkaReader } from '../protocol/reader.ts';
import type { KafkaWriter } from '../protocol/writer.ts';
import type { ApiCodec } from './api.ts';

// JoinGroup (key 11), versions 0-5; 6 is the first flexible version (not supported).
// Request v0:   group_id STRING, session_timeout_ms INT32, member_id STRING, protocol_type STRING,
//               protocols [name STRING, metadata BYTES]
// Request v1-4: group_id STRING, session_timeout_ms INT32, rebalance_timeout_ms INT32, member_id STRING,
//               protocol_type STRING, protocols [name STRING, metadata BYTES]
// Request v5:   group_id STRING, session_timeout_ms INT32, rebalance_timeout_ms INT32, member_id STRING,
//               group_instance_id NULLABLE_STRING, protocol_type STRING, protocols [name STRING, metadata BYTES]
// Response v0-1: error_code INT16, generation_id INT32, protocol_name STRING, leader STRING, member_id STRING,
//                members [member_id STRING, metadata BYTES]
// Response v2-4: throttle_time_ms INT32, then as v0-1
// Response v5:   throttle_time_ms INT32, error_code INT16, generation_id INT32, protocol_name STRING,
//                leader STRING, member_id STRING, members [member_id STRING, group_instance_id NULLABLE_STRING,
//                metadata BYTES]
//
// Protocol metadata is opaque to the broker (the consumer protocol's encoding): views of the request.

/** One protocol on the wire: name length INT16 + metadata length INT32. */
const PROTOCOL_BYTES_MIN = 2 + 4;

export interface JoinGroupRequestProtocol {
  readonly name: string;
  readonly metadata: Uint8Array;
}

export interface JoinGroupRequest {
  readonly groupId: string;
  readonly sessionTimeoutMs: number;
  /** v1+; in v0 the session timeout also bounds the rebalance, as Kafka does. */
  readonly rebalanceTimeoutMs: number;
  /** Empty on a member's first join. */
  readonly memberId: string;
  /** Static membership (KIP-345), v5+; null before. */
  readonly groupInstanceId: string | null;
  readonly protocolType: string;
  readonly protocols: readonly JoinGroupRequestProtocol[];
}

export interface JoinGroupResponseMember {
  readonly memberId: string;
  /** Written in v5+ only. */
  readonly groupInstanceId: string | null;
  readonly metadata: Uint8Array;
}

export interface JoinGroupResponse {
  readonly throttleTimeMs: number;
  readonly errorCode: number;
  readonly generationId: number;
  readonly protocolName: string;
  readonly leader: string;
  readonly memberId: string;
  /** Filled for the leader only; empty for the other members. */
  readonly members: readonly JoinGroupResponseMember[];
}

export const joinGroupCodec: ApiCodec<JoinGroupRequest, JoinGroupResponse> = {
  key: 11,
  name: 'JoinGroup',
  minVersion: 0,
  maxVersion: 5,
  flexibleFrom: 6,
  decodeRequest(reader: KafkaReader, version: number): JoinGroupRequest {
    const groupId = reader.string();
    const sessionTimeoutMs = reader.int32();
    const rebalanceTimeoutMs = version >= 1 ? reader.int32() : sessionTimeoutMs;
    const memberId = reader.string();
    const groupInstanceId = version >= 5 ? reader.nullableString() : null;
    const protocolType = reader.string();
    const protocols = reader.array(readProtocol, PROTOCOL_BYTES_MIN);
    return { groupId, sessionTimeoutMs, rebalanceTimeoutMs, memberId, groupInstanceId, protocolType, protocols };
  },
  encodeResponse(writer: KafkaWriter, version: number, response: JoinGroupResponse): void {
    if (version >= 2) writer.int32(response.throttleTimeMs);
    writer.int16(response.errorCode).int32(response.generationId);
    writer.string(response.protocolName).string(response.leader).string(response.memberId);
    writer.array(response.members, (w, member) => {
      w.string(member.memberId);
      if (version >= 5) w.nullableString(member.groupInstanceId);
      w.nullableBytes(member.metadata);
    });
  },
};

function readProtocol(reader: KafkaReader): JoinGroupRequestProtocol {
  const name = reader.string();
  const position = reader.position;
  const metadata = reader.nullableBytes();
  if (metadata === null) throw new ProtocolError('null where protocol metadata is required', position);
  return { name, metadata };
}
