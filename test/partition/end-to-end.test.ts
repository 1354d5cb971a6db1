// The whole path, leader -> WAL objects -> follower, on real backends: the file store (the
// embedded default) and the S3 backend over HTTP (s3rver behind the conditional test proxy,
// which enforces the put-if-absent that WAL streams rely on).
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Engine, isFerryError } from '../../src/engine/index.ts';
import { FileStore } from '../../src/store/file.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { S3Store } from '../../src/store/s3.ts';
import { sealStream } from '../../src/wal/seal.ts';
import { useS3Endpoints } from '../support/s3-endpoints.ts';
import { S3RVER_ACCESS_KEY_ID, S3RVER_REGION, S3RVER_SECRET_ACCESS_KEY } from '../support/s3rver.ts';
import { tempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(60_000);

const endpoints = useS3Endpoints();
let buckets = 0;

async function s3Store(bucket: string): Promise<ObjectStore> {
  const url = new URL(`s3://${bucket}/cluster-a?region=${S3RVER_REGION}&forcePathStyle=true&endpoint=${endpoints.proxy().endpoint}`);
  return S3Store.fromUrl(url, { AWS_ACCESS_KEY_ID: S3RVER_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: S3RVER_SECRET_ACCESS_KEY });
}

const backends: [string, () => Promise<{ leaderStore: ObjectStore; followerStore: ObjectStore }>][] = [
  [
    'file store',
    async () => {
      const root = tempDir('ferry-objects-');
      return { leaderStore: await FileStore.open(root), followerStore: await FileStore.open(root) };
    },
  ],
  [
    'S3 backend on s3rver',
    async () => {
      const bucket = `ferry-e2e-${++buckets}`;
      await endpoints.s3rver().createBucket(bucket);
      return { leaderStore: await s3Store(bucket), followerStore: await s3Store(bucket) };
    },
  ],
];

function logFiles(directory: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const partition of readdirSync(directory).filter((name) => /^orders-\d+$/.test(name))) {
    for (const name of readdirSync(join(directory, partition)).filter((n) => n.endsWith('.log'))) files.set(`${partition}/${name}`, readFileSync(join(directory, partition, name)));
  }
  return files;
}

for (const [name, open] of backends) {
  describe(`end to end on the ${name}`, () => {
    test('a leader ships, a follower in another engine rebuilds byte-identical segments', async () => {
      const { leaderStore, followerStore } = await open();
      const leaderDir = tempDir();
      const followerDir = tempDir('ferry-follower-');
      const log = { segmentBytes: 8 * 1024 };
      const leader = await Engine.open({ directory: leaderDir, log, wal: { store: leaderStore, writerId: 'broker-1', config: { uploadBytes: 8 * 1024, uploadIntervalMs: 2 } } });
      leader.createTopic('orders', { partitions: 2 });
      const follower = await Engine.open({ directory: followerDir, log, follow: { store: followerStore, writerId: 'broker-1', follower: { pollIntervalMs: 5 } } });
      leader.attachReplica(follower, 'broker-2');
      for (let i = 0; i < 40; i++) {
        await leader.produce(
          'orders',
          Array.from({ length: 10 }, (_, j) => ({ key: `customer-${(i * 10 + j) % 17}`, value: `order ${i}-${j} ${'x'.repeat(100)}` })),
          { compression: i % 4 === 0 ? 'gzip' : 'none' },
        );
      }
      const ends = [0, 1].map((p) => leader.fetch('orders', p, 0).highWatermark);
      await until(() => follower.topics().length > 0 && follower.topics()[0]!.partitions === 2 && [0, 1].every((p) => follower.fetch('orders', p, 0).highWatermark === ends[p]), 'the follower');
      await leader.close();
      await follower.close();
      const leaderFiles = logFiles(leaderDir);
      const followerFiles = logFiles(followerDir);
      expect([...followerFiles.keys()].sort()).toEqual([...leaderFiles.keys()].sort());
      expect(leaderFiles.size).toBeGreaterThan(4); // several segments rolled on each side
      for (const [file, bytes] of leaderFiles) expect(followerFiles.get(file)!.equals(bytes)).toBe(true);
      await leaderStore.close();
      await followerStore.close();
    });

    test('a writer whose stream is sealed is fenced and acknowledges nothing more', async () => {
      const { leaderStore, followerStore } = await open();
      const leader = await Engine.open({ directory: tempDir(), wal: { store: leaderStore, writerId: 'broker-1', config: { uploadBytes: 1, uploadIntervalMs: 1 } } });
      leader.createTopic('orders');
      await leader.produce('orders', [{ value: 'before the seal' }]);
      await sealStream(followerStore, '', { writerId: 'broker-1', epoch: leader.wal!.config.stream.epoch }, { writerId: 'broker-2', nowMs: Date.now() });
      let caught: unknown;
      try {
        await leader.produce('orders', [{ value: 'after the seal' }]);
      } catch (error) {
        caught = error;
      }
      expect(isFerryError(caught, 'Fenced')).toBe(true);
      expect(leader.fetch('orders', 0, 0).highWatermark).toBe(1);
      await leader.close();
      await leaderStore.close();
      await followerStore.close();
    });
  });
}
