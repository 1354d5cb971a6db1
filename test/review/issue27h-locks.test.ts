import { expect, test } from 'bun:test';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { KeyLocks, LOCK_STRIPES } from '../../src/store/file-locks.ts';
import { lockExclusive, tryLockExclusive, unlock } from '../../src/util/flock.ts';
import { isStoreError } from '../../src/store/errors.ts';
import { withDeadline } from '../support/deadline.ts';
import { tempDir } from '../support/temp-dir.ts';

/** Review 27h: attacks on KeyLocks.withLock after 62f36bc. */
const KEY = 'control/leases/1';
const stripeFile = (directory: string, key: string): string => join(directory, String(Bun.hash.crc32(key) % LOCK_STRIPES).padStart(3, '0'));

/** Whether another open file description (as another process would have) can take the stripe's flock now. */
function freeForOthers(directory: string, key: string): boolean {
  const fd = openSync(stripeFile(directory, key), 'a');
  try {
    const taken = tryLockExclusive(fd);
    if (taken) unlock(fd);
    return taken;
  } finally {
    closeSync(fd);
  }
}

/** What the next writer of KEY answers, within a second: a stripe left taken would hang it. */
function nextWriterGetsTheLock(locks: KeyLocks): Promise<string> {
  return withDeadline(
    locks.withLock(KEY, async () => 'next'),
    1000,
    'next writer',
  );
}

// Nothing found: a synchronous throw from the action is inside the try; flock is unlocked, the stripe released.
test('an action that throws synchronously unlocks the flock and releases the stripe', async () => {
  const directory = join(tempDir(), 'locks');
  const locks = new KeyLocks(directory, 2000);
  const syncThrow = (() => {
    throw new Error('sync');
  }) as unknown as () => Promise<string>;
  await expect(locks.withLock(KEY, syncThrow)).rejects.toThrow('sync');
  expect(freeForOthers(directory, KEY)).toBe(true);
  expect(await nextWriterGetsTheLock(locks)).toBe('next');
  locks.close();
});

// Nothing found: a lock timeout (another process holds the flock) releases the stripe; once free, the next writer gets it.
test('a lock timeout releases the stripe; the next writer takes the flock once the other process lets go', async () => {
  const directory = join(tempDir(), 'locks');
  const locks = new KeyLocks(directory, 150);
  await locks.withLock(KEY, async () => undefined); // creates the stripe file
  const other = openSync(stripeFile(directory, KEY), 'a');
  expect(tryLockExclusive(other)).toBe(true);
  const failed = await locks.withLock(KEY, async () => 'never').catch((error: unknown) => error);
  expect(isStoreError(failed, 'Timeout')).toBe(true);
  unlock(other);
  closeSync(other);
  expect(await nextWriterGetsTheLock(locks)).toBe('next');
  locks.close();
});

// Nothing found: in one process, writers of one stripe never overlap, whatever fails in between.
test('writers of one stripe never overlap in one process across failures of every kind', async () => {
  const directory = join(tempDir(), 'locks');
  const locks = new KeyLocks(directory, 2000);
  let inside = 0;
  let maxInside = 0;
  const runs = Array.from({ length: 60 }, (_, i) =>
    locks
      .withLock(KEY, async () => {
        inside++;
        maxInside = Math.max(maxInside, inside);
        await Bun.sleep(i % 3);
        inside--;
        if (i % 4 === 1) throw new Error('async failure');
        return i;
      })
      .catch(() => -1),
  );
  await withDeadline(Promise.all(runs), 5000, 'all writers');
  expect(maxInside).toBe(1);
  locks.close();
});

// FINDING (flock.ts, fixed): tryLockExclusive treated every flock error as "held by another open file".
// A bad descriptor (EBADF) -- or ENOLCK/EINVAL on a filesystem without flock -- waits out the whole
// timeout and is reported as a lock another process is stuck holding (Timeout: retriable, so
// callers retry it forever). It fails at once with the errno now.
test('lockExclusive on a descriptor flock cannot use fails at once instead of waiting out the timeout', async () => {
  const fd = openSync(join(tempDir(), 'x'), 'a');
  closeSync(fd); // EBADF from here on
  const started = Date.now();
  const outcome = await lockExclusive(fd, 1000).then(
    (taken) => `resolved ${taken}`,
    () => 'threw',
  );
  expect({ outcome, waitedLong: Date.now() - started >= 900 }).toEqual({ outcome: 'threw', waitedLong: false });
});

// FINDING (fixed; misuse, not reachable through FileStore, whose close waits for requests in flight):
// KeyLocks.close() while a writer holds a stripe closes its descriptor under it; the writer's
// finally then flock(LOCK_UN)s a descriptor number the kernel has since handed to another
// lock file -- here another store's -- dropping a lock a different writer holds. A held stripe is
// closed by its writer after the unlock now.
test("close() during a write must not let that write unlock somebody else's lock file", async () => {
  const directoryA = join(tempDir(), 'locks');
  const directoryB = join(tempDir(), 'locks');
  const locksA = new KeyLocks(directoryA, 2000);
  const locksB = new KeyLocks(directoryB, 2000);
  let finishA!: () => void;
  const aHolding = new Promise<void>((resolve) => {
    const writeA = locksA.withLock(KEY, () => {
      resolve();
      return new Promise<void>((done) => (finishA = done));
    });
    void writeA.catch(() => undefined);
  });
  await aHolding;
  locksA.close(); // the descriptor number is free again
  let bExclusiveBefore: boolean | undefined;
  let bStillExclusive: boolean | undefined;
  await locksB.withLock(KEY, async () => {
    bExclusiveBefore = !freeForOthers(directoryB, KEY);
    // B's stripe file took the lowest free descriptor: the one A still means to unlock.
    finishA();
    await Bun.sleep(20); // A's finally runs unlock(fd)
    bStillExclusive = !freeForOthers(directoryB, KEY);
  });
  expect({ bExclusiveBefore, bStillExclusive }).toEqual({ bExclusiveBefore: true, bStillExclusive: true });
  locksB.close();
});
