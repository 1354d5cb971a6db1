import type { MetricsRegistry } from '../metrics/index.ts';
import { InstrumentedStore, type StoreRole } from '../store/instrumented.ts';
import type { ObjectStore } from '../store/object-store.ts';
import type { Clock } from '../util/clock.ts';
import type { BrokerOptions } from './broker-options.ts';

/**
 * The broker's options with each object store seen through an InstrumentedStore labelled by its
 * role: the WAL store (and the security records a single broker keeps there), the tier store, the
 * store of the tier records (ControlStore.through), the cluster's control store.
 */
export function withMeasuredStores(options: BrokerOptions, metrics: MetricsRegistry, clock: Clock): BrokerOptions {
  const { wal, tier } = options.engine;
  const measured = (role: StoreRole) => (store: ObjectStore) => new InstrumentedStore(store, role, metrics, clock);
  const engine = {
    ...options.engine,
    ...(wal === undefined ? {} : { wal: { ...wal, store: measured('wal')(wal.store) } }),
    ...(tier === undefined ? {} : { tier: { ...tier, store: measured('tier')(tier.store), control: tier.control.through(measured('tier-records')) } }),
  };
  const cluster = options.cluster === undefined ? {} : { cluster: { ...options.cluster, store: measured('control')(options.cluster.store) } };
  return { ...options, engine, ...cluster };
}
