import { type Counter, type MetricsRegistry, RateMeter, type ValueHistogram } from '../metrics/index.ts';
import type { Clock } from '../util/clock.ts';
import type { FollowerObserver } from './follower.ts';

/** A follower's metrics: lag in ms (object age at apply), bytes read and applied, catch-up rate. */
export class FollowerMetrics implements FollowerObserver {
  readonly lag: ValueHistogram;
  readonly appliedRate: RateMeter;
  readonly #read: Counter;
  readonly #applied: Counter;
  readonly #objects: Counter;

  constructor(registry: MetricsRegistry, clock: Clock) {
    this.lag = registry.histogram('ferry_follower_lag_ms', 'Age of a WAL object when the follower applied it: an upper bound of append-to-apply lag');
    this.#read = registry.counter('ferry_follower_read_bytes_total', 'Bytes read from object storage by the follower');
    this.#applied = registry.counter('ferry_follower_applied_bytes_total', 'Batch bytes the follower applied to its logs');
    this.#objects = registry.counter('ferry_follower_objects_total', 'WAL objects the follower applied');
    this.appliedRate = new RateMeter(clock);
  }

  objectApplied(bytesRead: number, bytesApplied: number, ageMs: number): void {
    this.lag.record(Math.max(0, ageMs));
    this.#read.add(bytesRead);
    this.#applied.add(bytesApplied);
    this.#objects.add();
    this.appliedRate.mark(bytesApplied);
  }
}
