import type { Counter, Gauge, MetricsRegistry } from '../metrics/index.ts';

/** The WAL collector's metrics (docs/tier-protocol.md [G]). */
export class WalGcMetrics {
  readonly deletedObjects: Counter;
  readonly deletedBytes: Counter;
  readonly failures: Counter;
  /** Objects of this broker's streams still in the WAL store after the last pass. */
  readonly heldObjects: Gauge;
  /** Incarnations whose frames were kept because no control record names them (DI1). */
  readonly unknownIncarnations: Counter;

  constructor(registry: MetricsRegistry) {
    this.deletedObjects = registry.counter('ferry_wal_gc_deleted_objects_total', 'WAL objects the garbage collector deleted');
    this.deletedBytes = registry.counter('ferry_wal_gc_deleted_bytes_total', 'Bytes of WAL objects the garbage collector deleted');
    this.failures = registry.counter('ferry_wal_gc_failures_total', 'WAL garbage collection passes of a stream that failed (retried at the next pass)');
    this.unknownIncarnations = registry.counter(
      'ferry_wal_gc_unknown_incarnations_total',
      'Topic incarnations whose WAL frames the collector keeps because no control record names them (no topic, no deletion record)',
    );
    this.heldObjects = registry.gauge('ferry_wal_gc_held_objects', "Objects of this broker's WAL streams still in the store after the collector's last pass");
  }
}
