// [L8] Found by the simulation (seed 13602): a leader whose scan was stuck for 8 s (a follower's
// rebuild retrying against a WAL store it could not reach) went on acknowledging on a partition of
// a topic another broker had deleted and created again meanwhile: its lease was renewed all along,
// and the lease was all its acknowledgements were gated on. Clients took those acks for the new
// incarnation's; another broker handed the same offsets out again. Now a leader acknowledges on a
// topic only while a read of the topic records that started within the held share of a lease saw
// its incarnation alive (on a timer of its own, not the scan's), and a delete waits a lease after
// its mark before the name can be created again.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import type { TopicRecord } from '../../src/cluster/control-records.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { testClusterNode } from '../support/cluster-node.ts';
import { advanceThrough, advanceUntil, passTime } from '../support/settle.ts';

/** Steps of simulated time: store answers and timers run in between. */
const STEP_MS = 50;
/** The test nodes' lease (test/support/cluster-node.ts). */
const LEASE_MS = 1000;

test('a leader whose scan is stuck stops acknowledging on a topic deleted elsewhere before the name can be created again, and keeps acknowledging on the rest', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const control = new ControlStore(store, 'c');
  let scans = 0;
  let stuck = false;
  const leader = testClusterNode({
    store,
    clock,
    nodeId: 1,
    // Adopting w never ends: the scan, and every scan after it, waits behind it (as behind a rebuild that retries on).
    adopt: (topic) => (topic === 'w' ? ((stuck = true), new Promise<void>(() => {})) : Promise.resolve()),
    scanned: () => void scans++,
  });
  const admin = testClusterNode({ store, clock, nodeId: 2 });
  await leader.start();
  await leader.createTopic('t', 1);
  await leader.createTopic('v', 1);
  await leader.createTopic('w', 1);
  void leader.scan(); // the only live broker: it claims all three, and its scans are stuck from w on
  await advanceUntil(clock, () => stuck, "the leader's scan reaching w", STEP_MS);
  const scansWhenStuck = scans;
  await admin.start();
  const idOf = async (name: string) => (await control.read<TopicRecord>(`topics/${name}`))!.value.topicId;
  const [t, v] = [await idOf('t'), await idOf('v')];
  expect(leader.topicSightingStands('t', t)).toBe(true);

  expect(await advanceThrough(clock, admin.deleteTopic('t'), 'the delete', STEP_MS)).toBe(true);
  // The name may be created again now: the leader acknowledges nothing more into the old incarnation.
  expect(leader.topicSightingStands('t', t)).toBe(false);
  expect(await admin.createTopic('t', 1)).toBe(true);
  expect(leader.topicSightingStands('t', t)).toBe(false);

  // Its scans are stuck all this time, yet what it still leads stays acknowledgeable.
  await passTime(clock, 3 * LEASE_MS, STEP_MS);
  expect(scans).toBe(scansWhenStuck);
  expect(leader.topicSightingStands('v', v)).toBe(true);
  leader.stop();
  admin.stop();
});
