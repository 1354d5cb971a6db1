/**
 * Value histograms over hdr-histogram-js's JS build (no WASM memory to manage or free). HDR
 * counts integers, so a layout says how a recorded value becomes an integer (`stepsPerUnit`)
 * and how far the histogram reaches; values outside that reach are clamped and counted, never
 * thrown, because a metric must not fail the operation it measures.
 */
import * as hdr from 'hdr-histogram-js';
import { assert } from '../util/assert.ts';

export type SignificantDigits = 1 | 2 | 3 | 4 | 5;

/** How recorded values map onto HDR's integers, and the range and precision kept. */
export interface HistogramLayout {
  /** The unit values are recorded and reported in ('ms', 'bytes'); documentation only. */
  readonly unit: string;
  /** A value is multiplied by this and rounded before HDR sees it: the resolution is 1/stepsPerUnit. */
  readonly stepsPerUnit: number;
  /** Larger values are recorded as this (in `unit`) and counted in `clampedCount`. */
  readonly valueMax: number;
  /** HDR keeps values apart to within 10^-digits, relative. */
  readonly significantDigits: SignificantDigits;
}

/** A histogram read out as plain numbers, in the layout's unit; all zero while empty. */
export interface HistogramSnapshot {
  readonly count: number;
  readonly min: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
  readonly mean: number;
}

/**
 * 64-bit (Float64Array) counts: Uint32 counts wrap after 2^32 values land in one bucket, about
 * a day at 50k values/s into a narrow latency band. Float64 counts stay exact to 2^53, for twice
 * the memory of 32-bit counts and ~10 ns more per record.
 */
const COUNT_BITS = 64;
/** HDR's smallest distinguishable integer: one step, i.e. the layout's resolution. */
const STEPS_LOWEST = 1;

/** Latencies are kept in whole microseconds: finer than any timer the engine reads. */
export const MICROSECONDS_PER_MS = 1000;
/** 10 minutes: beyond any S3 request timeout plus retries; a longer latency is a stall, counted as clamped. */
export const LATENCY_MS_MAX = 10 * 60 * 1000;
/** 64 GiB: above Kafka's 1 GiB segment default and any object Ferry writes. */
export const SIZE_BYTES_MAX = 2 ** 36;

/**
 * Latencies in ms at 1 µs resolution up to 10 minutes, told apart to 0.1%. Costs ~169 KiB per
 * histogram (HDR's estimatedFootprintInBytes); 2 digits (1%) would cost 25 KiB.
 */
export const LATENCY_MS_LAYOUT: HistogramLayout = {
  unit: 'ms',
  stepsPerUnit: MICROSECONDS_PER_MS,
  valueMax: LATENCY_MS_MAX,
  significantDigits: 3,
};

/** Sizes in bytes up to 64 GiB, told apart to 1% (enough for sizes). Costs ~32 KiB per histogram. */
export const SIZE_BYTES_LAYOUT: HistogramLayout = {
  unit: 'bytes',
  stepsPerUnit: 1,
  valueMax: SIZE_BYTES_MAX,
  significantDigits: 2,
};

function assertLayout(layout: HistogramLayout): number {
  const stepsMax = layout.valueMax * layout.stepsPerUnit;
  assert(layout.stepsPerUnit > 0, `histogram stepsPerUnit ${layout.stepsPerUnit} must be positive`);
  assert(Number.isSafeInteger(stepsMax) && stepsMax >= 2 * STEPS_LOWEST, `histogram range of ${stepsMax} steps is not a safe integer >= 2`);
  return stepsMax;
}

assertLayout(LATENCY_MS_LAYOUT);
assertLayout(SIZE_BYTES_LAYOUT);

/**
 * Values in one unit (bytes by default). Invariants: `count` includes clamped values;
 * min <= every percentile <= max; the whole history since construction or `reset()` is kept.
 */
export class ValueHistogram {
  readonly layout: HistogramLayout;
  readonly #hdr: hdr.Histogram;
  readonly #stepsPerUnit: number;
  readonly #stepsLimit: number;
  // Exact extremes and sum: HDR's own are rounded to bucket edges, and it keeps no sum.
  #stepsMin = Number.POSITIVE_INFINITY;
  #stepsMax = 0;
  #stepsSum = 0;
  #clampedCount = 0;

  constructor(layout: HistogramLayout = SIZE_BYTES_LAYOUT) {
    this.#stepsLimit = assertLayout(layout);
    this.layout = layout;
    this.#stepsPerUnit = layout.stepsPerUnit;
    this.#hdr = hdr.build({
      bitBucketSize: COUNT_BITS,
      autoResize: false,
      lowestDiscernibleValue: STEPS_LOWEST,
      highestTrackableValue: this.#stepsLimit,
      numberOfSignificantValueDigits: layout.significantDigits,
      useWebAssembly: false,
    });
  }

  /** Records one value in the layout's unit; out-of-range values are clamped and counted. */
  record(value: number): void {
    let steps = Math.round(value * this.#stepsPerUnit);
    if (!(steps > 0 && steps <= this.#stepsLimit)) steps = this.#outOfRange(steps, value);
    this.#hdr.recordValue(steps);
    this.#stepsSum += steps;
    if (steps < this.#stepsMin) this.#stepsMin = steps;
    if (steps > this.#stepsMax) this.#stepsMax = steps;
  }

  /** The slow path of `record`: zero (also -0) passes; negatives (a clock stepped back) and overflow clamp. */
  #outOfRange(steps: number, value: number): number {
    assert(!Number.isNaN(steps), `histogram value ${value} is not a number`);
    if (steps === 0) return 0;
    this.#clampedCount++;
    return steps < 0 ? 0 : this.#stepsLimit;
  }

  get count(): number {
    return this.#hdr.totalCount;
  }

  /** Values recorded as 0 or as `layout.valueMax` because they fell outside the range. */
  get clampedCount(): number {
    return this.#clampedCount;
  }

  /** Sum of the recorded values, after rounding to the resolution and clamping. */
  get sum(): number {
    return this.#stepsSum / this.#stepsPerUnit;
  }

  get mean(): number {
    return this.count === 0 ? 0 : this.sum / this.count;
  }

  get min(): number {
    return this.count === 0 ? 0 : this.#stepsMin / this.#stepsPerUnit;
  }

  get max(): number {
    return this.#stepsMax / this.#stepsPerUnit;
  }

  /** Memory HDR holds for the counts, in bytes (its own, conservatively high, estimate). */
  get footprintBytes(): number {
    return this.#hdr.estimatedFootprintInBytes;
  }

  /**
   * The value at `percentile` (0..100, HDR's convention). HDR answers a bucket's upper edge;
   * the answer is kept within the exact min and max so that p999 never exceeds max.
   */
  percentile(percentile: number): number {
    assert(percentile >= 0 && percentile <= 100, `percentile ${percentile} is outside 0..100`);
    if (this.count === 0) return 0;
    const steps = this.#hdr.getValueAtPercentile(percentile);
    return Math.min(Math.max(steps, this.#stepsMin), this.#stepsMax) / this.#stepsPerUnit;
  }

  snapshot(): HistogramSnapshot {
    return {
      count: this.count,
      min: this.min,
      p50: this.percentile(50),
      p90: this.percentile(90),
      p99: this.percentile(99),
      p999: this.percentile(99.9),
      max: this.max,
      mean: this.mean,
    };
  }

  /** Forgets every value, including the clamped count. */
  reset(): void {
    this.#hdr.reset();
    this.#stepsMin = Number.POSITIVE_INFINITY;
    this.#stepsMax = 0;
    this.#stepsSum = 0;
    this.#clampedCount = 0;
  }
}

/** Latencies: `record(ms)` with fractional milliseconds, kept to the microsecond. */
export class LatencyHistogram extends ValueHistogram {
  constructor(layout: HistogramLayout = LATENCY_MS_LAYOUT) {
    super(layout);
  }
}
