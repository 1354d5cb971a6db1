/**
 * The client side of the group APIs: FindCoordinator v2, JoinGroup v5, SyncGroup v3, Heartbeat v3,
 * OffsetCommit v7, OffsetFetch v5 and LeaveGroup v3, read and written by Kafka's schemas.
 */
import { type FindCoordinatorRequest, findCoordinatorRequestSchema, type FindCoordinatorResponse, findCoordinatorResponseSchema } from '../../protocol/messages/find-coordinator.ts';
import { type HeartbeatRequest, heartbeatRequestSchema, type HeartbeatResponse, heartbeatResponseSchema } from '../../protocol/messages/heartbeat.ts';
import { type JoinGroupRequest, joinGroupRequestSchema, type JoinGroupResponse, joinGroupResponseSchema } from '../../protocol/messages/join-group.ts';
import { type LeaveGroupRequest, leaveGroupRequestSchema, type LeaveGroupResponse, leaveGroupResponseSchema } from '../../protocol/messages/leave-group.ts';
import { type OffsetCommitRequest, offsetCommitRequestSchema, type OffsetCommitResponse, offsetCommitResponseSchema } from '../../protocol/messages/offset-commit.ts';
import { type OffsetFetchRequest, offsetFetchRequestSchema, type OffsetFetchResponse, offsetFetchResponseSchema } from '../../protocol/messages/offset-fetch.ts';
import { type SyncGroupRequest, syncGroupRequestSchema, type SyncGroupResponse, syncGroupResponseSchema } from '../../protocol/messages/sync-group.ts';
import { schemaClientApi } from './api.ts';

export const findCoordinatorApi = schemaClientApi<FindCoordinatorRequest, FindCoordinatorResponse>('FindCoordinator', 2, findCoordinatorRequestSchema, findCoordinatorResponseSchema);
export const joinGroupApi = schemaClientApi<JoinGroupRequest, JoinGroupResponse>('JoinGroup', 5, joinGroupRequestSchema, joinGroupResponseSchema);
export const syncGroupApi = schemaClientApi<SyncGroupRequest, SyncGroupResponse>('SyncGroup', 3, syncGroupRequestSchema, syncGroupResponseSchema);
export const heartbeatApi = schemaClientApi<HeartbeatRequest, HeartbeatResponse>('Heartbeat', 3, heartbeatRequestSchema, heartbeatResponseSchema);
export const offsetCommitApi = schemaClientApi<OffsetCommitRequest, OffsetCommitResponse>('OffsetCommit', 7, offsetCommitRequestSchema, offsetCommitResponseSchema);
export const offsetFetchApi = schemaClientApi<OffsetFetchRequest, OffsetFetchResponse>('OffsetFetch', 5, offsetFetchRequestSchema, offsetFetchResponseSchema);
export const leaveGroupApi = schemaClientApi<LeaveGroupRequest, LeaveGroupResponse>('LeaveGroup', 3, leaveGroupRequestSchema, leaveGroupResponseSchema);
