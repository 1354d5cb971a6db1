import { type BucketHistogram, type Counter, type MetricsRegistry, RateMeter } from '../metrics/index.ts';
import type { Clock } from '../util/clock.ts';
import type { FollowerObserver } from './follower.ts';

const MS_PER_SECOND = 1000;

/** A follower's metrics: object age at apply (a bound of its lag), bytes read and applied, catch-up rate. */
export class FollowerMetrics implements FollowerObserver {
  readonly lag: BucketHistogram;
  readonly appliedRate: RateMeter;
  readonly #read: Counter;
  readonly #applied: Counter;
  readonly #objects: Counter;

  constructor(registry: MetricsRegistry, clock: Clock) {
    this.lag = registry.histogram('ferry_follower_apply_age_seconds', 'Age of a WAL object when the follower applied it: an upper bound of append-to-apply lag');
    this.#read = registry.counter('ferry_follower_read_bytes_total', 'Bytes read from object storage by the follower');
    this.#applied = registry.counter('ferry_follower_applied_bytes_total', 'Batch bytes the follower applied to its logs');
    this.#objects = registry.counter('ferry_follower_objects_total', 'WAL objects the follower applied');
    this.appliedRate = new RateMeter(clock);
  }

  objectApplied(bytesRead: number, bytesApplied: number, ageMs: number): void {
    this.lag.observe(Math.max(0, ageMs) / MS_PER_SECOND);
    this.#read.add(bytesRead);
    this.#applied.add(bytesApplied);
    this.#objects.add();
    this.appliedRate.mark(bytesApplied);
  }
}
