/**
 * Runs every bench/*.bench.ts in turn, each in its own `bun` process so that one bench's heap,
 * JIT state and page-cache churn do not skew the next. `npm run bench` lands here.
 */
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';

const BENCH_DIRECTORY = import.meta.dir;
const BENCH_SUFFIX = '.bench.ts';
/**
 * Benches whose full run is far past the suite's budget (minutes each: kill rounds against real
 * broker processes, a 10-minute sustained run): the suite always runs them with --quick, about two
 * minutes each. Run them directly for the full measurement.
 */
const QUICK_IN_SUITE: ReadonlySet<string> = new Set(['failover.bench.ts', 'wal-bytes.bench.ts']);

const USAGE = `
bun bench/run.ts [--quick] [name ...]     (npm run bench -- [--quick] [name ...])

Runs each bench/*${BENCH_SUFFIX} in its own bun process, one after another, and prints their tables.
  name      run only benches whose file name contains one of these (e.g. "append")
  --quick   passed to every bench: less data and fewer rounds, for a smoke run
  --help    this text
${[...QUICK_IN_SUITE].join(' and ')} always run with --quick here (their full runs take many minutes).
Each bench also takes --help. See bench/README.md for what each measures and how to read it.`;

interface RunArgs {
  readonly passThrough: string[];
  readonly filters: string[];
}

function parseArgs(argv: readonly string[]): RunArgs {
  const passThrough: string[] = [];
  const filters: string[] = [];
  for (const arg of argv) {
    if (arg === '--help' || arg === '-h') {
      console.log(USAGE.trim());
      process.exit(0);
    } else if (arg === '--quick') {
      passThrough.push(arg);
    } else if (arg.startsWith('-')) {
      console.error(`unknown argument ${JSON.stringify(arg)}\n\n${USAGE.trim()}`);
      process.exit(2);
    } else {
      filters.push(arg);
    }
  }
  return { passThrough, filters };
}

function benchFiles(filters: readonly string[]): string[] {
  return readdirSync(BENCH_DIRECTORY)
    .filter((name) => name.endsWith(BENCH_SUFFIX))
    .filter((name) => filters.length === 0 || filters.some((filter) => name.includes(filter)))
    .sort()
    .map((name) => join(BENCH_DIRECTORY, name));
}

async function runOne(file: string, given: readonly string[]): Promise<number> {
  const passThrough = QUICK_IN_SUITE.has(basename(file)) && !given.includes('--quick') ? [...given, '--quick'] : given;
  console.log(`\n=== ${basename(file)} ${passThrough.join(' ')}`.trimEnd());
  const startMs = performance.now();
  const child = Bun.spawn([process.execPath, file, ...passThrough], { stdio: ['ignore', 'inherit', 'inherit'] });
  const exitCode = await child.exited;
  console.log(`=== ${basename(file)}: exit ${exitCode} after ${((performance.now() - startMs) / 1000).toFixed(1)} s`);
  return exitCode;
}

async function main(): Promise<void> {
  const { passThrough, filters } = parseArgs(process.argv.slice(2));
  const files = benchFiles(filters);
  if (files.length === 0) {
    console.error(`no bench matches ${filters.join(', ')}`);
    process.exit(2);
  }
  const failed: string[] = [];
  for (const file of files) {
    if ((await runOne(file, passThrough)) !== 0) failed.push(basename(file));
  }
  if (failed.length > 0) {
    console.error(`\nfailed: ${failed.join(', ')}`);
    process.exit(1);
  }
}

await main();
