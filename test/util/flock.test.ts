import { describe, expect, test } from 'bun:test';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { DirLock } from '../../src/util/dir-lock.ts';
import { isFerryError } from '../../src/errors.ts';
import { flockAvailable, lockExclusive, tryLockExclusive, unlock } from '../../src/util/flock.ts';
import { tempDir } from '../support/temp-dir.ts';

describe('flock', () => {
  test('is available here', () => {
    expect(flockAvailable()).toBe(true);
  });

  test('two open files of one path exclude each other, even in one process', () => {
    const path = join(tempDir(), 'lock');
    const a = openSync(path, 'a');
    const b = openSync(path, 'a');
    expect(tryLockExclusive(a)).toBe(true);
    expect(tryLockExclusive(b)).toBe(false);
    unlock(a);
    expect(tryLockExclusive(b)).toBe(true);
    unlock(b);
    closeSync(a);
    closeSync(b);
  });

  test('lockExclusive waits for a release, and gives up after its timeout', async () => {
    const path = join(tempDir(), 'lock');
    const a = openSync(path, 'a');
    const b = openSync(path, 'a');
    tryLockExclusive(a);
    expect(await lockExclusive(b, 20)).toBe(false);
    setTimeout(() => unlock(a), 15);
    expect(await lockExclusive(b, 5_000)).toBe(true);
    unlock(b);
    closeSync(a);
    closeSync(b);
  });

  test('DirLock still refuses a second owner', () => {
    const dir = tempDir();
    const lock = DirLock.acquire(dir);
    let error: unknown;
    try {
      DirLock.acquire(dir);
    } catch (caught) {
      error = caught;
    }
    expect(isFerryError(error, 'Locked')).toBe(true);
    lock.release();
    DirLock.acquire(dir).release();
  });
});
