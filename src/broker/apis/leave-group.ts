import type { KafkaReader } from '../protocol/reader.ts';
import type { KafkaWriter } from '../protocol/writer.ts';
import type { ApiCodec } from './api.ts';

// LeaveGroup (key 13), versions 0-3; 4 is the first flexible version (not supported).
// Request v0-2: group_id STRING, member_id STRING
// Request v3:   group_id STRING, members [member_id STRING, group_instance_id NULLABLE_STRING]
// Response v0:   error_code INT16
// Response v1-2: throttle_time_ms INT32, error_code INT16
// Response v3:   throttle_time_ms INT32, error_code INT16,
//                members [member_id STRING, group_instance_id NULLABLE_STRING, error_code INT16]
//
// v0-2 name one member; decoding turns that into a list of one (as Kafka's LeaveGroupRequest does), so that
// handlers see one shape.

/** One member on the wire: member_id length INT16 + group_instance_id length INT16. */
const MEMBER_BYTES_MIN = 2 + 2;

export interface LeaveGroupRequestMember {
  readonly memberId: string;
  /** Static membership (KIP-345), v3+; null before. */
  readonly groupInstanceId: string | null;
}

export interface LeaveGroupRequest {
  readonly groupId: string;
  /** One member in v0-2 (its member_id), the batch in v3. */
  readonly members: readonly LeaveGroupRequestMember[];
}

export interface LeaveGroupResponseMember {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly errorCode: number;
}

export interface LeaveGroupResponse {
  readonly throttleTimeMs: number;
  /** The group's error; in v0-2 also the one member's. */
  readonly errorCode: number;
  /** Written in v3+ only. */
  readonly members: readonly LeaveGroupResponseMember[];
}

export const leaveGroupCodec: ApiCodec<LeaveGroupRequest, LeaveGroupResponse> = {
  key: 13,
  name: 'LeaveGroup',
  minVersion: 0,
  maxVersion: 3,
  flexibleFrom: 4,
  decodeRequest(reader: KafkaReader, version: number): LeaveGroupRequest {
    const groupId = reader.string();
    if (version < 3) return { groupId, members: [{ memberId: reader.string(), groupInstanceId: null }] };
    const members = reader.array(readMember, MEMBER_BYTES_MIN);
    return { groupId, members };
  },
  encodeResponse(writer: KafkaWriter, version: number, response: LeaveGroupResponse): void {
    if (version >= 1) writer.int32(response.throttleTimeMs);
    writer.int16(response.errorCode);
    if (version < 3) return;
    writer.array(response.members, (w, member) => {
      w.string(member.memberId).nullableString(member.groupInstanceId).int16(member.errorCode);
    });
  },
};

function readMember(reader: KafkaReader): LeaveGroupRequestMember {
  const memberId = reader.string();
  const groupInstanceId = reader.nullableString();
  return { memberId, groupInstanceId };
}
