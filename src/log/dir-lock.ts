import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { FerryError } from '../errors.ts';

export const LOCK_FILE = '.lock';
const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;

type Flock = (fd: number, operation: number) => number;

/** libc's flock(2) through bun:ffi; null where it cannot be loaded. */
function loadFlock(): Flock | null {
  const library = process.platform === 'darwin' ? 'libSystem.B.dylib' : process.platform === 'linux' ? 'libc.so.6' : null;
  if (library === null) return null;
  try {
    const { dlopen, FFIType } = require('bun:ffi') as typeof import('bun:ffi');
    const { symbols } = dlopen(library, { flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 } });
    return (fd, operation) => symbols.flock(fd, operation);
  } catch {
    return null;
  }
}

const flock = loadFlock();

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
    if (flock === null) throw new FerryError('Storage', `cannot lock ${directory}: flock(2) is not available on ${process.platform}`);
    const fd = openSync(join(directory, LOCK_FILE), 'a');
    if (flock(fd, LOCK_EX | LOCK_NB) !== 0) {
      closeSync(fd);
      throw new FerryError('Locked', `${directory} is in use by another Ferry log (could not lock ${LOCK_FILE})`);
    }
    return new DirLock(fd);
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    flock?.(this.#fd, LOCK_UN);
    closeSync(this.#fd);
  }
}
