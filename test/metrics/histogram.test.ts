import { describe, expect, test } from 'bun:test';
import { LATENCY_MS_LAYOUT, LATENCY_MS_MAX, LatencyHistogram, SIZE_BYTES_LAYOUT, SIZE_BYTES_MAX, ValueHistogram } from '../../src/metrics/index.ts';
import { AssertionError } from '../../src/util/assert.ts';

/** Memory budgets the layouts' comments promise (HDR's own footprint estimate). */
const LATENCY_FOOTPRINT_BYTES_MAX = 176 * 1024;
const SIZE_FOOTPRINT_BYTES_MAX = 36 * 1024;

/** HDR keeps values apart to within 10^-digits, relative. */
function expectWithinPrecision(actual: number, expected: number, significantDigits: number): void {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(expected * 10 ** -significantDigits);
}

function recordUniform(histogram: ValueHistogram, last: number): void {
  for (let value = 1; value <= last; value++) histogram.record(value);
}

describe('percentiles of known distributions', () => {
  for (const [name, make] of [
    ['latency (ms, 3 digits)', () => new LatencyHistogram()],
    ['size (bytes, 2 digits)', () => new ValueHistogram(SIZE_BYTES_LAYOUT)],
  ] as const) {
    test(`uniform 1..10000, ${name}`, () => {
      const histogram = make();
      recordUniform(histogram, 10_000);
      const digits = histogram.layout.significantDigits;
      expect(histogram.count).toBe(10_000);
      expect(histogram.min).toBe(1);
      expect(histogram.max).toBe(10_000);
      expect(histogram.mean).toBe(5000.5);
      expectWithinPrecision(histogram.percentile(50), 5000, digits);
      expectWithinPrecision(histogram.percentile(90), 9000, digits);
      expectWithinPrecision(histogram.percentile(99), 9900, digits);
      expectWithinPrecision(histogram.percentile(99.9), 9990, digits);
      expect(histogram.percentile(0)).toBe(1);
      expect(histogram.percentile(100)).toBe(10_000);
    });
  }

  test('a two-point tail: 99% at 1 ms, 1% at 100 ms', () => {
    const histogram = new LatencyHistogram();
    for (let i = 0; i < 990; i++) histogram.record(1);
    for (let i = 0; i < 10; i++) histogram.record(100);
    expect(histogram.snapshot()).toEqual({ count: 1000, min: 1, p50: 1, p90: 1, p99: 1, p999: 100, max: 100, mean: 1.99 });
  });

  test('fractional milliseconds are kept to the microsecond', () => {
    const histogram = new LatencyHistogram();
    histogram.record(0.25);
    histogram.record(0.75);
    histogram.record(0.0004); // rounds to 0 µs: not clamped
    expect(histogram.sum).toBe(1);
    expect(histogram.min).toBe(0);
    expect(histogram.max).toBe(0.75);
    expect(histogram.clampedCount).toBe(0);
  });

  test('percentiles never leave [min, max], though HDR answers bucket edges', () => {
    const histogram = new ValueHistogram(SIZE_BYTES_LAYOUT);
    histogram.record(1_000_001);
    expect(histogram.percentile(0)).toBe(1_000_001);
    expect(histogram.percentile(50)).toBe(1_000_001);
    expect(histogram.percentile(100)).toBe(1_000_001);
  });

  test('percentile outside 0..100 is a bug', () => {
    const histogram = new LatencyHistogram();
    expect(() => histogram.percentile(101)).toThrow(AssertionError);
    expect(() => histogram.percentile(-1)).toThrow(AssertionError);
  });
});

describe('clamping', () => {
  test('values above the range are recorded as its top and counted', () => {
    const histogram = new LatencyHistogram();
    histogram.record(LATENCY_MS_MAX); // the top itself fits
    histogram.record(LATENCY_MS_MAX * 2);
    histogram.record(Number.POSITIVE_INFINITY);
    expect(histogram.clampedCount).toBe(2);
    expect(histogram.count).toBe(3);
    expect(histogram.max).toBe(LATENCY_MS_MAX);
    expect(histogram.percentile(100)).toBe(LATENCY_MS_MAX);
    expect(histogram.sum).toBe(3 * LATENCY_MS_MAX);
  });

  test('negative values (a clock stepped back) are recorded as 0 and counted', () => {
    const histogram = new LatencyHistogram();
    histogram.record(-3);
    histogram.record(5);
    expect(histogram.clampedCount).toBe(1);
    expect(histogram.snapshot()).toMatchObject({ count: 2, min: 0, max: 5, mean: 2.5 });
  });

  test('sizes clamp at their own top', () => {
    const histogram = new ValueHistogram(SIZE_BYTES_LAYOUT);
    histogram.record(SIZE_BYTES_MAX + 1);
    expect(histogram.max).toBe(SIZE_BYTES_MAX);
    expect(histogram.clampedCount).toBe(1);
  });

  test('NaN is a bug, not a value', () => {
    const histogram = new LatencyHistogram();
    expect(() => histogram.record(Number.NaN)).toThrow(AssertionError);
    expect(histogram.count).toBe(0);
  });
});

describe('reset and snapshot', () => {
  test('an empty histogram reads as zeros', () => {
    expect(new LatencyHistogram().snapshot()).toEqual({ count: 0, min: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0, mean: 0 });
  });

  test('reset forgets values, extremes and the clamped count', () => {
    const histogram = new LatencyHistogram();
    recordUniform(histogram, 100);
    histogram.record(-1);
    histogram.reset();
    expect(histogram.snapshot()).toEqual(new LatencyHistogram().snapshot());
    expect(histogram.clampedCount).toBe(0);
    expect(histogram.sum).toBe(0);
    histogram.record(7);
    expect(histogram.snapshot()).toEqual({ count: 1, min: 7, p50: 7, p90: 7, p99: 7, p999: 7, max: 7, mean: 7 });
  });

  test('snapshot is plain data', () => {
    const histogram = new LatencyHistogram();
    histogram.record(3);
    const snapshot = histogram.snapshot();
    histogram.record(9);
    expect(snapshot.max).toBe(3);
    expect(JSON.parse(JSON.stringify(snapshot))).toEqual(snapshot);
  });
});

describe('layouts', () => {
  test('memory per histogram stays within what the layout comments promise', () => {
    expect(new LatencyHistogram().footprintBytes).toBeLessThanOrEqual(LATENCY_FOOTPRINT_BYTES_MAX);
    expect(new ValueHistogram(SIZE_BYTES_LAYOUT).footprintBytes).toBeLessThanOrEqual(SIZE_FOOTPRINT_BYTES_MAX);
  });

  test('LatencyHistogram defaults to the ms layout, ValueHistogram to bytes', () => {
    expect(new LatencyHistogram().layout).toBe(LATENCY_MS_LAYOUT);
    expect(new ValueHistogram().layout).toBe(SIZE_BYTES_LAYOUT);
  });

  test('a layout whose range is not a safe integer is refused', () => {
    expect(() => new ValueHistogram({ unit: 'x', stepsPerUnit: 1, valueMax: 2 ** 60, significantDigits: 2 })).toThrow(AssertionError);
    expect(() => new ValueHistogram({ unit: 'x', stepsPerUnit: 0, valueMax: 10, significantDigits: 2 })).toThrow(AssertionError);
  });
});
