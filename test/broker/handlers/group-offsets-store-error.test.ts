// Seen in the simulation: a request whose control-store read failed (a throttled GET) threw out of
// its handler and the broker closed the connection, failing every request on it and telling the
// client nothing. JoinGroup, OffsetCommit and OffsetFetch read the store too; each answers a retriable error.
import { expect, test } from 'bun:test';
import type { BrokerContext } from '../../../src/broker/context.ts';
import { LOCAL_CLAIM } from '../../../src/broker/groups/offset-store.ts';
import { handleJoinGroup, handleOffsetCommit, handleOffsetFetch } from '../../../src/broker/handlers/groups.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { StoreError } from '../../../src/store/errors.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { joinGroupRequest, offsetCommitRequest, offsetFetchRequest } from '../../support/requests.ts';
import { OPEN_SECURITY } from '../../support/broker-security.ts';

const throttled = async (): Promise<never> => {
  throw new StoreError('Throttled', 'injected Throttled');
};

/** The coordinator of every group, whose control-store reads all fail. */
const context = {
  ...OPEN_SECURITY,
  nodeId: 1,
  clock: new ManualClock(),
  topology: { coordinatorFor: () => ({ nodeId: 1 }), partitionCount: throttled, topicId: () => null },
  groups: { beginCommit: () => ({ errorCode: ErrorCode.NONE, claim: LOCAL_CLAIM, recheck: () => ErrorCode.NONE, done: () => {} }), refusal: () => ErrorCode.NONE, hasMembers: () => false },
  offsets: { list: throttled, commit: throttled, claim: throttled },
} as unknown as BrokerContext;

test('OffsetCommit answers each partition COORDINATOR_NOT_AVAILABLE when a topic record cannot be read, or the offsets cannot be written (never KAFKA_STORAGE_ERROR: the Java consumer fails a commit answered that for good)', async () => {
  const partitions = [0, 1].map((partitionIndex) => ({ partitionIndex, committedOffset: 5, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: null }));
  const request = offsetCommitRequest({ groupId: 'g', generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics: [{ name: 't', partitions }] });
  const response = await handleOffsetCommit(context, request);
  expect(response.topics[0]!.partitions.map((p) => p.errorCode)).toEqual([ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_NOT_AVAILABLE]);
  const known = { ...context, topology: { ...context.topology, partitionCount: async () => 2, topicId: () => 'id' } } as unknown as BrokerContext;
  const written = await handleOffsetCommit(known, request);
  expect(written.topics[0]!.partitions.map((p) => p.errorCode)).toEqual([ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_NOT_AVAILABLE]);
});

test('OffsetFetch answers COORDINATOR_LOAD_IN_PROGRESS, for the request and each partition, when the offsets cannot be read', async () => {
  const response = await handleOffsetFetch(context, offsetFetchRequest({ groupId: 'g', topics: [{ name: 't', partitionIndexes: [0, 1] }] }));
  expect(response.errorCode).toBe(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  expect(response.topics![0]!.partitions.map((p) => [p.errorCode, p.committedOffset])).toEqual([
    [ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, -1],
    [ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, -1],
  ]);
  const all = await handleOffsetFetch(context, offsetFetchRequest({ groupId: 'g', topics: null }));
  expect([all.errorCode, all.topics]).toEqual([ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, []]);
});

test("JoinGroup and a simple consumer's OffsetCommit answer COORDINATOR_NOT_AVAILABLE when the group cannot be claimed", async () => {
  const joined = await handleJoinGroup(
    context,
    joinGroupRequest({
      groupId: 'g',
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 5_000,
      memberId: '',
      groupInstanceId: null,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: new Uint8Array(0) }],
    }),
    'c',
  );
  expect(joined.errorCode).toBe(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  const simple = { ...context, groups: { beginCommit: () => ({ errorCode: ErrorCode.NONE, claim: null, recheck: () => ErrorCode.NONE, done: () => {} }) } } as unknown as BrokerContext;
  const partitions = [{ partitionIndex: 0, committedOffset: 5, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: null }];
  const response = await handleOffsetCommit(
    simple,
    offsetCommitRequest({ groupId: 'g', generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1, topics: [{ name: 't', partitions }] }),
  );
  expect(response.topics[0]!.partitions.map((p) => p.errorCode)).toEqual([ErrorCode.COORDINATOR_NOT_AVAILABLE]);
});
