import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Crc32cWithPaths } from './native.ts';

/**
 * Bytes copied into WASM memory per call. WASM cannot read JavaScript's buffers, so every
 * byte is copied first (~22 us/MiB, ~1.4 us per chunk); 64 KiB bounds the staging area and
 * keeps the copy a small fraction of the ~24 us the table CRC spends on the same chunk.
 */
export const WASM_CHUNK_BYTES = 64 * 1024;

export function wasmModuleFile(): string {
  return join(import.meta.dir, '../../../native/prebuilt/crc32c.wasm');
}

interface WasmExports {
  memory: WebAssembly.Memory;
  ferry_crc32c(crc: number, input: number, length: number): number;
  ferry_crc32c_init(): void;
  ferry_crc32c_input(): number;
  ferry_crc32c_input_capacity(): number;
}

function isWasmExports(exports: unknown): exports is WasmExports {
  const found = exports as Record<string, unknown>;
  return found.memory instanceof WebAssembly.Memory && ['ferry_crc32c', 'ferry_crc32c_init', 'ferry_crc32c_input', 'ferry_crc32c_input_capacity'].every((name) => typeof found[name] === 'function');
}

function instantiate(file: string): WasmExports | null {
  if (!existsSync(file)) return null;
  try {
    const instance = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(file)), {});
    return isWasmExports(instance.exports) ? instance.exports : null;
  } catch {
    return null;
  }
}

/** The committed WASM build (native/crc32c.wasm.c, slicing-by-16); null if it does not load. */
export function loadWasmCrc32c(file = wasmModuleFile()): Crc32cWithPaths | null {
  const wasm = instantiate(file);
  if (wasm === null || wasm.ferry_crc32c_input_capacity() < WASM_CHUNK_BYTES) return null;
  wasm.ferry_crc32c_init();
  const input = wasm.ferry_crc32c_input();
  const compute = wasm.ferry_crc32c;
  // The module never grows its memory, so this view stays attached.
  const memory = new Uint8Array(wasm.memory.buffer);
  const update = (crc: number, data: Uint8Array): number => {
    let c = crc;
    for (let at = 0; at < data.length; at += WASM_CHUNK_BYTES) {
      const chunk = data.subarray(at, at + WASM_CHUNK_BYTES);
      memory.set(chunk, input);
      c = compute(c, input, chunk.length) >>> 0;
    }
    return c >>> 0;
  };
  return { name: 'wasm', path: 'slicing-by-16', paths: new Map([['slicing-by-16', update]]), update };
}
