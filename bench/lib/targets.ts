/**
 * The performance goals issue 27 sets, each printed beside what this run measured. A bench judges
 * its own targets from its own numbers (one run, side by side, medians over rounds), prints them,
 * and hands them to bench/run.ts (results JSON) so that `npm run bench` ends with every target of
 * the run in one table and the report plots them. Goals live here and in the benches, never in
 * tests: these machines are shared and noisy.
 */
import type { TargetResult } from '../report/results.ts';
import { printTable } from './table.ts';

/** Three significant digits at most, no trailing zeros: 0.8, 0.62, 153, 1,200. */
const shown = (value: number): string => (Number.isFinite(value) ? value.toLocaleString('en-US', { maximumSignificantDigits: 3 }) : String(value));

/**
 * `measured` must reach at least `goal` (a throughput, a ratio): `score` is measured / goal, so 1
 * or more is met.
 */
export function atLeast(bench: string, name: string, measured: number, goal: number, unit: string): TargetResult {
  return { bench, name, goal: `>= ${shown(goal)}${unit}`, measured: `${shown(measured)}${unit}`, score: measured / goal, met: measured >= goal };
}

/** `measured` must stay at or below `goal` (a latency, a growth): `score` is goal / measured, so 1 or more is met. */
export function atMost(bench: string, name: string, measured: number, goal: number, unit: string): TargetResult {
  const score = measured <= 0 ? Number.POSITIVE_INFINITY : goal / measured;
  return { bench, name, goal: `<= ${shown(goal)}${unit}`, measured: `${shown(measured)}${unit}`, score, met: measured <= goal };
}

const TARGET_COLUMNS = [{ title: 'bench', align: 'left' }, { title: 'target', align: 'left' }, { title: 'goal' }, { title: 'measured' }, { title: 'met', align: 'left' }] as const;

/** One table of targets: goal beside measured, and whether this run met it. */
export function printTargets(title: string, targets: readonly TargetResult[]): void {
  if (targets.length === 0) return;
  printTable(
    title,
    TARGET_COLUMNS,
    targets.map((target) => [target.bench, target.name, target.goal, target.measured, target.met ? 'yes' : 'NO']),
  );
}
