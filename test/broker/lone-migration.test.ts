// Issue 24: a data directory a lone broker wrote before it became a cluster of one (its topics in
// topics.json, its producer-id block in a file, its group offsets in a file) is moved into control
// records at its first start, once: the topics keep their ids and every record its offset, the
// producer ids go on past what the file handed out, and the committed offsets are there.
import { expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Broker } from '../../src/broker/broker.ts';
import { OffsetStore } from '../../src/broker/groups/offset-store.ts';
import { MIGRATED_MARKER_FILE } from '../../src/broker/lone-migration.ts';
import { FileProducerIdBlocks } from '../../src/broker/producers.ts';
import { Ferry } from '../../src/ferry/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tempDir } from '../support/temp-dir.ts';

const NODE_ID = 3;
const RECORDS = 12;

/** What a lone broker at d904e31 left: its engine's topics, its producer-id file, its group offsets file. */
async function oldLoneDirectory(directory: string, wal: MemoryStore): Promise<{ topicId: string; fileNext: number }> {
  const engine = await Ferry.open({ directory, wal: { store: wal, writerId: `broker-${NODE_ID}`, config: { uploadIntervalMs: 1 } } });
  const { id } = engine.createTopic('orders', { partitions: 2, configs: { 'retention.ms': '86400000' } });
  for (let i = 0; i < RECORDS; i++) await engine.produce('orders', [{ value: `record ${i}` }], { partition: i % 2, acks: 'all' });
  await engine.close();
  const block = await new FileProducerIdBlocks(directory, NODE_ID).reserve();
  const offsets = OffsetStore.open(directory);
  await offsets.commit('billing', [{ topic: 'orders', partition: 1, committed: { offset: 4, leaderEpoch: 0, metadata: null, topicId: id } }]);
  return { topicId: id, fileNext: block.end };
}

test("a lone broker's directory from before control records is moved into them at its first start, and its records are served at their offsets", async () => {
  const wal = new MemoryStore();
  const directory = tempDir();
  const { topicId, fileNext } = await oldLoneDirectory(directory, wal);
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: NODE_ID,
    engine: { directory, wal: { store: wal, writerId: `broker-${NODE_ID}`, config: { uploadIntervalMs: 1 } } },
  });
  try {
    expect(existsSync(join(directory, MIGRATED_MARKER_FILE))).toBe(true);
    const { topology, engine, offsets, producers } = broker.context;
    expect(topology.topicId('orders')).toBe(topicId);
    expect(await topology.partitionCount('orders')).toBe(2);
    expect((await topology.describeTopicConfigs('orders'))!.find((entry) => entry.name === 'retention.ms')!.value).toBe('86400000');
    for (const partition of [0, 1]) {
      expect(engine.leads('orders', partition)).toBe(true);
      const read = engine.fetch('orders', partition, 0);
      expect(read.highWatermark).toBe(RECORDS / 2);
    }
    const [produced] = await engine.produce('orders', [{ value: 'after the move' }], { partition: 0, acks: 'all' });
    expect(produced!.offset).toBe(RECORDS / 2);
    expect((await offsets.list('billing')).map(({ topic, partition, committed }) => [topic, partition, committed.offset])).toEqual([['orders', 1, 4]]);
    expect(await producers.allocate()).toBeGreaterThanOrEqual(fileNext);
  } finally {
    await broker.stop();
  }
});
