/**
 * flock(2) through bun:ffi: whole-file advisory locks the kernel drops when the process dies, so
 * a crash never leaves a stale lock. Locks belong to the open file description: two opens of one
 * file conflict even inside one process.
 *
 * Only the non-blocking form is called: a blocking flock would stall Bun's event loop, so waiting
 * is an async retry with backoff (`lockExclusive`).
 */
const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;

/** First retry after 1 ms (a lock held for one small write is usually free by then), doubling to 16 ms. */
export const FLOCK_BACKOFF_MS_MIN = 1;
export const FLOCK_BACKOFF_MS_MAX = 16;

type Flock = (fd: number, operation: number) => number;

/** libc's flock; null where it cannot be loaded. */
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

export function flockAvailable(): boolean {
  return flock !== null;
}

/** Takes an exclusive lock on `fd` if it is free; false if another open file holds it. */
export function tryLockExclusive(fd: number): boolean {
  if (flock === null) throw new Error(`flock(2) is not available on ${process.platform}`);
  return flock(fd, LOCK_EX | LOCK_NB) === 0;
}

export function unlock(fd: number): void {
  flock?.(fd, LOCK_UN);
}

/**
 * Takes an exclusive lock on `fd`, retrying with exponential backoff until `timeoutMs` has
 * passed; false if it never came free.
 */
export async function lockExclusive(fd: number, timeoutMs: number): Promise<boolean> {
  const deadlineMs = Date.now() + timeoutMs;
  let backoffMs = FLOCK_BACKOFF_MS_MIN;
  for (;;) {
    if (tryLockExclusive(fd)) return true;
    if (Date.now() >= deadlineMs) return false;
    await Bun.sleep(backoffMs);
    backoffMs = Math.min(backoffMs * 2, FLOCK_BACKOFF_MS_MAX);
  }
}
