import { ProtocolError } from '../protocol/errors.ts';
import type { KafkaReader } from '../protocol/reader.ts';
import type { KafkaWriter } from '../protocol/writer.ts';
import type { ApiCodec } from './api.ts';

// SyncGroup (key 14), versions 0-3; 4 is the first flexible version (not supported).
// Request v0-2: group_id STRING, generation_id INT32, member_id STRING,
//               assignments [member_id STRING, assignment BYTES]
// Request v3:   group_id STRING, generation_id INT32, member_id STRING, group_instance_id NULLABLE_STRING,
//               assignments [member_id STRING, assignment BYTES]
// Response v0:   error_code INT16, assignment BYTES
// Response v1-3: throttle_time_ms INT32, error_code INT16, assignment BYTES
//
// Assignments are opaque to the broker (the consumer protocol's encoding): views of the request.

/** One assignment on the wire: member_id length INT16 + assignment length INT32. */
const ASSIGNMENT_BYTES_MIN = 2 + 4;

export interface SyncGroupRequestAssignment {
  readonly memberId: string;
  readonly assignment: Uint8Array;
}

export interface SyncGroupRequest {
  readonly groupId: string;
  readonly generationId: number;
  readonly memberId: string;
  /** Static membership (KIP-345), v3+; null before. */
  readonly groupInstanceId: string | null;
  /** Sent by the group leader only; empty from followers. */
  readonly assignments: readonly SyncGroupRequestAssignment[];
}

export interface SyncGroupResponse {
  readonly throttleTimeMs: number;
  readonly errorCode: number;
  readonly assignment: Uint8Array;
}

export const syncGroupCodec: ApiCodec<SyncGroupRequest, SyncGroupResponse> = {
  key: 14,
  name: 'SyncGroup',
  minVersion: 0,
  maxVersion: 3,
  flexibleFrom: 4,
  decodeRequest(reader: KafkaReader, version: number): SyncGroupRequest {
    const groupId = reader.string();
    const generationId = reader.int32();
    const memberId = reader.string();
    const groupInstanceId = version >= 3 ? reader.nullableString() : null;
    const assignments = reader.array(readAssignment, ASSIGNMENT_BYTES_MIN);
    return { groupId, generationId, memberId, groupInstanceId, assignments };
  },
  encodeResponse(writer: KafkaWriter, version: number, response: SyncGroupResponse): void {
    if (version >= 1) writer.int32(response.throttleTimeMs);
    writer.int16(response.errorCode).nullableBytes(response.assignment);
  },
};

function readAssignment(reader: KafkaReader): SyncGroupRequestAssignment {
  const memberId = reader.string();
  const position = reader.position;
  const assignment = reader.nullableBytes();
  if (assignment === null) throw new ProtocolError('null where an assignment is required', position);
  return { memberId, assignment };
}
