/** How many `cause` links are followed to find a system call's error under wrappers (a FerryError). */
const CAUSE_DEPTH_MAX = 4;

/**
 * An error from a system call (EMFILE, ENOSPC, EIO, ...), itself or as the `cause` of a wrapper
 * such as a FerryError('Storage'): Node's and Bun's carry the errno name in `code` and the call in
 * `syscall`. These are faults of the machine, reported per request (KAFKA_STORAGE_ERROR) and never
 * allowed to end the process.
 */
export function isOsError(error: unknown): boolean {
  let at = error;
  for (let depth = 0; depth <= CAUSE_DEPTH_MAX && at !== null && typeof at === 'object'; depth++) {
    const { code, syscall, cause } = at as { code?: unknown; syscall?: unknown; cause?: unknown };
    if (typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) && typeof syscall === 'string') return true;
    at = cause;
  }
  return false;
}
