import { expect, test } from 'bun:test';
import { constants, readdirSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { DirectWrites } from '../../src/store/direct-write.ts';
import { OBJECT_HEADER_BYTES, writeObjectFile } from '../../src/store/file-object.ts';
import { systemFileSync } from '../../src/util/file-sync.ts';
import { tempDir } from '../support/temp-dir.ts';
import { patternBytes } from '../store/contract.ts';

/**
 * Linux checks O_DIRECT support in do_dentry_open, AFTER open(O_CREAT) has created the file: on a
 * filesystem without direct I/O (ramfs; tmpfs before 6.6; FUSE without it) open(O_CREAT|O_EXCL|
 * O_DIRECT) fails with EINVAL and leaves an empty file behind. Verified on this machine's kernel:
 *   mount -t ramfs ramfs /tmp/rfs; FileStore.open('/tmp/rfs/store').put('k', 200_000 bytes)
 *   -> StoreError(Unavailable) ... EEXIST: file already exists, open '.../tmp/<pid>-<uuid>'
 *   and tmp/ keeps that empty file.
 * DirectWrites.write documents "False if the filesystem refuses O_DIRECT (nothing was created; the
 * caller writes buffered)"; writeObjectFile then opens the same path 'wx' and fails with EEXIST, so
 * the first large put on such a filesystem fails and its temporary file is left behind.
 *
 * The opener below does what the kernel does (create, then refuse), so the test runs anywhere.
 */
test('a filesystem refusing O_DIRECT after creating the file: the put falls back to buffered and succeeds, leaving no temporary file', async () => {
  const dir = tempDir();
  const refusingLikeLinux = new DirectWrites(async (path, flags, mode) => {
    const created = await open(path, flags & ~(constants as { O_DIRECT: number }).O_DIRECT, mode); // the create happens...
    await created.close();
    throw Object.assign(new Error(`EINVAL: invalid argument, open '${path}'`), { code: 'EINVAL', errno: -22, syscall: 'open', path }); // ...then the O_DIRECT check refuses
  });
  const path = join(dir, 'temporary');
  const body = patternBytes(200_000, 3);
  let failure: unknown = null;
  await writeObjectFile(path, 'etag', [body], true, systemFileSync, refusingLikeLinux).catch((error: unknown) => (failure = error));
  expect(String(failure)).not.toContain('EEXIST');
  expect(failure).toBeNull();
  const file = new Uint8Array(await Bun.file(path).arrayBuffer());
  expect(file.length).toBe(OBJECT_HEADER_BYTES + body.length);
  expect(Buffer.from(file.subarray(OBJECT_HEADER_BYTES)).equals(Buffer.from(body))).toBe(true);
  expect(readdirSync(dir)).toEqual(['temporary']);
});
