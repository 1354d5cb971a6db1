// ClusterNode's topic configs: alterations from two brokers at once both land (compare-and-swap,
// read again on a lost race), and each broker hands a topic's configs to its partitions once per
// change: on its own write at once, on another's at its next scan.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import type { TopicRecord } from '../../src/cluster/control-records.ts';
import type { TopicConfigs } from '../../src/log/topic-config.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { testClusterNode } from '../support/cluster-node.ts';

test('concurrent alterations of one topic from two brokers both land, and each broker hands each change over once', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const handed: [node: number, topic: string, configs: TopicConfigs][] = [];
  const [a, b] = [1, 2].map((nodeId) => testClusterNode({ store, clock, nodeId, topicConfigsChanged: (topic, configs) => void handed.push([nodeId, topic, configs]) }));
  await a!.start();
  await b!.start();
  expect(await a!.createTopic('t', 1, 1, { 'retention.ms': '1000' })).toBe(true);
  expect(handed).toEqual([[1, 't', { 'retention.ms': '1000' }]]);
  await Promise.all([a!.alterTopicConfig('t', [{ name: 'segment.ms', op: 'set', value: '60000' }]), b!.alterTopicConfig('t', [{ name: 'retention.bytes', op: 'set', value: '5000' }])]);
  const record = (await new ControlStore(store, 'c').read<TopicRecord>('topics/t'))!.value;
  expect(record.configs).toEqual({ 'retention.ms': '1000', 'segment.ms': '60000', 'retention.bytes': '5000' });
  await a!.scan();
  await b!.scan();
  for (const nodeId of [1, 2]) expect(handed.filter(([node]) => node === nodeId).at(-1)?.[2]).toEqual(record.configs!);
  const count = handed.length;
  await a!.scan();
  await b!.scan();
  expect(handed.length).toBe(count); // nothing changed since: nothing handed again
  // A bad alteration writes nothing; validateOnly neither.
  await expect(a!.alterTopicConfig('t', [{ name: 'retention.ms', op: 'set', value: 'soon' }])).rejects.toMatchObject({ kind: 'InvalidConfig' });
  expect(await a!.alterTopicConfig('t', [{ name: 'retention.ms', op: 'delete', value: null }], true)).toEqual({ 'segment.ms': '60000', 'retention.bytes': '5000' });
  expect((await new ControlStore(store, 'c').read<TopicRecord>('topics/t'))!.value.configs).toEqual(record.configs!);
  await expect(a!.alterTopicConfig('nope', [])).rejects.toMatchObject({ kind: 'UnknownTopicOrPartition' });
  a!.stop();
  b!.stop();
});
