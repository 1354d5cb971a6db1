import { expect, test } from 'bun:test';
import { BUCKETS_MAX, BucketHistogram, LATENCY_SECONDS_BUCKETS, SIZE_BYTES_BUCKETS } from '../../src/metrics/index.ts';

test('a value lands in the first bucket whose bound is >= it, as le says; above every bound, in +Inf', () => {
  const histogram = new BucketHistogram([1, 2, 4]);
  for (const value of [0, 1, 1.5, 2, 3, 4, 4.0001, 100]) histogram.observe(value);
  expect(histogram.cumulativeCounts()).toEqual([2, 4, 6, 8]);
  expect(histogram.count).toBe(8);
  expect(histogram.sum).toBeCloseTo(115.5001, 6);
});

test('a negative value (a clock stepped back) counts in the first bucket, not as an error', () => {
  const histogram = new BucketHistogram([1, 2]);
  histogram.observe(-5);
  expect(histogram.cumulativeCounts()).toEqual([1, 1, 1]);
});

test('NaN is a bug and throws', () => {
  expect(() => new BucketHistogram([1]).observe(Number.NaN)).toThrow();
});

test('bounds must be finite, strictly increasing and at most BUCKETS_MAX', () => {
  expect(() => new BucketHistogram([])).toThrow();
  expect(() => new BucketHistogram([1, 1])).toThrow();
  expect(() => new BucketHistogram([2, 1])).toThrow();
  expect(() => new BucketHistogram([1, Number.POSITIVE_INFINITY])).toThrow();
  expect(() => new BucketHistogram(Array.from({ length: BUCKETS_MAX + 1 }, (_, index) => index))).toThrow();
});

test('the default buckets reach from a local fsync to a minute, and from 256 B to 256 MiB', () => {
  expect(LATENCY_SECONDS_BUCKETS[0]).toBe(0.0001);
  expect(LATENCY_SECONDS_BUCKETS.at(-1)).toBe(60);
  expect(SIZE_BYTES_BUCKETS[0]).toBe(256);
  expect(SIZE_BYTES_BUCKETS.at(-1)).toBe(256 * 2 ** 20);
});
