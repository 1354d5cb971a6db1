// Offset expiry racing a rejoin (finding 20, adversarial review). Expiry judged a group empty,
// then read its offsets from the store (an object-store read in a cluster: real I/O, during which
// other requests run) and removed them even though a consumer had rejoined the group meanwhile:
// the live group came back to no committed offsets and reset to auto.offset.reset (reprocessing
// everything, or skipping to the end). A group with members keeps its offsets (KIP-211).
import { expect, test } from 'bun:test';
import { GroupCoordinator, INITIAL_REBALANCE_DELAY_MS, type JoinRequest } from '../../../src/broker/groups/coordinator.ts';
import { OffsetExpiry } from '../../../src/broker/groups/offset-expiry.ts';
import { type CoordinatorClaim, ControlOffsetStore, type GroupOffset, type GroupOffsetStore } from '../../../src/broker/groups/offset-store.ts';
import { ControlStore } from '../../../src/control/control-store.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { ManualClock } from '../../../src/util/clock.ts';

const RETENTION_MS = 60 * 60_000;

/** The cluster's offset store, with its reads held at a gate while the test opens it. */
class GatedReads implements GroupOffsetStore {
  readonly #inner: GroupOffsetStore;
  gate: Promise<void> | null = null;
  reading: (() => void) | null = null;
  constructor(inner: GroupOffsetStore) {
    this.#inner = inner;
  }
  claim(group: string): Promise<CoordinatorClaim> {
    return this.#inner.claim(group);
  }
  forget(group: string): void {
    this.#inner.forget(group);
  }
  commit(group: string, offsets: readonly GroupOffset[], claim: CoordinatorClaim): Promise<void> {
    return this.#inner.commit(group, offsets, claim);
  }
  async list(group: string): Promise<GroupOffset[]> {
    const gate = this.gate;
    this.reading?.();
    if (gate !== null) await gate;
    return this.#inner.list(group);
  }
  groups(): Promise<string[]> {
    return this.#inner.groups();
  }
  remove(group: string, offsets: readonly GroupOffset[], claim: CoordinatorClaim): Promise<void> {
    return this.#inner.remove(group, offsets, claim);
  }
}

function joinRequest(groupId: string, claim: CoordinatorClaim): JoinRequest {
  return { groupId, memberId: '', clientId: 'c', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 5_000, protocolType: 'consumer', protocols: [{ name: 'range', metadata: new Uint8Array(0) }], claim };
}

test("a consumer that rejoins while expiry reads its group keeps the group's offsets", async () => {
  const clock = new ManualClock();
  const groups = new GroupCoordinator(clock);
  const offsets = new GatedReads(new ControlOffsetStore(new ControlStore(new MemoryStore(), 'cluster'), { nodeId: 1, incarnation: 'broker-1' }));
  const expiry = new OffsetExpiry({ groups, offsets, clock, retentionMs: RETENTION_MS, coordinates: () => true });
  const joinOne = async (): Promise<string> => {
    const join = groups.join(joinRequest('g', await offsets.claim('g')));
    clock.advance(INITIAL_REBALANCE_DELAY_MS);
    const { memberId, generationId } = await join;
    await groups.sync('g', generationId, memberId, []);
    return memberId;
  };
  const member = await joinOne();
  await offsets.commit('g', [{ topic: 't', partition: 0, committed: { offset: 42, leaderEpoch: 0, metadata: null, commitTimestampMs: clock.nowMs() } }], await offsets.claim('g'));
  groups.leave('g', member);
  clock.advance(RETENTION_MS); // empty for the whole retention: due

  let open!: () => void;
  offsets.gate = new Promise((resolve) => (open = resolve));
  const reading = new Promise<void>((resolve) => (offsets.reading = resolve));
  const round = expiry.expireNow();
  await reading; // expiry has judged the group and is reading its offsets
  offsets.gate = null;
  await joinOne(); // the consumer comes back meanwhile
  expect(groups.status('g')?.members).toBe(1);
  open();
  await round;

  expect((await offsets.list('g')).map((o) => o.committed.offset)).toEqual([42]);
});
