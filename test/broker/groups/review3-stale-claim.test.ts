// Adversarial review of 584c0ee (group coordinator fencing): a claim cached after it was lost.
// ControlOffsetStore caches a claim until a write under it is refused; a JoinGroup trusts the
// cache. A broker that lost the group while it was not the coordinator (the other broker took
// it) and later becomes the coordinator for real (the other one died) forms a whole generation
// under the lost claim: its members are given partitions, consume, and every commit is refused.
import { expect, test } from 'bun:test';
import type { BrokerContext } from '../../../src/broker/context.ts';
import { GroupCoordinator, INITIAL_REBALANCE_DELAY_MS } from '../../../src/broker/groups/coordinator.ts';
import { ControlOffsetStore } from '../../../src/broker/groups/offset-store.ts';
import { handleJoinGroup, handleLeaveGroup, handleOffsetCommit, handleSyncGroup } from '../../../src/broker/handlers/groups.ts';
import { ErrorCode } from '../../../src/broker/protocol/error-codes.ts';
import { ControlStore } from '../../../src/cluster/control-store.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import type { ObjectStore } from '../../../src/store/object-store.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { idOf } from '../../support/topic-ids.ts';

const GROUP = 'g';

function coordinatorBroker(nodeId: number, store: ObjectStore, clock: ManualClock): BrokerContext {
  const topology = { coordinatorFor: () => ({ nodeId }), partitionCount: async () => 1, topicId: () => idOf('t'), isCurrentIncarnation: async () => true };
  const offsets = new ControlOffsetStore(new ControlStore(store, 'cluster'), { nodeId, incarnation: `broker-${nodeId}` });
  return { nodeId, clock, groups: new GroupCoordinator(clock), offsets, topology } as unknown as BrokerContext;
}

async function settle(): Promise<void> {
  for (let i = 0; i < 50; i++) await Promise.resolve();
}

async function joinAndSync(broker: BrokerContext, clock: ManualClock): Promise<{ memberId: string; generationId: number }> {
  const joining = handleJoinGroup(broker, { groupId: GROUP, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 5_000, memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: new Uint8Array(0) }] }, 'c');
  await settle();
  clock.advance(INITIAL_REBALANCE_DELAY_MS);
  const joined = await joining;
  expect(joined.errorCode).toBe(ErrorCode.NONE);
  expect((await handleSyncGroup(broker, { groupId: GROUP, generationId: joined.generationId, memberId: joined.memberId, groupInstanceId: null, assignments: [{ memberId: joined.memberId, assignment: new Uint8Array([1]) }] })).errorCode).toBe(ErrorCode.NONE);
  return { memberId: joined.memberId, generationId: joined.generationId };
}

async function commit(broker: BrokerContext, member: { memberId: string; generationId: number }, offset: number): Promise<number> {
  const topics = [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: 0, commitTimestamp: -1, committedMetadata: null }] }];
  return (await handleOffsetCommit(broker, { groupId: GROUP, generationId: member.generationId, memberId: member.memberId, groupInstanceId: null, retentionTimeMs: -1, topics })).topics[0]!.partitions[0]!.errorCode;
}

// Found by review (finding 7), fixed: the first generation a broker forms after a failover back to it cannot commit.
test('a broker that becomes the coordinator again forms its next generation under a claim it still holds', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const two = coordinatorBroker(2, store, clock);
  const one = coordinatorBroker(1, store, clock);
  const a = await joinAndSync(two, clock); // broker 2 coordinates g (claim 1)
  expect(await commit(two, a, 10)).toBe(ErrorCode.NONE);
  expect(handleLeaveGroup(two, { groupId: GROUP, members: [{ memberId: a.memberId, groupInstanceId: null }] } as never).errorCode).toBe(ErrorCode.NONE);
  // The views move to broker 1: it claims g (claim 2) and its member commits.
  const b = await joinAndSync(one, clock);
  expect(await commit(one, b, 20)).toBe(ErrorCode.NONE);
  // Broker 1 dies; every view says broker 2 now. A consumer joins there and is given t/0.
  const c = await joinAndSync(two, clock);
  expect(await commit(two, c, 30)).toBe(ErrorCode.NONE); // fails: NOT_COORDINATOR (the generation was formed under claim 1), and the group is dropped
});
