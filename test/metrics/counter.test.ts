import { describe, expect, test } from 'bun:test';
import { Counter, Gauge, RateMeter } from '../../src/metrics/index.ts';
import { AssertionError } from '../../src/util/assert.ts';
import { type Clock, ManualClock } from '../../src/util/clock.ts';

/** Bucket-aligned (a multiple of 1 s), so bucket edges fall on round offsets from it. */
const T0 = 1_700_000_000_000;

describe('Counter', () => {
  test('adds 1 by default, or any non-negative amount', () => {
    const counter = new Counter();
    counter.add();
    counter.add(2.5);
    counter.add(0);
    expect(counter.value).toBe(3.5);
  });

  test('refuses to go down, NaN and infinity', () => {
    const counter = new Counter();
    for (const amount of [-1, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => counter.add(amount)).toThrow(AssertionError);
    expect(counter.value).toBe(0);
  });
});

describe('Gauge', () => {
  test('set and add, down as well as up', () => {
    const gauge = new Gauge();
    gauge.set(10);
    gauge.add(-15);
    expect(gauge.value).toBe(-5);
    gauge.set(Number.POSITIVE_INFINITY);
    expect(gauge.value).toBe(Number.POSITIVE_INFINITY);
  });

  test('refuses NaN', () => {
    const gauge = new Gauge();
    expect(() => gauge.set(Number.NaN)).toThrow(AssertionError);
    expect(() => gauge.add(Number.NaN)).toThrow(AssertionError);
  });
});

describe('RateMeter', () => {
  test('reads 0 until time has passed, then amount over elapsed time', () => {
    const clock = new ManualClock(T0);
    const meter = new RateMeter(clock);
    meter.mark(50);
    expect(meter.ratePerSecond()).toBe(0);
    clock.advance(500);
    expect(meter.ratePerSecond()).toBe(100);
  });

  test('a steady stream reads its rate; a partial newest bucket is not counted as a whole one', () => {
    const clock = new ManualClock(T0);
    const meter = new RateMeter(clock);
    for (let i = 0; i < 300; i++) {
      meter.mark(10); // 10 every 100 ms: 100/s
      clock.advance(100);
    }
    expect(meter.ratePerSecond()).toBe(100); // buckets 21..29 s full, bucket 30 s just begun
    clock.advance(500);
    expect(meter.ratePerSecond()).toBe((900 * 1000) / 9500); // bucket 30 s half over and empty
    expect(meter.total).toBe(3000);
  });

  test('the window slides: old buckets drop out, idle reads 0', () => {
    const clock = new ManualClock(T0);
    const meter = new RateMeter(clock, { windowMs: 4000, bucketMs: 1000 });
    meter.mark(400); // bucket 0 s
    clock.advance(3000);
    meter.mark(100); // bucket 3 s
    clock.advance(1000);
    expect(meter.ratePerSecond()).toBe(100 / 3); // window 1..4 s: bucket 0 s has dropped out
    clock.advance(4000);
    expect(meter.ratePerSecond()).toBe(0);
    expect(meter.total).toBe(500);
  });

  test('a ring slot reused by a later bucket starts from zero', () => {
    const clock = new ManualClock(T0);
    const meter = new RateMeter(clock, { windowMs: 2000, bucketMs: 1000 });
    meter.mark(7); // bucket 0 s, slot 0
    clock.advance(2000);
    meter.mark(1); // bucket 2 s, slot 0 again
    clock.advance(1000);
    expect(meter.ratePerSecond()).toBe(1); // 1 over bucket 2 s (bucket 3 s just begun), not 8
  });

  test('never divides by time before the meter existed', () => {
    const clock = new ManualClock(T0 + 250);
    const meter = new RateMeter(clock);
    meter.mark(10);
    clock.advance(750);
    expect(meter.ratePerSecond()).toBe(10 / 0.75);
  });

  test('a clock stepping back reads as the latest time seen', () => {
    let nowMs = 0;
    const clock: Clock = { nowMs: () => nowMs, monotonicMs: () => nowMs, setTimer: () => ({ cancel: () => {} }), immediate: () => ({ cancel: () => {} }) };
    const meter = new RateMeter(clock);
    nowMs = 1000;
    meter.mark(1);
    nowMs = 500;
    meter.mark(1); // lands in bucket 1 s, beside the first
    nowMs = 2000;
    expect(meter.ratePerSecond()).toBe(1);
  });

  test('refuses a window that is not a whole number (>= 2) of buckets, and bad amounts', () => {
    const clock = new ManualClock(T0);
    expect(() => new RateMeter(clock, { windowMs: 2500, bucketMs: 1000 })).toThrow(AssertionError);
    expect(() => new RateMeter(clock, { windowMs: 1000, bucketMs: 1000 })).toThrow(AssertionError);
    expect(() => new RateMeter(clock).mark(-1)).toThrow(AssertionError);
  });
});
