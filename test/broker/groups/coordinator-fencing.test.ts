// Group coordination across brokers (seed 16023 of the simulation). Each broker picks a group's
// coordinator by a hash over the live brokers it sees, and keeps the group's generation and
// members in memory. When two brokers' views differed, both coordinated group g: a member still
// in broker 2's generation committed 391 there after the member broker 1 had given the partition
// committed 396, and the group's committed offset went back (records consumed again after a
// restart of the consumer). Fixed: a coordinator claims the group in its control record before it
// holds any state of it, and writes commits only while the record still names that claim.
import { expect, test } from 'bun:test';
import { handleJoinGroup } from '../../../src/broker/handlers/groups.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { GatedStore } from '../../support/gated-store.ts';
import { commit, committed, coordinatorBroker, GROUP, joinAndSync, REBALANCE_TIMEOUT_MS, SESSION_TIMEOUT_MS, settle } from '../../support/group-coordinators.ts';
import { joinGroupRequest } from '../../support/requests.ts';

test("a member of a deposed coordinator cannot commit over the offset the new coordinator's member committed", async () => {
  const store = new GatedStore().store;
  const clock = new ManualClock();
  const two = coordinatorBroker(2, store, clock);
  const one = coordinatorBroker(1, store, clock);
  const a = await joinAndSync(two, clock); // broker 2 coordinates g; a consumes t/0
  expect(await commit(two, a, 380)).toBe(ErrorCode.NONE);
  // Broker 1's view changed first: it coordinates g now, and b is given t/0 there.
  const b = await joinAndSync(one, clock);
  expect(await committed(one)).toBe(380);
  expect(await commit(one, b, 396)).toBe(ErrorCode.NONE);
  // a is still a member of broker 2's generation: its late commit is refused, and broker 2 lets go of the group.
  expect(await commit(two, a, 391)).toBe(ErrorCode.NOT_COORDINATOR);
  expect(two.groups.describe(GROUP)).toBeNull();
  expect(await committed(one)).toBe(396);
  expect(await committed(two)).toBe(396);

  // a finds its coordinator again; broker 2 still takes itself for it, so it claims g back. Now b is the stale one.
  const again = await joinAndSync(two, clock);
  expect(await committed(two)).toBe(396);
  expect(await commit(one, b, 399)).toBe(ErrorCode.NOT_COORDINATOR);
  expect(await commit(two, again, 397)).toBe(ErrorCode.NONE);
  expect(await committed(one)).toBe(397);
});

test('a group held under a claim lost meanwhile starts afresh on its next join', async () => {
  const store = new GatedStore().store;
  const clock = new ManualClock();
  const two = coordinatorBroker(2, store, clock);
  const one = coordinatorBroker(1, store, clock);
  const a = await joinAndSync(two, clock);
  await joinAndSync(one, clock); // broker 1 claims g
  two.offsets.forget(GROUP); // as when broker 2's cache starts over: it finds the record names broker 1, and claims anew
  const rejoined = handleJoinGroup(
    two,
    joinGroupRequest({
      groupId: GROUP,
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      rebalanceTimeoutMs: REBALANCE_TIMEOUT_MS,
      memberId: a.memberId,
      groupInstanceId: null,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: new Uint8Array(0) }],
    }),
    'c',
  );
  expect((await rejoined).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID); // a's membership was of the lost claim
  expect(await commit(two, a, 5)).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
});

test('a rebalance completes only after a commit of the old generation is written', async () => {
  const gated = new GatedStore();
  const clock = new ManualClock();
  const broker = coordinatorBroker(1, gated.store, clock);
  const a = await joinAndSync(broker, clock);
  gated.hold('cluster/control/groups/'); // a's commit is slow to land
  const aCommit = commit(broker, a, 50);
  await settle();
  // b joins; a, waiting on its commit, does not rejoin before the rebalance timeout
  let bJoined = false;
  const bJoin = handleJoinGroup(
    broker,
    joinGroupRequest({
      groupId: GROUP,
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      rebalanceTimeoutMs: REBALANCE_TIMEOUT_MS,
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
  clock.advance(REBALANCE_TIMEOUT_MS);
  await settle();
  expect(bJoined).toBe(false); // the new generation waits for the old one's commit
  gated.release('cluster/control/groups/');
  expect(await aCommit).toBe(ErrorCode.NONE);
  const joined = await bJoin;
  expect(joined.errorCode).toBe(ErrorCode.NONE);
  expect(joined.generationId).toBe(a.generationId + 1);
  expect(await committed(broker)).toBe(50); // what b's consumer starts from: a's last commit
});
