// Brokers that each take themselves for a consumer group's coordinator (their views of the live
// brokers say so), driven through the real group handlers on one control store: what the group
// fencing tests (docs/cluster-protocol.md, group coordination) need.
import { expect } from 'bun:test';
import type { JoinGroupRequest } from '../../src/broker/apis/join-group.ts';
import type { BrokerContext } from '../../src/broker/context.ts';
import { GroupCoordinator, INITIAL_REBALANCE_DELAY_MS } from '../../src/broker/groups/coordinator.ts';
import { ControlOffsetStore } from '../../src/broker/groups/offset-store.ts';
import { handleJoinGroup, handleOffsetCommit, handleOffsetFetch, handleSyncGroup } from '../../src/broker/handlers/groups.ts';
import { ErrorCode } from '../../src/protocol/error-codes.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import type { ManualClock } from '../../src/util/clock.ts';
import { idOf } from './topic-ids.ts';
import { joinGroupRequest, offsetCommitRequest, offsetFetchRequest, syncGroupRequest } from './requests.ts';
import { OPEN_SECURITY } from './broker-security.ts';

export const GROUP = 'g';
export const SESSION_TIMEOUT_MS = 10_000;
export const REBALANCE_TIMEOUT_MS = 5_000;
/** Where the group records of `coordinatorBroker`s live in their store (for GatedStore.hold). */
export const GROUP_RECORDS = 'cluster/control/groups/';

export interface Member {
  readonly memberId: string;
  readonly generationId: number;
}

/** A broker coordinating every group, with one topic `t` of one partition, over `store`'s control records. */
export function coordinatorBroker(nodeId: number, store: ObjectStore, clock: ManualClock, groups = new GroupCoordinator(clock)): BrokerContext {
  const topology = { coordinatorFor: () => ({ nodeId }), partitionCount: async () => 1, topicId: () => idOf('t'), isCurrentIncarnation: async () => true };
  const offsets = new ControlOffsetStore(new ControlStore(store, 'cluster'), { nodeId, incarnation: `broker-${nodeId}` });
  return { ...OPEN_SECURITY, nodeId, clock, groups, offsets, topology } as unknown as BrokerContext;
}

export function joinRequest(options: { groupId?: string; memberId?: string; sessionTimeoutMs?: number } = {}): JoinGroupRequest {
  return joinGroupRequest({
    groupId: options.groupId ?? GROUP,
    sessionTimeoutMs: options.sessionTimeoutMs ?? SESSION_TIMEOUT_MS,
    rebalanceTimeoutMs: REBALANCE_TIMEOUT_MS,
    memberId: options.memberId ?? '',
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: new Uint8Array(0) }],
  });
}

/** A member joined and synced (its own leader, assigned t/0), past the initial rebalance delay. */
export async function joinAndSync(broker: BrokerContext, clock: ManualClock, options: { groupId?: string; memberId?: string } = {}): Promise<Member> {
  const groupId = options.groupId ?? GROUP;
  const joining = handleJoinGroup(broker, joinRequest(options), 'c');
  await settle();
  clock.advance(INITIAL_REBALANCE_DELAY_MS);
  const joined = await joining;
  expect(joined.errorCode).toBe(ErrorCode.NONE);
  const synced = await handleSyncGroup(
    broker,
    syncGroupRequest({ groupId, generationId: joined.generationId, memberId: joined.memberId, groupInstanceId: null, assignments: [{ memberId: joined.memberId, assignment: new Uint8Array([1]) }] }),
  );
  expect(synced.errorCode).toBe(ErrorCode.NONE);
  return { memberId: joined.memberId, generationId: joined.generationId };
}

/** The member's commit of `offset` for t/0: its error code. */
export async function commit(broker: BrokerContext, member: Member, offset: number, groupId = GROUP): Promise<number> {
  const topics = [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: 0, commitTimestamp: -1, committedMetadata: null }] }];
  const response = await handleOffsetCommit(
    broker,
    offsetCommitRequest({ groupId, generationIdOrMemberEpoch: member.generationId, memberId: member.memberId, groupInstanceId: null, retentionTimeMs: -1, topics }),
  );
  return response.topics[0]!.partitions[0]!.errorCode;
}

/** The group's committed offset of t/0 as OffsetFetch answers it (-1: none). */
export async function committed(broker: BrokerContext, groupId = GROUP): Promise<number> {
  return (await handleOffsetFetch(broker, offsetFetchRequest({ groupId, topics: [{ name: 't', partitionIndexes: [0] }] }))).topics![0]!.partitions[0]!.committedOffset;
}

/** Lets pending promise chains run (no store latency: MemoryStore answers in microtasks). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 50; i++) await Promise.resolve();
}
