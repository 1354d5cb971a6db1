// Review (27b, commit 6f5c2d4): scenarios tried against FileStore.openSequentialWrite and
// StreamingUpload's sequential path that held (kept as regression tests).
import { expect, test } from 'bun:test';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { FileStore } from '../../src/store/file.ts';
import { StreamingUpload } from '../../src/store/streaming-upload.ts';
import { type FileSync, systemFileSync } from '../../src/util/file-sync.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { decodeWalObject } from '../../src/wal/format.ts';
import { DEFAULT_WAL_WRITER_CONFIG, WalWriter } from '../../src/wal/writer.ts';
import { patternBytes } from '../store/contract.ts';
import { batchOf } from '../support/batches.ts';
import { PowerLossRecorder, restoreSyncedState } from '../support/power-loss.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';

const MiB = 1024 * 1024;

function leftovers(root: string): string[] {
  return [...readdirSync(join(root, 'tmp')), ...readdirSync(join(root, 'multipart'))];
}

test('a power loss before finish leaves no object, and the store opens clean', async () => {
  const dir = tempDir();
  const journal = tempDir();
  const root = join(dir, 'store');
  await FileStore.open(root).then((store) => store.close());
  const store = await FileStore.open(root, { files: new PowerLossRecorder(dir, journal) });
  await store.put('other', patternBytes(10));
  const write = await store.openSequentialWrite('seg', { ifNoneMatch: '*' });
  for (let i = 0; i < 5; i++) await write.append([patternBytes(50_000, i)]);
  restoreSyncedState(journal, dir); // the power goes before finish
  const after = await FileStore.open(root);
  expect(await after.head('seg')).toBeNull();
  expect((await after.list('')).objects.map((o) => o.key)).toEqual(['other']);
  await after.close();
  await write.abort();
  await store.close();
});

test('a power loss after a failed ifNoneMatch finish keeps the old object whole', async () => {
  const dir = tempDir();
  const journal = tempDir();
  const root = join(dir, 'store');
  await FileStore.open(root).then((store) => store.close());
  const store = await FileStore.open(root, { files: new PowerLossRecorder(dir, journal) });
  await store.put('seg', patternBytes(1000, 9));
  const write = await store.openSequentialWrite('seg', { ifNoneMatch: '*' });
  await write.append([patternBytes(70_000, 3)]);
  await expect(write.finish()).rejects.toThrow(/ifNoneMatch/);
  await store.close();
  restoreSyncedState(journal, dir);
  const after = await FileStore.open(root);
  expect((await after.get('seg')).body).toEqual(patternBytes(1000, 9));
  await after.close();
});

test('abort while a large append is in flight: no hang, no object, no temporary file', async () => {
  const root = tempDir();
  const store = await FileStore.open(root);
  const upload = new StreamingUpload(store, 'seg', { ifNoneMatch: '*' });
  const first = upload.write(patternBytes(4 * MiB));
  const second = upload.write(patternBytes(4 * MiB, 2)).then(
    () => 'written',
    () => 'refused',
  );
  await upload.abort();
  await first.catch(() => undefined);
  expect(await second).toBe('refused');
  await expect(upload.finish()).rejects.toThrow();
  expect(await store.head('seg')).toBeNull();
  expect(leftovers(root)).toEqual([]);
  await store.close();
});

test('FileStore.close waits for an append and a finish in flight; the object is whole', async () => {
  const root = tempDir();
  const store = await FileStore.open(root);
  const write = await store.openSequentialWrite('seg', { ifNoneMatch: '*' });
  const appended = write.append([patternBytes(8 * MiB)]);
  await appended;
  const finished = write.finish();
  await store.close();
  await finished;
  const reopened = await FileStore.open(root);
  expect((await reopened.get('seg')).body).toEqual(patternBytes(8 * MiB));
  expect(leftovers(root)).toEqual([]);
  await reopened.close();
});

test('a WAL object streamed into the file store whose finish fails (its fsync) falls back to one PUT: acknowledged, whole, no temporary file', async () => {
  const root = tempDir();
  let failures = 1;
  const files: FileSync = {
    ...systemFileSync,
    sync: (fd) => (failures-- > 0 ? Promise.reject(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' })) : systemFileSync.sync(fd)),
  };
  const store = await FileStore.open(root, { files });
  const config = {
    ...DEFAULT_WAL_WRITER_CONFIG,
    uploadBytes: 12 * MiB,
    uploadIntervalMs: 60_000,
    multipartPartBytes: 5 * MiB,
    maxBufferedBytes: 64 * MiB,
    retry: { attempts: 6, baseMs: 1, capMs: 5 },
    prefix: 'cluster',
    stream: { writerId: 'leader-1', epoch: 1 },
  };
  const wal = new WalWriter(store, config, { clock: new ManualClock(), random: new SeededRandom(1) });
  for (let offset = 0; offset < 12; offset++)
    void wal.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: offset, lastOffset: offset, data: batchOf(`big${offset}`, 1, 0, MiB - 200) });
  await wal.flush();
  expect(wal.durableOffset(idOf('t'), 0)).toBe(12);
  expect(store.stats().requests.multipartCreate).toBe(1); // it streamed: a sequential write
  expect(failures).toBe(-1); // the stream's fsync failed, the PUT's went through
  expect(store.stats().requests.put).toBe(1);
  const { objects } = await store.list('cluster/wal/');
  expect(objects.length).toBe(1);
  const decoded = decodeWalObject((await store.get(objects[0]!.key)).body);
  expect(decoded.frames.map((frame) => frame.entry.baseOffset)).toEqual(Array.from({ length: 12 }, (_, i) => i));
  expect(leftovers(root)).toEqual([]);
  await store.close();
});
