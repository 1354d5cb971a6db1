// Review of 43be19c: a scan finishes a delete it saw stalled [L4] only after its loop over the
// topics, which may take long (adoptions rebuild). Meanwhile the stalled delete may be finished
// elsewhere and the name created again: finishing "the delete of the name" then marked and deleted
// the new incarnation, a topic no one asked to delete. A scan now finishes only the incarnation it
// saw stalled.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { STALLED_DELETE_LEASES } from '../../src/cluster/topic-catalog.ts';
import type { TopicRecord } from '../../src/cluster/control-records.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { testClusterNode } from '../support/cluster-node.ts';
import { advanceThrough, passTime, settleUntil } from '../support/settle.ts';

/** A scan interval no test here reaches: the nodes scan only when the test says. */
const NO_SCANS_OF_ITS_OWN_MS = 1e9;
const LEASE_MS = 1000;

test('a scan that saw a delete stalled leaves alone the incarnation created after it was finished elsewhere', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const control = new ControlStore(store, 'c');
  let unblockAdopt = () => {};
  let adopting = false;
  const scanner = testClusterNode({
    store,
    clock,
    nodeId: 1,
    self: { leaseMs: LEASE_MS },
    scanIntervalMs: NO_SCANS_OF_ITS_OWN_MS,
    adopt: async (topic) => {
      if (topic !== 'u') return;
      adopting = true;
      await new Promise<void>((resolve) => (unblockAdopt = resolve)); // a slow rebuild
    },
  });
  const other = testClusterNode({ store, clock, nodeId: 2, self: { leaseMs: LEASE_MS }, scanIntervalMs: NO_SCANS_OF_ITS_OWN_MS });
  await scanner.start();
  await other.start();
  expect(await other.createTopic('t', 1)).toBe(true);
  // What a delete leaves when its broker stops right after the mark.
  const first = (await control.read<TopicRecord>('topics/t'))!;
  expect(await control.replace<TopicRecord>('topics/t', first, { ...first.value, deleting: true })).not.toBeNull();
  await scanner.scan(); // sees the mark for the first time
  await passTime(clock, STALLED_DELETE_LEASES * LEASE_MS); // leases renewed meanwhile
  expect(await other.createTopic('u', 1)).toBe(true);

  const scan = scanner.scan(); // sees t stalled, then adopts u/0 slowly before finishing t's delete
  await settleUntil(() => adopting, 'the adoption of u/0');
  expect(await other.deleteTopic('t')).toBe(true); // the stalled delete, finished elsewhere
  expect(await other.createTopic('t', 1)).toBe(true); // and the name created again
  const second = (await control.read<TopicRecord>('topics/t'))!.value;
  unblockAdopt();
  await advanceThrough(clock, scan, 'the slow scan', 50);

  const now = (await control.read<TopicRecord>('topics/t'))?.value;
  expect(now?.topicId).toBe(second.topicId);
  expect(now?.deleting).toBeUndefined();
  scanner.stop();
  other.stop();
});
