/**
 * The client side of the group APIs: FindCoordinator v2, JoinGroup v5, SyncGroup v3, Heartbeat v3,
 * OffsetCommit v7, OffsetFetch v5 and LeaveGroup v3 (grammar in src/broker/apis). Fields a version
 * does not carry decode to the broker codec's defaults.
 */
import { type FindCoordinatorRequest, findCoordinatorRequestSchema, type FindCoordinatorResponse, findCoordinatorResponseSchema } from '../../broker/protocol/messages/find-coordinator.ts';
import type { HeartbeatRequest, HeartbeatResponse } from '../../broker/apis/heartbeat.ts';
import type { JoinGroupRequest, JoinGroupResponse } from '../../broker/apis/join-group.ts';
import type { LeaveGroupRequest, LeaveGroupResponse } from '../../broker/apis/leave-group.ts';
import { type OffsetCommitRequest, offsetCommitRequestSchema, type OffsetCommitResponse, offsetCommitResponseSchema } from '../../broker/protocol/messages/offset-commit.ts';
import { type OffsetFetchRequest, offsetFetchRequestSchema, type OffsetFetchResponse, offsetFetchResponseSchema } from '../../broker/protocol/messages/offset-fetch.ts';
import type { SyncGroupRequest, SyncGroupResponse } from '../../broker/apis/sync-group.ts';
import type { KafkaReader } from '../../broker/protocol/reader.ts';
import type { KafkaWriter } from '../../broker/protocol/writer.ts';
import { type ClientApi, schemaClientApi } from './api.ts';

const EMPTY_BYTES = new Uint8Array(0);

/** BYTES that the broker never sends null; an empty value stands in if it does. */
function bytesOf(reader: KafkaReader): Uint8Array {
  return reader.nullableBytes() ?? EMPTY_BYTES;
}

const writeInt32 = (writer: KafkaWriter, value: number): void => void writer.int32(value);

export const findCoordinatorApi = schemaClientApi<FindCoordinatorRequest, FindCoordinatorResponse>('FindCoordinator', 2, findCoordinatorRequestSchema, findCoordinatorResponseSchema);

export const joinGroupApi: ClientApi<JoinGroupRequest, JoinGroupResponse> = {
  key: 11,
  name: 'JoinGroup',
  version: 5,
  encodeRequest(writer, request) {
    writer.string(request.groupId).int32(request.sessionTimeoutMs).int32(request.rebalanceTimeoutMs);
    writer.string(request.memberId).nullableString(request.groupInstanceId).string(request.protocolType);
    writer.array(request.protocols, (w, protocol) => w.string(protocol.name).nullableBytes(protocol.metadata));
  },
  decodeResponse(reader) {
    const throttleTimeMs = reader.int32();
    const errorCode = reader.int16();
    const generationId = reader.int32();
    const protocolName = reader.string();
    const leader = reader.string();
    const memberId = reader.string();
    const members = reader.array((r) => ({ memberId: r.string(), groupInstanceId: r.nullableString(), metadata: bytesOf(r) }));
    return { throttleTimeMs, errorCode, generationId, protocolName, leader, memberId, members };
  },
};

export const syncGroupApi: ClientApi<SyncGroupRequest, SyncGroupResponse> = {
  key: 14,
  name: 'SyncGroup',
  version: 3,
  encodeRequest(writer, request) {
    writer.string(request.groupId).int32(request.generationId).string(request.memberId).nullableString(request.groupInstanceId);
    writer.array(request.assignments, (w, a) => w.string(a.memberId).nullableBytes(a.assignment));
  },
  decodeResponse(reader) {
    return { throttleTimeMs: reader.int32(), errorCode: reader.int16(), assignment: bytesOf(reader) };
  },
};

export const heartbeatApi: ClientApi<HeartbeatRequest, HeartbeatResponse> = {
  key: 12,
  name: 'Heartbeat',
  version: 3,
  encodeRequest(writer, request) {
    writer.string(request.groupId).int32(request.generationId).string(request.memberId).nullableString(request.groupInstanceId);
  },
  decodeResponse(reader) {
    return { throttleTimeMs: reader.int32(), errorCode: reader.int16() };
  },
};

export const offsetCommitApi = schemaClientApi<OffsetCommitRequest, OffsetCommitResponse>('OffsetCommit', 7, offsetCommitRequestSchema, offsetCommitResponseSchema);
export const offsetFetchApi = schemaClientApi<OffsetFetchRequest, OffsetFetchResponse>('OffsetFetch', 5, offsetFetchRequestSchema, offsetFetchResponseSchema);

export const leaveGroupApi: ClientApi<LeaveGroupRequest, LeaveGroupResponse> = {
  key: 13,
  name: 'LeaveGroup',
  version: 3,
  encodeRequest(writer, request) {
    writer.string(request.groupId).array(request.members, (w, m) => w.string(m.memberId).nullableString(m.groupInstanceId));
  },
  decodeResponse(reader) {
    const throttleTimeMs = reader.int32();
    const errorCode = reader.int16();
    const members = reader.array((r) => ({ memberId: r.string(), groupInstanceId: r.nullableString(), errorCode: r.int16() }));
    return { throttleTimeMs, errorCode, members };
  },
};
