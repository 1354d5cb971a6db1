/**
 * A bench's structured results for the report: written as `<name>.json` into the directory
 * bench/run.ts --report names in FERRY_BENCH_RESULTS, and nowhere otherwise (a bench run by hand
 * prints its tables only). The shapes are bench/report/results.ts's.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CdfPoint } from '../report/results.ts';
import type { LatencyRecorder } from './latency.ts';

export const RESULTS_DIRECTORY_ENV = 'FERRY_BENCH_RESULTS';

/** Percentiles a CDF is drawn through: dense in the tail, where the plot's story is. */
const CDF_PERCENTILES = [0, 1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 97, 98, 99, 99.5, 99.9, 99.99, 100] as const;

export function cdfOf(recorder: LatencyRecorder): CdfPoint[] {
  if (recorder.count === 0) return [];
  return CDF_PERCENTILES.map((percentile) => ({ percentile, ms: recorder.percentileMs(percentile) }));
}

/**
 * Writes the results when bench/run.ts asked for them (it always does: it prints every target of
 * the run at its end, and a report when asked); true when written. `bench` names the file; the
 * report reads wal, broker and follower's shapes and every file's `targets`.
 */
export function writeBenchResults(bench: string, results: object): boolean {
  const directory = process.env[RESULTS_DIRECTORY_ENV];
  if (directory === undefined || directory === '') return false;
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, `${bench}.json`), `${JSON.stringify(results, null, 1)}\n`);
  return true;
}
