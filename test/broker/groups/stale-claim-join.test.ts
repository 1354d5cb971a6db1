// Group coordinator fencing, as an adversarial review tried to break it: a claim cached after it was lost.
// ControlOffsetStore caches a claim until a write under it is refused; a JoinGroup trusts the
// cache. A broker that lost the group while it was not the coordinator (the other broker took
// it) and later becomes the coordinator for real (the other one died) forms a whole generation
// under the lost claim: its members are given partitions, consume, and every commit is refused.
import { expect, test } from 'bun:test';
import { handleLeaveGroup } from '../../../src/broker/handlers/groups.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { commit, coordinatorBroker, GROUP, joinAndSync } from '../../support/group-coordinators.ts';

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
