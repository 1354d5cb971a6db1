/**
 * flock(2) through bun:ffi: whole-file advisory locks the kernel drops when the process dies, so
 * a crash never leaves a stale lock. Locks belong to the open file description: two opens of one
 * file conflict even inside one process.
 *
 * Only the non-blocking form is called: a blocking flock would stall Bun's event loop, so waiting
 * is an async retry with backoff (`lockExclusive`).
 */
import { constants } from 'node:os';

const errnoConstants: Readonly<Record<string, number>> = constants.errno;
const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;

/** First retry after 1 ms (a lock held for one small write is usually free by then), doubling to 16 ms. */
export const FLOCK_BACKOFF_MS_MIN = 1;
export const FLOCK_BACKOFF_MS_MAX = 16;

/** flock(2)'s return value and, when it failed, the errno it left. */
type Flock = (fd: number, operation: number) => { readonly result: number; readonly errno: number };

/** The lock is held by another open file description; every other errno is a failure of the call itself. */
const EWOULDBLOCK = errnoConstants.EWOULDBLOCK ?? errnoConstants.EAGAIN;
/** Interrupted by a signal before it decided: asked again. */
const EINTR = errnoConstants.EINTR;

/** libc's flock and errno (read at once after the call, on the same thread); null where they cannot be loaded. */
function loadFlock(): Flock | null {
  const library = process.platform === 'darwin' ? 'libSystem.B.dylib' : process.platform === 'linux' ? 'libc.so.6' : null;
  if (library === null) return null;
  const errnoLocation = process.platform === 'darwin' ? '__error' : '__errno_location';
  try {
    const { dlopen, FFIType, read } = require('bun:ffi') as typeof import('bun:ffi');
    const { symbols } = dlopen(library, {
      flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
      [errnoLocation]: { args: [], returns: FFIType.ptr },
    });
    const errnoPointer = symbols[errnoLocation]!;
    return (fd, operation) => {
      const result = symbols.flock!(fd, operation) as number;
      return { result, errno: result === 0 ? 0 : read.i32(errnoPointer() as never) };
    };
  } catch {
    return null;
  }
}

const flock = loadFlock();

export function flockAvailable(): boolean {
  return flock !== null;
}

/**
 * Takes an exclusive lock on `fd` if it is free; false if another open file holds it. Any other
 * failure (a bad descriptor, a filesystem without flock: EBADF, ENOLCK, EINVAL) throws with its
 * errno at once: waiting would never help, and it is no lock that someone holds.
 */
export function tryLockExclusive(fd: number): boolean {
  if (flock === null) throw new Error(`flock(2) is not available on ${process.platform}`);
  for (;;) {
    const { result, errno } = flock(fd, LOCK_EX | LOCK_NB);
    if (result === 0) return true;
    if (errno === EWOULDBLOCK) return false;
    if (errno !== EINTR) throw Object.assign(new Error(`flock(${fd}, LOCK_EX) failed with errno ${errno}${errnoName(errno)}`), { errno });
  }
}

/** The platform's name of an errno (EBADF), for the message. */
function errnoName(errno: number): string {
  const name = Object.entries(errnoConstants).find(([, value]) => value === errno)?.[0];
  return name === undefined ? '' : ` (${name})`;
}

export function unlock(fd: number): void {
  flock?.(fd, LOCK_UN);
}

/**
 * Takes an exclusive lock on `fd`, retrying with exponential backoff until `timeoutMs` has
 * passed; false if it never came free. A flock that fails for another reason throws at once.
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
