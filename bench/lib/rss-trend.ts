/**
 * Whether a long run's RSS stays flat: its samples cut into minutes (min, median, max of each),
 * and the slope of a least-squares line through the samples after a warm-up, in MiB per minute.
 * A leak shows as a steady positive slope; a collector's sawtooth averages out over minutes.
 */
import type { RssSample } from './rss.ts';
import { median } from './stats.ts';
import { MIB_BYTES } from './units.ts';

export const MS_PER_MINUTE = 60_000;

export interface MinuteRss {
  /** 0 for the first minute of the run. */
  readonly minute: number;
  readonly minBytes: number;
  readonly medianBytes: number;
  readonly maxBytes: number;
  readonly samples: number;
}

/** The samples of each whole or partial minute that has any, in order. */
export function rssPerMinute(samples: readonly RssSample[]): MinuteRss[] {
  const minutes = new Map<number, number[]>();
  for (const sample of samples) {
    const minute = Math.floor(sample.atMs / MS_PER_MINUTE);
    const bytes = minutes.get(minute) ?? [];
    bytes.push(sample.bytes);
    minutes.set(minute, bytes);
  }
  return [...minutes.entries()]
    .sort(([a], [b]) => a - b)
    .map(([minute, bytes]) => ({ minute, minBytes: Math.min(...bytes), medianBytes: median(bytes), maxBytes: Math.max(...bytes), samples: bytes.length }));
}

/**
 * The least-squares slope of RSS over time through the samples at or after `fromMs`, in MiB per
 * minute; null with fewer than two samples there (or all at one time).
 */
export function rssSlopeMibPerMinute(samples: readonly RssSample[], fromMs: number): number | null {
  const kept = samples.filter((sample) => sample.atMs >= fromMs);
  if (kept.length < 2) return null;
  const meanX = kept.reduce((sum, sample) => sum + sample.atMs, 0) / kept.length;
  const meanY = kept.reduce((sum, sample) => sum + sample.bytes, 0) / kept.length;
  let covariance = 0;
  let variance = 0;
  for (const sample of kept) {
    covariance += (sample.atMs - meanX) * (sample.bytes - meanY);
    variance += (sample.atMs - meanX) ** 2;
  }
  if (variance === 0) return null;
  return ((covariance / variance) * MS_PER_MINUTE) / MIB_BYTES;
}
