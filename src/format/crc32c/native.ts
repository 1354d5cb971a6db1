import { dlopen, suffix } from 'bun:ffi';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Crc32cImplementation } from './implementation.ts';

/** An implementation with CPU-dependent code paths: which one runs, and each one pinned. */
export interface Crc32cWithPaths extends Crc32cImplementation {
  /** The path this CPU takes, e.g. 'sse4.2-3way'. */
  readonly path: string;
  /** Every path available here, pinned, so tests cover the slower ones on a fast CPU. */
  readonly paths: ReadonlyMap<string, (crc: number, data: Uint8Array) => number>;
}

/** Indexed by native/crc32c.c's enum ferry_crc32c_path. */
export const NATIVE_PATH_NAMES = ['table', 'sse4.2', 'sse4.2-3way', 'avx512-vpclmulqdq', 'avx512-vpclmulqdq+crc32q', 'armv8-crc'] as const;

/** The committed build for this platform (see native/README.md); never a machine path. */
export function nativeLibraryFile(): string {
  const platform = `${process.platform}-${process.arch}`;
  return join(import.meta.dir, '../../../native/prebuilt', platform, `libferry_crc32c.${suffix}`);
}

/**
 * `buffer` + `buffer_length` read the pointer and byte length off the same view inside the
 * call: the cheapest form measured (~5 ns per call against ~10 ns for `ptr` + a length
 * read in JavaScript), and the length cannot disagree with the view.
 */
const SYMBOLS = {
  ferry_crc32c: { args: ['u32', 'buffer', 'buffer_length'], returns: 'u32' },
  ferry_crc32c_path: { args: [], returns: 'i32' },
  ferry_crc32c_path_available: { args: ['i32'], returns: 'i32' },
  ferry_crc32c_on_path: { args: ['i32', 'u32', 'buffer', 'buffer_length'], returns: 'u32' },
} as const;

/** The native library through bun:ffi dlopen; null when there is no build for this platform
 * or it does not load (the caller falls back to another implementation). */
export function loadNativeCrc32c(file = nativeLibraryFile()): Crc32cWithPaths | null {
  if (!existsSync(file)) return null;
  let symbols: ReturnType<typeof dlopen<typeof SYMBOLS>>['symbols'];
  try {
    symbols = dlopen(file, SYMBOLS).symbols;
  } catch {
    return null;
  }
  const native = symbols.ferry_crc32c;
  const onPath = symbols.ferry_crc32c_on_path;
  const paths = new Map<string, (crc: number, data: Uint8Array) => number>();
  NATIVE_PATH_NAMES.forEach((name, index) => {
    if (symbols.ferry_crc32c_path_available(index) === 1) {
      paths.set(name, (crc, data) => onPath(index, crc, data, data));
    }
  });
  return {
    name: 'native',
    path: NATIVE_PATH_NAMES[symbols.ferry_crc32c_path()] ?? 'unknown',
    paths,
    update: (crc, data) => native(crc, data, data),
  };
}
