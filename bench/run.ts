/**
 * Runs every bench/*.bench.ts in turn, each in its own `bun` process so that one bench's heap,
 * JIT state and page-cache churn do not skew the next. `npm run bench` lands here.
 */
import { createWriteStream, mkdirSync, readdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { RESULTS_DIRECTORY_ENV } from './lib/results.ts';
import { printTargets } from './lib/targets.ts';
import { makeTempDir, removeTempDir } from './lib/temp-dir.ts';
import { readResults, REPORT_FILE, targetsIn, writeReport } from './report/write-report.ts';

const BENCH_DIRECTORY = import.meta.dir;
const BENCH_SUFFIX = '.bench.ts';
/**
 * Benches whose full run is far past the suite's budget (minutes each: kill rounds against real
 * broker processes, a 10-minute sustained run): the suite always runs them with --quick, about two
 * minutes each. Run them directly for the full measurement.
 */
const QUICK_IN_SUITE: ReadonlySet<string> = new Set(['failover.bench.ts', 'wal-bytes.bench.ts']);
/**
 * Benches left out of the default set: they run only when a name given matches them or with
 * --long. The soak holds a broker under 50 MB/s for 10 minutes (--quick: 1) and fills 3-4.5 GB
 * of disk a minute.
 */
const LONG_BENCHES: ReadonlySet<string> = new Set(['soak.bench.ts']);
/** The benches whose results the report plots: what --report runs when no names are given. */
const REPORT_BENCHES: readonly string[] = ['wal', 'broker', 'follower', 'consume'];
/** Inside the report directory: the benches' JSON results (bench/report/results.ts). */
const RESULTS_SUBDIRECTORY = 'results';

const USAGE = `
bun bench/run.ts [--quick] [--long] [--report DIR] [name ...]     (npm run bench -- [--quick] [--long] [--report DIR] [name ...])

Runs each bench/*${BENCH_SUFFIX} in its own bun process, one after another, and prints their tables.
  name      run only benches whose file name contains one of these (e.g. "append")
  --quick   passed to every bench: less data and fewer rounds, for a smoke run
  --long    also run the long benches (${[...LONG_BENCHES].join(', ')}: a broker's RSS over 10 minutes at 50 MB/s),
            which run otherwise only when named (npm run bench -- soak)
  --report DIR  also write DIR/report.md with SVG plots (latency CDFs, latency vs cost, throughput
            beside librdkafka's mock cluster, catch-up beside raw GET, kcat -C beside a raw read of the
            segment, a month's bill, the soak's RSS); without names it runs only the benches it plots
            (${REPORT_BENCHES.join(', ')}; with --long also the soak); --quick takes ~3 minutes
  --help    this text
${[...QUICK_IN_SUITE].join(' and ')} always run with --quick here (their full runs take many minutes).
Each bench also takes --help. See bench/README.md for what each measures and how to read it.`;

interface RunArgs {
  readonly passThrough: string[];
  readonly filters: string[];
  readonly reportDirectory: string | null;
  readonly long: boolean;
}

function parseArgs(argv: readonly string[]): RunArgs {
  const passThrough: string[] = [];
  const filters: string[] = [];
  let reportDirectory: string | null = null;
  let long = false;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg === '--report' || arg.startsWith('--report=')) {
      const value = arg === '--report' ? argv[++index] : arg.slice('--report='.length);
      if (value === undefined || value === '' || value.startsWith('-')) {
        console.error(`--report needs a directory\n\n${USAGE.trim()}`);
        process.exit(2);
      }
      reportDirectory = resolve(value);
    } else if (arg === '--help' || arg === '-h') {
      console.log(USAGE.trim());
      process.exit(0);
    } else if (arg === '--quick') {
      passThrough.push(arg);
    } else if (arg === '--long') {
      long = true;
    } else if (arg.startsWith('-')) {
      console.error(`unknown argument ${JSON.stringify(arg)}\n\n${USAGE.trim()}`);
      process.exit(2);
    } else {
      filters.push(arg);
    }
  }
  if (reportDirectory !== null && filters.length === 0) filters.push(...REPORT_BENCHES.map((name) => `${name}.bench`), ...(long ? LONG_BENCHES : []));
  return { passThrough, filters, reportDirectory, long };
}

function benchFiles(filters: readonly string[], long: boolean): string[] {
  return readdirSync(BENCH_DIRECTORY)
    .filter((name) => name.endsWith(BENCH_SUFFIX))
    .filter((name) => filters.length === 0 || filters.some((filter) => name.includes(filter)))
    .filter((name) => long || !LONG_BENCHES.has(name) || filters.length > 0)
    .sort()
    .map((name) => join(BENCH_DIRECTORY, name));
}

async function runOne(file: string, given: readonly string[], resultsDirectory: string, transcript: string | null): Promise<number> {
  const passThrough = QUICK_IN_SUITE.has(basename(file)) && !given.includes('--quick') ? [...given, '--quick'] : given;
  console.log(`\n=== ${basename(file)} ${passThrough.join(' ')}`.trimEnd());
  const startMs = performance.now();
  const env = { ...process.env, [RESULTS_DIRECTORY_ENV]: resultsDirectory };
  const child = Bun.spawn([process.execPath, file, ...passThrough], { stdio: ['ignore', transcript === null ? 'inherit' : 'pipe', 'inherit'], env });
  if (transcript !== null) await tee(child.stdout as ReadableStream<Uint8Array>, transcript);
  const exitCode = await child.exited;
  console.log(`=== ${basename(file)}: exit ${exitCode} after ${((performance.now() - startMs) / 1000).toFixed(1)} s`);
  return exitCode;
}

/** Copies a bench's stdout to the terminal and to its transcript file, as it comes. */
async function tee(stream: ReadableStream<Uint8Array>, path: string): Promise<void> {
  const file = createWriteStream(path);
  try {
    for await (const chunk of stream) {
      process.stdout.write(chunk);
      file.write(chunk);
    }
  } finally {
    await new Promise<void>((done) => file.end(done));
  }
}

async function main(): Promise<void> {
  const { passThrough, filters, reportDirectory, long } = parseArgs(process.argv.slice(2));
  const files = benchFiles(filters, long);
  if (files.length === 0) {
    console.error(`no bench matches ${filters.join(', ')}`);
    process.exit(2);
  }
  const failed: string[] = [];
  const startedAt = new Date().toISOString();
  const suiteStartMs = performance.now();
  // Every bench hands its results here, report or not: the run ends with all their targets in one table.
  const resultsDirectory = reportDirectory === null ? makeTempDir('bench-results') : join(reportDirectory, RESULTS_SUBDIRECTORY);
  mkdirSync(resultsDirectory, { recursive: true });
  try {
    for (const [index, file] of files.entries()) {
      // Progress on stderr, so that the tables on stdout stay clean to pipe or keep.
      console.error(`[bench ${index + 1}/${files.length}] ${basename(file)} (suite at ${((performance.now() - suiteStartMs) / 1000).toFixed(0)} s)`);
      const transcript = reportDirectory === null ? null : join(reportDirectory, `${basename(file, BENCH_SUFFIX)}.txt`);
      if ((await runOne(file, passThrough, resultsDirectory, transcript)) !== 0) failed.push(basename(file));
    }
    printTargets("Every target of this run (issue 27's goals beside what each bench measured, bench/lib/targets.ts)", targetsIn(resultsDirectory));
    if (reportDirectory !== null) {
      const written = await writeReport(reportDirectory, readResults(resultsDirectory, passThrough.includes('--quick'), startedAt));
      console.log(`\nreport: ${join(reportDirectory, REPORT_FILE)} (${written.filter((name) => name.endsWith('.svg')).join(', ')})`);
    }
  } finally {
    if (reportDirectory === null) removeTempDir(resultsDirectory);
  }
  if (failed.length > 0) {
    console.error(`\nfailed: ${failed.join(', ')}`);
    process.exit(1);
  }
}

await main();
