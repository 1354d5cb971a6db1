/**
 * An error from a system call (EMFILE, ENOSPC, EIO, ...): Node's and Bun's carry the errno name
 * in `code` and the call in `syscall`. These are faults of the machine, reported per request
 * (KAFKA_STORAGE_ERROR) and never allowed to end the process.
 */
export function isOsError(error: unknown): boolean {
  const { code, syscall } = (error ?? {}) as { code?: unknown; syscall?: unknown };
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) && typeof syscall === 'string';
}
