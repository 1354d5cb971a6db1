// Review 27f: the file store's direct writes against open() refusals (EMFILE, EINVAL), block and
// staging edges, and concurrent puts and aborted sequential writes sharing staging. No finding.
import { expect, test } from 'bun:test';
import { constants, existsSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { DirectWrites } from '../../src/store/direct-write.ts';
import { FileSequentialWrite, type FileSequentialWriteHost } from '../../src/store/file-sequential-write.ts';
import { OBJECT_HEADER_BYTES, writeObjectFile } from '../../src/store/file-object.ts';
import { systemFileSync } from '../../src/util/file-sync.ts';
import { tempDir } from '../support/temp-dir.ts';
import { patternBytes } from '../store/contract.ts';

const errno = (code: string) => Object.assign(new Error(code), { code });

test('EMFILE on a direct create: that put goes buffered, whole; the next put still direct', async () => {
  const dir = tempDir();
  let fail = 1;
  const directOpens: string[] = [];
  const direct = new DirectWrites(async (path, flags, mode) => {
    if (fail-- > 0) throw errno('EMFILE');
    directOpens.push(path);
    return open(path, flags, mode);
  });
  for (const [i, size] of [
    [0, 300_000],
    [1, 200_000],
    [2, 4096 * 40 - 64],
  ] as const) {
    const body = patternBytes(size, i + 3);
    const path = join(dir, `o${i}`);
    await writeObjectFile(path, 'e', [body], false, systemFileSync, direct);
    const bytes = readFileSync(path);
    expect(bytes.length).toBe(OBJECT_HEADER_BYTES + size);
    expect(Buffer.from(bytes.subarray(OBJECT_HEADER_BYTES)).equals(Buffer.from(body))).toBe(true);
  }
  expect(directOpens.length).toBe(2);
});

test('EINVAL / EMFILE on the appender (no O_CREAT): the temporary file stays, and the sequential write is whole', async () => {
  for (const code of ['EINVAL', 'EMFILE']) {
    const dir = tempDir();
    const direct = new DirectWrites(async (path, flags, mode) => {
      if ((flags & constants.O_CREAT) === 0) throw errno(code);
      return open(path, flags, mode);
    });
    let published = '';
    const host: FileSequentialWriteHost = { run: (_c, _b, _w, action) => action(), publish: async (t) => ((published = t), true), sync: false, files: systemFileSync, direct };
    const temporary = join(dir, 'seq.tmp');
    const write = await FileSequentialWrite.create('k', host, temporary);
    const a = patternBytes(1_500_000, 1);
    const b = patternBytes(777, 2);
    await write.append([a]);
    await write.append([b]);
    await write.finish();
    expect(published).toBe(temporary);
    expect(existsSync(temporary)).toBe(true);
    const bytes = readFileSync(temporary);
    expect(bytes.length).toBe(OBJECT_HEADER_BYTES + a.length + b.length);
    expect(Buffer.from(bytes.subarray(OBJECT_HEADER_BYTES)).equals(Buffer.concat([a, b]))).toBe(true);
  }
});

test('direct sequential write, appends straddling blocks and staging: bytes whole', async () => {
  const dir = tempDir();
  const direct = new DirectWrites();
  const host: FileSequentialWriteHost = { run: (_c, _b, _w, action) => action(), publish: async () => true, sync: true, files: systemFileSync, direct };
  const temporary = join(dir, 'seq2.tmp');
  const write = await FileSequentialWrite.create('k', host, temporary);
  const parts = [4096 - 64, 1, 1024 * 1024, 4095, 4097, 3 * 1024 * 1024 + 5, 0, 13].map((n, i) => patternBytes(n, i + 9));
  for (const p of parts) await write.append([p, p.subarray(0, 7)]);
  await write.finish();
  const expected = Buffer.concat(parts.flatMap((p) => [p, p.subarray(0, 7)]));
  const bytes = readFileSync(temporary);
  expect(bytes.length).toBe(OBJECT_HEADER_BYTES + expected.length);
  expect(Buffer.from(bytes.subarray(OBJECT_HEADER_BYTES)).equals(expected)).toBe(true);
});

test('concurrent direct puts and sequential writes (some aborted mid-append) share staging without mixing bytes', async () => {
  const dir = tempDir();
  const direct = new DirectWrites(async (path, flags, mode) => {
    const handle = await open(path, flags, mode);
    const realWrite = handle.write.bind(handle) as (...args: unknown[]) => Promise<unknown>;
    (handle as unknown as { write: unknown }).write = async (...args: unknown[]) => {
      const r = await realWrite(...args);
      await new Promise((res) => setTimeout(res, Math.random() * 5));
      return r;
    };
    return handle;
  });
  const host: FileSequentialWriteHost = { run: (_c, _b, _w, action) => action(), publish: async () => true, sync: false, files: systemFileSync, direct };
  const jobs: Promise<void>[] = [];
  for (let i = 0; i < 24; i++) {
    if (i % 3 === 0) {
      jobs.push(
        (async () => {
          const w = await FileSequentialWrite.create('k', host, join(dir, `s${i}`));
          const p = w.append([patternBytes(900_000, 100 + i)]).catch(() => undefined);
          await w.abort();
          await p;
        })(),
      );
    } else {
      jobs.push(
        (async () => {
          const body = patternBytes(500_000 + i * 1000, i);
          const path = join(dir, `p${i}`);
          await writeObjectFile(path, 'e', [body], false, systemFileSync, direct);
          const bytes = readFileSync(path);
          expect(Buffer.from(bytes.subarray(OBJECT_HEADER_BYTES)).equals(Buffer.from(body))).toBe(true);
        })(),
      );
    }
  }
  await Promise.all(jobs);
});
