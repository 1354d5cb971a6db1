import type { ManualClock } from '../../src/util/clock.ts';

/** Turns of the event loop `settle` takes by default: enough for a few chained awaits and I/O callbacks. */
const SETTLE_TURNS_DEFAULT = 5;
/** Turns `settleUntil` takes at most before failing: a bound, so a wait that never ends fails the test. */
const SETTLE_UNTIL_TURNS_MAX = 10_000;

/**
 * Lets pending promise continuations and I/O callbacks run, without waiting on wall-clock time:
 * with a ManualClock, nothing timed can happen meanwhile, so a test can assert what has not.
 */
export async function settle(turns = SETTLE_TURNS_DEFAULT): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Turns the event loop until `condition` holds; throws after a bounded number of turns. */
export async function settleUntil(condition: () => boolean, what: string, turnsMax = SETTLE_UNTIL_TURNS_MAX): Promise<void> {
  for (let turn = 0; !condition(); turn++) {
    if (turn === turnsMax) throw new Error(`${what}: not so after ${turnsMax} turns of the event loop`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * Moves `clock` on `stepMs` at a time, settling after each step, until `condition` holds; throws
 * after `deltaMsMax` of simulated time. For waits on timers: store latency, retries, intervals.
 */
export async function advanceUntil(clock: ManualClock, condition: () => boolean, what: string, stepMs = 1, deltaMsMax = 60_000): Promise<void> {
  for (let elapsedMs = 0; !condition(); elapsedMs += stepMs) {
    if (elapsedMs >= deltaMsMax) throw new Error(`${what}: not so after ${deltaMsMax} ms of simulated time`);
    clock.advance(stepMs);
    await settle();
  }
}

/** Moves `clock` on until `promise` settles, and returns what it gives: `advanceUntil` for one call. */
export async function advanceThrough<T>(clock: ManualClock, promise: Promise<T>, what: string, stepMs = 1, deltaMsMax = 60_000): Promise<T> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await advanceUntil(clock, () => settled, what, stepMs, deltaMsMax);
  return promise;
}

/** Lets `ms` of time pass on `clock`, `stepMs` at a time, settling after each step: timers and the store writes they start (lease renewals) complete in between. */
export async function passTime(clock: ManualClock, ms: number, stepMs = 50): Promise<void> {
  for (let step = 0; step < ms; step += stepMs) {
    clock.advance(Math.min(stepMs, ms - step));
    await settle();
  }
}
