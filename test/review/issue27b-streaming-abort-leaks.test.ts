// Review (27b, commit 6f5c2d4): StreamingUpload over a store that writes front to back
// (FileStore.openSequentialWrite). Claimed: "abort or any failure leaves no object and no
// temporary file".
//
// 1. abort() records the failure and aborts the sequential write it has *at that instant*
//    (#fail captures #sequential). A write whose #write already passed its #throwIfFailed check but
//    has not yet opened the sequential write (one microtask later) opens it after abort resolved:
//    the chunk is appended to a temporary file nobody aborts or finishes (and its file handle stays
//    open). The write even resolves. The multipart path has the same gap between #roomForPart and
//    #startPart (an upload created after abort resolved, never aborted).
// 2. FileStore.close() while a sequential write is open: its next append fails Closed, and the
//    abort that follows runs as a store request, which the closed store refuses before the
//    temporary file is removed. A broker stopping mid-upload (the engine does not wait for the tier
//    round; the CLI then closes the store) leaves up to a segment's bytes in tmp/, swept only by a
//    store opened an hour after.
import { expect, test } from 'bun:test';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { FileStore } from '../../src/store/file.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { SEQUENTIAL_APPEND_BYTES, StreamingUpload } from '../../src/store/streaming-upload.ts';
import { patternBytes } from '../store/contract.ts';
import { tempDir } from '../support/temp-dir.ts';

/** Microtask turns between write() and abort() tried: the gap is one of them, whatever the engine's exact count. */
const TURNS_MAX = 6;

function leftovers(root: string): string[] {
  return [...readdirSync(join(root, 'tmp')), ...readdirSync(join(root, 'multipart'))];
}

/** The file store without openSequentialWrite: StreamingUpload takes its multipart path. */
function multipartOnly(store: FileStore): ObjectStore {
  return {
    kind: store.kind,
    put: (key, body, options) => store.put(key, body, options),
    get: (key, options) => store.get(key, options),
    head: (key) => store.head(key),
    list: (prefix, options) => store.list(prefix, options),
    delete: (key) => store.delete(key),
    deleteMany: (keys) => store.deleteMany(keys),
    createMultipartUpload: (key, options) => store.createMultipartUpload(key, options),
    stats: () => store.stats(),
    close: () => store.close(),
  };
}

async function abortAfterTurns(view: (store: FileStore) => ObjectStore, turns: number): Promise<string[]> {
  const root = tempDir();
  const file = await FileStore.open(root, { multipartPartBytesMin: 1 });
  const upload = new StreamingUpload(view(file), 'k', { ifNoneMatch: '*', partBytes: 10 });
  const written = upload.write(patternBytes(100)).catch(() => undefined);
  for (let turn = 0; turn < turns; turn++) await null;
  await upload.abort();
  await written;
  await Bun.sleep(20); // anything started meanwhile settles
  expect(await file.head('k')).toBeNull();
  const left = leftovers(root);
  await file.close();
  return left;
}

test('sequential path: an abort at any microtask after write() leaves no temporary file', async () => {
  for (let turns = 0; turns <= TURNS_MAX; turns++) expect({ turns, left: await abortAfterTurns((store) => store, turns) }).toEqual({ turns, left: [] });
});

test('multipart path (the same gap, older): an abort at any microtask after write() leaves no upload behind', async () => {
  for (let turns = 0; turns <= TURNS_MAX; turns++) expect({ turns, left: await abortAfterTurns(multipartOnly, turns) }).toEqual({ turns, left: [] });
});

test('a sequential write open when its FileStore closes: the failed append and the abort leave no temporary file', async () => {
  const root = tempDir();
  const store = await FileStore.open(root);
  const upload = new StreamingUpload(store, 'seg', { ifNoneMatch: '*' });
  await upload.write(patternBytes(SEQUENTIAL_APPEND_BYTES)); // a run's worth: appended at once (smaller writes wait for more)
  await store.close(); // the broker's shutdown: the tier round is not awaited
  await expect(upload.write(patternBytes(SEQUENTIAL_APPEND_BYTES))).rejects.toThrow();
  await upload.abort();
  expect(leftovers(root)).toEqual([]);
});

test('FileSequentialWrite.abort after its store closed still removes its temporary file', async () => {
  const root = tempDir();
  const store = await FileStore.open(root);
  const write = await store.openSequentialWrite('seg', { ifNoneMatch: '*' });
  await write.append([patternBytes(1000)]);
  await store.close();
  await write.abort().catch(() => undefined); // refused or not, the file must go
  expect(leftovers(root)).toEqual([]);
});
