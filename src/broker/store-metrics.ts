import type { MetricsRegistry } from '../metrics/index.ts';
import { InstrumentedStore } from '../store/instrumented.ts';
import type { Clock } from '../util/clock.ts';
import type { BrokerOptions } from './broker-options.ts';

/**
 * The broker's options with each object store seen through an InstrumentedStore labelled by its
 * role: the WAL store (and the security records a single broker keeps there), the tier store, the
 * cluster's control store. Tier records already built on a ControlStore keep their store unmeasured.
 */
export function withMeasuredStores(options: BrokerOptions, metrics: MetricsRegistry, clock: Clock): BrokerOptions {
  const { wal, tier } = options.engine;
  const engine = {
    ...options.engine,
    ...(wal === undefined ? {} : { wal: { ...wal, store: new InstrumentedStore(wal.store, 'wal', metrics, clock) } }),
    ...(tier === undefined ? {} : { tier: { ...tier, store: new InstrumentedStore(tier.store, 'tier', metrics, clock) } }),
  };
  const cluster = options.cluster === undefined ? {} : { cluster: { ...options.cluster, store: new InstrumentedStore(options.cluster.store, 'control', metrics, clock) } };
  return { ...options, engine, ...cluster };
}
