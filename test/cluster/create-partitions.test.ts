// CreatePartitions in a cluster: the topic record's partition count rises by compare-and-swap;
// every broker sees the new count, the new partitions are claimed as a new topic's are, and
// nothing about the old partitions changes (leaders, leader epochs, records).
import { startClusterBroker } from '../support/cluster-brokers.ts';
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import type { Broker } from '../../src/broker/broker.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import type { PartitionRecord, TopicRecord } from '../../src/cluster/control-records.ts';
import { type FerryErrorKind, isFerryError } from '../../src/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { testClusterNode } from '../support/cluster-node.ts';
import { idOf } from '../support/topic-ids.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(60_000);

const running: Broker[] = [];
afterEach(async () => {
  for (const broker of running.splice(0)) await broker.stop().catch(() => {});
});

const start = (store: ObjectStore, nodeId: number): Promise<Broker> => startClusterBroker(store, nodeId, running);

async function failureOf(action: () => Promise<unknown>): Promise<{ kind: FerryErrorKind | null; message: string }> {
  try {
    await action();
  } catch (error) {
    return { kind: isFerryError(error) ? error.kind : null, message: error instanceof Error ? error.message : String(error) };
  }
  throw new Error('expected a failure');
}

test('every broker sees the new count and the new partitions get leaders; the old ones keep theirs and their epochs', async () => {
  const store = new MemoryStore();
  const control = new ControlStore(store, '');
  const brokers = [await start(store, 1), await start(store, 2)];
  await brokers[0]!.context.topology.createTopic('t', 2);
  const led = (count: number) => brokers.every((b) => [...Array(count).keys()].every((p) => b.context.topology.leaderOf('t', p) !== null));
  await until(() => led(2), 'both partitions led, as both brokers see it');
  const before = await Promise.all([0, 1].map(async (p) => (await control.read<PartitionRecord>(`partitions/t/${p}`))!.value));

  await brokers[1]!.context.topology.createPartitions('t', 4, false);
  expect((await control.read<TopicRecord>('topics/t'))!.value.partitions).toBe(4);
  await until(() => brokers.every((b) => b.context.topology.topics().get('t') === 4), 'every broker sees 4 partitions');
  await until(() => led(4), 'the new partitions led, as both brokers see it');
  const after = await Promise.all([0, 1].map(async (p) => (await control.read<PartitionRecord>(`partitions/t/${p}`))!.value));
  expect(after).toEqual(before); // not claimed again: same leaders, same epochs, same chains
  for (const p of [0, 1]) for (const b of brokers) expect(b.context.topology.leaderEpochOf('t', p)).toBe(before[p]!.leaderEpoch);
  const leaderOf3 = brokers.find((b) => b.context.engine.leads('t', 3))!;
  expect(await leaderOf3.context.engine.produce('t', [{ value: 'to a new partition' }], { partition: 3 })).toEqual([{ partition: 3, offset: 0 }]);
});

test("through the topology: Kafka's INVALID_PARTITIONS messages, UNKNOWN_TOPIC_OR_PARTITION, and validateOnly changes nothing", async () => {
  const store = new MemoryStore();
  const broker = await start(store, 1);
  await broker.context.topology.createTopic('t', 3);
  expect(await failureOf(() => broker.context.topology.createPartitions('t', 2, false))).toEqual({
    kind: 'InvalidPartitions',
    message: 'The topic t currently has 3 partition(s); 2 would not be an increase.',
  });
  expect(await failureOf(() => broker.context.topology.createPartitions('t', 3, false))).toEqual({ kind: 'InvalidPartitions', message: 'Topic already has 3 partition(s).' });
  expect((await failureOf(() => broker.context.topology.createPartitions('missing', 3, false))).kind).toBe('UnknownTopicOrPartition');
  await broker.context.topology.createPartitions('t', 5, true);
  expect((await new ControlStore(store, '').read<TopicRecord>('topics/t'))!.value.partitions).toBe(3);
  expect(broker.context.topology.topics().get('t')).toBe(3);
});

test('the record keeps every other field it has (a topic config, the epoch base), and a topic being deleted is unknown', async () => {
  const store = new MemoryStore();
  const node = testClusterNode({ store, clock: new ManualClock(), nodeId: 1 });
  const control = new ControlStore(store, 'c');
  const topicId = idOf('t');
  await control.create('topics/t', { topicId, partitions: 1, replicationFactor: 1, leaderEpochBase: 4, config: { 'retention.ms': '1000' } });
  await node.createPartitions('t', 2);
  expect((await control.read('topics/t'))!.value).toEqual({ topicId, partitions: 2, replicationFactor: 1, leaderEpochBase: 4, config: { 'retention.ms': '1000' } });
  expect(node.topics().get('t')?.partitions).toBe(2);
  const marked = (await control.read<TopicRecord>('topics/t'))!;
  await control.replace('topics/t', marked, { ...marked.value, deleting: true });
  expect((await failureOf(() => node.createPartitions('t', 3))).kind).toBe('UnknownTopicOrPartition');
  expect((await control.read<TopicRecord>('topics/t'))!.value.partitions).toBe(2);
});

// Simulation seed 252007 (test/sim/found-bugs.test.ts): a broker whose scan ran for seconds (it
// rebuilt the logs of ten partitions it follows, one after another) answered Metadata with a topic's
// count from before a CreatePartitions until that scan ended. The topic check, every third of a
// lease on its own timer, shows the grown count at once (that no older read takes it back is
// test/cluster/topic-view-late-answer.test.ts's).
test('a broker whose scan stalls still shows a topic grown since, within a third of a lease', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const SCAN_NEVER_MS = 3_600_000;
  const LEASE_MS = 1000; // the test nodes' lease (test/support/cluster-node.ts)
  const a = testClusterNode({ store, clock, nodeId: 1, scanIntervalMs: SCAN_NEVER_MS });
  const b = testClusterNode({ store, clock, nodeId: 2, scanIntervalMs: SCAN_NEVER_MS });
  await a.start();
  await b.start();
  await a.createTopic('t', 2);
  await b.scan();
  expect(b.topics().get('t')?.partitions).toBe(2);
  await a.createPartitions('t', 5);
  for (let ms = 0; ms < LEASE_MS / 3 + 50; ms += 10) {
    clock.advance(10);
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  expect(b.topics().get('t')?.partitions).toBe(5); // no scan ran since
  await b.scan();
  expect(b.topics().get('t')?.partitions).toBe(5);
  a.stop();
  b.stop();
});
