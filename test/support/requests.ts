/**
 * Requests for handler tests, as the broker decodes them: a test names the fields it cares
 * about, and every other field takes the value a client leaving it at its default sends.
 */
import { completeMessage, type Draft } from '../../src/protocol/message-codec.ts';
import { type FetchRequest, fetchRequestSchema } from '../../src/protocol/messages/fetch.ts';
import { type ListOffsetsRequest, listOffsetsRequestSchema } from '../../src/protocol/messages/list-offsets.ts';
import { type MetadataRequest, metadataRequestSchema } from '../../src/protocol/messages/metadata.ts';
import { type OffsetCommitRequest, offsetCommitRequestSchema } from '../../src/protocol/messages/offset-commit.ts';
import { type OffsetFetchRequest, offsetFetchRequestSchema } from '../../src/protocol/messages/offset-fetch.ts';
import { type FindCoordinatorRequest, findCoordinatorRequestSchema } from '../../src/protocol/messages/find-coordinator.ts';
import { type JoinGroupRequest, joinGroupRequestSchema } from '../../src/protocol/messages/join-group.ts';
import { type SyncGroupRequest, syncGroupRequestSchema } from '../../src/protocol/messages/sync-group.ts';
import { type HeartbeatRequest, heartbeatRequestSchema } from '../../src/protocol/messages/heartbeat.ts';
import { type LeaveGroupRequest, leaveGroupRequestSchema } from '../../src/protocol/messages/leave-group.ts';
import { type ListGroupsRequest, listGroupsRequestSchema } from '../../src/protocol/messages/list-groups.ts';
import { type DescribeGroupsRequest, describeGroupsRequestSchema } from '../../src/protocol/messages/describe-groups.ts';
import { type DeleteGroupsRequest, deleteGroupsRequestSchema } from '../../src/protocol/messages/delete-groups.ts';
import { type OffsetDeleteRequest, offsetDeleteRequestSchema } from '../../src/protocol/messages/offset-delete.ts';

/** Fetch at v12, the last version that names topics (v13+ name them by id). */
export const fetchRequest = (draft: Draft<FetchRequest>): FetchRequest => completeMessage<FetchRequest>(fetchRequestSchema, draft, 12);
export const listOffsetsRequest = (draft: Draft<ListOffsetsRequest>): ListOffsetsRequest => completeMessage<ListOffsetsRequest>(listOffsetsRequestSchema, draft);
export const metadataRequest = (draft: Draft<MetadataRequest>): MetadataRequest => completeMessage<MetadataRequest>(metadataRequestSchema, draft);
/** OffsetCommit at v7, the last version with a generation id of the classic protocol named so. */
export const offsetCommitRequest = (draft: Draft<OffsetCommitRequest>): OffsetCommitRequest => completeMessage<OffsetCommitRequest>(offsetCommitRequestSchema, draft);
/** OffsetFetch at v7, one group per request (v8+ name several). */
export const offsetFetchRequest = (draft: Draft<OffsetFetchRequest>): OffsetFetchRequest => completeMessage<OffsetFetchRequest>(offsetFetchRequestSchema, draft, 7);
export const findCoordinatorRequest = (draft: Draft<FindCoordinatorRequest>): FindCoordinatorRequest => completeMessage<FindCoordinatorRequest>(findCoordinatorRequestSchema, draft, 3);

export const joinGroupRequest = (draft: Draft<JoinGroupRequest>): JoinGroupRequest => completeMessage<JoinGroupRequest>(joinGroupRequestSchema, draft);
export const syncGroupRequest = (draft: Draft<SyncGroupRequest>): SyncGroupRequest => completeMessage<SyncGroupRequest>(syncGroupRequestSchema, draft);
export const heartbeatRequest = (draft: Draft<HeartbeatRequest>): HeartbeatRequest => completeMessage<HeartbeatRequest>(heartbeatRequestSchema, draft);
export const leaveGroupRequest = (draft: Draft<LeaveGroupRequest>): LeaveGroupRequest => completeMessage<LeaveGroupRequest>(leaveGroupRequestSchema, draft);
export const listGroupsRequest = (draft: Draft<ListGroupsRequest>): ListGroupsRequest => completeMessage<ListGroupsRequest>(listGroupsRequestSchema, draft);
export const describeGroupsRequest = (draft: Draft<DescribeGroupsRequest>): DescribeGroupsRequest => completeMessage<DescribeGroupsRequest>(describeGroupsRequestSchema, draft);
export const deleteGroupsRequest = (draft: Draft<DeleteGroupsRequest>): DeleteGroupsRequest => completeMessage<DeleteGroupsRequest>(deleteGroupsRequestSchema, draft);
export const offsetDeleteRequest = (draft: Draft<OffsetDeleteRequest>): OffsetDeleteRequest => completeMessage<OffsetDeleteRequest>(offsetDeleteRequestSchema, draft);
