import { describe, expect, test } from 'bun:test';
import { GroupCoordinator, INITIAL_REBALANCE_DELAY_MS, type JoinRequest } from '../../../src/broker/groups/coordinator.ts';
import { OffsetExpiry } from '../../../src/broker/groups/offset-expiry.ts';
import { type CoordinatorClaim, ControlOffsetStore, type GroupOffsetStore, LOCAL_CLAIM, OffsetStore } from '../../../src/broker/groups/offset-store.ts';
import { handleOffsetCommit } from '../../../src/broker/handlers/groups.ts';
import type { BrokerContext } from '../../../src/broker/context.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { ControlStore } from '../../../src/control/control-store.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { idOf } from '../../support/topic-ids.ts';
import { offsetCommitRequest } from '../../support/requests.ts';
import { OPEN_SECURITY } from '../../support/broker-security.ts';

/** A short retention for the tests; the rule does not depend on its size (Kafka's default is 7 days). */
const RETENTION_MS = 60 * 60_000;
const SESSION_TIMEOUT_MS = 10_000;

function joinRequest(groupId: string, memberId = '', claim: CoordinatorClaim = LOCAL_CLAIM): JoinRequest {
  return {
    groupId,
    memberId,
    clientId: 'c',
    sessionTimeoutMs: SESSION_TIMEOUT_MS,
    rebalanceTimeoutMs: 5_000,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: new Uint8Array(0) }],
    claim,
  };
}

const at = (offset: number, commitTimestampMs: number) => ({ offset, leaderEpoch: 0, metadata: null, commitTimestampMs, byMember: false });

function setup(offsets: GroupOffsetStore = OffsetStore.open(tempDir())) {
  const clock = new ManualClock();
  const groups = new GroupCoordinator(clock);
  const expiry = new OffsetExpiry({ groups, offsets, clock, retentionMs: RETENTION_MS, coordinates: () => true });
  /** One member joined and synced; returns its id. */
  const joinOne = async (groupId: string): Promise<string> => {
    const join = groups.join(joinRequest(groupId, '', await offsets.claim(groupId)));
    clock.advance(INITIAL_REBALANCE_DELAY_MS);
    const { memberId, generationId } = await join;
    await groups.sync(groupId, generationId, memberId, []);
    return memberId;
  };
  const commit = async (group: string, offset: number) => offsets.commit(group, [{ topic: 't', partition: 0, committed: at(offset, clock.nowMs()) }], await offsets.claim(group));
  return { clock, groups, offsets, expiry, joinOne, commit };
}

describe('offsets.retention.minutes', () => {
  test('a group with members keeps its offsets however old; once empty they expire the retention after', async () => {
    const { clock, groups, offsets, expiry, joinOne, commit } = setup();
    const member = await joinOne('g');
    await commit('g', 42);
    for (let elapsedMs = 0; elapsedMs < 2 * RETENTION_MS; elapsedMs += SESSION_TIMEOUT_MS / 2) {
      clock.advance(SESSION_TIMEOUT_MS / 2);
      expect(groups.heartbeat('g', 1, member)).toBe(ErrorCode.NONE);
    }
    expect(await expiry.expireNow()).toBe(0); // committed two retentions ago, but the group is alive
    expect(groups.leave('g', member)).toBe(ErrorCode.NONE); // empty from now
    clock.advance(RETENTION_MS - 1);
    expect(await expiry.expireNow()).toBe(0);
    expect((await offsets.list('g')).map((o) => o.committed.offset)).toEqual([42]);
    clock.advance(1);
    expect(await expiry.expireNow()).toBe(1);
    expect(await offsets.list('g')).toEqual([]);
    expect(await offsets.groups()).toEqual([]);
    expect(groups.status('g')).toBeUndefined(); // the empty group is gone from the coordinator too
  });

  test('a commit without a group (a simple consumer) expires the retention after the commit', async () => {
    const { clock, offsets, expiry, commit } = setup();
    await commit('standalone', 7);
    clock.advance(RETENTION_MS / 2);
    await offsets.commit('standalone', [{ topic: 't', partition: 1, committed: at(8, clock.nowMs()) }], LOCAL_CLAIM);
    clock.advance(RETENTION_MS / 2);
    expect(await expiry.expireNow()).toBe(1); // partition 0 is due, partition 1 is not yet
    expect((await offsets.list('standalone')).map((o) => o.partition)).toEqual([1]);
    clock.advance(RETENTION_MS / 2);
    expect(await expiry.expireNow()).toBe(1);
    expect(await offsets.groups()).toEqual([]);
  });

  test('offsets from an older file (no commit time) expire only once their group is seen empty', async () => {
    const { clock, groups, offsets, expiry, joinOne } = setup();
    await offsets.commit('old', [{ topic: 't', partition: 0, committed: { offset: 1, leaderEpoch: 0, metadata: null } }], LOCAL_CLAIM);
    clock.advance(10 * RETENTION_MS);
    expect(await expiry.expireNow()).toBe(0);
    const member = await joinOne('old');
    groups.leave('old', member);
    clock.advance(RETENTION_MS);
    expect(await expiry.expireNow()).toBe(1);
  });

  test('the coordinator does not keep what clients leave behind: 1,000 groups joined and left are gone after the retention', async () => {
    const { clock, groups, offsets, expiry, joinOne, commit } = setup();
    for (let i = 0; i < 1000; i++) {
      const group = `g${i}`;
      const member = await joinOne(group);
      if (i % 2 === 0) await commit(group, i);
      groups.leave(group, member);
    }
    expect(groups.groupCount).toBe(1000);
    clock.advance(RETENTION_MS);
    expect(await expiry.expireNow()).toBe(500);
    expect(groups.groupCount).toBe(0);
    expect(await offsets.groups()).toEqual([]);
  });

  test('a join naming an unknown member creates no group', async () => {
    const { groups } = setup();
    expect((await groups.join(joinRequest('ghost', 'member-that-never-was'))).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect(groups.groupCount).toBe(0);
  });

  test('only the coordinator of a group expires it', async () => {
    const clock = new ManualClock();
    const offsets = OffsetStore.open(tempDir());
    const expiry = new OffsetExpiry({ groups: new GroupCoordinator(clock), offsets, clock, retentionMs: RETENTION_MS, coordinates: (group) => group === 'mine' });
    for (const group of ['mine', 'theirs']) await offsets.commit(group, [{ topic: 't', partition: 0, committed: at(1, clock.nowMs()) }], LOCAL_CLAIM);
    clock.advance(RETENTION_MS);
    expect(await expiry.expireNow()).toBe(1);
    expect(await offsets.groups()).toEqual(['theirs']);
  });

  test('in control records, a commit that lands while expiry runs is kept (compare-and-swap)', async () => {
    const store = new MemoryStore();
    const offsets = new ControlOffsetStore(new ControlStore(store, 'cluster'), { nodeId: 1, incarnation: 'broker-1' });
    const { clock, expiry, commit } = setup(offsets);
    await commit('g', 1);
    clock.advance(RETENTION_MS);
    const listed = await offsets.list('g');
    await commit('g', 2); // committed again after expiry listed the old one
    await offsets.remove('g', listed, await offsets.claim('g'));
    expect((await offsets.list('g')).map((o) => o.committed.offset)).toEqual([2]);
    clock.advance(RETENTION_MS);
    expect(await expiry.expireNow()).toBe(1);
    expect(await offsets.list('g')).toEqual([]);
  });

  test('expiry runs every check interval on the injected clock', async () => {
    const clock = new ManualClock();
    const offsets = OffsetStore.open(tempDir());
    const expiry = new OffsetExpiry({ groups: new GroupCoordinator(clock), offsets, clock, retentionMs: RETENTION_MS, checkIntervalMs: 1000, coordinates: () => true });
    await offsets.commit('g', [{ topic: 't', partition: 0, committed: at(1, clock.nowMs()) }]);
    const settle = async () => {
      for (let i = 0; i < 20; i++) await Promise.resolve();
    };
    expiry.start();
    clock.advance(RETENTION_MS); // the round at 1 s finds nothing due; the next is scheduled once it ends
    await settle();
    expect(await offsets.groups()).toEqual(['g']);
    clock.advance(1000);
    await settle();
    expect(await offsets.groups()).toEqual([]);
    expiry.stop();
  });
});

test("OffsetCommit records when it was committed, so a simple consumer's offsets expire", async () => {
  const { clock, groups, offsets, expiry } = setup();
  const context = {
    ...OPEN_SECURITY,
    nodeId: 1,
    clock,
    groups,
    offsets,
    topology: { coordinatorFor: () => ({ nodeId: 1 }), partitionCount: async () => 1, topicId: () => idOf('t') },
  } as unknown as BrokerContext;
  const topics = [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 5, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: null }] }];
  const response = await handleOffsetCommit(context, offsetCommitRequest({ groupId: 'simple', generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1, topics }));
  expect(response.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
  expect((await offsets.list('simple'))[0]!.committed.commitTimestampMs).toBe(clock.nowMs());
  clock.advance(RETENTION_MS);
  expect(await expiry.expireNow()).toBe(1);
});
