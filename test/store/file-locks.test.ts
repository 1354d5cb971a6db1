import { expect, test } from 'bun:test';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { KeyLocks } from '../../src/store/file-locks.ts';
import { withDeadline } from '../support/deadline.ts';
import { tempDir } from '../support/temp-dir.ts';

const LOCK_TIMEOUT_MS = 5000;
/** A lock that is free is taken at once: far more than that means the stripe is wedged. */
const FREE_LOCK_WAIT_MS = 3000;

// Found when a broker at its descriptor limit never finished stopping: opening a stripe's lock file
// failed (EMFILE), and the stripe's queue was never released, so every later write of a key on
// that stripe waited forever, past the lock timeout, and the store's close waited for them.
test("a lock file that cannot be opened fails that write only: the stripe's next writer gets the lock", async () => {
  const directory = join(tempDir(), 'locks');
  const locks = new KeyLocks(directory, LOCK_TIMEOUT_MS);
  rmSync(directory, { recursive: true }); // the next open of a lock file fails, as at the descriptor limit
  await expect(locks.withLock('control/leases/1', async () => 'written')).rejects.toThrow();
  mkdirSync(directory);
  const next = locks.withLock('control/leases/1', async () => 'written');
  expect(await withDeadline(next, FREE_LOCK_WAIT_MS, 'the next write of the same key')).toBe('written');
  locks.close();
});
