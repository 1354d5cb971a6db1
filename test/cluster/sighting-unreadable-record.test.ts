// Review of [L8]: the topic sighting check reads every topic record (src/cluster/topic-sightings.ts)
// and a leader acknowledges on a topic only while a check saw it alive within its lease. One topic
// record that cannot be read (not JSON: an object another tool or version left under topics/, or a
// GET that keeps failing) failed the whole check, so every sighting lapsed and the broker stopped
// acknowledging on every topic it leads while its lease held, where before L8 only its scans failed.
// A record that cannot be read now counts as that topic's alone: not seen alive.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import type { TopicRecord } from '../../src/cluster/control-records.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { testClusterNode } from '../support/cluster-node.ts';
import { settle } from '../support/settle.ts';

/** Longer than the test: the node scans only when it says. */
const SCAN_NEVER_MS = 3_600_000;
/** The test nodes' lease (test/support/cluster-node.ts). */
const LEASE_MS = 1000;
const STEP_MS = 50;

test('[L8] one topic record that cannot be read stops acknowledgements on that topic alone, not on every topic', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const leader = testClusterNode({ store, clock, nodeId: 1, scanIntervalMs: SCAN_NEVER_MS });
  await leader.start();
  expect(await leader.createTopic('t', 1)).toBe(true);
  await leader.scan();
  const id = (await new ControlStore(store, 'c').read<TopicRecord>('topics/t'))!.value.topicId;
  expect(leader.topicSightingStands('t', id)).toBe(true);

  await store.put('c/control/topics/unreadable', new TextEncoder().encode('not a record'));
  for (let waited = 0; waited < 2 * LEASE_MS; waited += STEP_MS) {
    clock.advance(STEP_MS);
    await settle();
  }
  expect(leader.leaseHeld()).toBe(true);
  expect(leader.topicSightingStands('t', id)).toBe(true);
  leader.stop();
});
