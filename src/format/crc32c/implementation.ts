/**
 * One CRC32C (Castagnoli, reflected polynomial 0x82F63B78) implementation. `update` continues a
 * finished checksum: update(update(0, a), b) === update(0, a ++ b), as zlib's crc32 does.
 * Every implementation passes the one conformance suite in test/format/crc32c.test.ts.
 */
export interface Crc32cImplementation {
  readonly name: Crc32cName;
  update(crc: number, data: Uint8Array): number;
}

/** Fastest first where the CPU allows: native (dlopen), tcc (bun:ffi cc), wasm, ts. */
export type Crc32cName = 'native' | 'tcc' | 'wasm' | 'ts';

export const CRC32C_POLYNOMIAL_REFLECTED = 0x82f63b78;
