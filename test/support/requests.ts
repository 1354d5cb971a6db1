/**
 * Requests for handler tests, as the broker decodes them: a test names the fields it cares
 * about, and every other field takes the value a client leaving it at its default sends.
 */
import { completeMessage, type Draft } from '../../src/broker/protocol/message-codec.ts';
import { type FetchRequest, fetchRequestSchema } from '../../src/broker/protocol/messages/fetch.ts';
import { type ListOffsetsRequest, listOffsetsRequestSchema } from '../../src/broker/protocol/messages/list-offsets.ts';
import { type MetadataRequest, metadataRequestSchema } from '../../src/broker/protocol/messages/metadata.ts';
import { type OffsetCommitRequest, offsetCommitRequestSchema } from '../../src/broker/protocol/messages/offset-commit.ts';
import { type OffsetFetchRequest, offsetFetchRequestSchema } from '../../src/broker/protocol/messages/offset-fetch.ts';
import { type FindCoordinatorRequest, findCoordinatorRequestSchema } from '../../src/broker/protocol/messages/find-coordinator.ts';

/** Fetch at v12, the last version that names topics (v13+ name them by id). */
export const fetchRequest = (draft: Draft<FetchRequest>): FetchRequest => completeMessage<FetchRequest>(fetchRequestSchema, draft, 12);
export const listOffsetsRequest = (draft: Draft<ListOffsetsRequest>): ListOffsetsRequest => completeMessage<ListOffsetsRequest>(listOffsetsRequestSchema, draft);
export const metadataRequest = (draft: Draft<MetadataRequest>): MetadataRequest => completeMessage<MetadataRequest>(metadataRequestSchema, draft);
/** OffsetCommit at v7, the last version with a generation id of the classic protocol named so. */
export const offsetCommitRequest = (draft: Draft<OffsetCommitRequest>): OffsetCommitRequest => completeMessage<OffsetCommitRequest>(offsetCommitRequestSchema, draft);
/** OffsetFetch at v7, one group per request (v8+ name several). */
export const offsetFetchRequest = (draft: Draft<OffsetFetchRequest>): OffsetFetchRequest => completeMessage<OffsetFetchRequest>(offsetFetchRequestSchema, draft, 7);
export const findCoordinatorRequest = (draft: Draft<FindCoordinatorRequest>): FindCoordinatorRequest => completeMessage<FindCoordinatorRequest>(findCoordinatorRequestSchema, draft, 3);
