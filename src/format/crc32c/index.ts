import type { Crc32cImplementation } from './implementation.ts';
import { type Crc32cSelection, loadedCrc32cImplementations, selectCrc32c } from './select.ts';

export type { Crc32cImplementation, Crc32cName } from './implementation.ts';
export type { Crc32cSelection } from './select.ts';

// Chosen once, when the module loads (select.ts: FERRY_CRC32C, else the fastest that
// verifies here); crc32c() below is then a single call through it.
const selection = selectCrc32c();
const selectedUpdate = selection.selected.update;

/** CRC32C of `data`, continuing from `previous` (a finished checksum; 0 to start). */
export function crc32c(data: Uint8Array, previous = 0): number {
  return selectedUpdate(previous, data);
}

export function selectedCrc32c(): Crc32cImplementation {
  return selection.selected;
}

/** How the selection went: every candidate, why any was rejected, calibrated GB/s. */
export function crc32cSelection(): Crc32cSelection {
  return selection;
}

/** Every implementation that loads and verifies here (for tests and benchmarks). */
export function crc32cImplementations(): Crc32cImplementation[] {
  return loadedCrc32cImplementations();
}
