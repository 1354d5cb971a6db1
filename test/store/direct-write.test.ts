import { describe, expect, test } from 'bun:test';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'node:fs/promises';
import { DIRECT_APPEND_STAGING_BYTES, DIRECT_IO_ALIGNMENT, DIRECT_WRITE_BYTES_MAX, DIRECT_WRITE_BYTES_MIN, DirectWrites } from '../../src/store/direct-write.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { FileStore } from '../../src/store/file.ts';
import { OBJECT_HEADER_BYTES } from '../../src/store/file-object.ts';
import { systemFileSync } from '../../src/util/file-sync.ts';
import { PowerLossRecorder, restoreSyncedState } from '../support/power-loss.ts';
import { tempDir } from '../support/temp-dir.ts';
import { patternBytes } from './contract.ts';

/** Sizes around every edge: below the direct range, its bounds, unaligned tails, past its top. */
const BODY_SIZES = [
  1,
  DIRECT_WRITE_BYTES_MIN - OBJECT_HEADER_BYTES - 1,
  DIRECT_WRITE_BYTES_MIN - OBJECT_HEADER_BYTES,
  DIRECT_WRITE_BYTES_MIN,
  100_001,
  1024 * 1024 - OBJECT_HEADER_BYTES,
  1024 * 1024,
  3 * 1024 * 1024 + 7,
  DIRECT_WRITE_BYTES_MAX - OBJECT_HEADER_BYTES,
  DIRECT_WRITE_BYTES_MAX,
];

describe('FileStore writes around the page cache (O_DIRECT)', () => {
  test('every size reads back byte for byte, whole and by range, with its ETag', async () => {
    const buffered = await FileStore.open(tempDir(), { directWrites: false });
    const direct = await FileStore.open(tempDir());
    for (const [i, size] of BODY_SIZES.entries()) {
      const body = patternBytes(size, i + 1);
      const { etag } = await direct.put(`k/${size}`, body, { ifNoneMatch: '*' });
      expect(etag).toBe((await buffered.put(`k/${size}`, body)).etag);
      const got = await direct.get(`k/${size}`);
      expect(got.size).toBe(size);
      expect(Buffer.from(got.body).equals(Buffer.from(body))).toBe(true);
      const tail = await direct.get(`k/${size}`, { range: { start: Math.max(0, size - 5000) } });
      expect(Buffer.from(tail.body).equals(Buffer.from(body.subarray(Math.max(0, size - 5000))))).toBe(true);
    }
    await Promise.all([buffered.close(), direct.close()]);
  });

  test('concurrent puts share no staging buffer: each object holds its own bytes', async () => {
    const store = await FileStore.open(tempDir());
    const bodies = Array.from({ length: 24 }, (_, i) => patternBytes(200_000 + i * 777, 100 + i));
    await Promise.all(bodies.map((body, i) => store.put(`c/${i}`, body)));
    for (const [i, body] of bodies.entries()) expect(Buffer.from((await store.get(`c/${i}`)).body).equals(Buffer.from(body))).toBe(true);
    await store.close();
  });

  test('a direct put survives a power loss: the file is cut to size and fsynced before its name is published', async () => {
    const dir = tempDir();
    const journal = tempDir();
    const root = join(dir, 'store');
    await FileStore.open(root).then((store) => store.close()); // the store's directories, from a previous boot
    const store = await FileStore.open(root, { files: new PowerLossRecorder(dir, journal) });
    const body = patternBytes(300_003, 9);
    await store.put('wal/0001', body, { ifNoneMatch: '*' });
    await store.close();
    restoreSyncedState(journal, dir);
    const after = await FileStore.open(root);
    expect(Buffer.from((await after.get('wal/0001')).body).equals(Buffer.from(body))).toBe(true);
    await after.close();
  });

  test('without the fsync a power loss takes the direct put (the barrier is what keeps it)', async () => {
    const dir = tempDir();
    const journal = tempDir();
    const recorder = new PowerLossRecorder(dir, journal);
    const path = join(dir, 'object');
    expect(await new DirectWrites().write(path, [patternBytes(200_000, 3)], false, recorder)).toBe(true);
    recorder.syncDirectorySync(dir); // the name is durable, the bytes were never synced
    restoreSyncedState(journal, dir);
    expect(Bun.file(path).size).toBe(0);
  });

  test('a filesystem that refuses O_DIRECT (EINVAL) is written through the page cache from then on; a write short of descriptors goes buffered once; other errors are errors', async () => {
    const root = tempDir();
    let opens = 0;
    const refusing = new DirectWrites(async () => {
      opens++;
      throw Object.assign(new Error('EINVAL: invalid argument, open'), { code: 'EINVAL' });
    });
    expect(refusing.wants(200_000)).toBe(true);
    expect(await refusing.write(join(root, 'refused'), [patternBytes(200_000)], true, systemFileSync)).toBe(false);
    expect(readdirSync(root)).toEqual([]); // nothing created
    expect(refusing.wants(200_000)).toBe(false); // remembered: no second attempt
    expect(opens).toBe(1);
    let short = true;
    const outOfDescriptors = new DirectWrites(async (path, flags, mode) => {
      if (short) throw Object.assign(new Error('EMFILE: too many open files, open'), { code: 'EMFILE' });
      return open(path, flags, mode);
    });
    expect(await outOfDescriptors.write(join(root, 'short'), [patternBytes(200_000)], true, systemFileSync)).toBe(false); // this write goes buffered
    expect(await outOfDescriptors.appender(join(root, 'short'), OBJECT_HEADER_BYTES)).toBeNull();
    expect(outOfDescriptors.wants(200_000)).toBe(true); // and later ones direct again
    short = false;
    expect(await outOfDescriptors.write(join(root, 'later'), [patternBytes(200_000)], true, systemFileSync)).toBe(true);
    const failing = new DirectWrites(async () => {
      throw Object.assign(new Error('ENOSPC: no space left on device, open'), { code: 'ENOSPC' });
    });
    await expect(failing.write(join(root, 'full'), [patternBytes(200_000)], true, systemFileSync)).rejects.toThrow('ENOSPC');
    expect(failing.wants(200_000)).toBe(true);
  });

  test('a sequential write appended in any chunking, across staging and block edges, is the bytes appended after its leading room', async () => {
    const random = new SeededRandom(27);
    for (const total of [0, 100, DIRECT_IO_ALIGNMENT - 64, DIRECT_IO_ALIGNMENT * 3 + 5, DIRECT_APPEND_STAGING_BYTES - 64, DIRECT_APPEND_STAGING_BYTES * 2 + 12_345]) {
      const path = join(tempDir(), 'object');
      const bytes = patternBytes(total, total + 1);
      const buffered = await open(path, 'wx');
      const opened: number[] = [];
      const direct = new DirectWrites(async (file, flags, mode) => {
        opened.push(flags);
        return open(file, flags, mode);
      });
      const appender = (await direct.appender(path, OBJECT_HEADER_BYTES))!;
      for (let at = 0; at < total; ) {
        const run: Uint8Array[] = [];
        for (let chunks = 1 + random.nextInt(4); chunks > 0 && at < total; chunks--) {
          const length = Math.min(total - at, 1 + random.nextInt(300_000));
          run.push(bytes.subarray(at, at + length));
          at += length;
        }
        await appender.append(run);
      }
      await appender.finishInto(buffered);
      await buffered.write(patternBytes(OBJECT_HEADER_BYTES, 5), 0, OBJECT_HEADER_BYTES, 0);
      await buffered.close();
      const file = new Uint8Array(await Bun.file(path).arrayBuffer());
      expect(file.length).toBe(OBJECT_HEADER_BYTES + total);
      expect(Buffer.from(file.subarray(0, OBJECT_HEADER_BYTES)).equals(Buffer.from(patternBytes(OBJECT_HEADER_BYTES, 5)))).toBe(true);
      expect(Buffer.from(file.subarray(OBJECT_HEADER_BYTES)).equals(Buffer.from(bytes))).toBe(true);
      expect(opened).toHaveLength(1); // the direct descriptor, opened once
    }
  });

  test('the staging stays aligned to the block O_DIRECT needs', () => {
    expect(DIRECT_WRITE_BYTES_MIN % DIRECT_IO_ALIGNMENT).toBe(0);
    expect(DIRECT_WRITE_BYTES_MAX % DIRECT_IO_ALIGNMENT).toBe(0);
  });
});
