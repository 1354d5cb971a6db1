// Found by the simulation (seed 85): a DeleteTopics whose broker was stopped right after it marked
// the topic record `deleting` [L4]. The mark stayed for good: the topic was gone for every broker
// (nothing claimed or served it), yet CreateTopics answered TOPIC_ALREADY_EXISTS, so the name could
// never be used again unless someone deleted it once more. A scan finishes such a delete once the
// mark has stood for STALLED_DELETE_LEASES leases.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { STALLED_DELETE_LEASES } from '../../src/cluster/topic-catalog.ts';
import type { EpochFloorRecord, PartitionRecord, TopicRecord } from '../../src/cluster/control-records.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { testClusterNode } from '../support/cluster-node.ts';

const LEASE_MS = 1000;

test('a delete that stopped after marking its topic is finished by a scan, and the name can be created again', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const node = testClusterNode({ store, clock, nodeId: 1, self: { leaseMs: LEASE_MS }, scanIntervalMs: 60_000 });
  await node.start();
  expect(await node.createTopic('t', 2)).toBe(true);
  await node.scan(); // claims both partitions at epoch 0
  const control = new ControlStore(store, 'c');
  expect(await control.read<PartitionRecord>('partitions/t/0')).not.toBeNull();
  // What a delete leaves when its broker stops right after the mark.
  const topic = (await control.read<TopicRecord>('topics/t'))!;
  expect(await control.replace<TopicRecord>('topics/t', topic, { ...topic.value, deleting: true })).not.toBeNull();

  await node.scan();
  expect(node.topics().has('t')).toBe(false); // gone already for every broker
  expect(await node.createTopic('t', 1)).toBe(false); // the name is taken while the mark stands
  clock.advance(STALLED_DELETE_LEASES * LEASE_MS - 1);
  await node.scan();
  expect((await control.read<TopicRecord>('topics/t'))?.value.deleting).toBe(true); // a delete may still be under way

  clock.advance(1);
  await node.scan();
  expect(await control.read<TopicRecord>('topics/t')).toBeNull();
  expect(await control.read<PartitionRecord>('partitions/t/0')).toBeNull();
  expect(await control.read<PartitionRecord>('partitions/t/1')).toBeNull();
  expect((await control.read<EpochFloorRecord>('epoch-floors/t'))?.value.leaderEpoch).toBe(0);
  expect(await node.createTopic('t', 1)).toBe(true);
  expect((await control.read<TopicRecord>('topics/t'))!.value.leaderEpochBase).toBe(1);
});
