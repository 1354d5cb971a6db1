import { describe, expect, test } from 'bun:test';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { FileStore } from '../../src/store/file.ts';
import { InstrumentedStore } from '../../src/store/instrumented.ts';
import { PrefixedStore } from '../../src/store/prefixed.ts';
import { SEQUENTIAL_APPEND_BYTES, SEQUENTIAL_APPEND_CHUNKS_MAX, StreamingUpload } from '../../src/store/streaming-upload.ts';
import { MetricsRegistry } from '../../src/metrics/index.ts';
import { systemClock } from '../../src/util/clock.ts';
import { concatBytes } from '../../src/util/bytes.ts';
import { PowerLossRecorder, restoreSyncedState } from '../support/power-loss.ts';
import { tempDir } from '../support/temp-dir.ts';
import { listAll, patternBytes, storeErrorOf } from './contract.ts';

/** `total` bytes cut into chunks of `chunkBytes`. */
function chunksOf(total: number, chunkBytes: number, seed = 1): Uint8Array[] {
  const bytes = patternBytes(total, seed);
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < total; at += chunkBytes) chunks.push(bytes.subarray(at, Math.min(total, at + chunkBytes)));
  return chunks;
}

function temporaryFiles(root: string): string[] {
  return readdirSync(join(root, 'tmp'));
}

describe('FileStore.openSequentialWrite', () => {
  test('the appended chunks, in order, become the object at finish and not before', async () => {
    const dir = tempDir();
    const store = await FileStore.open(dir);
    const chunks = chunksOf(300_000, 70_000);
    const write = await store.openSequentialWrite('a/b', { ifNoneMatch: '*' });
    for (const chunk of chunks) await write.append([chunk]);
    expect(await store.head('a/b')).toBeNull();
    expect((await listAll(store, '')).keys).toEqual([]);
    const { etag } = await write.finish();
    const read = await store.get('a/b');
    expect(read.body).toEqual(concatBytes(chunks));
    expect(read.etag).toBe(etag);
    expect(etag).toMatch(/-5$/); // S3's multipart form: the chunk count after a dash
    expect(temporaryFiles(dir)).toEqual([]);
    await store.close();
  });

  test('ifNoneMatch: finishing over an existing object fails, leaving it and no temporary file', async () => {
    const dir = tempDir();
    const store = await FileStore.open(dir);
    await store.put('k', new Uint8Array([1, 2, 3]));
    const write = await store.openSequentialWrite('k', { ifNoneMatch: '*' });
    await write.append([patternBytes(1000)]);
    await storeErrorOf(write.finish(), 'PreconditionFailed');
    expect((await store.get('k')).body).toEqual(new Uint8Array([1, 2, 3]));
    expect(temporaryFiles(dir)).toEqual([]);
    await store.close();
  });

  test('abort leaves nothing: no object, no temporary file; later calls are refused', async () => {
    const dir = tempDir();
    const store = await FileStore.open(dir);
    const write = await store.openSequentialWrite('k');
    await write.append([patternBytes(5000)]);
    await write.abort();
    await write.abort(); // idempotent
    expect(await store.head('k')).toBeNull();
    expect(temporaryFiles(dir)).toEqual([]);
    await storeErrorOf(write.append([patternBytes(10)]), 'InvalidArgument');
    await storeErrorOf(write.finish(), 'InvalidArgument');
    await store.close();
  });

  test('appends go one at a time: a second append while one is under way is refused', async () => {
    const dir = tempDir();
    const store = await FileStore.open(dir);
    const write = await store.openSequentialWrite('k');
    const first = write.append([patternBytes(100_000)]);
    await storeErrorOf(write.append([patternBytes(10)]), 'InvalidArgument');
    await first;
    await write.finish();
    expect((await store.get('k')).body).toEqual(patternBytes(100_000));
    await store.close();
  });

  test('a finished object survives a power loss (its bytes fsynced before its name is published)', async () => {
    const dir = tempDir();
    const journal = tempDir();
    const root = join(dir, 'store');
    await FileStore.open(root).then((store) => store.close()); // the store's directories, from a previous boot
    const recorder = new PowerLossRecorder(dir, journal);
    const store = await FileStore.open(root, { files: recorder });
    const chunks = chunksOf(200_000, 64 * 1024, 7);
    const write = await store.openSequentialWrite('seg/1', { ifNoneMatch: '*' });
    for (const chunk of chunks) await write.append([chunk]);
    await write.finish();
    await store.close();
    restoreSyncedState(journal, dir);
    const after = await FileStore.open(root);
    expect((await after.get('seg/1')).body).toEqual(concatBytes(chunks));
    await after.close();
  });

  test('a write never finished (its process died) leaves no object', async () => {
    const dir = tempDir();
    const store = await FileStore.open(dir);
    const write = await store.openSequentialWrite('k');
    await write.append([patternBytes(1000)]);
    const reopened = await FileStore.open(dir); // a later process, while the first is gone mid-write
    expect(await reopened.head('k')).toBeNull();
    expect((await listAll(reopened, '')).keys).toEqual([]);
    await reopened.close();
    await write.abort(); // the test's own process lives on: release the file
    await store.close();
  });
});

describe('StreamingUpload over a store that writes front to back', () => {
  test('chunks are appended as they come: no parts, no copies, one chunk held', async () => {
    const dir = tempDir();
    const store = await FileStore.open(dir);
    const chunks = chunksOf(20 * 1024 * 1024 + 123, 1024 * 1024, 3);
    const upload = new StreamingUpload(store, 'tier/x', { ifNoneMatch: '*' });
    for (const chunk of chunks) await upload.write(chunk);
    await upload.finish();
    expect((await store.get('tier/x')).body).toEqual(concatBytes(chunks));
    expect(upload.partsStarted).toBe(0);
    expect(upload.copiedBytes).toBe(0);
    expect(upload.bufferedBytesMax).toBeLessThanOrEqual(1024 * 1024);
    expect(readdirSync(join(dir, 'multipart'))).toEqual([]);
    expect(store.stats().requests.uploadPart).toBe(chunks.length);
    await store.close();
  });

  test('small chunks go in runs (one write per SEQUENTIAL_APPEND_BYTES or SEQUENTIAL_APPEND_CHUNKS_MAX chunks), and equal chunking gives equal ETags', async () => {
    const dir = tempDir();
    const store = await FileStore.open(dir);
    const chunks = chunksOf(3000 * 1024 + 7, 1024, 5);
    const etags: string[] = [];
    for (const key of ['a', 'b']) {
      const upload = new StreamingUpload(store, key, { ifNoneMatch: '*' });
      for (const chunk of chunks) await upload.write(chunk);
      etags.push((await upload.finish()).etag);
      expect((await store.get(key)).body).toEqual(concatBytes(chunks));
      expect(upload.bufferedBytesMax).toBeLessThanOrEqual(SEQUENTIAL_APPEND_BYTES + 1024);
    }
    expect(store.stats().requests.uploadPart).toBe(2 * Math.ceil(chunks.length / SEQUENTIAL_APPEND_CHUNKS_MAX));
    expect(etags[0]).toBe(etags[1]!);
    expect(etags[0]).toMatch(new RegExp(`-${chunks.length}$`));
    await store.close();
  });

  test('abort discards it; a failed condition rejects finish and leaves the old object', async () => {
    const dir = tempDir();
    const store = await FileStore.open(dir);
    const aborted = new StreamingUpload(store, 'k', { ifNoneMatch: '*' });
    await aborted.write(patternBytes(10_000));
    await aborted.abort();
    expect(await store.head('k')).toBeNull();
    await store.put('k', new Uint8Array([9]));
    const late = new StreamingUpload(store, 'k', { ifNoneMatch: '*' });
    await late.write(patternBytes(10_000));
    await storeErrorOf(late.finish(), 'PreconditionFailed');
    expect((await store.get('k')).body).toEqual(new Uint8Array([9]));
    expect(temporaryFiles(dir)).toEqual([]);
    await store.close();
  });

  test('the prefixed and instrumented views of a file store keep the sequential write', async () => {
    const dir = tempDir();
    const file = await FileStore.open(dir);
    const registry = new MetricsRegistry();
    const store = new InstrumentedStore(new PrefixedStore(file, 'tier/'), 'tier', registry, systemClock);
    const upload = new StreamingUpload(store, 'seg', { ifNoneMatch: '*' });
    await upload.write(patternBytes(3000));
    await upload.finish();
    expect(upload.partsStarted).toBe(0);
    expect((await file.get('tier/seg')).body).toEqual(patternBytes(3000));
    expect(registry.renderPrometheus()).toMatch(/ferry_object_store_uploaded_bytes_total\{store="tier"\} 3000/);
    await file.close();
  });
});
