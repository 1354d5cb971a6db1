import { closeSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { FerryError } from '../errors.ts';
import { flockAvailable, tryLockExclusive, unlock } from './flock.ts';

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
    const path = join(directory, LOCK_FILE);
    const fd = openSync(path, 'a');
    let locked: boolean;
    try {
      locked = tryLockExclusive(fd);
    } catch (error) {
      closeSync(fd);
      throw new FerryError('Storage', `cannot lock ${directory}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    if (!locked) {
      closeSync(fd);
      throw new FerryError('Locked', `${directory} is in use by another Ferry log (could not lock ${LOCK_FILE}${holderOf(path)})`);
    }
    // The holder's pid, for the refusal another process prints; the lock itself is the flock, not this text.
    ftruncateSync(fd, 0);
    writeSync(fd, `${process.pid}\n`);
    return new DirLock(fd);
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    unlock(this.#fd);
    closeSync(this.#fd);
  }
}

/** The bytes of a lock file read for its holder's pid: a pid and a newline. */
const LOCK_TEXT_CHARS_MAX = 32;
/** The bytes of a holder's command line quoted in the refusal. */
const HOLDER_COMMAND_CHARS_MAX = 120;

/** `: held by process 1234 (bun src/cli.ts broker)` when the lock file names a holder; '' when it does not or cannot be read. */
function holderOf(path: string): string {
  try {
    const pid = Number(readFileSync(path, 'utf8').slice(0, LOCK_TEXT_CHARS_MAX).trim());
    if (!Number.isSafeInteger(pid) || pid <= 0) return '';
    return `: held by process ${pid}${commandOf(pid)}`;
  } catch {
    return '';
  }
}

/** ` (its command line)` from /proc on Linux; '' elsewhere or when it is gone. */
function commandOf(pid: number): string {
  try {
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((part) => part !== '')
      .join(' ');
    return command === '' ? '' : ` (${command.slice(0, HOLDER_COMMAND_CHARS_MAX)})`;
  } catch {
    return '';
  }
}
