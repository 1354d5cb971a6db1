// Group coordinator fencing, as an adversarial review tried to break it: [G3] counts a member's commit in
// flight on the in-memory Group object, and the rebalance of that object waits for it. But
// OffsetExpiry drops an empty group (GroupCoordinator.forget) with no regard for commits in flight,
// and the next join builds a new Group object under the same claim (ControlOffsetStore.claim
// finds the record naming this process and adopts it): the new generation does not wait for the
// old commit, which [G2] does not fence (same claim), so it lands over the new member's commit.
import { expect, test } from 'bun:test';
import { INITIAL_REBALANCE_DELAY_MS } from '../../../src/broker/groups/coordinator.ts';
import { OffsetExpiry } from '../../../src/broker/groups/offset-expiry.ts';
import { handleJoinGroup, handleOffsetFetch, handleSyncGroup } from '../../../src/broker/handlers/groups.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { commit, coordinatorBroker, GROUP, GROUP_RECORDS, joinAndSync, SESSION_TIMEOUT_MS, settle } from '../../support/group-coordinators.ts';
import { GatedStore } from '../../support/gated-store.ts';
import { joinGroupRequest, offsetFetchRequest, syncGroupRequest } from '../../support/requests.ts';

const RETENTION_MS = 60 * 60_000;

// Found by review (finding 8): a commit of a member that was no longer in any generation landed
// over the commit of the next generation's member: the committed offset went back (500 to 100).
// Fixed twice over: expiry does not forget a group with a commit being written, so the next
// generation waits for that commit [G3]; and a commit's write is judged again, right before each
// compare-and-swap round, against the member's generation.
test("a commit in flight when its member's session expires lands before the next generation forms, never over its commit", async () => {
  const gated = new GatedStore();
  const clock = new ManualClock();
  const broker = coordinatorBroker(1, gated.store, clock);
  const { groups, offsets } = broker;
  const expiry = new OffsetExpiry({ groups, offsets, clock, retentionMs: RETENTION_MS, coordinates: () => true });

  const a = await joinAndSync(broker, clock);
  const waiting = gated.holdNext(GROUP_RECORDS);
  const aCommit = commit(broker, a, 100); // a's first commit: its write is slow to land
  await waiting;
  // a's heartbeats queue behind the commit on its connection (requests other than Produce run one
  // at a time): its session expires and the group is empty, with a's commit still in flight.
  clock.advance(SESSION_TIMEOUT_MS);
  expect(groups.status(GROUP)?.members).toBe(0);
  await expiry.expireNow(); // nothing stored yet: the group would be forgotten, but a's commit keeps it
  expect(groups.status(GROUP)).toBeDefined();
  // A consumer joins (a restarted, say): its generation forms only once a's commit is written.
  let bJoined = false;
  const joining = handleJoinGroup(
    broker,
    joinGroupRequest({
      groupId: GROUP,
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      rebalanceTimeoutMs: 5_000,
      memberId: '',
      groupInstanceId: null,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: new Uint8Array(0) }],
    }),
    'c',
  ).then((joined) => {
    bJoined = true;
    return joined;
  });
  await settle();
  clock.advance(INITIAL_REBALANCE_DELAY_MS);
  await settle();
  expect(bJoined).toBe(false);
  gated.release(GROUP_RECORDS);
  expect(await aCommit).toBe(ErrorCode.NONE); // issued while a was a member, written before the next generation
  const joined = await joining;
  expect(joined.errorCode).toBe(ErrorCode.NONE);
  await handleSyncGroup(
    broker,
    syncGroupRequest({
      groupId: GROUP,
      generationId: joined.generationId,
      memberId: joined.memberId,
      groupInstanceId: null,
      assignments: [{ memberId: joined.memberId, assignment: new Uint8Array([1]) }],
    }),
  );
  const fetched = async () => (await handleOffsetFetch(broker, offsetFetchRequest({ groupId: GROUP, topics: [{ name: 't', partitionIndexes: [0] }] }))).topics![0]!.partitions[0]!.committedOffset;
  expect(await fetched()).toBe(100); // what b starts from
  expect(await commit(broker, { memberId: joined.memberId, generationId: joined.generationId }, 500)).toBe(ErrorCode.NONE);
  expect(await fetched()).toBe(500);
});

test('a commit whose compare-and-swap lost a round after its member left the generation writes nothing in the next round', async () => {
  const gated = new GatedStore();
  const clock = new ManualClock();
  const broker = coordinatorBroker(1, gated.store, clock);
  const a = await joinAndSync(broker, clock);
  const waiting = gated.holdNext(GROUP_RECORDS);
  const aCommit = commit(broker, a, 100); // its first round's write waits
  await waiting;
  expect(await commit(broker, { memberId: '', generationId: -1 }, 7)).toBe(ErrorCode.NONE); // a simple commit changes the record meanwhile
  clock.advance(SESSION_TIMEOUT_MS); // a leaves the generation (its session expires)
  gated.release(GROUP_RECORDS); // a's write meets the changed record; the next round finds a gone
  expect(await aCommit).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  const fetched = await handleOffsetFetch(broker, offsetFetchRequest({ groupId: GROUP, topics: [{ name: 't', partitionIndexes: [0] }] }));
  expect(fetched.topics![0]!.partitions[0]!.committedOffset).toBe(7);
});
