import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { FerryError } from '../errors.ts';
import { flockAvailable, tryLockExclusive, unlock } from '../util/flock.ts';

export const LOCK_FILE = '.lock';

/**
 * An exclusive lock on a directory, held as flock(2) on `<dir>/.lock` (as Kafka locks its log
 * dirs). The kernel releases it when the process dies, so a crash never leaves a stale lock.
 * flock is per open file, so a second open in the same process is refused too.
 */
export class DirLock {
  readonly #fd: number;
  #released = false;

  private constructor(fd: number) {
    this.#fd = fd;
  }

  static acquire(directory: string): DirLock {
    if (!flockAvailable()) throw new FerryError('Storage', `cannot lock ${directory}: flock(2) is not available on ${process.platform}`);
    const fd = openSync(join(directory, LOCK_FILE), 'a');
    if (!tryLockExclusive(fd)) {
      closeSync(fd);
      throw new FerryError('Locked', `${directory} is in use by another Ferry log (could not lock ${LOCK_FILE})`);
    }
    return new DirLock(fd);
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    unlock(this.#fd);
    closeSync(this.#fd);
  }
}
