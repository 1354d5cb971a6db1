import { expect, test } from 'bun:test';
import { closeSync, openSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { isStoreError } from '../../src/store/errors.ts';
import { KeyLocks, LOCK_STRIPES } from '../../src/store/file-locks.ts';
import { tryLockExclusive, unlock } from '../../src/util/flock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { withDeadline } from '../support/deadline.ts';
import { tempDir } from '../support/temp-dir.ts';

/** Review 27i: attacks on KeyLocks.close (adbc173) and on flock's errno (bun:ffi __errno_location). */

const stripeOf = (key: string): number => Bun.hash.crc32(key) % LOCK_STRIPES;
const stripeFile = (directory: string, key: string): string => join(directory, String(stripeOf(key)).padStart(3, '0'));

/** This process's open descriptors on files under `directory`. */
function openUnder(directory: string): number {
  let count = 0;
  for (const name of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${name}`).startsWith(directory)) count++;
    } catch {
      // the descriptor readdir itself used, closed since
    }
  }
  return count;
}

const kindOf = (error: unknown): string => (isStoreError(error) ? error.kind : String(error));

// Held: close() while writers wait in a held stripe's queue: the holder finishes, the waiters fail
// Closed at once (no hang), later writes to any stripe fail Closed, and no lock file stays open.
test('close() with writers queued behind a held stripe: holder ok, queued and later writes Closed, no descriptor left', async () => {
  const directory = join(tempDir(), 'locks');
  const locks = new KeyLocks(directory, 2000);
  await locks.withLock('other/key', async () => undefined); // another stripe opened too
  let finish!: () => void;
  let holding!: () => void;
  const held = new Promise<void>((resolve) => (holding = resolve));
  const holder = locks.withLock('k', () => {
    holding();
    return new Promise<string>((resolve) => (finish = () => resolve('holder')));
  });
  const queued = Array.from({ length: 5 }, (_, i) => locks.withLock('k', async () => `queued ${i}`).catch(kindOf));
  await held;
  locks.close();
  expect(openUnder(directory)).toBe(1); // only the held stripe's file, left to its writer
  finish();
  const results = await withDeadline(Promise.all([holder, ...queued]), 2000, 'writers after close');
  const later = await Promise.all([locks.withLock('k', async () => 'x').catch(kindOf), locks.withLock('never/opened', async () => 'x').catch(kindOf)]);
  expect({ results, later, open: openUnder(directory) }).toEqual({ results: ['holder', 'Closed', 'Closed', 'Closed', 'Closed', 'Closed'], later: ['Closed', 'Closed'], open: 0 });
});

// Held: close() while the stripe's write still waits for another process's flock: the write keeps
// its descriptor until it gives up (Timeout), then closes it; the other process's lock is untouched.
test("close() while a write waits on another process's flock: Timeout, then its descriptor is closed, the other lock kept", async () => {
  const directory = join(tempDir(), 'locks');
  const locks = new KeyLocks(directory, 150);
  await locks.withLock('k', async () => undefined);
  const other = openSync(stripeFile(directory, 'k'), 'a'); // "another process"
  expect(tryLockExclusive(other)).toBe(true);
  const waiting = locks.withLock('k', async () => 'ran').catch(kindOf);
  await Bun.sleep(20);
  locks.close();
  const outcome = await withDeadline(waiting, 2000, 'the waiting write');
  const ours = openUnder(directory) - 1; // minus `other`
  const probe = openSync(stripeFile(directory, 'k'), 'a');
  const stillHeld = !tryLockExclusive(probe);
  closeSync(probe);
  unlock(other);
  closeSync(other);
  expect({ outcome, ours, stillHeld }).toEqual({ outcome: 'Timeout', ours: 0, stillHeld: true });
});

// Held: random writers on a few keys (sharing stripes) with close() at a random moment: writers of one
// stripe never overlap, every write settles ok or Closed (nothing else), nothing stays open.
test('random writers with close() at a random moment: no overlap, ok or Closed only, every descriptor closed', async () => {
  for (let seed = 1; seed <= 15; seed++) {
    const random = new SeededRandom(seed);
    const directory = join(tempDir(), 'locks');
    const locks = new KeyLocks(directory, 2000);
    const keys = ['a', 'b', 'c', 'd'];
    const inside = new Map<number, number>();
    let overlap = false;
    let closed = false;
    const writes: Promise<string>[] = [];
    const closeAfter = Math.floor(random.next() * 40);
    for (let i = 0; i < 60; i++) {
      const key = keys[Math.floor(random.next() * keys.length)]!;
      const waitMs = Math.floor(random.next() * 3);
      writes.push(
        locks
          .withLock(key, async () => {
            const stripe = stripeOf(key);
            if ((inside.get(stripe) ?? 0) > 0) overlap = true;
            inside.set(stripe, (inside.get(stripe) ?? 0) + 1);
            await Bun.sleep(waitMs);
            inside.set(stripe, inside.get(stripe)! - 1);
            return closed ? 'ok after close (began before)' : 'ok';
          })
          .catch(kindOf),
      );
      if (i === closeAfter) {
        await Bun.sleep(1);
        locks.close();
        closed = true;
      }
    }
    const outcomes = await withDeadline(Promise.all(writes), 5000, `writers of seed ${seed}`);
    expect(overlap).toBe(false);
    expect(outcomes.filter((o) => !o.startsWith('ok') && o !== 'Closed')).toEqual([]);
    expect(openUnder(directory)).toBe(0);
  }
});

// Held: the errno read after flock is this call's and this thread's. Another thread failing flock with
// EBADF as fast as it can never makes a held lock (EWOULDBLOCK) here throw, nor the reverse, also
// with allocation (and so collections) going on between the calls.
test("flock's errno is the call's own: a held lock is never taken for EBADF while another thread fails with EBADF", async () => {
  const path = join(tempDir(), 'lock');
  const holder = openSync(path, 'a');
  const contender = openSync(path, 'a');
  expect(tryLockExclusive(holder)).toBe(true);
  const worker = new Worker(new URL('./issue27i-flock-worker.ts', import.meta.url).href);
  const messages: unknown[] = [];
  let done!: (failures: number) => void;
  const finished = new Promise<number>((resolve) => (done = resolve));
  worker.onmessage = (event) => {
    messages.push(event.data);
    if (typeof event.data === 'number') done(event.data);
  };
  while (messages.length === 0) await Bun.sleep(1);
  let wrongAnswers = 0;
  let garbage: unknown[] = [];
  for (let round = 0; round < 200; round++) {
    for (let i = 0; i < 200; i++) {
      try {
        if (tryLockExclusive(contender)) wrongAnswers++;
      } catch {
        wrongAnswers++;
      }
      garbage.push({ round, i, text: `x${i}`.repeat(8) });
    }
    if (garbage.length > 5000) garbage = [];
    await Bun.sleep(0);
  }
  worker.postMessage('stop');
  const workerFailures = await withDeadline(finished, 5000, 'the worker');
  worker.terminate();
  unlock(holder);
  closeSync(holder);
  closeSync(contender);
  expect(wrongAnswers).toBe(0);
  expect(workerFailures).toBeGreaterThan(0);
});
