// Group coordinator fencing, as an adversarial review tried to break it: offset expiry racing a join. Expiry
// judges a group empty after reading its offsets (the fix of review finding 20), but 584c0ee then
// claims the group before removing (OffsetExpiry.#remove: a read and a compare-and-swap when this
// broker holds no claim yet, after a restart or a coordinator move) and does not judge again: a
// consumer that joins meanwhile has its group's offsets removed under it.
import { expect, test } from 'bun:test';
import { GroupCoordinator, INITIAL_REBALANCE_DELAY_MS, type JoinRequest } from '../../../src/broker/groups/coordinator.ts';
import { OffsetExpiry } from '../../../src/broker/groups/offset-expiry.ts';
import { type CoordinatorClaim, ControlOffsetStore } from '../../../src/broker/groups/offset-store.ts';
import { ControlStore } from '../../../src/control/control-store.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { GatedStore } from '../../support/gated-store.ts';
import { GROUP_RECORDS, settle } from '../../support/group-coordinators.ts';

const RETENTION_MS = 60 * 60_000;

function joinRequest(claim: CoordinatorClaim): JoinRequest {
  return {
    groupId: 'g',
    memberId: '',
    clientId: 'c',
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 5_000,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: new Uint8Array(0) }],
    claim,
  };
}

// Found by review (finding 6); fixed: joins wait while expiry removes an empty group's offsets,
// as Kafka's expiry and joins take the group's lock in turn. Without it, a join during a removal
// slower than the initial rebalance delay (a throttled store) formed a generation whose member
// fetched the offsets, which then vanished under it (a restart of it resets to its policy).
test("a consumer that joins while expiry removes its empty group's offsets joins after the removal", async () => {
  const gated = new GatedStore();
  const clock = new ManualClock();
  // The group's record was last claimed by another process (broker 1 before its restart): a simple
  // consumer's offset, committed a retention ago.
  const before = new ControlOffsetStore(new ControlStore(gated.store, 'cluster'), { nodeId: 1, incarnation: 'broker-1-before-restart' });
  await before.commit('g', [{ topic: 't', partition: 0, committed: { offset: 42, leaderEpoch: 0, metadata: null, commitTimestampMs: clock.nowMs(), byMember: false } }], await before.claim('g'));
  clock.advance(RETENTION_MS);

  const groups = new GroupCoordinator(clock);
  const offsets = new ControlOffsetStore(new ControlStore(gated.store, 'cluster'), { nodeId: 1, incarnation: 'broker-1' });
  await offsets.claim('g');
  const expiry = new OffsetExpiry({ groups, offsets, clock, retentionMs: RETENTION_MS, coordinates: () => true });
  gated.hold(GROUP_RECORDS); // expiry's removal (a compare-and-swap) is slow to land
  const round = expiry.expireNow();
  await settle();
  // The consumer joins meanwhile, as the JoinGroup handler does (an empty group: its claim read afresh).
  let answered = false;
  const joined = offsets
    .claim('g', true)
    .then((claim) => groups.join(joinRequest(claim)))
    .then((result) => {
      answered = true;
      return result;
    });
  await settle();
  clock.advance(INITIAL_REBALANCE_DELAY_MS);
  await settle();
  expect(answered).toBe(false); // no generation forms while the removal is on its way
  gated.release(GROUP_RECORDS);
  expect(await round).toBe(1);
  await settle();
  clock.advance(INITIAL_REBALANCE_DELAY_MS);
  expect((await joined).errorCode).toBe(0);
  expect(groups.status('g')?.members).toBe(1);
  // What the member fetches from now on: nothing (expired before it joined), and it stays so.
  expect(await offsets.list('g')).toEqual([]);
});
