import { FerryError } from '../../errors.ts';
import type { Crc32cImplementation, Crc32cName } from './implementation.ts';
import { loadNativeCrc32c } from './native.ts';
import { loadTccCrc32c } from './tcc.ts';
import { tsCrc32c } from './ts.ts';
import { loadWasmCrc32c } from './wasm.ts';

/** Set to one of CRC32C_NAMES to skip calibration and use that implementation or fail. */
export const CRC32C_ENV = 'FERRY_CRC32C';

/** Every implementation, in the order they are tried. */
export const CRC32C_NAMES: readonly Crc32cName[] = ['native', 'tcc', 'wasm', 'ts'];

const LOADERS: Record<Crc32cName, () => Crc32cImplementation | null> = {
  native: loadNativeCrc32c,
  tcc: loadTccCrc32c,
  wasm: loadWasmCrc32c,
  ts: () => tsCrc32c,
};

const LOAD_FAILURES: Record<Crc32cName, string> = {
  native: 'no prebuilt library for this platform in native/prebuilt, or dlopen failed',
  tcc: 'bun:ffi cc() could not compile native/crc32c.tcc.c (or cc is disabled: --no-ffi-cc)',
  wasm: 'native/prebuilt/crc32c.wasm is missing or did not instantiate',
  ts: 'none: plain TypeScript always loads',
};

/**
 * Calibration: each compiled candidate hashes a 16 KiB buffer (a typical batch, L1/L2-resident)
 * for 2 warm-up rounds, then timed rounds until 5 are done or 0.5 ms has passed, keeping the
 * fastest: ~0.5 ms for all three. The TypeScript fallback is not calibrated: at start-up the
 * JIT has not compiled it yet (it measures ~0.03 GB/s for ~2 ms of calibration), and warm it
 * still trails WASM, which runs the same slicing-by-16 (bench/crc32c.bench.ts shows both).
 * It is picked only when nothing else verifies.
 */
export const CALIBRATION_BYTES = 16 * 1024;
const CALIBRATION_WARMUP_ROUNDS = 2;
const CALIBRATION_ROUNDS_MAX = 5;
const CALIBRATION_BUDGET_NS = 500_000;

/** A later candidate (in CRC32C_NAMES order) must be this much faster to be picked, so that
 * calibration noise does not flip between two equally fast ones from run to run. */
const SELECTION_MARGIN = 1.1;

/**
 * Verification input: longer than every native block (3 x 4 KiB) and the AVX-512 threshold,
 * at an odd offset. Its CRC32C comes from the TypeScript implementation (the reference) and
 * is fixed here, as cold TypeScript would spend ~5 ms computing it at start-up. The
 * conformance tests go further: random lengths to 70000, every code path, WASM chunking.
 */
const VERIFY_BYTES = 13_001;
const VERIFY_CRC32C = 0xbeaf8114;

export interface Crc32cCandidate {
  readonly name: Crc32cName;
  /** Null when it did not load or failed verification (see `problem`). */
  readonly implementation: Crc32cImplementation | null;
  readonly problem: string | null;
  /** Calibrated throughput; null when not calibrated (ts, not loaded, rejected, or forced). */
  readonly gigabytesPerSecond: number | null;
}

export interface Crc32cSelection {
  readonly selected: Crc32cImplementation;
  /** True when CRC32C_ENV named the implementation. */
  readonly forced: boolean;
  readonly candidates: readonly Crc32cCandidate[];
  readonly elapsedMs: number;
}

/** Deterministic bytes (a 32-bit LCG), so a rejection reproduces. */
function patternBytes(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let state = 0x9e3779b9;
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    bytes[i] = state >>> 24;
  }
  return bytes;
}

const ASCII_DIGITS = new TextEncoder().encode('123456789');

/** Published CRC32C values (RFC 3720 appendix B.4 and the usual check value). */
const KNOWN_VECTORS: readonly (readonly [string, Uint8Array, number])[] = [
  ['empty', new Uint8Array(0), 0],
  ['"123456789"', ASCII_DIGITS, 0xe3069283],
  ['32 zero bytes', new Uint8Array(32), 0x8a9136aa],
  ['32 0xff bytes', new Uint8Array(32).fill(0xff), 0x62a8ab43],
];

let verifyInput: Uint8Array | null = null;

/** Bytes 1 ..= VERIFY_BYTES of the pattern: odd byteOffset, so unaligned. */
function longVector(): Uint8Array {
  verifyInput ??= patternBytes(VERIFY_BYTES + 1).subarray(1);
  return verifyInput;
}

/** Null when `implementation` agrees with the published vectors and with ts; else what failed. */
export function verifyCrc32c(implementation: Crc32cImplementation): string | null {
  for (const [label, data, expected] of KNOWN_VECTORS) {
    const actual = implementation.update(0, data);
    if (actual !== expected) return `${label}: got 0x${actual.toString(16)}, want 0x${expected.toString(16)}`;
  }
  if (implementation === tsCrc32c) return null; // the reference the long vector came from
  const data = longVector();
  const whole = implementation.update(0, data);
  if (whole !== VERIFY_CRC32C) return `${VERIFY_BYTES} unaligned pattern bytes: got 0x${whole.toString(16)}`;
  const split = 4_097; // an odd split: the second part starts unaligned too
  const continued = implementation.update(implementation.update(0, data.subarray(0, split)), data.subarray(split));
  if (continued !== whole) return 'continuation update(update(0, a), b) disagrees with update(0, a ++ b)';
  return null;
}

/** Best-of-rounds throughput in GB/s (bytes per nanosecond), within the time budget. */
export function calibrateCrc32c(implementation: Crc32cImplementation, data = patternBytes(CALIBRATION_BYTES)): number {
  let crc = 0;
  for (let round = 0; round < CALIBRATION_WARMUP_ROUNDS; round++) crc = implementation.update(crc, data);
  let bestNs = Number.POSITIVE_INFINITY;
  const budgetEnd = Bun.nanoseconds() + CALIBRATION_BUDGET_NS;
  for (let round = 0; round < CALIBRATION_ROUNDS_MAX; round++) {
    const started = Bun.nanoseconds();
    crc = implementation.update(crc, data);
    const ended = Bun.nanoseconds();
    bestNs = Math.min(bestNs, ended - started);
    if (ended > budgetEnd) break;
  }
  return data.length / Math.max(bestNs, 1);
}

const loaded = new Map<Crc32cName, Crc32cCandidate>();

/** Loads and verifies one implementation, once per process. */
export function loadCandidate(name: Crc32cName): Crc32cCandidate {
  const known = loaded.get(name);
  if (known !== undefined) return known;
  const implementation = LOADERS[name]();
  const problem = implementation === null ? LOAD_FAILURES[name] : verifyCrc32c(implementation);
  const candidate: Crc32cCandidate = {
    name,
    implementation: problem === null ? implementation : null,
    problem,
    gigabytesPerSecond: null,
  };
  loaded.set(name, candidate);
  return candidate;
}

function isCrc32cName(value: string): value is Crc32cName {
  return (CRC32C_NAMES as readonly string[]).includes(value);
}

function selectForced(value: string, started: number): Crc32cSelection {
  if (!isCrc32cName(value)) {
    throw new FerryError('InvalidArgument', `${CRC32C_ENV}=${value}: expected one of ${CRC32C_NAMES.join(', ')}`);
  }
  const candidate = loadCandidate(value);
  if (candidate.implementation === null) {
    throw new FerryError('InvalidArgument', `${CRC32C_ENV}=${value}: cannot use it here: ${candidate.problem}`);
  }
  const elapsedMs = (Bun.nanoseconds() - started) / 1e6;
  return { selected: candidate.implementation, forced: true, candidates: [candidate], elapsedMs };
}

/**
 * Picks the CRC32C implementation for this process: the one named by FERRY_CRC32C, or else
 * the fastest that loads here and agrees with the published vectors. Costs ~20 ms, most of
 * it TinyCC's first compile (~12 ms) and the first WASM instantiation (~4 ms).
 */
export function selectCrc32c(forcedName = process.env[CRC32C_ENV]): Crc32cSelection {
  const started = Bun.nanoseconds();
  if (forcedName !== undefined && forcedName !== '') return selectForced(forcedName, started);
  const data = patternBytes(CALIBRATION_BYTES);
  const candidates = CRC32C_NAMES.map((name) => {
    const candidate = loadCandidate(name);
    if (candidate.implementation === null || name === 'ts') return candidate;
    return { ...candidate, gigabytesPerSecond: calibrateCrc32c(candidate.implementation, data) };
  });
  let selected: Crc32cImplementation = tsCrc32c;
  let bestGigabytesPerSecond = 0;
  for (const { implementation, gigabytesPerSecond } of candidates) {
    if (implementation === null || gigabytesPerSecond === null) continue;
    if (gigabytesPerSecond > bestGigabytesPerSecond * SELECTION_MARGIN) {
      selected = implementation;
      bestGigabytesPerSecond = gigabytesPerSecond;
    }
  }
  const elapsedMs = (Bun.nanoseconds() - started) / 1e6;
  return { selected, forced: false, candidates, elapsedMs };
}

/** Every implementation that loads and verifies here, loading any not yet tried. */
export function loadedCrc32cImplementations(): Crc32cImplementation[] {
  return CRC32C_NAMES.map(loadCandidate).flatMap((candidate) => (candidate.implementation === null ? [] : [candidate.implementation]));
}
