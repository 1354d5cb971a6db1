import { cc } from 'bun:ffi';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Crc32cWithPaths } from './native.ts';

/** Indexed by the path numbers in native/crc32c.tcc.c. */
export const TCC_PATH_NAMES = ['table', 'sse4.2-3way'] as const;

export function tccSourceFile(): string {
  return join(import.meta.dir, '../../../native/crc32c.tcc.c');
}

/**
 * `buffer_length` is not available inside cc(), so the length travels as a u64. The CRC
 * travels as i32 both ways: in Bun 1.4.5 cc()'s u32 conversion is wrong before the JIT warms
 * up (argument 1 arrives as 0, 0x80000000 returns as -0x80000000), while i32 is exact.
 */
const SYMBOLS = {
  ferry_crc32c: { args: ['i32', 'buffer', 'u64'], returns: 'i32' },
  ferry_crc32c_path: { args: [], returns: 'i32' },
  ferry_crc32c_on_path: { args: ['i32', 'i32', 'buffer', 'u64'], returns: 'i32' },
} as const;

/**
 * Compiles native/crc32c.tcc.c with bun:ffi's built-in TinyCC: needs no toolchain, costs
 * ~12 ms on the first cc() of a process (~2 ms after). Null when cc() is unavailable
 * (e.g. `bun --no-ffi-cc`) or the source is missing or fails to compile.
 */
export function loadTccCrc32c(source = tccSourceFile()): Crc32cWithPaths | null {
  if (!existsSync(source)) return null;
  let symbols: ReturnType<typeof cc<typeof SYMBOLS>>['symbols'];
  try {
    symbols = cc({ source, symbols: SYMBOLS }).symbols;
  } catch {
    return null;
  }
  const compiled = symbols.ferry_crc32c;
  const onPath = symbols.ferry_crc32c_on_path;
  const path = TCC_PATH_NAMES[symbols.ferry_crc32c_path()] ?? 'unknown';
  const paths = new Map<string, (crc: number, data: Uint8Array) => number>();
  TCC_PATH_NAMES.forEach((name, index) => {
    if (name !== 'table' && name !== path) return;
    paths.set(name, (crc, data) => onPath(index, crc | 0, data, data.length) >>> 0);
  });
  return {
    name: 'tcc',
    path,
    paths,
    update: (crc, data) => compiled(crc | 0, data, data.length) >>> 0,
  };
}
