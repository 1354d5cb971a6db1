/** Linux's errno numbers and messages for the failures the simulated disk reports. */
const ERRNO = {
  ENOENT: { errno: -2, message: 'no such file or directory' },
  EIO: { errno: -5, message: 'i/o error' },
  EBADF: { errno: -9, message: 'bad file descriptor' },
  EEXIST: { errno: -17, message: 'file already exists' },
  ENOTDIR: { errno: -20, message: 'not a directory' },
  EISDIR: { errno: -21, message: 'illegal operation on a directory' },
  ENOSPC: { errno: -28, message: 'no space left on device' },
  ENOTEMPTY: { errno: -39, message: 'directory not empty' },
} as const;
export type SimErrno = keyof typeof ERRNO;

/** An error shaped as node's: `code`, `errno`, `syscall` and `path` (isOsError, fs-errors.ts read them). */
export function osError(code: SimErrno, syscall: string, path?: string): Error {
  const { errno, message } = ERRNO[code];
  const error = new Error(`${code}: ${message}, ${syscall}${path === undefined ? '' : ` '${path}'`}`);
  return Object.assign(error, { code, errno, syscall, ...(path === undefined ? {} : { path }) });
}
