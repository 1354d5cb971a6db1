import type { SeededRandom } from '../util/random.ts';

/**
 * How far a process's monotonic clock may run fast or slow on its own: ±200 ppm, a common quartz
 * crystal's tolerance over temperature and age (NTP's frequency correction gives up past 500 ppm).
 * Every broker process draws its rate in this range when it starts.
 */
export const CLOCK_RATE_ERROR_MAX = 200e-6;
/**
 * How far the clock-drift fault drives a clock (faults.ts): up to 2 %, a broken clock source (a
 * virtual machine's unstable TSC), a hundred times the crystal's. The lease logic assumes rate
 * differences well inside its self-fencing margin (a fifth of the lease, src/cluster/lease.ts,
 * shared with acknowledgements on their way out): two clocks 2 % apart in opposite directions use
 * about a fifth of it.
 */
export const CLOCK_DRIFT_FAULT_RATE_ERROR_MAX = 0.02;

/** A rate within `errorMax` of exact, either way. */
export function drawClockRate(random: SeededRandom, errorMax: number): number {
  return 1 + (random.next() * 2 - 1) * errorMax;
}

/**
 * The broker processes' clock rates: each process's own (drawn from the run's clock stream, so no
 * other draw shifts) and the largest error each ran with, which leader-within-lease measures its
 * leases by.
 */
export class ClockRates {
  /** Process name → its largest |rate - 1| so far. */
  readonly errors: Record<string, number> = {};
  readonly #random: SeededRandom;

  constructor(random: SeededRandom) {
    this.#random = random;
  }

  /** A new process's own rate. */
  draw(): number {
    return drawClockRate(this.#random, CLOCK_RATE_ERROR_MAX);
  }

  /** `process` runs at `rate` from now on. */
  note(process: string, rate: number): void {
    this.errors[process] = Math.max(this.errors[process] ?? 0, Math.abs(rate - 1));
  }
}
