import { describe, expect, test } from 'bun:test';
import { GROUP_MEMBERS_MAX, GroupCoordinator, INITIAL_REBALANCE_DELAY_MS, type JoinRequest } from '../../../src/broker/groups/coordinator.ts';
import { LOCAL_CLAIM } from '../../../src/broker/groups/offset-store.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { ManualClock } from '../../../src/util/clock.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

function joinRequest(memberId = '', clientId = 'c', protocols = ['range', 'roundrobin']): JoinRequest {
  return {
    groupId: 'g',
    memberId,
    clientId,
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 5_000,
    protocolType: 'consumer',
    protocols: protocols.map((name) => ({ name, metadata: bytes(`${clientId}:${name}`) })),
    claim: LOCAL_CLAIM,
  };
}

/** Two members a and b joined and synced: a stable group at generation 1. */
async function stableGroupOfTwo(clock: ManualClock, coordinator: GroupCoordinator) {
  const joins = [coordinator.join(joinRequest('', 'a')), coordinator.join(joinRequest('', 'b'))];
  clock.advance(INITIAL_REBALANCE_DELAY_MS);
  const [joinA, joinB] = await Promise.all(joins);
  await Promise.all([coordinator.sync('g', 1, joinA!.memberId, []), coordinator.sync('g', 1, joinB!.memberId, [])]);
  return { joinA: joinA!, joinB: joinB! };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

describe('GroupCoordinator', () => {
  test('two members join one generation; the leader gets both; sync hands out its assignments', async () => {
    const clock = new ManualClock();
    const coordinator = new GroupCoordinator(clock);
    const a = coordinator.join(joinRequest('', 'a'));
    const b = coordinator.join(joinRequest('', 'b', ['roundrobin']));
    clock.advance(INITIAL_REBALANCE_DELAY_MS);
    const [joinA, joinB] = await Promise.all([a, b]);
    expect(joinA.errorCode).toBe(ErrorCode.NONE);
    expect(joinA.generationId).toBe(1);
    expect(joinA.protocolName).toBe('roundrobin'); // the only one both support
    expect(joinA.leader).toBe(joinA.memberId);
    expect(joinA.members.map((m) => new TextDecoder().decode(m.metadata))).toEqual(['a:roundrobin', 'b:roundrobin']);
    expect(joinB.members).toEqual([]);
    const syncB = coordinator.sync('g', 1, joinB.memberId, []);
    const syncA = coordinator.sync('g', 1, joinA.memberId, [
      { memberId: joinA.memberId, assignment: bytes('p0') },
      { memberId: joinB.memberId, assignment: bytes('p1') },
    ]);
    expect(new TextDecoder().decode((await syncA).assignment)).toBe('p0');
    expect(new TextDecoder().decode((await syncB).assignment)).toBe('p1');
    expect(coordinator.heartbeat('g', 1, joinB.memberId)).toBe(ErrorCode.NONE);
    expect(coordinator.heartbeat('g', 0, joinB.memberId)).toBe(ErrorCode.ILLEGAL_GENERATION);
    expect(coordinator.heartbeat('g', 1, 'nobody')).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    coordinator.close();
  });

  test('a leave starts a rebalance: heartbeats say so, the rejoin completes generation 2', async () => {
    const clock = new ManualClock();
    const coordinator = new GroupCoordinator(clock);
    const { joinA, joinB } = await stableGroupOfTwo(clock, coordinator);
    expect(coordinator.leave('g', joinB.memberId)).toBe(ErrorCode.NONE);
    expect(coordinator.heartbeat('g', 1, joinA.memberId)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    const rejoin = await coordinator.join(joinRequest(joinA.memberId, 'a'));
    expect(rejoin.generationId).toBe(2);
    expect(rejoin.members.length).toBe(1);
    coordinator.close();
  });

  test('a member that stops heartbeating is removed after its session timeout', async () => {
    const clock = new ManualClock();
    const coordinator = new GroupCoordinator(clock);
    const { joinA } = await stableGroupOfTwo(clock, coordinator);
    for (let t = 0; t < 12; t++) {
      clock.advance(1000);
      coordinator.heartbeat('g', 1, joinA.memberId); // a keeps heartbeating, b does not
    }
    expect(coordinator.describe('g')!.members).toEqual([joinA.memberId]);
    expect(coordinator.heartbeat('g', 1, joinA.memberId)).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    coordinator.close();
  });

  test('bad joins are refused with Kafka errors', async () => {
    const coordinator = new GroupCoordinator(new ManualClock());
    expect((await coordinator.join({ ...joinRequest(), groupId: '' })).errorCode).toBe(ErrorCode.INVALID_GROUP_ID);
    expect((await coordinator.join({ ...joinRequest(), sessionTimeoutMs: 10 })).errorCode).toBe(ErrorCode.INVALID_SESSION_TIMEOUT);
    expect((await coordinator.join(joinRequest('ghost'))).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    void coordinator.join(joinRequest('', 'a', ['range']));
    await settle();
    expect((await coordinator.join({ ...joinRequest('', 'b', ['range']), protocolType: 'connect' })).errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    expect((await coordinator.join(joinRequest('', 'c', ['sticky']))).errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    coordinator.close();
  });

  test('a full group refuses a new member with GROUP_MAX_SIZE_REACHED (Kafka: group.max.size), never UNKNOWN_SERVER_ERROR', async () => {
    const clock = new ManualClock();
    const coordinator = new GroupCoordinator(clock);
    const joins = Array.from({ length: GROUP_MEMBERS_MAX }, (_, i) => coordinator.join(joinRequest('', `c${i}`)));
    const refused = await coordinator.join(joinRequest('', 'late'));
    expect(refused.errorCode).toBe(ErrorCode.GROUP_MAX_SIZE_REACHED);
    clock.advance(INITIAL_REBALANCE_DELAY_MS);
    expect((await Promise.all(joins)).every((join) => join.errorCode === ErrorCode.NONE)).toBe(true);
    coordinator.close();
  });
});
