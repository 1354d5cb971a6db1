import { invalidArgument, showKey } from './validate.ts';

/**
 * How the file store lays keys out on disk. A key is split at '/'; every segment but the last
 * names a directory, the last names the object file. Directories and objects live in different
 * namespaces (suffix `.d` and `.o`), so 'a' and 'a/b' coexist as `a.o` and `a.d/b.o`, and the
 * suffix also defuses the segments a path would otherwise interpret: '' becomes `.o`, '.' becomes
 * `..o`, '..' becomes `...o`. A name is decoded by cutting the two-byte suffix, so the mapping is
 * injective. Refused (InvalidArgument): NUL, which no path can hold, and segments longer than a
 * file name allows (255 bytes, suffix included).
 *
 * Assumes a case-sensitive filesystem that does not normalise Unicode (Linux): on macOS's
 * default APFS, keys differing only in case would collide.
 */
export const OBJECT_SUFFIX = '.o';
export const DIRECTORY_SUFFIX = '.d';
/** NAME_MAX on Linux and macOS. */
export const FILE_NAME_BYTES_MAX = 255;
const SEGMENT_BYTES_MAX = FILE_NAME_BYTES_MAX - OBJECT_SUFFIX.length;

/** Why the file store cannot hold `key`, or null if it can. */
function unrepresentable(key: string): string | null {
  if (key.includes('\0')) return 'it contains NUL, which no file name can hold';
  for (const segment of key.split('/')) {
    const bytes = Buffer.byteLength(segment, 'utf8');
    if (bytes > SEGMENT_BYTES_MAX) return `its segment ${showKey(segment)} is ${bytes} bytes; between slashes the file store allows ${SEGMENT_BYTES_MAX}`;
  }
  return null;
}

export function checkFileKey(key: string): void {
  const why = unrepresentable(key);
  if (why !== null) throw invalidArgument(key, `the file store cannot hold key ${showKey(key)}: ${why}`);
}

/** The object file of `key`, relative to the objects directory. */
export function objectPathOf(key: string): string {
  const segments = key.split('/');
  const name = segments.pop()!;
  return [...segments.map((segment) => segment + DIRECTORY_SUFFIX), name + OBJECT_SUFFIX].join('/');
}

/**
 * The directory holding every key that starts with `keyPrefix` (which is '' or ends in '/'),
 * relative to the objects directory; null if no such key can exist.
 */
export function directoryPathOf(keyPrefix: string): string | null {
  if (keyPrefix === '') return '';
  if (unrepresentable(keyPrefix) !== null) return null;
  return keyPrefix
    .slice(0, -1)
    .split('/')
    .map((segment) => segment + DIRECTORY_SUFFIX)
    .join('/');
}

/** A directory entry decoded back to a key segment; null for names the store did not write. */
export function decodeName(name: string): { segment: string; isDirectory: boolean } | null {
  if (name.endsWith(OBJECT_SUFFIX)) return { segment: name.slice(0, -OBJECT_SUFFIX.length), isDirectory: false };
  if (name.endsWith(DIRECTORY_SUFFIX)) return { segment: name.slice(0, -DIRECTORY_SUFFIX.length), isDirectory: true };
  return null;
}
