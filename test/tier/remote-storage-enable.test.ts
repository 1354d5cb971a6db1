// KIP-405's remote.storage.enable per topic (LogConfig.remoteStorageEnable): off, a tiering
// engine copies nothing of the topic and keeps its history locally under retention.* alone.
import { expect, test } from 'bun:test';
import { Broker } from '../../src/broker/broker.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import type { TopicRecord } from '../../src/cluster/control-records.ts';
import { Engine } from '../../src/engine/index.ts';
import { resolveLogConfig } from '../../src/log/config.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tieredPartitionPrefix } from '../../src/tier/keys.ts';
import { tempDir } from '../support/temp-dir.ts';

async function produceSegments(ferry: Engine, topic: string): Promise<void> {
  for (let i = 0; i < 30; i++) await ferry.produce(topic, [{ value: `record ${i} `.padEnd(300, '.') }], { acks: 'all' });
}

test('a topic with remote.storage.enable off is never tiered, and retention.bytes still trims its local log', async () => {
  const store = new MemoryStore();
  const ferry = await Engine.open({
    directory: tempDir(),
    log: { segmentBytes: 2048 },
    wal: { store, writerId: 'w', config: { uploadIntervalMs: 1 } },
    tier: { store, control: new ControlStore(store, ''), intervalMs: 3_600_000 },
  });
  try {
    const local = ferry.createTopic('local-only', { partitions: 1, config: { remoteStorageEnable: false, retentionBytes: 4096 } });
    const tiered = ferry.createTopic('tiered', { partitions: 1 });
    await produceSegments(ferry, 'local-only');
    await produceSegments(ferry, 'tiered');
    while ((await ferry.tierer!.tierDue()) > 0);
    expect((await store.list(tieredPartitionPrefix('', local.id, 0))).objects).toEqual([]);
    expect((await store.list(tieredPartitionPrefix('', tiered.id, 0))).objects.length).toBeGreaterThan(0);
    expect(ferry.enforceRetention()).toBeGreaterThan(0);
    expect(ferry.offsetFor('local-only', 0, -2).offset).toBeGreaterThan(0); // retention.bytes, with nothing tiered
  } finally {
    await ferry.close();
  }
});

test('remote.storage.enable must be a boolean', () => {
  expect(() => resolveLogConfig({ remoteStorageEnable: 'false' as unknown as boolean })).toThrow(/remoteStorageEnable must be true or false/);
});

/** The message's kind and first words, or null if `alter` did not throw. */
function refusal(alter: () => unknown): string | null {
  try {
    alter();
    return null;
  } catch (error) {
    return `${(error as { kind?: string }).kind}: ${(error as Error).message.split(',')[0]}`;
  }
}

test('remote.storage.enable cannot be turned off on a topic that has it on (KIP-950 without delete-on-disable); turned on, and every other change, it can', async () => {
  const store = new MemoryStore();
  const ferry = await Engine.open({ directory: tempDir(), wal: { store, writerId: 'w' }, tier: { store, control: new ControlStore(store, ''), intervalMs: 3_600_000 } });
  try {
    ferry.createTopic('by-default', { partitions: 1 }); // Ferry's default: on
    ferry.createTopic('off', { partitions: 1, configs: { 'remote.storage.enable': 'false' } });
    const off = [{ name: 'remote.storage.enable', op: 'set' as const, value: 'false' }];
    const refused = 'InvalidConfig: It is invalid to disable remote storage without deleting remote data';
    expect(refusal(() => ferry.alterTopicConfig('by-default', off))).toBe(refused);
    expect(refusal(() => ferry.alterTopicConfig('by-default', off, true))).toBe(refused); // validateOnly says so too
    expect(ferry.topicConfigs('by-default')['remote.storage.enable']).toBeUndefined(); // nothing changed
    expect(refusal(() => ferry.alterTopicConfig('off', [{ name: 'retention.ms', op: 'set', value: '60000' }]))).toBeNull(); // off stays off
    ferry.alterTopicConfig('off', [{ name: 'remote.storage.enable', op: 'set', value: 'true' }]); // off to on: Kafka allows it
    expect(refusal(() => ferry.alterTopicConfig('off', off))).toBe(refused);
    expect(refusal(() => ferry.alterTopicConfig('off', [{ name: 'remote.storage.enable', op: 'delete', value: null }]))).toBeNull(); // back to the default: on
  } finally {
    await ferry.close();
  }
});

test('in a cluster too: the alteration is checked against the topic record it replaces, and writes nothing', async () => {
  const store = new MemoryStore();
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    cluster: { store, leaseMs: 120_000, scanIntervalMs: 60_000, peerPort: null },
    engine: {
      directory: tempDir(),
      log: { flush: { kind: 'none' } },
      wal: { store, writerId: 'broker-1', config: { uploadIntervalMs: 1 } },
      tier: { store, control: new ControlStore(store, ''), intervalMs: 3_600_000 },
    },
  });
  try {
    await broker.context.topology.createTopic('t', 1, 1, { 'retention.ms': '60000' });
    await expect(broker.context.topology.alterTopicConfig('t', [{ name: 'remote.storage.enable', op: 'set', value: 'false' }])).rejects.toMatchObject({ kind: 'InvalidConfig' });
    expect((await new ControlStore(store, '').read<TopicRecord>('topics/t'))!.value.configs).toEqual({ 'retention.ms': '60000' });
    // AlterConfigs' replace-all that leaves remote.storage.enable out keeps the default: on.
    expect(await broker.context.topology.alterTopicConfig('t', () => [{ name: 'retention.ms', op: 'delete', value: null }])).toEqual({});
  } finally {
    await broker.stop();
  }
});

test('without a tier nothing was copied: remote.storage.enable may be turned off', async () => {
  const ferry = await Engine.open({ directory: tempDir() });
  try {
    ferry.createTopic('t', { partitions: 1 });
    expect(refusal(() => ferry.alterTopicConfig('t', [{ name: 'remote.storage.enable', op: 'set', value: 'false' }]))).toBeNull();
  } finally {
    await ferry.close();
  }
});
