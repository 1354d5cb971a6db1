/**
 * Prometheus histograms: counts per fixed bucket, a sum and a count, in base units (seconds,
 * bytes). Unlike HDR's quantiles, buckets add up across brokers and over time, so
 * `histogram_quantile(0.99, sum by (le) (rate(x_bucket[5m])))` answers for a whole cluster.
 */
import { assert } from '../util/assert.ts';

/**
 * Latency buckets in seconds, 100 µs to 1 minute. From a local fsync (~100 µs) through an S3
 * Express PUT (~4 ms) to a standard S3 GET of a tier segment and retry backoffs; a longer wait
 * (a Fetch long-poll is at most 30 s by default) falls in +Inf. 19 buckets: 21 lines a series.
 */
export const LATENCY_SECONDS_BUCKETS: readonly number[] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60];

/** Size buckets in bytes: powers of 4 from 256 B to 256 MiB (a WAL object, a tier segment). */
export const SIZE_BYTES_BUCKETS: readonly number[] = Array.from({ length: 11 }, (_, index) => 256 * 4 ** index);

/** More buckets than this make every series a page of text and every observe a longer search. */
export const BUCKETS_MAX = 32;

/** Throws unless the bounds are finite, strictly increasing and at most BUCKETS_MAX. */
export function assertBuckets(bounds: readonly number[]): void {
  assert(bounds.length >= 1 && bounds.length <= BUCKETS_MAX, `a histogram needs 1..${BUCKETS_MAX} buckets, not ${bounds.length}`);
  for (let index = 0; index < bounds.length; index++) {
    assert(Number.isFinite(bounds[index]!), `bucket bound ${bounds[index]} is not finite (+Inf is implicit)`);
    assert(index === 0 || bounds[index]! > bounds[index - 1]!, 'bucket bounds must increase strictly');
  }
}

assertBuckets(LATENCY_SECONDS_BUCKETS);
assertBuckets(SIZE_BYTES_BUCKETS);

/**
 * One histogram series. Invariants: `count` is the sum of the bucket counts; a value lands in
 * the first bucket whose bound is >= it (Prometheus's `le`), or in +Inf. NaN is refused (a bug);
 * negatives land in the first bucket (a clock stepped back must not fail the operation timed).
 */
export class BucketHistogram {
  readonly bounds: readonly number[];
  readonly #bounds: Float64Array;
  /** Per bucket, not cumulative; the last slot is +Inf. */
  readonly #counts: Float64Array;
  #sum = 0;
  #count = 0;

  constructor(bounds: readonly number[] = LATENCY_SECONDS_BUCKETS) {
    assertBuckets(bounds);
    this.bounds = bounds;
    this.#bounds = Float64Array.from(bounds);
    this.#counts = new Float64Array(bounds.length + 1);
  }

  /** Records one value in the histogram's base unit. */
  observe(value: number): void {
    assert(!Number.isNaN(value), 'histogram value is not a number');
    const bounds = this.#bounds;
    // A linear scan: with <= 32 bounds and most values in the first few, it beats a binary search.
    let index = 0;
    while (index < bounds.length && value > bounds[index]!) index++;
    this.#counts[index]! += 1;
    this.#sum += value;
    this.#count++;
  }

  get count(): number {
    return this.#count;
  }

  get sum(): number {
    return this.#sum;
  }

  /** Cumulative counts per bound, then +Inf (equal to `count`): the `_bucket` samples. */
  cumulativeCounts(): number[] {
    const cumulative: number[] = [];
    let running = 0;
    for (const count of this.#counts) {
      running += count;
      cumulative.push(running);
    }
    return cumulative;
  }
}
