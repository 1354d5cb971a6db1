// KIP-405's remote.storage.enable per topic (LogConfig.remoteStorageEnable): off, a tiering
// engine copies nothing of the topic and keeps its history locally under retention.* alone.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/cluster/control-store.ts';
import { Ferry } from '../../src/engine/index.ts';
import { resolveLogConfig } from '../../src/log/config.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tieredPartitionPrefix } from '../../src/tier/keys.ts';
import { tempDir } from '../support/temp-dir.ts';

async function produceSegments(ferry: Ferry, topic: string): Promise<void> {
  for (let i = 0; i < 30; i++) await ferry.produce(topic, [{ value: `record ${i} `.padEnd(300, '.') }], { acks: 'all' });
}

test('a topic with remote.storage.enable off is never tiered, and retention.bytes still trims its local log', async () => {
  const store = new MemoryStore();
  const ferry = await Ferry.open({
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
