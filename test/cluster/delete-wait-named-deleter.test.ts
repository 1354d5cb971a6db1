// Review of [L8] (docs/cluster-protocol.md): a delete skips its wait of a lease when every partition
// record of the marked incarnation names the deleting broker itself, taking that broker for the
// only one that may still acknowledge there. But a record names the broker that last won its
// compare-and-swap, not the one serving: a claimer has not sealed (or, once the topic is marked,
// never seals) the old leader's stream, and the old leader serves on with its lease and its topic
// sighting standing until its own scan or sighting check comes by. Here the old leader is a broker
// whose disk failed for a moment (its record said storageFailing, so another broker claimed what it
// led); its lease never lapsed. The delete answers at once, the name is created again, and the old
// leader's gate still lets it acknowledge into the deleted incarnation: offsets the new
// incarnation's clients take for theirs (simulation seed 13602's bug class).
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import type { LocalStorage } from '../../src/cluster/membership.ts';
import type { TopicRecord } from '../../src/cluster/control-records.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { servedHooks, testClusterNode } from '../support/cluster-node.ts';
import { advanceThrough, passTime, settleUntil } from '../support/settle.ts';

/** Longer than the test: the nodes scan only when it says. */
const SCAN_NEVER_MS = 3_600_000;
/** The test nodes' lease (test/support/cluster-node.ts): renewals and sighting checks every third of it. */
const LEASE_MS = 1000;
/** Steps of simulated time for the delete: store answers and timers run in between. */
const STEP_MS = 10;

/** A disk that fails while `broken`; a probe reports it as it is. */
class FlakyStorage implements LocalStorage {
  broken = false;
  failing(): boolean {
    return this.broken;
  }
  recheck(): boolean {
    return this.broken;
  }
  walStoreFailingForMs(): number {
    return 0;
  }
}

test('[L8] a delete whose partition record names the deleter while another broker still serves the partition waits before the name can be created again', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const served = new Map<string, number>();
  const storage = new FlakyStorage();
  let claimedByDeleter = false;
  // The deleter's adoption is under way (sealing the old leader's stream against a slow WAL store):
  // the old leader's writer is not fenced yet.
  const deleter = testClusterNode({ store, clock, nodeId: 1, scanIntervalMs: SCAN_NEVER_MS, adopt: () => ((claimedByDeleter = true), new Promise<void>(() => {})) });
  const oldLeader = testClusterNode({ store, clock, nodeId: 2, storage, scanIntervalMs: SCAN_NEVER_MS, ...servedHooks(served, 2) });
  await deleter.start();
  await oldLeader.start();
  expect(await oldLeader.createTopic('t', 1)).toBe(true);
  await oldLeader.scan();
  expect(served.get('t/0')).toBe(2);
  const oldId = (await new ControlStore(store, 'c').read<TopicRecord>('topics/t'))!.value.topicId;

  storage.broken = true; // one failed write, just before a renewal
  await passTime(clock, LEASE_MS / 2, STEP_MS);
  storage.broken = false; // the next write succeeds: the old leader's log takes appends again
  void deleter.scan(); // sees storageFailing in its record: claims t/0
  await settleUntil(() => claimedByDeleter, 'the deleter claiming t/0');

  expect(await advanceThrough(clock, deleter.deleteTopic('t'), 'the delete', STEP_MS)).toBe(true);
  expect(await deleter.createTopic('t', 1)).toBe(true); // the name is free again
  // The old leader's lease held all along, but it acts for the old incarnation no more: its flag made it
  // stop acting as leader at once [C1], and the scan that let it act again let go of t/0 first. Its
  // sighting gate is shut too, whichever came first.
  expect(served.get('t/0') === 2 && oldLeader.leaseHeld()).toBe(false);
  expect(oldLeader.topicSightingStands('t', oldId)).toBe(false);
  deleter.stop();
  oldLeader.stop();
});

test("[L8] a delete waits out the other leader's lease, not only its own: brokers may run with different --lease-ms", async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const served = new Map<string, number>();
  const leaderLeaseMs = 6 * LEASE_MS; // liveness judges each broker by the leaseMs in its own record
  const deleter = testClusterNode({ store, clock, nodeId: 1, scanIntervalMs: SCAN_NEVER_MS });
  const leader = testClusterNode({ store, clock, nodeId: 2, self: { leaseMs: leaderLeaseMs }, scanIntervalMs: SCAN_NEVER_MS, ...servedHooks(served, 2) });
  await leader.start();
  await deleter.start();
  expect(await leader.createTopic('t', 1)).toBe(true);
  await leader.scan();
  expect(served.get('t/0')).toBe(2);
  const oldId = (await new ControlStore(store, 'c').read<TopicRecord>('topics/t'))!.value.topicId;

  expect(await advanceThrough(clock, deleter.deleteTopic('t'), 'the delete', STEP_MS)).toBe(true);
  expect(await deleter.createTopic('t', 1)).toBe(true);
  expect(leader.leaseHeld()).toBe(true);
  expect(leader.topicSightingStands('t', oldId)).toBe(false);
  deleter.stop();
  leader.stop();
});
