/**
 * What the simulation's checker costs per run (issue 25 item 6): the histories of a few real
 * seeds are produced once, then `check` (index and every invariant) is timed on each with mitata.
 * The checker runs once per seed, so its time is part of every seed's; a quadratic invariant shows
 * here as a seed whose history is large, long before it shows in seeds per second.
 */
import { bench, do_not_optimize, run } from 'mitata';
import { check } from '../src/sim/checker.ts';
import { runSeed } from '../src/sim/run.ts';
import { parseBenchArgs } from './lib/args.ts';

const USAGE = `
bun bench/sim-check.bench.ts [--quick]

Runs the first seeds of the simulation once each (about a second a seed), then times the
checker on each seed's history with mitata. Prints the time per check and the history's ops.
--quick: two seeds.`;

/** Seeds whose histories are checked: a mix of shapes (cluster or not, tiering, security). */
const SEEDS = 6;
const SEEDS_QUICK = 2;

const { quick } = parseBenchArgs(process.argv.slice(2), USAGE);
for (let seed = 1; seed <= (quick ? SEEDS_QUICK : SEEDS); seed++) {
  const { history } = await runSeed({ seed });
  bench(`check seed ${seed} (${history.ops.length} ops)`, () => do_not_optimize(check(history)));
}
await run();
