import { Broker } from '../../src/broker/broker.ts';
import type { MemoryStore } from '../../src/store/memory.ts';
import { tempDir } from './temp-dir.ts';

/** Lease and scan of a one-broker test cluster: long scans, so that only the test's own changes scan. */
const LEASE_MS = 2000;
const SCAN_INTERVAL_MS = 60_000;

/** One broker leading a cluster over `store` (control records and WAL both), for handler tests that fault the store. */
export function startOneBrokerCluster(store: MemoryStore): Promise<Broker> {
  return Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    cluster: { store, leaseMs: LEASE_MS, scanIntervalMs: SCAN_INTERVAL_MS },
    engine: { directory: tempDir(), log: { flush: { kind: 'none' } }, wal: { store, writerId: 'broker-1', config: { uploadIntervalMs: 2 } } },
  });
}
