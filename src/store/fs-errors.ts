import { isStoreError, StoreError, type StoreErrorKind } from './errors.ts';
import { showKey } from './validate.ts';

/** The errno of a Node/Bun filesystem error, or undefined for anything else. */
export function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

const KIND_BY_ERRNO: Readonly<Record<string, StoreErrorKind>> = {
  ENOENT: 'NotFound',
  EACCES: 'AccessDenied',
  EPERM: 'AccessDenied',
  EROFS: 'AccessDenied',
  ENAMETOOLONG: 'InvalidArgument',
  ENOTDIR: 'InvalidArgument',
  EISDIR: 'InvalidArgument',
};

/**
 * A filesystem failure as a StoreError that names what was being done, to which key, and the
 * path the system call failed on: permissions become AccessDenied, a full or failing disk
 * Unavailable (retriable: space may be freed). StoreErrors pass through untouched.
 */
export function storeErrorFromFs(error: unknown, what: string, key?: string): StoreError {
  if (isStoreError(error)) return error;
  const errno = errnoOf(error);
  const kind = (errno === undefined ? undefined : KIND_BY_ERRNO[errno]) ?? 'Unavailable';
  const path = (error as { path?: unknown } | null)?.path;
  const subject = [key === undefined ? '' : ` ${showKey(key)}`, typeof path === 'string' ? ` (${path})` : ''].join('');
  const detail = error instanceof Error ? error.message : String(error);
  return new StoreError(kind, `file store: ${what}${subject} failed: ${detail}`, { ...(key === undefined ? {} : { key }), cause: error });
}
