// Review (27c, commit b97af0c): scenarios tried against SequentialWrite.append(chunks) (one writev per
// run) and StreamingUpload's runs on the file store that held (kept as regression tests).
import { expect, test } from 'bun:test';
import type { FileHandle } from 'node:fs/promises';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeAllAt } from '../../src/store/file-object.ts';
import { FileStore } from '../../src/store/file.ts';
import type { ObjectStore, SequentialWrite } from '../../src/store/object-store.ts';
import { SEQUENTIAL_APPEND_CHUNKS_MAX, StreamingUpload } from '../../src/store/streaming-upload.ts';
import { concatBytes } from '../../src/util/bytes.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { patternBytes } from '../store/contract.ts';
import { tempDir } from '../support/temp-dir.ts';

/** A file handle whose writev and write take at most `step` bytes a call, into `file`. */
function shortHandle(file: Uint8Array, step: number): FileHandle & { calls: number } {
  const put = (bytes: Uint8Array, position: number) => {
    const n = Math.min(step, bytes.length);
    file.set(bytes.subarray(0, n), position);
    return n;
  };
  const handle = {
    calls: 0,
    async writev(chunks: Uint8Array[], position: number) {
      handle.calls++;
      let written = 0;
      for (const chunk of chunks) {
        const n = put(chunk.subarray(0, step - written), position + written);
        written += n;
        if (written >= step || n < chunk.length) break;
      }
      return { bytesWritten: written, buffers: chunks };
    },
    async write(bytes: Uint8Array, offset: number, length: number, position: number) {
      handle.calls++;
      return { bytesWritten: put(bytes.subarray(offset, offset + length), position), buffer: bytes };
    },
  };
  return handle as unknown as FileHandle & { calls: number };
}

test('writeAllAt: a short writev of many iovecs, short again in the follow-up writes, lands every byte in place', async () => {
  const random = new SeededRandom(27);
  for (let round = 0; round < 50; round++) {
    const chunks = Array.from({ length: 1 + random.nextInt(600) }, (_, i) => patternBytes(random.nextInt(40), round * 1000 + i));
    const expected = concatBytes(chunks);
    const file = new Uint8Array(expected.length + 10);
    await writeAllAt(shortHandle(file, 1 + random.nextInt(97)), chunks, 10);
    expect(file.slice(10)).toEqual(new Uint8Array(expected));
  }
});

test('StreamingUpload on the file store publishes exactly the bytes written, for random chunk sizes and part sizes', async () => {
  const random = new SeededRandom(271);
  const store = await FileStore.open(tempDir(), { fsync: false });
  for (let round = 0; round < 30; round++) {
    const partBytes = 1 + random.nextInt(round % 2 === 0 ? 5000 : 3 * 1024 * 1024);
    const upload = new StreamingUpload(store, `o${round}`, { partBytes, ifNoneMatch: '*' });
    const chunks: Uint8Array[] = [];
    const count = random.nextInt(round % 3 === 0 ? 3 * SEQUENTIAL_APPEND_CHUNKS_MAX : 60);
    for (let i = 0; i < count; i++) {
      const chunk = patternBytes(random.nextInt(i % 7 === 0 ? 300_000 : 200), round * 10_000 + i);
      chunks.push(chunk);
      if (random.nextInt(2) === 0) await upload.write(chunk);
      else void upload.write(chunk); // the WAL writer does not await its writes
    }
    await upload.finish();
    expect((await store.get(`o${round}`)).body).toEqual(concatBytes(chunks));
  }
  await store.close();
}, 60_000);

test('an append that fails mid-stream fails the upload: finish rejects, nothing is published, no temporary file is left', async () => {
  const root = tempDir();
  const inner = await FileStore.open(root, { fsync: false });
  let appends = 0;
  const store: ObjectStore = Object.assign(Object.create(inner) as FileStore, {
    openSequentialWrite: async (key: string, options?: { ifNoneMatch?: '*' }): Promise<SequentialWrite> => {
      const write = await inner.openSequentialWrite(key, options);
      return {
        key,
        append: (chunks) => (++appends === 3 ? Promise.reject(new Error('disk went away')) : write.append(chunks)),
        finish: () => write.finish(),
        abort: () => write.abort(),
      };
    },
  });
  const upload = new StreamingUpload(store, 'x', { partBytes: 1000, ifNoneMatch: '*' });
  for (let i = 0; i < 20; i++) void upload.write(patternBytes(700, i)).catch(() => {});
  await expect(upload.finish()).rejects.toThrow(/disk went away/);
  expect(await inner.head('x')).toBeNull();
  expect(readdirSync(join(root, 'tmp'))).toEqual([]);
  await inner.close();
});
