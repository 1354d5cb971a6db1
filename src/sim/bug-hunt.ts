#!/usr/bin/env bun
// npm run sim:bugs: the simulation's self-test (issue 10 item 6). Each old bug is turned back on
// alone, and seeds run from the first until one reports a violation: the count says how hard the
// simulation had to look. A bug not caught within --max seeds fails the run.
import { CliError, parseCommandArgs, positiveInteger } from '../cli/args.ts';
import { REGRESSIONS, type Regression, reintroduce, resetRegressions } from '../util/regressions.ts';
import { runSeed } from './run.ts';

const USAGE = `npm run sim:bugs -- [options]: turn each of issue 9's bugs back on, one at a time, and
count the seeds the simulation needs to report a violation

options:
  --bug NAME   only this bug; names: ${Object.keys(REGRESSIONS).join(', ')}
  --from K     the first seed (default 1)
  --max N      give up on a bug after N seeds (default 1000): exit 1

prints one line per bug: its name, the finding, the seeds run, the catching seed and the invariant.`;

const SEEDS_MAX_DEFAULT = 1000;

export interface BugHunt {
  readonly bug: Regression;
  readonly seedsRun: number;
  /** The first seed with a violation, and what it violated; null if none within the limit. */
  readonly caughtBy: { readonly seed: number; readonly invariants: readonly string[] } | null;
}

/**
 * Runs seeds from `from` with `bug` on until one reports a violation that the same seed without
 * the bug does not (so a violation of something else, still unfixed, is not taken for the bug's),
 * or `max` seeds.
 */
export async function huntBug(bug: Regression, from: number, max: number): Promise<BugHunt> {
  for (let seed = from; seed < from + max; seed++) {
    const withBug = await runWith(bug, seed);
    if (withBug.length === 0) continue;
    const without = new Set(await runWith(null, seed));
    const caught = withBug.filter((invariant) => !without.has(invariant));
    if (caught.length > 0) return { bug, seedsRun: seed - from + 1, caughtBy: { seed, invariants: caught } };
  }
  return { bug, seedsRun: max, caughtBy: null };
}

/** The invariants a seed violates with `bug` on (none: every switch off). */
async function runWith(bug: Regression | null, seed: number): Promise<string[]> {
  if (bug !== null) reintroduce([bug]);
  try {
    const result = await runSeed({ seed });
    return [...new Set(result.violations.map((violation) => violation.invariant))];
  } finally {
    resetRegressions();
  }
}

async function main(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(args, { bug: { type: 'string' }, from: { type: 'string' }, max: { type: 'string' } }, USAGE);
  if (parsed === null) return 0;
  const only = parsed.values.bug === undefined ? null : String(parsed.values.bug);
  if (only !== null && !(only in REGRESSIONS)) throw new CliError(`--bug must be one of ${Object.keys(REGRESSIONS).join(', ')}, got '${only}'`);
  const from = positiveInteger('from', parsed.values.from as string | undefined, 1);
  const max = positiveInteger('max', parsed.values.max as string | undefined, SEEDS_MAX_DEFAULT);
  const bugs = (only === null ? Object.keys(REGRESSIONS) : [only]) as Regression[];
  let missed = 0;
  for (const bug of bugs) {
    const started = performance.now();
    const hunt = await huntBug(bug, from, max);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const { finding, issue } = REGRESSIONS[bug];
    if (hunt.caughtBy === null) missed++;
    console.log(
      hunt.caughtBy === null
        ? `${bug} (${issue === undefined ? '' : `issue ${issue} `}finding ${finding}): NOT caught in ${hunt.seedsRun} seeds (${seconds} s)`
        : `${bug} (${issue === undefined ? '' : `issue ${issue} `}finding ${finding}): caught after ${hunt.seedsRun} seeds by seed ${hunt.caughtBy.seed}: ${hunt.caughtBy.invariants.join(', ')} (${seconds} s)`,
    );
  }
  return missed === 0 ? 0 : 1;
}

if (import.meta.main) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error instanceof CliError ? error.message : error);
      process.exit(error instanceof CliError ? error.exitCode : 1);
    },
  );
}
