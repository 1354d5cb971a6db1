// Group coordinator fencing, as an adversarial review tried to break it: [G3]'s deferred completion. A
// rebalance due while commits are in flight is recorded in Group.completionDue and completed by
// the last commit's done(). If every member leaves meanwhile (the group is Empty), the record is
// never cleared: the old commit's done() then completes whatever rebalance runs at that moment.
import { expect, test } from 'bun:test';
import type { BrokerContext } from '../../../src/broker/context.ts';
import { GroupCoordinator, INITIAL_REBALANCE_DELAY_MS } from '../../../src/broker/groups/coordinator.ts';
import { ControlOffsetStore } from '../../../src/broker/groups/offset-store.ts';
import { handleJoinGroup, handleOffsetCommit, handleSyncGroup } from '../../../src/broker/handlers/groups.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { ControlStore } from '../../../src/control/control-store.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { GatedStore } from '../../support/gated-store.ts';
import { idOf } from '../../support/topic-ids.ts';
import { GROUP, GROUP_RECORDS, REBALANCE_TIMEOUT_MS, settle } from '../../support/group-coordinators.ts';
import { joinGroupRequest, offsetCommitRequest, syncGroupRequest } from '../../support/requests.ts';
import { OPEN_SECURITY } from '../../support/broker-security.ts';

// Found by review (finding 10), fixed (low): the first generation of the emptied group is formed at once when the old
// commit lands, skipping INITIAL_REBALANCE_DELAY_MS: members joining a moment later force a
// second rebalance (and a stale completionDue of true drops members that have not rejoined).
test("a commit that lands after its group emptied does not complete the next group's first rebalance early", async () => {
  const gated = new GatedStore();
  const clock = new ManualClock();
  const topology = { coordinatorFor: () => ({ nodeId: 1 }), partitionCount: async () => 1, topicId: () => idOf('t'), isCurrentIncarnation: async () => true };
  const groups = new GroupCoordinator(clock);
  const offsets = new ControlOffsetStore(new ControlStore(gated.store, 'cluster'), { nodeId: 1, incarnation: 'broker-1' });
  const broker = { ...OPEN_SECURITY, nodeId: 1, clock, groups, offsets, topology } as unknown as BrokerContext;
  const join = (memberId = '') =>
    handleJoinGroup(
      broker,
      joinGroupRequest({
        groupId: GROUP,
        sessionTimeoutMs: 10_000,
        rebalanceTimeoutMs: REBALANCE_TIMEOUT_MS,
        memberId,
        groupInstanceId: null,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: new Uint8Array(0) }],
      }),
      'c',
    );

  const joiningA = join();
  await settle();
  clock.advance(INITIAL_REBALANCE_DELAY_MS);
  const a = await joiningA;
  await handleSyncGroup(broker, syncGroupRequest({ groupId: GROUP, generationId: a.generationId, memberId: a.memberId, groupInstanceId: null, assignments: [] }));
  gated.hold(GROUP_RECORDS); // a's commit is slow to land
  const topics = [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 5, committedLeaderEpoch: 0, commitTimestamp: -1, committedMetadata: null }] }];
  const aCommit = handleOffsetCommit(
    broker,
    offsetCommitRequest({ groupId: GROUP, generationIdOrMemberEpoch: a.generationId, memberId: a.memberId, groupInstanceId: null, retentionTimeMs: -1, topics }),
  );
  await settle();
  const joiningB = join(); // a rebalance, due at the timeout while a's commit is in flight: deferred
  await settle();
  clock.advance(REBALANCE_TIMEOUT_MS);
  const b = await Promise.race([joiningB, settle().then(() => null)]);
  expect(b).toBeNull();
  groups.leave(GROUP, a.memberId);
  for (const member of groups.describe(GROUP)!.members) groups.leave(GROUP, member); // everyone leaves: Empty
  expect(groups.describe(GROUP)!.state).toBe('Empty');

  let cJoined = false;
  const joiningC = join().then((joined) => {
    cJoined = true;
    return joined;
  });
  await settle();
  gated.release(GROUP_RECORDS); // a's commit lands now, before c's initial delay is over
  expect((await aCommit).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
  await settle();
  expect(cJoined).toBe(false); // fails: the stale completion formed c's generation at once
  clock.advance(INITIAL_REBALANCE_DELAY_MS);
  expect((await joiningC).errorCode).toBe(ErrorCode.NONE);
});
