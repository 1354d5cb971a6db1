import { expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { ControlStore } from '../../src/control/control-store.ts';
import { isStoreError } from '../../src/store/errors.ts';
import { FileStore, LOCKS_DIR } from '../../src/store/file.ts';
import { type FileSync, systemFileSync } from '../../src/util/file-sync.ts';
import { tempDir } from '../support/temp-dir.ts';

/** Review 27h: how the file store reports a write that fails around its lock (62f36bc). */

/** The system's barriers, with the next directory fsync failing as an open at the descriptor limit would. */
function emfileOnNextDirectorySync(): FileSync & { arm(): void } {
  let armed = false;
  return {
    ...systemFileSync,
    arm: () => void (armed = true),
    async syncDirectory(path) {
      if (armed) {
        armed = false;
        throw Object.assign(new Error(`EMFILE: too many open files, open '${path}'`), { code: 'EMFILE', path });
      }
      return systemFileSync.syncDirectory(path);
    },
  };
}

// Nothing found: the lock file's EMFILE reaches callers as Unavailable (retriable), the temporary is
// removed and nothing is published (see the ENOENT case below for the same path, other errno).

// FINDING: a put whose publish step landed (rename/link done) and whose directory fsync then failed
// (EMFILE: the same descriptor limit 62f36bc is about) is reported failed, retriable -- but the
// object is visible. Never half-written (the temporary was complete and fsynced), yet the failure
// is ambiguous, and a retried If-None-Match put then fails PreconditionFailed on its own object.
test.todo('a put reported failed (retriable) must not be visible; a retried create must not trip on itself', async () => {
  const files = emfileOnNextDirectorySync();
  const store = await FileStore.open(join(tempDir(), 'store'), { files });
  await store.put('wal/stream/0', new Uint8Array([0])); // the key's directory exists: the next directory fsync is the one after the link
  files.arm();
  const first = await store.put('wal/stream/1', new Uint8Array([1, 2, 3]), { ifNoneMatch: '*' }).catch((error: unknown) => error);
  expect(isStoreError(first, 'Unavailable') && first.retriable).toBe(true);
  const visible = await store.head('wal/stream/1');
  const retry = await store.put('wal/stream/1', new Uint8Array([1, 2, 3]), { ifNoneMatch: '*' }).then(
    () => 'ok',
    (error: unknown) => (isStoreError(error) ? error.kind : String(error)),
  );
  await store.close();
  expect({ visible: visible !== null, retry }).toEqual({ visible: false, retry: 'ok' });
});

// FINDING, consequence for control records (ControlStore ignores nothing, FileStore ignores
// `authorship`): a create that landed but "failed" is retried by its caller and answered null
// ("someone else holds it") though the record under the key is the caller's own write.
test.todo('a control record create that landed but reported failure is not later taken for a lost race', async () => {
  const files = emfileOnNextDirectorySync();
  const store = await FileStore.open(join(tempDir(), 'store'), { files });
  const control = new ControlStore(store, 'cluster');
  await control.put('leases/0', { holder: 'someone' }); // the record's directory exists
  files.arm();
  const first = await control.create('leases/1', { holder: 'me' }).then(
    () => 'ok',
    () => 'failed',
  );
  const retried = await control.create('leases/1', { holder: 'me' });
  await store.close();
  // Either the first answer is the truth (it landed: ok), or the retry recognises its own write.
  expect(first === 'ok' || retried !== null).toBe(true);
});

// FINDING (minor): a lock file that cannot be opened because the locks directory is gone fails the
// put as NotFound -- non-retriable, and a put has no object to be "not found".
test('a put whose lock file cannot be opened (ENOENT) is not answered NotFound', async () => {
  const root = join(tempDir(), 'store');
  const store = await FileStore.open(root);
  rmSync(join(root, LOCKS_DIR), { recursive: true });
  const error = await store.put('a/b', new Uint8Array([1])).catch((caught: unknown) => caught);
  const listed = await store.list('');
  await store.close();
  expect(listed.objects.length).toBe(0); // nothing published: good
  expect(isStoreError(error) ? error.kind : String(error)).not.toBe('NotFound');
});
