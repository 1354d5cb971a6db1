import { check, type Violation } from './checker.ts';
import type { FrameStraddleStats } from './frame-straddles.ts';
import type { History } from './history.ts';
import { EVENTS_MAX } from './run-settings.ts';
import type { Scenario } from './scenario.ts';
import type { SimScheduler } from './scheduler.ts';
import type { SequentialWriteStats } from './sequential-writes.ts';
import { traceHash } from './trace-hash.ts';

/** What a run ends with, a broker run (run.ts) or an embedded engine's (embedded-run.ts). */
export interface SimRunResult {
  readonly seed: number;
  readonly scenario: Scenario;
  readonly history: History;
  readonly violations: Violation[];
  /** Identifies the run's whole course: the same seed on the same code gives the same hash. */
  readonly traceHash: string;
  readonly simulatedMs: number;
  readonly faultsInjected: number;
  readonly eventsRun: number;
  /** WAL frames against tier ends (frame-straddles.ts). */
  readonly straddles: FrameStraddleStats;
  /** What the sequential writes did (all zero in a run without them). */
  readonly sequentialWrites: SequentialWriteStats;
}

/** The errors no simulated code caught (each a no-uncaught-errors violation at the end of the run), collected as the run goes. */
export function collectUncaught(scheduler: SimScheduler): string[] {
  const uncaught: string[] = [];
  scheduler.onUncaught = (error) => uncaught.push(error instanceof Error ? (error.stack ?? error.message) : String(error));
  return uncaught;
}

/** The checker's violations of the history, then the run's own: every uncaught error, and a run that hit EVENTS_MAX (a livelock). */
export function runViolations(history: History, uncaught: readonly string[], overBudget: boolean, simulatedMs: number): Violation[] {
  const violations = check(history);
  for (const error of uncaught) violations.push({ invariant: 'no-uncaught-errors', topic: '', partition: -1, offsets: [], message: error.split('\n').slice(0, 6).join('\n') });
  if (overBudget) violations.push({ invariant: 'no-livelock', topic: '', partition: -1, offsets: [], message: `more than ${EVENTS_MAX} events in ${Math.round(simulatedMs / 1000)} simulated s` });
  return violations;
}

/** The run's result, its trace hash computed when asked for (a replay, the replay test): a range run never reads it, and the ops' JSON is 1.5% of a run. */
export function simRunResult(result: Omit<SimRunResult, 'traceHash'>): SimRunResult {
  let hash: string | undefined;
  return {
    seed: result.seed,
    scenario: result.scenario,
    history: result.history,
    violations: result.violations,
    get traceHash(): string {
      hash ??= traceHash(result.history, result.eventsRun);
      return hash;
    },
    simulatedMs: result.simulatedMs,
    faultsInjected: result.faultsInjected,
    eventsRun: result.eventsRun,
    straddles: result.straddles,
    sequentialWrites: result.sequentialWrites,
  };
}
