// The RSS helpers of the memory benches: the trend of a series (per-minute rows, least-squares
// slope), a sampler's window (the kernel's peak counts only when its reset worked), reading a
// process's RSS from /proc, and a bound's arithmetic.
import { describe, expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { ownRss, processRss, type RssSample, RssSampler, type RssSource } from '../../bench/lib/rss.ts';
import { COLLECTOR_GROWTH, RUNTIME_WARM_BYTES, rssBound, walWriterTerm } from '../../bench/lib/rss-bounds.ts';
import { MS_PER_MINUTE, rssPerWindow, rssSlopeMibPerMinute, slopeStandardError, windowSlopeMibPerMinute } from '../../bench/lib/rss-trend.ts';
import { MIB_BYTES } from '../../bench/lib/units.ts';

const everySecond = (minutes: number, bytesAt: (atMs: number) => number): RssSample[] => Array.from({ length: minutes * 60 }, (_, second) => ({ atMs: second * 1000, bytes: bytesAt(second * 1000) }));

describe('rssSlopeMibPerMinute', () => {
  test('a steady growth is its slope in MiB per minute', () => {
    const samples = everySecond(5, (atMs) => 100 * MIB_BYTES + (3 * MIB_BYTES * atMs) / MS_PER_MINUTE);
    expect(rssSlopeMibPerMinute(samples, 0)).toBeCloseTo(3, 9);
  });

  test("a collector's sawtooth over a flat level mostly averages out", () => {
    // 38 MiB teeth every 20 s over 9 minutes: the part tooth at the end leaves ~0.16 MiB/min.
    const samples = everySecond(10, (atMs) => 200 * MIB_BYTES + ((atMs / 1000) % 20) * 2 * MIB_BYTES);
    expect(Math.abs(rssSlopeMibPerMinute(samples, MS_PER_MINUTE)!)).toBeLessThan(0.25);
  });

  test('only the samples from `fromMs` count; fewer than two give null', () => {
    const samples = everySecond(2, (atMs) => (atMs < MS_PER_MINUTE ? atMs * MIB_BYTES : 500 * MIB_BYTES));
    expect(rssSlopeMibPerMinute(samples, MS_PER_MINUTE)).toBeCloseTo(0, 9);
    expect(rssSlopeMibPerMinute(samples.slice(0, 1), 0)).toBeNull();
    expect(rssSlopeMibPerMinute(samples, 10 * MS_PER_MINUTE)).toBeNull();
  });
});

test('rssPerWindow: min, median and max of each window in order', () => {
  const samples = [
    { atMs: 61_000, bytes: 30 },
    { atMs: 1_000, bytes: 10 },
    { atMs: 2_000, bytes: 14 },
    { atMs: 3_000, bytes: 12 },
    { atMs: 62_000, bytes: 20 },
  ];
  expect(rssPerWindow(samples, MS_PER_MINUTE)).toEqual([
    { index: 0, fromMs: 0, minBytes: 10, medianBytes: 12, maxBytes: 14, samples: 3 },
    { index: 1, fromMs: MS_PER_MINUTE, minBytes: 20, medianBytes: 25, maxBytes: 30, samples: 2 },
  ]);
});

test("a sawtooth whose teeth grow over a flat floor: the floor's slope is 0, the samples' is not", () => {
  // Back to 200 MiB after each collection every 10 s; the garbage piled up before it grows by 10 MiB a minute.
  const samples = everySecond(10, (atMs) => 200 * MIB_BYTES + ((atMs / 1000) % 10) * (20 + atMs / MS_PER_MINUTE) * MIB_BYTES);
  const windows = rssPerWindow(samples, MS_PER_MINUTE);
  expect(windowSlopeMibPerMinute(windows, MS_PER_MINUTE, (window) => window.minBytes).slope).toBeCloseTo(0, 9);
  expect(rssSlopeMibPerMinute(samples, MS_PER_MINUTE)!).toBeGreaterThan(1);
});

test('a leak raises the floor: its slope is the leak', () => {
  const samples = everySecond(10, (atMs) => (200 + (2 * atMs) / MS_PER_MINUTE) * MIB_BYTES + ((atMs / 1000) % 10) * 30 * MIB_BYTES);
  const { slope, standardError } = windowSlopeMibPerMinute(rssPerWindow(samples, MS_PER_MINUTE), MS_PER_MINUTE, (window) => window.minBytes);
  expect(slope!).toBeCloseTo(2, 1);
  expect(standardError!).toBeLessThan(0.1);
});

test("a slope's standard error: 0 on a line, the spread over the x range otherwise", () => {
  expect(slopeStandardError([0, 1, 2, 3].map((x) => ({ x, y: 2 * x + 1 })))).toBeCloseTo(0, 9);
  // Residuals +1, -1, -1, +1 about a flat line: sqrt(4 / 2 / 5).
  expect(slopeStandardError([1, -1, -1, 1].map((y, x) => ({ x, y })))).toBeCloseTo(Math.sqrt(0.4), 9);
  expect(
    slopeStandardError([
      { x: 0, y: 0 },
      { x: 1, y: 1 },
    ]),
  ).toBeNull();
});

describe('RssSampler', () => {
  const source = (readings: number[], kernelPeak: number | null, resets: boolean): RssSource => ({ current: () => readings.shift() ?? null, peak: () => kernelPeak, resetPeak: () => resets });

  test("the peak is the kernel's high-water mark when larger than every sample", () => {
    const window = new RssSampler(source([100, 120], 300, true), 1000).start().stop()!;
    expect(window).toMatchObject({ peakBytes: 300, medianBytes: 110, lastBytes: 120 });
    expect(window.samples.map((sample) => sample.bytes)).toEqual([100, 120]);
  });

  test("a high-water mark that could not be reset is not the window's: the samples' most is", () => {
    expect(new RssSampler(source([100, 120], 300, false), 1000).start().stop()!.peakBytes).toBe(120);
  });

  test('no readable sample: no window', () => {
    expect(new RssSampler(source([], null, false), 1000).start().stop()).toBeNull();
  });
});

test.skipIf(!existsSync('/proc/self/status'))("a process's RSS from /proc agrees with its own reading", () => {
  const fromProc = processRss(process.pid).current()!;
  const own = ownRss().current()!;
  expect(fromProc).toBeGreaterThan(0);
  expect(Math.abs(fromProc - own)).toBeLessThan(64 * MIB_BYTES);
  expect(ownRss().resetPeak()).toBe(true);
  expect(ownRss().peak()!).toBeGreaterThan(0);
});

test('a bound: start + runtime + the collector growth x what is live; without garbage, x 1', () => {
  const terms = [
    { name: 'a', bytes: 10 * MIB_BYTES },
    { name: 'b', bytes: 5 * MIB_BYTES },
  ];
  const bound = rssBound(50 * MIB_BYTES, terms);
  expect(bound.liveBytes).toBe(15 * MIB_BYTES);
  expect(bound.budgetBytes).toBe(50 * MIB_BYTES + RUNTIME_WARM_BYTES + 15 * MIB_BYTES);
  expect(bound.boundBytes).toBe(50 * MIB_BYTES + RUNTIME_WARM_BYTES + COLLECTOR_GROWTH * 15 * MIB_BYTES);
  expect(COLLECTOR_GROWTH === 2 || COLLECTOR_GROWTH === 3).toBe(true);
});

test("the WAL writer's term: buffered bytes, a body per upload in flight, and the pool's free bodies", () => {
  const config = {
    uploadBytes: MIB_BYTES,
    uploadIntervalMs: 5,
    uploadWhenIdle: true,
    maxInFlight: 8,
    maxBufferedBytes: 64 * MIB_BYTES,
    retry: { attempts: 1, baseMs: 1, capMs: 1 },
    multipartPartBytes: 8 * MIB_BYTES,
  };
  // Largest object: min(8, 4 x 1) MiB + a 1 MiB frame = 5 MiB, in the 8 MiB class.
  expect(walWriterTerm(MIB_BYTES, config).bytes).toBe(64 * MIB_BYTES + 8 * 5 * MIB_BYTES + 9 * 2 * 8 * MIB_BYTES);
});
