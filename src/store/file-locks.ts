import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { flockAvailable, lockExclusive, unlock } from '../util/flock.ts';
import { StoreError } from './errors.ts';
import { showKey } from './validate.ts';

/**
 * Per-key write locks for the file store that hold across processes: flock(2) on one of a fixed
 * set of lock files, chosen by a hash of the key. Lock striping bounds the files (no lock file
 * per key to create and clean up) at the price of two keys sometimes sharing a stripe, which
 * only serialises them briefly. Inside one process a FIFO queue per stripe orders the waiters,
 * so only contention between processes is left to flock's retry loop.
 */
export const LOCK_STRIPES = 256;
/** A writer holds a lock for one rename plus two fsyncs; 30 s means something is stuck. */
export const LOCK_TIMEOUT_MS_DEFAULT = 30_000;

export class KeyLocks {
  readonly #directory: string;
  readonly #timeoutMs: number;
  readonly #fds: (number | undefined)[] = new Array(LOCK_STRIPES).fill(undefined);
  readonly #tails: Promise<void>[] = new Array(LOCK_STRIPES).fill(Promise.resolve());
  /** Stripes a writer holds now: `close` leaves their files to the writer, which closes each once it unlocked it. */
  readonly #holding = new Set<number>();
  #closed = false;

  constructor(directory: string, timeoutMs: number) {
    if (!flockAvailable()) throw new StoreError('Unavailable', `file store: flock(2) is not available on ${process.platform}, so writers in several processes cannot be kept apart`);
    mkdirSync(directory, { recursive: true });
    this.#directory = directory;
    this.#timeoutMs = timeoutMs;
  }

  /** Runs `action` holding `key`'s lock, in this process and against every other. */
  async withLock<T>(key: string, action: () => Promise<T>): Promise<T> {
    const stripe = Bun.hash.crc32(key) % LOCK_STRIPES;
    const previous = this.#tails[stripe]!;
    let release!: () => void;
    this.#tails[stripe] = new Promise<void>((resolve) => (release = resolve));
    await previous;
    // Everything after the wait is inside the try: a lock file that cannot be opened (EMFILE at
    // the descriptor limit) fails this write and still releases the stripe to the next writer.
    try {
      if (this.#closed) throw new StoreError('Closed', `file store: the write locks are closed (a write to ${showKey(key)} after close)`, { key });
      const fd = this.#fdOf(stripe);
      this.#holding.add(stripe);
      try {
        if (!(await this.#lock(fd, key)))
          throw new StoreError('Timeout', `file store: the write lock of ${showKey(key)} stayed taken for ${this.#timeoutMs} ms (another process is stuck holding it)`, { key });
        try {
          return await action();
        } finally {
          unlock(fd);
        }
      } finally {
        this.#holding.delete(stripe);
        if (this.#closed) this.#closeStripe(stripe);
      }
    } finally {
      release();
    }
  }

  /**
   * Closes the lock files. A stripe a write holds right now is closed by that write once it has
   * unlocked it: closed under it, its descriptor number could go to another file before the
   * write's unlock, which would then drop a lock somebody else holds. Later writes fail Closed.
   */
  close(): void {
    this.#closed = true;
    for (let stripe = 0; stripe < LOCK_STRIPES; stripe++) if (!this.#holding.has(stripe)) this.#closeStripe(stripe);
  }

  #closeStripe(stripe: number): void {
    const fd = this.#fds[stripe];
    this.#fds[stripe] = undefined;
    if (fd !== undefined) closeSync(fd);
  }

  /** lockExclusive, its failures other than a held lock (a bad descriptor, no flock on this filesystem) as Unavailable. */
  async #lock(fd: number, key: string): Promise<boolean> {
    try {
      return await lockExclusive(fd, this.#timeoutMs);
    } catch (error) {
      throw new StoreError('Unavailable', `file store: the write lock of ${showKey(key)} could not be taken: ${error instanceof Error ? error.message : String(error)}`, { key, cause: error });
    }
  }

  #fdOf(stripe: number): number {
    let fd = this.#fds[stripe];
    if (fd === undefined) {
      const path = join(this.#directory, String(stripe).padStart(3, '0'));
      try {
        fd = openSync(path, 'a');
      } catch (error) {
        // Whatever kept the lock file from opening (EMFILE, the directory gone), the write could
        // not take its lock: that is the store being unavailable, never the key not being found.
        throw new StoreError('Unavailable', `file store: the write lock file ${path} could not be opened: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
      this.#fds[stripe] = fd;
    }
    return fd;
  }
}
