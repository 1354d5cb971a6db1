/**
 * Counters, gauges and a sliding-window rate. Values are float64, as Prometheus reads them:
 * integer counts stay exact up to 2^53 (~10 days of bytes counted at 10 GB/s); past that each
 * increment rounds by at most one part in 2^53 of the total, which no dashboard can see.
 */
import { assert } from '../util/assert.ts';
import type { Clock } from '../util/clock.ts';

/** Only goes up (Prometheus counter semantics); a restart is the only reset. */
export class Counter {
  #value = 0;

  add(amount = 1): void {
    // A constant message: a template string here would be built on every call.
    assert(Number.isFinite(amount) && amount >= 0, 'counter increment must be finite and >= 0');
    this.#value += amount;
  }

  get value(): number {
    return this.#value;
  }
}

/** A level that goes up and down: queue depth, lag, bytes buffered. */
export class Gauge {
  #value = 0;

  set(value: number): void {
    assert(!Number.isNaN(value), 'gauge value is not a number');
    this.#value = value;
  }

  add(delta: number): void {
    assert(!Number.isNaN(delta), 'gauge delta is not a number');
    this.#value += delta;
  }

  get value(): number {
    return this.#value;
  }
}

const MS_PER_SECOND = 1000;
/** Rates look back 10 s: long enough to smooth one slow upload, short enough to show a stall. */
export const RATE_WINDOW_MS = 10_000;
/** The window slides in 1 s steps: 10 buckets, two 80-byte arrays per meter. */
export const RATE_BUCKET_MS = 1000;
/** Fewer than 2 buckets would make the window jump empty at every bucket edge. */
const RATE_BUCKETS_MIN = 2;

export interface RateMeterOptions {
  readonly windowMs?: number;
  readonly bucketMs?: number;
}

/**
 * Amount per second over the last `windowMs`, in buckets of `bucketMs` kept in a ring.
 * The newest bucket is partial, so the rate divides by the time the kept buckets actually
 * cover (and never by time before the meter existed), not by the whole window.
 * Time never runs backwards here: a clock stepping back reads as the latest time seen.
 */
export class RateMeter {
  readonly #clock: Clock;
  readonly #bucketMs: number;
  readonly #bucketCount: number;
  /** Amount marked in each slot, and the absolute bucket number (time / bucketMs) it holds. */
  readonly #amounts: Float64Array;
  readonly #bucketNumbers: Float64Array;
  readonly #startMs: number;
  #latestMs: number;
  #total = 0;

  constructor(clock: Clock, options: RateMeterOptions = {}) {
    const windowMs = options.windowMs ?? RATE_WINDOW_MS;
    const bucketMs = options.bucketMs ?? RATE_BUCKET_MS;
    assert(bucketMs > 0 && windowMs % bucketMs === 0, `rate window ${windowMs} ms is not a multiple of ${bucketMs} ms buckets`);
    this.#bucketCount = windowMs / bucketMs;
    assert(this.#bucketCount >= RATE_BUCKETS_MIN, `rate window needs at least ${RATE_BUCKETS_MIN} buckets`);
    this.#clock = clock;
    this.#bucketMs = bucketMs;
    this.#amounts = new Float64Array(this.#bucketCount);
    this.#bucketNumbers = new Float64Array(this.#bucketCount).fill(-1);
    this.#startMs = clock.nowMs();
    this.#latestMs = this.#startMs;
  }

  mark(amount = 1): void {
    assert(Number.isFinite(amount) && amount >= 0, 'rate amount must be finite and >= 0');
    const bucket = Math.floor(this.#nowMs() / this.#bucketMs);
    const slot = bucket % this.#bucketCount;
    if (this.#bucketNumbers[slot] !== bucket) {
      this.#bucketNumbers[slot] = bucket;
      this.#amounts[slot] = 0;
    }
    this.#amounts[slot]! += amount;
    this.#total += amount;
  }

  /** Amount per second over the window; 0 until some time has passed. */
  ratePerSecond(): number {
    const nowMs = this.#nowMs();
    const oldestBucket = Math.floor(nowMs / this.#bucketMs) - this.#bucketCount + 1;
    let amount = 0;
    for (let slot = 0; slot < this.#bucketCount; slot++) {
      if (this.#bucketNumbers[slot]! >= oldestBucket) amount += this.#amounts[slot]!;
    }
    const coveredMs = nowMs - Math.max(this.#startMs, oldestBucket * this.#bucketMs);
    return coveredMs > 0 ? (amount * MS_PER_SECOND) / coveredMs : 0;
  }

  /** Everything marked since the meter was made. */
  get total(): number {
    return this.#total;
  }

  #nowMs(): number {
    this.#latestMs = Math.max(this.#latestMs, this.#clock.nowMs());
    return this.#latestMs;
  }
}
