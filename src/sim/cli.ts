#!/usr/bin/env bun
// npm run sim -- --seeds N: the deterministic simulation (src/sim/README.md).
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliError, parseCommandArgs, positiveInteger } from '../cli/args.ts';
import { REGRESSIONS, type Regression, reintroduce } from '../util/regressions.ts';
import { formatViolation } from './checker.ts';
import { FAULT_KINDS } from './faults.ts';
import { EMBEDDED_FAULT_KINDS, POWER_LOSS_AFTER_GC } from './embedded-faults.ts';
import { describeScenario } from './scenario.ts';
import type { SimRunResult } from './run-result.ts';
import { runSeed } from './run.ts';
import type { FrameStraddleStats } from './frame-straddles.ts';
import { describeSequentialWriteStats, NO_SEQUENTIAL_WRITES, type SequentialWriteStats, sumSequentialWrites } from './sequential-writes.ts';

/** Runs of at least this many seeds are appended to runs.md, so seed counts accumulate across runs. */
const RECORD_SEEDS_MIN = 100;

/** Every fault kind a run may draw: a broker run's, an embedded run's (the same name where the fault is the same), and the power loss after WAL GC. */
const FAULT_NAMES = [...new Set([...FAULT_KINDS, ...EMBEDDED_FAULT_KINDS].map((kind) => kind.name)), POWER_LOSS_AFTER_GC];

const USAGE = `npm run sim -- [options]: run the deterministic simulation on a range of seeds

Each seed draws a cluster (1 to 5 brokers), clients and faults, or (in some seeds) a stand-alone
embedded engine with a WAL store and the application calling it, runs the real code on a simulated
clock, disk, network and object store, and checks the history (src/sim/README.md).

options:
  --seeds N        how many seeds (default 20)
  --from K         the first seed (default 1): seeds K .. K+N-1
  --seed S         replay one seed, printing its scenario, faults and any violation's trace
  --bug NAME       turn an old bug back on (the simulation's self-test); names: ${Object.keys(REGRESSIONS).join(', ')}
  --faults A,B     only these fault kinds; kinds: ${FAULT_NAMES.join(', ')}
  --jobs N         run the range in N processes at once (default 1; the machine's cores at most)
  --until-violation  stop at the first seed with a violation
  --verbose        print the brokers' log lines (with --seed)
  --no-record      do not append this run to src/sim/runs.md (runs of ${RECORD_SEEDS_MIN}+ seeds are recorded)
  --hashes FILE    write each seed's trace hash to FILE, a "seed hash" line each, by seed: two trees
                   whose files are equal ran every seed alike (a refactoring that changes no behaviour)

exit status: 0 no violation, 1 a violation, 2 bad usage.`;

const PROGRESS_INTERVAL_MS = 10_000;
/** Seeds a worker holds at once, the one it runs included: it starts the next without waiting for the parent, and the range's last seeds still go to whichever worker is free. */
const WORKER_SEEDS_HELD = 2;
const RUN_LOG = join(import.meta.dir, 'runs.md');
const RUN_LOG_HEADER =
  '# Simulation runs\n\nAppended by `npm run sim` for runs of 100 or more seeds: the range, the commit, the result.\n\n| date (UTC) | seeds | commit | bug switch | seeds/s | simulated h | faults | result |\n|---|---|---|---|---|---|---|---|\n';

async function main(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    args,
    {
      seeds: { type: 'string' },
      from: { type: 'string' },
      seed: { type: 'string' },
      bug: { type: 'string' },
      faults: { type: 'string' },
      'until-violation': { type: 'boolean' },
      verbose: { type: 'boolean' },
      'no-record': { type: 'boolean' },
      jobs: { type: 'string' },
      worker: { type: 'boolean' },
      hashes: { type: 'string' },
    },
    USAGE,
  );
  if (parsed === null) return 0;
  const { values } = parsed;
  const bug = values.bug === undefined ? null : (String(values.bug) as Regression);
  if (bug !== null && !(bug in REGRESSIONS)) throw new CliError(`--bug must be one of ${Object.keys(REGRESSIONS).join(', ')}, got '${bug}'`);
  if (bug !== null) reintroduce([bug]);
  const faults = values.faults === undefined ? undefined : new Set(String(values.faults).split(','));
  for (const name of faults ?? []) if (!FAULT_NAMES.includes(name)) throw new CliError(`--faults: unknown kind '${name}'; kinds: ${FAULT_NAMES.join(', ')}`);
  if (values.seed !== undefined) return replay(nonNegativeInteger('seed', values.seed), faults, values.verbose === true);
  const from = values.from === undefined ? 1 : nonNegativeInteger('from', values.from);
  const count = positiveInteger('seeds', values.seeds as string | undefined, 20);
  if (values.worker === true) {
    for await (const seed of seedsFromStdin()) for await (const outcome of localSeeds(seed, 1, faults)) console.log(JSON.stringify(outcome));
    return 0;
  }
  const jobs = Math.min(positiveInteger('jobs', values.jobs as string | undefined, 1), count, navigator.hardwareConcurrency);
  const workerArgs = [...(bug === null ? [] : ['--bug', bug]), ...(faults === undefined ? [] : ['--faults', [...faults].join(',')])];
  const revision = sourceRevision(); // as the run starts: a commit made meanwhile is not what ran
  const hashes = new Map<number, string>();
  const seeds = noteHashes(jobs === 1 ? localSeeds(from, count, faults) : workerSeeds(from, count, jobs, workerArgs), hashes);
  const summary = await runRange(seeds, count, values['until-violation'] === true);
  if (values.hashes !== undefined) writeHashes(String(values.hashes), hashes);
  console.log(summarize(summary));
  for (const outcome of summary.failed) for (const violation of outcome.violations) console.log(`\n${violation}`);
  if (summary.failed.length > 0) console.log(`\nreplay one: npm run sim -- --seed ${summary.failed[0]!.seed}${bug === null ? '' : ` --bug ${bug}`}`);
  if (count >= RECORD_SEEDS_MIN && values['no-record'] !== true) record(from, summary, bug, revision);
  return summary.failed.length === 0 ? 0 : 1;
}

function nonNegativeInteger(name: string, text: unknown): number {
  const value = Number(text);
  if (typeof text !== 'string' || !Number.isSafeInteger(value) || value < 0) throw new CliError(`--${name} must be a non-negative integer, got '${String(text)}'`);
  return value;
}

/** What a range run keeps of each seed: enough to count and to print its violations. */
interface SeedOutcome {
  readonly seed: number;
  readonly simulatedMs: number;
  readonly faults: number;
  /** Each violation as formatViolation prints it (seed, invariant, offsets, trace). */
  readonly violations: string[];
  readonly straddles: FrameStraddleStats;
  readonly sequentialWrites: SequentialWriteStats;
  /** The run's trace hash (RunResult.traceHash); CRASHED_TRACE for a worker that died. */
  readonly traceHash: string;
}

const CRASHED_TRACE = 'crashed';

/** Passes `seeds` on, keeping each one's trace hash. */
async function* noteHashes(seeds: AsyncGenerator<SeedOutcome>, hashes: Map<number, string>): AsyncGenerator<SeedOutcome> {
  for await (const outcome of seeds) {
    hashes.set(outcome.seed, outcome.traceHash);
    yield outcome;
  }
}

function writeHashes(path: string, hashes: ReadonlyMap<number, string>): void {
  const lines = [...hashes].sort(([a], [b]) => a - b).map(([seed, hash]) => `${seed} ${hash}\n`);
  writeFileSync(path, lines.join(''));
}

interface RangeSummary {
  readonly seedsRun: number;
  readonly wallMs: number;
  readonly simulatedMs: number;
  readonly faults: number;
  readonly failed: SeedOutcome[];
  /** Summed over the seeds run. */
  readonly straddles: FrameStraddleStats;
  readonly sequentialWrites: SequentialWriteStats;
  /** Seeds whose WAL store offered sequential writes (one opened at least). */
  readonly sequentialSeeds: number;
}

async function* localSeeds(from: number, count: number, faults: ReadonlySet<string> | undefined): AsyncGenerator<SeedOutcome> {
  for (let seed = from; seed < from + count; seed++) {
    const result = await runSeed({ seed, ...(faults === undefined ? {} : { faults }) });
    yield {
      seed,
      simulatedMs: result.simulatedMs,
      faults: result.faultsInjected,
      violations: result.violations.map((violation) => formatViolation(violation, result.history)),
      straddles: result.straddles,
      sequentialWrites: result.sequentialWrites,
      traceHash: result.traceHash,
    };
  }
}

/**
 * Seeds a worker is handed, one per line on its standard input, until it closes: seeds differ
 * tenfold in cost, so a range split in fixed parts left one core idle while the other finished.
 */
async function* seedsFromStdin(): AsyncGenerator<number> {
  let pending = '';
  for await (const chunk of Bun.stdin.stream()) {
    pending += new TextDecoder().decode(chunk);
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) if (line.trim() !== '') yield nonNegativeInteger('seed', line.trim());
  }
}

/**
 * Seeds handed to each of `jobs` worker processes (`--worker`) as it finishes one, ahead by
 * WORKER_SEEDS_HELD, so no worker waits on the parent between seeds; each prints a JSON line per seed.
 */
async function* workerSeeds(from: number, count: number, jobs: number, args: readonly string[]): AsyncGenerator<SeedOutcome> {
  const outcomes: SeedOutcome[] = [];
  let wake: (() => void) | null = null;
  let running = jobs;
  let next = from;
  const end = from + count;
  const ended = new Set<Bun.Subprocess<'pipe', 'pipe', 'inherit'>>();
  /** Per worker, the seeds handed to it and not yet answered, oldest first (a worker runs them in order). */
  const held = new Map<Bun.Subprocess<'pipe', 'pipe', 'inherit'>, number[]>();
  const handOne = (child: Bun.Subprocess<'pipe', 'pipe', 'inherit'>): void => {
    if (ended.has(child)) return;
    if (next < end) {
      held.get(child)!.push(next);
      child.stdin.write(`${next++}\n`);
      child.stdin.flush();
      return;
    }
    ended.add(child);
    child.stdin.end(); // no seed left: the worker exits once it finished what it holds
  };
  const children = Array.from({ length: jobs }, () => {
    const child = Bun.spawn([process.execPath, import.meta.path, '--worker', ...args], { stdin: 'pipe', stdout: 'pipe', stderr: 'inherit' });
    held.set(child, []);
    for (let i = 0; i < WORKER_SEEDS_HELD; i++) handOne(child);
    void (async () => {
      let pending = '';
      for await (const chunk of child.stdout) {
        pending += new TextDecoder().decode(chunk);
        const lines = pending.split('\n');
        pending = lines.pop()!;
        for (const line of lines) {
          if (!line.startsWith('{')) continue;
          outcomes.push(JSON.parse(line) as SeedOutcome);
          held.get(child)!.shift();
          handOne(child);
        }
        wake?.();
      }
      const code = await child.exited;
      if (code !== 0 || held.get(child)!.length > 0) {
        console.error(`a worker exited with ${code}${code === 0 ? ' before answering every seed it held' : ''}`);
        // The seeds it held never finished: each counts as a failed seed (its error is above), never as a clean one.
        for (const seed of held.get(child)!) outcomes.push(crashedOutcome(seed, code));
      }
      running--;
      wake?.();
    })();
    return child;
  });
  try {
    for (;;) {
      while (outcomes.length > 0) yield outcomes.shift()!;
      if (running === 0) return;
      await new Promise<void>((resolve) => void (wake = resolve));
      wake = null;
    }
  } finally {
    for (const child of children) child.kill();
  }
}

/** A seed whose worker process died running it (an uncaught error in the harness or a broker's process). */
function crashedOutcome(seed: number, code: number): SeedOutcome {
  const straddles = { walObjects: 0, multiBatchFrames: 0, tierEndMoves: 0, tierEndsInsideFrames: 0 };
  return {
    seed,
    simulatedMs: 0,
    faults: 0,
    straddles,
    sequentialWrites: NO_SEQUENTIAL_WRITES,
    traceHash: CRASHED_TRACE,
    violations: [`seed ${seed}: no-crash violated: the worker running it exited with ${code} (its error is printed above); replay: --seed ${seed}`],
  };
}

async function runRange(seeds: AsyncGenerator<SeedOutcome>, count: number, untilViolation: boolean): Promise<RangeSummary> {
  const started = performance.now();
  let lastProgress = started;
  let simulatedMs = 0;
  let faultCount = 0;
  let seedsRun = 0;
  const failed: SeedOutcome[] = [];
  let straddles: FrameStraddleStats = { walObjects: 0, multiBatchFrames: 0, tierEndMoves: 0, tierEndsInsideFrames: 0 };
  let sequentialWrites = NO_SEQUENTIAL_WRITES;
  let sequentialSeeds = 0;
  for await (const outcome of seeds) {
    seedsRun++;
    straddles = sumStats(straddles, outcome.straddles);
    sequentialWrites = sumSequentialWrites(sequentialWrites, outcome.sequentialWrites);
    if (outcome.sequentialWrites.opened > 0) sequentialSeeds++;
    simulatedMs += outcome.simulatedMs;
    faultCount += outcome.faults;
    if (outcome.violations.length > 0) {
      failed.push(outcome);
      // Said at once: a long run's violations can be replayed (and fixed) while it goes on.
      for (const violation of outcome.violations) console.log(`  ${violation.split('\n', 1)[0]}`);
    }
    if (performance.now() - lastProgress > PROGRESS_INTERVAL_MS) {
      lastProgress = performance.now();
      console.log(
        `${seedsRun}/${count} seeds, ${rate(seedsRun, lastProgress - started)} seeds/s, ${(simulatedMs / 3_600_000).toFixed(2)} simulated h, ${faultCount} faults, ${failed.length} with violations`,
      );
    }
    if (untilViolation && failed.length > 0) break;
  }
  failed.sort((a, b) => a.seed - b.seed);
  return { seedsRun, wallMs: performance.now() - started, simulatedMs, faults: faultCount, failed, straddles, sequentialWrites, sequentialSeeds };
}

function sumStats(a: FrameStraddleStats, b: FrameStraddleStats): FrameStraddleStats {
  return {
    walObjects: a.walObjects + b.walObjects,
    multiBatchFrames: a.multiBatchFrames + b.multiBatchFrames,
    tierEndMoves: a.tierEndMoves + b.tierEndMoves,
    tierEndsInsideFrames: a.tierEndsInsideFrames + b.tierEndsInsideFrames,
  };
}

/** WAL frames against tier ends: how often a tier end fell inside a frame (issue 25, item 2). */
function describeStraddles(stats: FrameStraddleStats): string {
  return `${stats.walObjects} WAL objects, ${stats.multiBatchFrames} frames of several batches; ${stats.tierEndMoves} tier end moves, ${stats.tierEndsInsideFrames} inside a WAL frame`;
}

function rate(seeds: number, wallMs: number): string {
  return (seeds / (wallMs / 1000)).toFixed(2);
}

function summarize(summary: RangeSummary): string {
  const perSeed = summary.seedsRun === 0 ? 0 : summary.simulatedMs / summary.seedsRun / 1000;
  return `${summary.seedsRun} seeds in ${(summary.wallMs / 1000).toFixed(1)} s: ${rate(summary.seedsRun, summary.wallMs)} seeds/s, ${(summary.simulatedMs / 3_600_000).toFixed(2)} simulated h (${perSeed.toFixed(0)} s per seed), ${summary.faults} faults injected; ${summary.failed.length === 0 ? 'no violation' : `violations in seeds ${summary.failed.map((r) => r.seed).join(', ')}`}\n${describeStraddles(summary.straddles)}\n${describeSequentialWriteStats(summary.sequentialWrites)} (in ${summary.sequentialSeeds} seeds)`;
}

async function replay(seed: number, faults: ReadonlySet<string> | undefined, verbose: boolean): Promise<number> {
  const result = await runSeed({ seed, ...(faults === undefined ? {} : { faults }), ...(verbose ? { log: (line: string) => console.log(line) } : {}) });
  console.log(`seed ${seed}: ${describeScenario(result.scenario)}`);
  for (const fault of result.history.faults) console.log(`  ${(fault.atMs / 1000).toFixed(3)} s  ${fault.fault} ${fault.target}`);
  console.log(describeOps(result.history.ops));
  console.log(describeProduceRequests(result.history.ops));
  console.log(`${result.history.ops.length} requests, ${result.faultsInjected} faults, ${(result.simulatedMs / 1000).toFixed(1)} simulated s, ${result.eventsRun} events; trace ${result.traceHash}`);
  console.log(describeStraddles(result.straddles));
  console.log(describeSequentialWriteStats(result.sequentialWrites));
  for (const violation of result.violations) console.log(`\n${formatViolation(violation, result.history)}`);
  console.log(result.violations.length === 0 ? 'no violation' : `${result.violations.length} violations`);
  return result.violations.length === 0 ? 0 : 1;
}

/** Requests by kind: how many, how many succeeded, and the records they carried. */
function describeOps(ops: SimRunResult['history']['ops']): string {
  const kinds = new Map<string, { count: number; ok: number; records: number }>();
  for (const op of ops) {
    const entry = kinds.get(op.kind) ?? { count: 0, ok: 0, records: 0 };
    entry.count++;
    if (op.outcome.ok) {
      entry.ok++;
      if (op.kind === 'produce') entry.records += op.values.length;
      if (op.kind === 'fetch') entry.records += op.records.length;
    }
    kinds.set(op.kind, entry);
  }
  return [...kinds].map(([kind, { count, ok, records }]) => `${kind} ${ok}/${count} ok${records > 0 ? ` (${records} records)` : ''}`).join(', ');
}

/**
 * Produce requests (a batch's op shares its request's client, start and end): how many, and how
 * many carried several partitions. Two requests of one client that start and end at the same
 * instants count as one: a rough count, for a look at a seed.
 */
function describeProduceRequests(ops: SimRunResult['history']['ops']): string {
  const batches = new Map<string, number>();
  for (const op of ops) if (op.kind === 'produce') batches.set(`${op.client}\u0000${op.startMs}\u0000${op.endMs}`, (batches.get(`${op.client}\u0000${op.startMs}\u0000${op.endMs}`) ?? 0) + 1);
  const shared = [...batches.values()].filter((count) => count > 1);
  return `${batches.size} produce requests, ${shared.length} of several partitions (${shared.reduce((sum, count) => sum + count, 0)} batches)`;
}

/** The commit the code under test is at, marked `+dirty` when the working tree differs from it. */
function sourceRevision(): string {
  const commit =
    Bun.spawnSync(['git', 'rev-parse', '--short', 'HEAD'], { cwd: import.meta.dir })
      .stdout.toString()
      .trim() || 'unknown';
  // The log's own rows are not the code under test.
  const dirty =
    Bun.spawnSync(['git', 'status', '--porcelain', '--', '.', ':(exclude)src/sim/runs.md'], { cwd: join(import.meta.dir, '../..') })
      .stdout.toString()
      .trim() !== '';
  return `${commit}${dirty ? '+dirty' : ''}`;
}

function record(from: number, summary: RangeSummary, bug: Regression | null, revision: string): void {
  if (!existsSync(RUN_LOG)) writeFileSync(RUN_LOG, RUN_LOG_HEADER);
  const result = summary.failed.length === 0 ? 'no violation' : `violations: seeds ${summary.failed.map((r) => r.seed).join(', ')}`;
  const row = [
    new Date().toISOString().slice(0, 16).replace('T', ' '),
    `${from}..${from + summary.seedsRun - 1}`,
    revision,
    bug ?? '',
    rate(summary.seedsRun, summary.wallMs),
    (summary.simulatedMs / 3_600_000).toFixed(2),
    String(summary.faults),
    result,
  ];
  appendFileSync(RUN_LOG, `| ${row.join(' | ')} |\n`);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof CliError) {
      console.error(error.message);
      process.exit(error.exitCode);
    }
    console.error(error);
    process.exit(1);
  },
);
