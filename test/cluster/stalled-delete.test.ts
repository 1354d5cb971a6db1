// [L4] A topic delete that stopped after marking the topic record `deleting` (its broker died, or a
// store error failed the request) is finished by a scan once the mark has stood unchanged for a
// lease, as Kafka's controller completes a topic marked for deletion. Before, nothing finished it:
// the name was gone for every broker and could never be created again (found by the simulation:
// seeds 147 and 218, a DeleteTopics answered KAFKA_STORAGE_ERROR, then every CreateTopics
// TOPIC_ALREADY_EXISTS).
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/cluster/control-store.ts';
import type { TopicRecord } from '../../src/cluster/node.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { testClusterNode } from '../support/cluster-node.ts';
import { settle } from '../support/settle.ts';

/** The test nodes' lease (test/support/cluster-node.ts). */
const LEASE_MS = 1000;

async function pass(clock: ManualClock, ms: number): Promise<void> {
  for (let step = 0; step < ms; step += 50) {
    clock.advance(Math.min(50, ms - step));
    await settle();
  }
}

test('a delete left halfway is finished by a scan once its mark stood a lease; the name can be created again', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const node = testClusterNode({ store, clock, nodeId: 1, scanIntervalMs: 3_600_000 });
  await node.start();
  await node.createTopic('t', 2);
  await node.scan();
  const control = new ControlStore(store, 'c');
  const topic = (await control.read<TopicRecord>('topics/t'))!;
  expect(await control.replace('topics/t', topic, { ...topic.value, deleting: true })).not.toBeNull(); // a delete that stopped after its mark
  await node.scan(); // sees the mark: a delete may be under way
  expect(await node.createTopic('t', 2)).toBe(false);
  await pass(clock, LEASE_MS / 2);
  await node.scan();
  expect(await control.read('topics/t')).not.toBeNull(); // not yet: the mark is younger than a lease
  await pass(clock, LEASE_MS / 2);
  await node.scan();
  expect(await control.read('topics/t')).toBeNull();
  expect(await control.list('partitions/t/')).toEqual([]);
  expect(await node.createTopic('t', 2)).toBe(true);
  node.stop();
});
