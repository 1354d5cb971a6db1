/**
 * CRC32C: every implementation that loads here side by side (native via bun:ffi dlopen, TinyCC
 * via bun:ffi cc, WASM, TypeScript) on 1 KiB, 64 KiB and 1 MiB, plus the native library's
 * slower CPU paths at 64 KiB. mitata measures; the table prints GB/s from each median
 * (p50) time, and which implementation src/format/crc32c/select.ts picked at start-up.
 */
import { bench, do_not_optimize, group, run, summary } from 'mitata';
import { crc32cImplementations, crc32cSelection } from '../src/format/crc32c/index.ts';
import { parseBenchArgs } from './lib/args.ts';
import { printTable } from './lib/table.ts';
import { KIB_BYTES, MIB_BYTES } from './lib/units.ts';

const USAGE = `
bun bench/crc32c.bench.ts [--quick]

Times every CRC32C implementation that loads here with mitata (~22 s; --quick: 64 KiB only,
~8 s) and prints GB/s per implementation and buffer size, then the start-up selection.`;

const SIZES_BYTES = [KIB_BYTES, 64 * KIB_BYTES, MIB_BYTES] as const;
const QUICK_SIZES_BYTES = [64 * KIB_BYTES] as const;
/** The size at which each CPU-specific path is shown: a typical batch, L2-resident. */
const PATH_SIZE_BYTES = 64 * KIB_BYTES;

type Update = (crc: number, data: Uint8Array) => number;

interface Row {
  readonly label: string;
  readonly update: Update;
  /** Sizes measured for this row. */
  readonly sizes: readonly number[];
}

function sizeLabel(bytes: number): string {
  return bytes >= MIB_BYTES ? `${bytes / MIB_BYTES} MiB` : `${bytes / KIB_BYTES} KiB`;
}

function randomBytes(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  crypto.getRandomValues(bytes.subarray(0, Math.min(length, 65_536))); // getRandomValues caps at 64 KiB
  for (let i = 65_536; i < length; i++) bytes[i] = bytes[i - 65_536]! ^ (i & 0xff);
  return bytes;
}

/** Implementations at every size; the native/tcc paths they do not take, at one size. */
function rows(sizes: readonly number[], withPaths: boolean): Row[] {
  const found: Row[] = [];
  for (const implementation of crc32cImplementations()) {
    found.push({ label: implementation.name, update: implementation.update, sizes });
    const withPath = implementation as { path?: string; paths?: ReadonlyMap<string, Update> };
    if (!withPaths || withPath.paths === undefined) continue;
    for (const [path, update] of withPath.paths) {
      if (path !== withPath.path) found.push({ label: `${implementation.name} (${path})`, update, sizes: [PATH_SIZE_BYTES] });
    }
  }
  return found;
}

function registerBenches(found: readonly Row[], sizes: readonly number[]): void {
  for (const size of sizes) {
    const data = randomBytes(size);
    group(sizeLabel(size), () => {
      summary(() => {
        for (const row of found) {
          if (!row.sizes.includes(size)) continue;
          bench(`${row.label} ${sizeLabel(size)}`, () => do_not_optimize(row.update(0, data)));
        }
      });
    });
  }
}

function printResults(found: readonly Row[], sizes: readonly number[], medianNs: Map<string, number>): void {
  const gigabytesPerSecond = (row: Row, size: number): string => {
    const ns = medianNs.get(`${row.label} ${sizeLabel(size)}`);
    return ns === undefined ? '' : (size / ns).toFixed(2);
  };
  printTable(
    'CRC32C throughput, GB/s (from mitata median time per call)',
    [{ title: 'implementation', align: 'left' }, ...sizes.map((size) => ({ title: sizeLabel(size) }))],
    found.map((row) => [row.label, ...sizes.map((size) => gigabytesPerSecond(row, size))]),
  );
}

function printSelection(): void {
  const selection = crc32cSelection();
  const describe = (implementation: unknown): string => {
    const path = (implementation as { path?: string } | null)?.path;
    return path === undefined ? '' : ` (${path})`;
  };
  printTable(
    `Start-up selection: ${selection.selected.name}${describe(selection.selected)}` + `${selection.forced ? ', forced by FERRY_CRC32C' : ''}, in ${selection.elapsedMs.toFixed(1)} ms`,
    [{ title: 'candidate', align: 'left' }, { title: 'calibrated GB/s' }, { title: 'problem', align: 'left' }],
    selection.candidates.map((candidate) => [
      `${candidate.name}${describe(candidate.implementation)}`,
      candidate.gigabytesPerSecond === null ? '-' : candidate.gigabytesPerSecond.toFixed(2),
      candidate.problem ?? '',
    ]),
  );
}

const { quick } = parseBenchArgs(process.argv.slice(2), USAGE);
const sizes = quick ? QUICK_SIZES_BYTES : SIZES_BYTES;
const found = rows(sizes, !quick);
registerBenches(found, sizes);
const { benchmarks } = await run();
const medianNs = new Map<string, number>();
for (const trial of benchmarks) {
  const stats = trial.runs[0]?.stats;
  if (stats !== undefined) medianNs.set(trial.alias, stats.p50);
}
printResults(found, sizes, medianNs);
printSelection();
