// The embedded engine keeps a topic's incarnations apart (docs/design.md contract 10, issue 9 finding
// 5): a topic deleted and created again shares its name, its partition directories' names and its
// leader's WAL stream with the old one, and nothing of the old one may count for the new one.
import { expect, test } from 'bun:test';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ferry } from '../../src/ferry/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore, PutOptions } from '../../src/store/object-store.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { decode } from '../support/batches.ts';
import { tempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

const WAL = { uploadBytes: 16 * 1024, uploadIntervalMs: 1 };

/** A store whose PUTs wait while `held` (an upload that has not landed yet). */
function holdingStore(): { store: ObjectStore; hold(): void; release(): void } {
  const inner = new MemoryStore();
  let gate: { promise: Promise<void>; open: () => void } | null = null;
  const store: ObjectStore = {
    kind: inner.kind,
    put: async (key: string, body: Uint8Array, options?: PutOptions) => {
      while (gate !== null) await gate.promise;
      return inner.put(key, body, options);
    },
    get: (key, options) => inner.get(key, options),
    head: (key) => inner.head(key),
    list: (prefix, options) => inner.list(prefix, options),
    delete: (key) => inner.delete(key),
    deleteMany: (keys) => inner.deleteMany(keys),
    createMultipartUpload: (key, options) => inner.createMultipartUpload(key, options),
    stats: () => inner.stats(),
    close: () => inner.close(),
  };
  return {
    store,
    hold: () => {
      let open = () => {};
      const promise = new Promise<void>((resolve) => (open = resolve));
      gate = { promise, open };
    },
    release: () => {
      const opened = gate;
      gate = null;
      opened?.open();
    },
  };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

function values(ferry: Ferry, topic: string): string[] {
  return ferry.fetch(topic, 0, 0).batches.flatMap((batch) => [...batch.records()].map((record) => decode(record.value)!));
}

async function writeThenRecreate(ferry: Ferry): Promise<void> {
  ferry.createTopic('d1');
  await ferry.produce(
    'd1',
    [0, 1, 2, 3, 4].map((i) => ({ value: `old-${i}` })),
    { partition: 0 },
  );
  await ferry.deleteTopic('d1');
  ferry.createTopic('d1');
}

test("acks=all on a re-created topic waits for its own WAL object, not the old incarnation's durable offsets", async () => {
  const { store, hold, release } = holdingStore();
  const ferry = await Ferry.open({ directory: tempDir(), random: new SeededRandom(1), wal: { store, writerId: 'node-1', config: WAL } });
  await writeThenRecreate(ferry);
  hold();
  let acknowledged = false;
  const pending = ferry.produce('d1', [{ value: 'new-0' }], { partition: 0 }).then((records) => ((acknowledged = true), records));
  await settle();
  expect(acknowledged).toBe(false); // the old incarnation was durable up to offset 5; this record is not
  release();
  expect(await pending).toEqual([{ partition: 0, offset: 0 }]);
  await ferry.close();
});

test('a leader that re-created a topic reopens with the new incarnation only', async () => {
  const store = new MemoryStore();
  const directory = tempDir();
  const first = await Ferry.open({ directory, random: new SeededRandom(2), wal: { store, writerId: 'node-1', config: WAL } });
  await writeThenRecreate(first);
  await first.produce('d1', [{ value: 'new-0' }, { value: 'new-1' }, { value: 'new-2' }], { partition: 0 });
  const id = first.topics()[0]!.id;
  await first.close();
  // What the earlier streams hold is read back per topic id: the old incarnation's offsets 0-4 are not the new one's.
  const again = await Ferry.open({ directory, random: new SeededRandom(3), wal: { store, writerId: 'node-1', config: WAL } });
  expect(again.topics().map((t) => [t.name, t.id])).toEqual([['d1', id]]);
  expect(values(again, 'd1')).toEqual(['new-0', 'new-1', 'new-2']);
  expect((await again.produce('d1', [{ value: 'new-3' }], { partition: 0 }))[0]!.offset).toBe(3);
  await again.close();
});

test('a read replica drops the old incarnation when the WAL names a new one, and keeps it dropped after a restart', async () => {
  const store = new MemoryStore();
  const primary = await Ferry.open({ directory: tempDir(), random: new SeededRandom(4), minInsyncReplicas: 2, wal: { store, writerId: 'node-1', config: WAL } });
  primary.createTopic('d1');
  const replicaDirectory = tempDir('ferry-replica-');
  const follow = { store, writerId: 'node-1', follower: { pollIntervalMs: 2, checkpointIntervalMs: 0 } };
  let secondary = await Ferry.open({ directory: replicaDirectory, follow });
  primary.attachReplica(secondary, 'node-2');
  await primary.produce(
    'd1',
    [0, 1, 2, 3, 4].map((i) => ({ value: `old-${i}` })),
    { partition: 0 },
  );
  await primary.deleteTopic('d1');
  primary.createTopic('d1');
  // min.insync.replicas 2: the ack waits until the replica holds the new record, not its old log end of 5.
  expect(await primary.produce('d1', [{ value: 'new-0' }], { partition: 0 })).toEqual([{ partition: 0, offset: 0 }]);
  await until(() => secondary.topics()[0]?.id === primary.topics()[0]!.id && secondary.fetch('d1', 0, 0).highWatermark === 1, 'the replica to serve the new incarnation');
  expect(values(secondary, 'd1')).toEqual(['new-0']);
  await secondary.close();
  // Reopened without its checkpoint, it reads the streams again from the start: the old
  // incarnation's frames come first and stay skipped (its id is retired here).
  rmSync(join(replicaDirectory, 'wal-follower-checkpoint'), { force: true });
  secondary = await Ferry.open({ directory: replicaDirectory, follow });
  primary.attachReplica(secondary, 'node-2');
  expect(await primary.produce('d1', [{ value: 'new-1' }], { partition: 0 })).toEqual([{ partition: 0, offset: 1 }]);
  await until(() => secondary.topics().length > 0 && secondary.fetch('d1', 0, 0).highWatermark === 2, 'the reopened replica');
  expect(values(secondary, 'd1')).toEqual(['new-0', 'new-1']);
  await primary.close();
  await secondary.close();
});

test('a partition directory left by a deleted incarnation is never reused', async () => {
  const directory = tempDir();
  const first = await Ferry.open({ directory, random: new SeededRandom(5) });
  first.createTopic('d1');
  await first.produce('d1', [{ value: 'old-0' }], { partition: 0 });
  await first.close();
  // A delete that stopped after the registry was saved: d1-0 is still on disk.
  writeFileSync(join(directory, 'topics.json'), JSON.stringify({ version: 1, topics: [] }));
  const second = await Ferry.open({ directory, random: new SeededRandom(6) });
  second.createTopic('d1');
  expect(values(second, 'd1')).toEqual([]);
  await second.produce('d1', [{ value: 'new-0' }], { partition: 0 });
  await second.close();
  // The registry names another id than the directory does: the directory is the old incarnation's.
  const registry = JSON.parse(readFileSync(join(directory, 'topics.json'), 'utf8')) as { topics: { id: string }[] };
  registry.topics[0]!.id = 'AAAAAAAAAAAAAAAAAAAAAg';
  writeFileSync(join(directory, 'topics.json'), JSON.stringify(registry));
  const third = await Ferry.open({ directory });
  expect(values(third, 'd1')).toEqual([]);
  await third.close();
});
