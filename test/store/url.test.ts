import { describe, expect, test } from 'bun:test';
import { relative } from 'node:path';
import { FileStore } from '../../src/store/file.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { openStore } from '../../src/store/url.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { tempDir } from '../support/temp-dir.ts';
import { storeErrorOf } from './contract.ts';

describe('openStore', () => {
  test('file:///absolute/path opens a file store there, creating it', async () => {
    const root = `${tempDir()}/nested/store dir`;
    const store = await openStore(`file://${encodeURI(root)}`);
    expect(store).toBeInstanceOf(FileStore);
    expect((store as FileStore).root).toBe(root);
    await store.put('k', new Uint8Array([1]));
    await store.close();
    const again = await openStore(`file://localhost${encodeURI(root)}`);
    expect((await again.get('k')).body).toEqual(new Uint8Array([1]));
    await again.close();
  });

  test('file:relative/path is relative to the working directory', async () => {
    const root = tempDir();
    const store = await openStore(`file:${relative(process.cwd(), root)}/rel`);
    expect((store as FileStore).root).toBe(`${root}/rel`);
    await store.close();
  });

  test('memory://?latency=...&seed=... opens a seeded memory store on the given clock', async () => {
    const clock = new ManualClock();
    const store = await openStore('memory://?latency=s3-express&seed=7', { clock });
    expect(store).toBeInstanceOf(MemoryStore);
    let done = false;
    const put = store.put('k', new Uint8Array(1)).then(() => (done = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(false); // waiting on the manual clock: s3-express latency is in effect
    clock.advance(1000);
    await put;
    const instant = await openStore('memory:');
    await instant.put('k', new Uint8Array(1));
  });

  test('an s3:// URL reaches the S3 store', async () => {
    const store = await openStore('s3://ferry-bucket/some/prefix?region=us-east-1');
    expect(store.kind).toBe('s3');
    await store.close();
  });

  const bad: [string, RegExp][] = [
    ['', /no scheme/],
    ['just-a-path', /no scheme/],
    ['ftp://host/x', /unknown scheme ftp:/],
    ['file:', /names no directory/],
    ['file:///', /names no directory/],
    ['file://elsewhere/data', /host elsewhere is not this machine/],
    ['file:///data?fsync=false', /no query/],
    ['file:bad%zz', /malformed %-escape/],
    ['memory://?latency=fast', /unknown latency profile "fast"; known: zero, s3-express, s3-standard/],
    ['memory://?seed=abc', /seed must be an integer/],
    ['memory://?seed=-1', /seed must be an integer/],
    ['memory://?colour=red', /unknown parameter colour/],
    ['memory://host/path', /no host or path/],
    ['s3://', /S3 URL|bucket/],
  ];
  for (const [url, problem] of bad) {
    test(`${JSON.stringify(url)} is InvalidArgument quoting it and saying what is wrong`, async () => {
      const error = await storeErrorOf(openStore(url), 'InvalidArgument');
      expect(error.message).toContain(JSON.stringify(url).slice(1, -1));
      expect(error.message).toMatch(problem);
    });
  }
});
