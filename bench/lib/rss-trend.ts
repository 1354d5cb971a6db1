/**
 * Whether a long run's RSS stays flat: its samples cut into windows (min, median, max of each) and
 * least-squares slopes in MiB per minute. Under a steady load a collected runtime's RSS is a
 * sawtooth: garbage piles up between collections and RSS falls back to the live bytes after each.
 * A leak is memory that stays live, so it raises the floor, each window's minimum (with samples
 * every second and a collection every few seconds, a window's minimum is a post-collection
 * trough); the teeth above it are garbage, bounded by the collector's growth (rss-bounds.ts).
 * The slope through every sample is also given: with teeth of hundreds of MiB, where the run
 * happens to end in a tooth moves it by MiB per minute.
 */
import type { RssSample } from './rss.ts';
import { median } from './stats.ts';
import { MIB_BYTES } from './units.ts';

export const MS_PER_MINUTE = 60_000;

export interface WindowRss {
  /** 0 for the window that starts the run. */
  readonly index: number;
  readonly fromMs: number;
  readonly minBytes: number;
  readonly medianBytes: number;
  readonly maxBytes: number;
  readonly samples: number;
}

/** The samples of each window of `windowMs` that has any, in order. */
export function rssPerWindow(samples: readonly RssSample[], windowMs: number): WindowRss[] {
  const windows = new Map<number, number[]>();
  for (const sample of samples) {
    const index = Math.floor(sample.atMs / windowMs);
    const bytes = windows.get(index) ?? [];
    bytes.push(sample.bytes);
    windows.set(index, bytes);
  }
  return [...windows.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, bytes]) => ({ index, fromMs: index * windowMs, minBytes: Math.min(...bytes), medianBytes: median(bytes), maxBytes: Math.max(...bytes), samples: bytes.length }));
}

/** The least-squares slope of y over x; null with fewer than two points or all at one x. */
export function leastSquaresSlope(points: readonly { readonly x: number; readonly y: number }[]): number | null {
  if (points.length < 2) return null;
  const meanX = points.reduce((sum, point) => sum + point.x, 0) / points.length;
  const meanY = points.reduce((sum, point) => sum + point.y, 0) / points.length;
  let covariance = 0;
  let variance = 0;
  for (const point of points) {
    covariance += (point.x - meanX) * (point.y - meanY);
    variance += (point.x - meanX) ** 2;
  }
  return variance === 0 ? null : covariance / variance;
}

/**
 * The standard error of that slope (the spread of the points about the line, over the spread of
 * x): a slope within about two of it of zero is not told apart from flat by these points. Null
 * with fewer than three points.
 */
export function slopeStandardError(points: readonly { readonly x: number; readonly y: number }[]): number | null {
  const slope = leastSquaresSlope(points);
  if (slope === null || points.length < 3) return null;
  const meanX = points.reduce((sum, point) => sum + point.x, 0) / points.length;
  const meanY = points.reduce((sum, point) => sum + point.y, 0) / points.length;
  const residuals = points.reduce((sum, point) => sum + (point.y - meanY - slope * (point.x - meanX)) ** 2, 0);
  const variance = points.reduce((sum, point) => sum + (point.x - meanX) ** 2, 0);
  return Math.sqrt(residuals / (points.length - 2) / variance);
}

const mibPerMinute = (bytesPerMs: number | null): number | null => (bytesPerMs === null ? null : (bytesPerMs * MS_PER_MINUTE) / MIB_BYTES);

/** The slope through every sample at or after `fromMs`, in MiB per minute. */
export function rssSlopeMibPerMinute(samples: readonly RssSample[], fromMs: number): number | null {
  return mibPerMinute(leastSquaresSlope(samples.filter((sample) => sample.atMs >= fromMs).map((sample) => ({ x: sample.atMs, y: sample.bytes }))));
}

/**
 * The slope through one value of each window starting at or after `fromMs` (its minimum: the
 * floor), and its standard error, in MiB per minute.
 */
export function windowSlopeMibPerMinute(windows: readonly WindowRss[], fromMs: number, value: (window: WindowRss) => number): { slope: number | null; standardError: number | null } {
  const points = windows.filter((window) => window.fromMs >= fromMs).map((window) => ({ x: window.fromMs, y: value(window) }));
  return { slope: mibPerMinute(leastSquaresSlope(points)), standardError: mibPerMinute(slopeStandardError(points)) };
}
