import { describe, expect, test } from 'bun:test';
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isStoreError } from '../../src/store/errors.ts';
import { decodeName, directoryPathOf, objectPathOf } from '../../src/store/file-keys.ts';
import { FileStore, MULTIPART_DIR, OBJECTS_DIR, TEMP_DIR } from '../../src/store/file.ts';
import { tempDir } from '../support/temp-dir.ts';
import { listAll, patternBytes, storeContract, storeErrorOf } from './contract.ts';

const WORKER = join(import.meta.dir, '../support/file-store-worker.ts');
const text = (value: string): Uint8Array => new TextEncoder().encode(value);
const decode = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

// The shipped configuration, fsync included: the contract also exercises the races between
// directory fsyncs and the pruning of emptied directories.
storeContract(
  'file store',
  async () => {
    const store = await FileStore.open(tempDir('ferry-file-store-'));
    return { store, cleanup: () => store.close() };
  },
  { conditional: true },
);

describe('file store: key mapping', () => {
  test('objects and directories live in separate namespaces', () => {
    expect(objectPathOf('a')).toBe('a.o');
    expect(objectPathOf('a/b')).toBe('a.d/b.o');
    expect(objectPathOf('a/')).toBe('a.d/.o');
    expect(objectPathOf('/x')).toBe('.d/x.o');
    expect(objectPathOf('..')).toBe('...o');
    expect(objectPathOf('./..')).toBe('..d/...o');
    expect(directoryPathOf('')).toBe('');
    expect(directoryPathOf('a/b/')).toBe('a.d/b.d');
    expect(decodeName('x.o.d')).toEqual({ segment: 'x.o', isDirectory: true });
    expect(decodeName('x.d.o')).toEqual({ segment: 'x.d', isDirectory: false });
    expect(decodeName('stray')).toBeNull();
  });

  test('keys that look like paths or like the suffixes round-trip and list distinctly', async () => {
    const store = await FileStore.open(tempDir());
    const keys = ['dots/./and/../here', 'double//slash', '/leading', '.', '..', 'a/', 'a', 'a.o', 'a.d', 'a.d/b', 'x.o/y', '.o', '.d', '%2F', '~'];
    for (const key of keys) await store.put(key, text(key));
    for (const key of keys) expect(decode((await store.get(key)).body)).toBe(key);
    expect((await listAll(store, '')).keys.sort()).toEqual([...keys].sort());
    expect((await listAll(store, 'a.')).keys.sort()).toEqual(['a.d', 'a.d/b', 'a.o']);
    await store.close();
  });

  test('keys the filesystem cannot hold are InvalidArgument naming the key', async () => {
    const store = await FileStore.open(tempDir());
    const nul = await storeErrorOf(store.put('a\0b', text('x')), 'InvalidArgument');
    expect(nul.key).toBe('a\0b');
    expect(nul.message).toMatch(/NUL/);
    const longSegment = 'x'.repeat(300);
    const long = await storeErrorOf(store.put(`dir/${longSegment}`, text('x')), 'InvalidArgument');
    expect(long.key).toBe(`dir/${longSegment}`);
    expect(long.message).toMatch(/253/);
    await store.put(`dir/${'x'.repeat(253)}`, text('fits'));
    expect((await store.list('dir/')).objects.length).toBe(1);
    await store.close();
  });
});

describe('file store: on disk', () => {
  test('stray temporary files and foreign files are never listed or read', async () => {
    const root = tempDir();
    const store = await FileStore.open(root);
    await store.put('k', text('real'));
    writeFileSync(join(root, TEMP_DIR, '12345-crashed'), 'half an object');
    writeFileSync(join(root, OBJECTS_DIR, 'k.tmp'), 'not ours');
    writeFileSync(join(root, OBJECTS_DIR, 'README'), 'not ours');
    expect((await listAll(store, '')).keys).toEqual(['k']);
    expect(decode((await store.get('k')).body)).toBe('real');
    await storeErrorOf(store.get('k.tmp'), 'NotFound');
    await store.close();
  });

  test('a file without an object header is reported, with its path', async () => {
    const root = tempDir();
    const store = await FileStore.open(root);
    writeFileSync(join(root, OBJECTS_DIR, 'junk.o'), 'no header');
    const error = await storeErrorOf(store.get('junk'), 'Unavailable');
    expect(error.message).toContain(join(root, OBJECTS_DIR, 'junk.o'));
    await store.close();
  });

  test('opening sweeps temporary files and uploads that crashed writers left long ago', async () => {
    const root = tempDir();
    await (await FileStore.open(root)).close();
    const old = Date.now() / 1000 - 8 * 24 * 3600;
    writeFileSync(join(root, TEMP_DIR, 'old'), 'x');
    writeFileSync(join(root, TEMP_DIR, 'fresh'), 'x');
    mkdirSync(join(root, MULTIPART_DIR, 'old-upload'));
    utimesSync(join(root, TEMP_DIR, 'old'), old, old);
    utimesSync(join(root, MULTIPART_DIR, 'old-upload'), old, old);
    await (await FileStore.open(root)).close();
    expect(readdirSync(join(root, TEMP_DIR))).toEqual(['fresh']);
    expect(readdirSync(join(root, MULTIPART_DIR))).toEqual([]);
  });

  test('deleting the last key of a directory removes the emptied directories', async () => {
    const root = tempDir();
    const store = await FileStore.open(root);
    await store.put('a/b/c/d', text('x'));
    await store.put('a/keep', text('x'));
    await store.delete('a/b/c/d');
    expect(existsSync(join(root, OBJECTS_DIR, 'a.d', 'b.d'))).toBe(false);
    expect(readdirSync(join(root, OBJECTS_DIR, 'a.d'))).toEqual(['keep.o']);
    await store.put('a/b/c/d', text('again'));
    expect(decode((await store.get('a/b/c/d')).body)).toBe('again');
    await store.close();
  });

  test('complete and abort remove the upload directory; a put leaves nothing in tmp', async () => {
    const root = tempDir();
    const store = await FileStore.open(root, { multipartPartBytesMin: 1 });
    const a = await store.createMultipartUpload('a');
    await a.complete([await a.uploadPart(1, text('x'))]);
    const b = await store.createMultipartUpload('b');
    await b.uploadPart(1, text('x'));
    expect(readdirSync(join(root, MULTIPART_DIR)).length).toBe(1);
    await b.abort();
    await store.put('c', text('x'));
    await storeErrorOf(store.put('c', text('y'), { ifNoneMatch: '*' }), 'PreconditionFailed');
    expect(readdirSync(join(root, MULTIPART_DIR))).toEqual([]);
    expect(readdirSync(join(root, TEMP_DIR))).toEqual([]);
    await store.close();
  });

  test('range reads of a 10 MB object', async () => {
    const store = await FileStore.open(tempDir());
    const body = patternBytes(10_000_000, 5);
    await store.put('big', body);
    for (const [start, end] of [
      [0, 1],
      [4_999_999, 5_000_001],
      [9_999_999, 10_000_000],
      [1_234_567, 8_765_432],
      [0, 10_000_000],
    ] as const) {
      const got = await store.get('big', { range: { start, end } });
      expect(got.size).toBe(10_000_000);
      expect(got.body.length).toBe(end - start);
      expect(Buffer.compare(got.body, body.subarray(start, end))).toBe(0);
    }
    expect(Buffer.compare((await store.get('big', { range: { start: 9_000_000 } })).body, body.subarray(9_000_000))).toBe(0);
    expect(store.stats().bytesOut).toBe(1 + 2 + 1 + 7_530_865 + 10_000_000 + 1_000_000);
    await store.close();
  });

  test('two stores on one root see each other at once', async () => {
    const root = tempDir();
    const a = await FileStore.open(root);
    const b = await FileStore.open(root);
    await a.put('shared', text('from a'));
    expect(decode((await b.get('shared')).body)).toBe('from a');
    await storeErrorOf(b.put('shared', text('from b'), { ifNoneMatch: '*' }), 'PreconditionFailed');
    await a.close();
    await b.close();
  });

  test('a root that is a file is refused, naming the path', async () => {
    const file = join(tempDir(), 'plain-file');
    writeFileSync(file, 'x');
    const error = await storeErrorOf(FileStore.open(file));
    expect(error.message).toContain(file);
  });
});

describe('file store: several processes', () => {
  test('4 processes doing 25 compare-and-swap increments each end at 100', async () => {
    const root = tempDir();
    const store = await FileStore.open(root);
    await store.put('counter', text('0'), { ifNoneMatch: '*' });
    const children = Array.from({ length: 4 }, () => Bun.spawn([process.execPath, WORKER, 'cas', root, 'counter', '25'], { stdout: 'pipe', stderr: 'inherit' }));
    const exits = await Promise.all(children.map((child) => child.exited));
    expect(exits).toEqual([0, 0, 0, 0]);
    const outputs = await Promise.all(children.map((child) => new Response(child.stdout).text()));
    expect(outputs.every((output) => output.startsWith('done'))).toBe(true);
    expect(decode((await store.get('counter')).body)).toBe('100');
    await store.close();
  }, 30_000);

  test('kill -9 during puts leaves the old or the new object, never a mix', async () => {
    const root = tempDir();
    const store = await FileStore.open(root);
    // About 40% of kills land while a temporary file is half written; go on (up to 12 rounds)
    // until one has, so the torn-write case is almost always exercised.
    let tornWrites = 0;
    for (let round = 0; round < 12 && (round < 3 || tornWrites === 0); round++) {
      const child = Bun.spawn([process.execPath, WORKER, 'put-loop', root, 'object'], { stdout: 'pipe', stderr: 'inherit' });
      const reader = child.stdout.getReader();
      let acknowledged = '';
      while (!acknowledged.includes(`put ${2 + (round % 3)}\n`)) acknowledged += new TextDecoder().decode((await reader.read()).value);
      await Bun.sleep(3 + (round % 3) * 7);
      child.kill(9);
      await child.exited;
      if (readdirSync(join(root, TEMP_DIR)).length > 0) tornWrites++;
      const { body, size } = await store.get('object');
      expect([3 * 1024 * 1024, 2 * 1024 * 1024 + 17]).toContain(size);
      expect(body.every((byte) => byte === body[0])).toBe(true);
      expect((await listAll(store, '')).keys).toEqual(['object']);
    }
    await store.close();
  }, 30_000);
});

describe('file store: closing', () => {
  test('close waits for requests in flight', async () => {
    const store = await FileStore.open(tempDir());
    const put = store.put('k', patternBytes(1_000_000));
    await store.close();
    await put;
    expect(isStoreError(await store.head('k').catch((e: unknown) => e), 'Closed')).toBe(true);
  });
});
