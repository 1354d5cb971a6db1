// Group coordinator fencing, as an adversarial review tried to break it: what a JoinGroup claims. [G1] puts
// the claim (a store write that takes the group from any other coordinator) before
// GroupCoordinator.join validates the request.
import { expect, test } from 'bun:test';
import { INITIAL_REBALANCE_DELAY_MS } from '../../../src/broker/groups/coordinator.ts';
import { handleJoinGroup, handleSyncGroup } from '../../../src/broker/handlers/groups.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { commit, coordinatorBroker, joinRequest, settle } from '../../support/group-coordinators.ts';
import { syncGroupRequest } from '../../support/requests.ts';

// Found by review (finding 3), fixed: a JoinGroup that join() then refuses (INVALID_SESSION_TIMEOUT here; likewise
// INVALID_GROUP_ID, UNKNOWN_MEMBER_ID, INCONSISTENT_GROUP_PROTOCOL, GROUPS_MAX) has already claimed
// the group: it takes the group from the coordinator that holds it, whose members' next commit is
// refused NOT_COORDINATOR and whose group is dropped (a rebalance of every member), for a request
// that was never going to hold any state. One misconfigured client reaching a broker whose view
// differs unseats a healthy group over and over.
test('a JoinGroup refused for its session timeout does not take the group from its coordinator', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const one = coordinatorBroker(1, store, clock);
  const two = coordinatorBroker(2, store, clock);
  const joining = handleJoinGroup(one, joinRequest(), 'c');
  await settle();
  clock.advance(INITIAL_REBALANCE_DELAY_MS);
  const joined = await joining;
  expect((await handleSyncGroup(one, syncGroupRequest({ groupId: 'g', generationId: joined.generationId, memberId: joined.memberId, groupInstanceId: null, assignments: [] }))).errorCode).toBe(
    ErrorCode.NONE,
  );
  expect(await commit(one, joined, 10)).toBe(ErrorCode.NONE);

  expect((await handleJoinGroup(two, joinRequest({ sessionTimeoutMs: 1 }), 'c')).errorCode).toBe(ErrorCode.INVALID_SESSION_TIMEOUT); // 1 ms: refused
  expect(await commit(one, joined, 11)).toBe(ErrorCode.NONE); // fails: NOT_COORDINATOR, and broker 1 dropped the group
});

// Found by review (finding 3), fixed (same cause): a JoinGroup with the empty group id, refused INVALID_GROUP_ID, still
// creates a control record "groups/" (the prefix itself) that every expiry round lists as a group.
test('a JoinGroup with the empty group id stores nothing', async () => {
  const store = new MemoryStore();
  const broker = coordinatorBroker(1, store, new ManualClock());
  expect((await handleJoinGroup(broker, joinRequest({ groupId: '' }), 'c')).errorCode).toBe(ErrorCode.INVALID_GROUP_ID);
  expect(await broker.offsets.groups()).toEqual([]); // fails: ['']
});

// Found by review (finding 4), fixed: a group id whose record key passes the store's key limit (S3: 1,024 bytes, after
// encodeURIComponent: 342 CJK characters; the file store: 253 bytes per segment, 29 CJK
// characters) can now never join: the claim fails with the store's InvalidArgument, mapped to
// KAFKA_STORAGE_ERROR and answered COORDINATOR_NOT_AVAILABLE, which clients retry forever. It
// is a permanent fault: it should be refused for good (INVALID_GROUP_ID), as it is no transient
// coordinator problem. (Before 584c0ee the join succeeded and only commits and fetches failed,
// as KAFKA_STORAGE_ERROR / COORDINATOR_LOAD_IN_PROGRESS, also retried forever: pre-existing for
// offsets, new for membership.)
test('a group id too long for a record key is refused for good, not answered retriably forever', async () => {
  const store = new MemoryStore();
  const broker = coordinatorBroker(1, store, new ManualClock());
  const groupId = '消'.repeat(400); // 1,200 bytes of UTF-8, 3,600 once percent-encoded: a legal Kafka group id
  const answer = await handleJoinGroup(broker, joinRequest({ groupId }), 'c');
  expect(answer.errorCode).not.toBe(ErrorCode.COORDINATOR_NOT_AVAILABLE); // fails: retriable, and it fails the same way on every retry
});
