// Brokers for the group admin tests (ListGroups, DescribeGroups, DeleteGroups, OffsetDelete),
// driven through the real group handlers: a single broker's offsets file, or a cluster's
// control records (one store, several brokers, each coordinating the groups `coordinates` gives it).
import { expect } from 'bun:test';
import type { BrokerContext } from '../../src/broker/context.ts';
import { GroupCoordinator, INITIAL_REBALANCE_DELAY_MS } from '../../src/broker/groups/coordinator.ts';
import { ControlOffsetStore, OffsetStore } from '../../src/broker/groups/offset-store.ts';
import { handleJoinGroup, handleOffsetCommit, handleOffsetFetch, handleSyncGroup } from '../../src/broker/handlers/groups.ts';
import { ErrorCode } from '../../src/protocol/error-codes.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import type { ManualClock } from '../../src/util/clock.ts';
import { settle } from './group-coordinators.ts';
import { idOf } from './topic-ids.ts';
import { joinGroupRequest, offsetCommitRequest, offsetFetchRequest, syncGroupRequest } from './requests.ts';
import { OPEN_SECURITY } from './broker-security.ts';

export const SESSION_TIMEOUT_MS = 10_000;
export const REBALANCE_TIMEOUT_MS = 5_000;
/** Partitions of every topic these brokers know (any name is a topic of this many partitions). */
export const PARTITIONS = 2;

export type Mode = 'single' | 'cluster';

/** Broker `nodeId`: every group is its own unless `coordinator` names another node for it. */
export function adminBroker(nodeId: number, offsets: OffsetStore | ControlOffsetStore, clock: ManualClock, coordinator: (groupId: string) => number = () => nodeId): BrokerContext {
  const topology = {
    coordinatorFor: (groupId: string) => ({ nodeId: coordinator(groupId) }),
    partitionCount: async () => PARTITIONS,
    topicId: (topic: string) => idOf(topic),
    isCurrentIncarnation: async () => true,
  };
  return { ...OPEN_SECURITY, nodeId, clock, groups: new GroupCoordinator(clock), offsets, topology } as unknown as BrokerContext;
}

/** The offsets of `mode`: a single broker's file in `directory`, or the control records in `store` as broker `nodeId`'s incarnation `incarnation`. */
export function offsetStoreOf(mode: Mode, directory: string, store: ObjectStore, nodeId = 1, incarnation = `broker-${nodeId}`): OffsetStore | ControlOffsetStore {
  return mode === 'single' ? OffsetStore.open(directory) : new ControlOffsetStore(new ControlStore(store, 'cluster'), { nodeId, incarnation });
}

/** Kafka's ConsumerProtocolSubscription v1: version, topics, user data (null), owned partitions (none). */
export function subscription(topics: readonly string[]): Uint8Array {
  const encoded = topics.map((topic) => new TextEncoder().encode(topic));
  const bytes = new Uint8Array(2 + 4 + encoded.reduce((sum, name) => sum + 2 + name.length, 0) + 4 + 4);
  const view = new DataView(bytes.buffer);
  let at = 0;
  view.setInt16(at, 1);
  view.setInt32((at += 2), topics.length);
  at += 4;
  for (const name of encoded) {
    view.setInt16(at, name.length);
    bytes.set(name, at + 2);
    at += 2 + name.length;
  }
  view.setInt32(at, -1); // user data: null
  view.setInt32(at + 4, 0); // owned partitions: none
  return bytes;
}

export interface Joined {
  readonly memberId: string;
  readonly generationId: number;
}

/** One member joins `groupId` (its own leader) and syncs with `assignment`, past the initial rebalance delay. */
export async function joinAndSync(
  broker: BrokerContext,
  clock: ManualClock,
  groupId: string,
  options: { metadata?: Uint8Array; protocolType?: string; assignment?: Uint8Array; clientId?: string } = {},
): Promise<Joined> {
  const joining = handleJoinGroup(
    broker,
    joinGroupRequest({
      groupId,
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      rebalanceTimeoutMs: REBALANCE_TIMEOUT_MS,
      memberId: '',
      groupInstanceId: null,
      protocolType: options.protocolType ?? 'consumer',
      protocols: [{ name: 'range', metadata: options.metadata ?? subscription(['t']) }],
    }),
    options.clientId ?? 'client-a',
    '/10.0.0.7',
  );
  await settle();
  clock.advance(INITIAL_REBALANCE_DELAY_MS);
  const joined = await joining;
  expect(joined.errorCode).toBe(ErrorCode.NONE);
  const synced = await handleSyncGroup(
    broker,
    syncGroupRequest({
      groupId,
      generationId: joined.generationId,
      memberId: joined.memberId,
      groupInstanceId: null,
      assignments: [{ memberId: joined.memberId, assignment: options.assignment ?? new Uint8Array([7, 7]) }],
    }),
  );
  expect(synced.errorCode).toBe(ErrorCode.NONE);
  return { memberId: joined.memberId, generationId: joined.generationId };
}

/** Commits `offset` for each topic/partition named; generation -1 unless a member is given (a simple consumer's commit). Returns the error codes. */
export async function commitOffsets(broker: BrokerContext, groupId: string, partitions: readonly [string, number][], offset: number, member?: Joined): Promise<number[]> {
  const topics = [...new Set(partitions.map(([topic]) => topic))].map((name) => ({
    name,
    partitions: partitions
      .filter(([topic]) => topic === name)
      .map(([, partitionIndex]) => ({ partitionIndex, committedOffset: offset, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: null })),
  }));
  const response = await handleOffsetCommit(
    broker,
    offsetCommitRequest({ groupId, generationIdOrMemberEpoch: member?.generationId ?? -1, memberId: member?.memberId ?? '', groupInstanceId: null, retentionTimeMs: -1, topics }),
  );
  return response.topics.flatMap((topic) => topic.partitions.map((p) => p.errorCode));
}

/** The group's committed offset of topic/partition (-1: none). */
export async function committedOffset(broker: BrokerContext, groupId: string, topic: string, partition: number): Promise<number> {
  return (await handleOffsetFetch(broker, offsetFetchRequest({ groupId, topics: [{ name: topic, partitionIndexes: [partition] }] }))).topics![0]!.partitions[0]!.committedOffset;
}
