// Kafka's CreatePartitions on a single engine: a topic grows (never shrinks, with Kafka's
// INVALID_PARTITIONS messages), the new partitions serve at once and survive a restart, and the
// old ones keep their records, ids and leader epochs.
import { expect, test } from 'bun:test';
import { Engine, type FerryErrorKind, isFerryError } from '../../src/engine/index.ts';
import { PARTITIONS_PER_TOPIC_MAX } from '../../src/engine/topic-registry.ts';
import { tempDir } from '../support/temp-dir.ts';

function failure(action: () => unknown): { kind: FerryErrorKind | null; message: string } {
  try {
    action();
  } catch (error) {
    return { kind: isFerryError(error) ? error.kind : null, message: error instanceof Error ? error.message : String(error) };
  }
  throw new Error('expected a failure');
}

test('a topic grows: the new partitions take records at once, the old ones keep theirs, and all of it survives a restart', async () => {
  const directory = tempDir();
  const ferry = await Engine.open({ directory });
  const { id } = ferry.createTopic('orders', { partitions: 2 });
  await ferry.produce('orders', [{ value: 'old' }], { partition: 1 });
  const grown = ferry.createPartitions('orders', 5);
  expect(grown).toMatchObject({ name: 'orders', id, partitions: 5 });
  expect(ferry.topics()).toEqual([{ name: 'orders', id, partitions: 5, config: {} }]);
  expect(ferry.fetch('orders', 1, 0).highWatermark).toBe(1);
  expect(ferry.leaderEpoch('orders', 1)).toBe(0);
  expect(await ferry.produce('orders', [{ value: 'new' }], { partition: 4 })).toEqual([{ partition: 4, offset: 0 }]);
  await ferry.close();

  const again = await Engine.open({ directory });
  expect(again.topics()).toEqual([{ name: 'orders', id, partitions: 5, config: {} }]);
  expect(again.fetch('orders', 4, 0).highWatermark).toBe(1);
  expect(again.fetch('orders', 1, 0).highWatermark).toBe(1);
  expect(again.serves('orders', 3)).toBe(true);
  await again.close();
});

test("a count that is no increase is INVALID_PARTITIONS with Kafka's messages, and changes nothing", async () => {
  const ferry = await Engine.open({ directory: tempDir() });
  ferry.createTopic('orders', { partitions: 3 });
  expect(failure(() => ferry.createPartitions('orders', 2))).toEqual({ kind: 'InvalidPartitions', message: 'The topic orders currently has 3 partition(s); 2 would not be an increase.' });
  expect(failure(() => ferry.createPartitions('orders', 3))).toEqual({ kind: 'InvalidPartitions', message: 'Topic already has 3 partition(s).' });
  expect(failure(() => ferry.createPartitions('orders', PARTITIONS_PER_TOPIC_MAX + 1)).kind).toBe('InvalidPartitions');
  expect(failure(() => ferry.createPartitions('orders', 3.5)).kind).toBe('InvalidPartitions');
  expect(failure(() => ferry.createPartitions('missing', 4)).kind).toBe('UnknownTopicOrPartition');
  expect(ferry.topics()[0]!.partitions).toBe(3);
  expect(ferry.serves('orders', 3)).toBe(false);
  await ferry.close();
});

test('validateOnly checks and answers the grown topic, and adds nothing', async () => {
  const directory = tempDir();
  const ferry = await Engine.open({ directory });
  ferry.createTopic('orders', { partitions: 1 });
  expect(ferry.createPartitions('orders', 4, true).partitions).toBe(4);
  expect(failure(() => ferry.createPartitions('orders', 1, true)).kind).toBe('InvalidPartitions');
  expect(ferry.topics()[0]!.partitions).toBe(1);
  expect(ferry.serves('orders', 1)).toBe(false);
  await ferry.close();
  const again = await Engine.open({ directory });
  expect(again.topics()[0]!.partitions).toBe(1);
  await again.close();
});

test('a new partition starts empty even where an earlier grow left a directory behind', async () => {
  const directory = tempDir();
  const ferry = await Engine.open({ directory });
  ferry.createTopic('orders', { partitions: 1 });
  await ferry.produce('orders', [{ value: 'a' }, { value: 'b' }], { partition: 0 });
  ferry.createPartitions('orders', 2);
  await ferry.produce('orders', [{ value: 'stray' }], { partition: 1 });
  await ferry.close();
  // A grow that crashed before its registry write: the directory is there, the registry says 1.
  const { readFileSync, writeFileSync } = await import('node:fs');
  const topicsFile = `${directory}/topics.json`;
  const registry = JSON.parse(readFileSync(topicsFile, 'utf8')) as { topics: { partitions: number }[] };
  registry.topics[0]!.partitions = 1;
  writeFileSync(topicsFile, JSON.stringify(registry));
  const again = await Engine.open({ directory });
  again.createPartitions('orders', 2);
  expect(again.fetch('orders', 1, 0).highWatermark).toBe(0);
  await again.close();
});
