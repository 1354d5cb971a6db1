// Review of 43be19c: a delete drops the topic from this broker's view only when the view holds the
// deleted incarnation. A broker that has not scanned since an older incarnation was deleted elsewhere
// (its scans slow) still holds that one: deleting the newer incarnation then left the older one
// listed (Metadata named a topic this broker had just deleted) and served here until a scan came by.
// A delete now also drops an incarnation its topic record no longer names alive.
import { expect, test } from 'bun:test';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { testClusterNode } from '../support/cluster-node.ts';
import { advanceThrough } from '../support/settle.ts';

/** A scan interval no test here reaches: the nodes scan only when the test says. */
const NO_SCANS_OF_ITS_OWN_MS = 1e9;

test('a delete by a broker whose view holds an older incarnation forgets that one too', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const forgotten: string[] = [];
  const stale = testClusterNode({ store, clock, nodeId: 1, scanIntervalMs: NO_SCANS_OF_ITS_OWN_MS, forget: async (topic) => void forgotten.push(topic) });
  const other = testClusterNode({ store, clock, nodeId: 2, scanIntervalMs: NO_SCANS_OF_ITS_OWN_MS });
  await stale.start();
  await other.start();
  await stale.createTopic('t', 1);
  await stale.scan(); // broker 1 leads t/0 of the first incarnation
  const first = stale.topics().get('t')!.topicId;

  // Broker 2 deletes it (waiting out broker 1's lease [L8]) and creates the name again; broker 1 does not scan.
  expect(await advanceThrough(clock, other.deleteTopic('t'), 'the delete elsewhere', 50)).toBe(true);
  expect(await other.createTopic('t', 1)).toBe(true);
  expect(stale.topics().get('t')?.topicId).toBe(first);

  expect(await advanceThrough(clock, stale.deleteTopic('t'), 'the delete of the second incarnation', 50)).toBe(true);
  expect(stale.topics().has('t')).toBe(false); // no incarnation of t exists
  expect(forgotten).toEqual(['t']); // the first one's partition is let go of here
  stale.stop();
  other.stop();
});
