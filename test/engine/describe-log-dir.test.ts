// Kafka's DescribeLogDirs of an engine's one log directory: each partition served with its bytes
// on local disk and its offset lag, and the file system's size and free bytes (statfs).
import { expect, test } from 'bun:test';
import { Engine } from '../../src/engine/index.ts';
import { type Disk, systemDisk } from '../../src/util/disk.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';
import { managedBy } from '../support/cluster-policy.ts';

test("every partition with its size on disk and a leader's lag of 0, and the directory's space", async () => {
  const directory = tempDir();
  const ferry = await Engine.open({ directory });
  ferry.createTopic('a', { partitions: 2 });
  await ferry.produce('a', [{ value: 'x'.repeat(500) }], { partition: 1 });
  const described = ferry.describeLogDir();
  expect(described.path).toBe(directory);
  expect(described.totalBytes!).toBeGreaterThan(0);
  expect(described.usableBytes!).toBeGreaterThan(0);
  expect(described.usableBytes!).toBeLessThanOrEqual(described.totalBytes!);
  expect(described.partitions).toEqual([
    { topic: 'a', partition: 0, sizeBytes: 0, offsetLag: 0, isFutureKey: false },
    { topic: 'a', partition: 1, sizeBytes: expect.any(Number), offsetLag: 0, isFutureKey: false },
  ]);
  expect(described.partitions[1]!.sizeBytes).toBeGreaterThan(500);
  await ferry.close();
});

test("a follower's lag is how far its log end is behind its leader's high watermark", async () => {
  const ferry = await Engine.open({ directory: tempDir(), cluster: managedBy() });
  await ferry.adoptPartition('t', idOf('t'), 0, 1, async () => {}, 'follower');
  ferry.noteLeaderHighWatermark('t', 0, 12);
  expect(ferry.describeLogDir().partitions).toEqual([{ topic: 't', partition: 0, sizeBytes: 0, offsetLag: 12, isFutureKey: false }]);
  await ferry.close();
});

test('a disk that cannot say its space answers null for it', async () => {
  const { statfsSync: _unused, ...withoutStatfs } = systemDisk;
  const disk: Disk = withoutStatfs;
  const ferry = await Engine.open({ directory: tempDir(), disk });
  const described = ferry.describeLogDir();
  expect(described.totalBytes).toBeNull();
  expect(described.usableBytes).toBeNull();
  await ferry.close();
});
