import { Broker } from '../../src/broker/broker.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { tempDir } from './temp-dir.ts';

/** The lease and scan interval of a quick test cluster: takeovers and new topics settle in ~100s of ms. */
export const TEST_LEASE_MS = 1000;
export const TEST_SCAN_INTERVAL_MS = 50;

/** A cluster broker over `store` (control records and WAL alike), on a fresh directory; `running` collects it for the test's cleanup. */
export async function startClusterBroker(store: ObjectStore, nodeId: number, running: Broker[]): Promise<Broker> {
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId,
    cluster: { store, leaseMs: TEST_LEASE_MS, scanIntervalMs: TEST_SCAN_INTERVAL_MS },
    engine: { directory: tempDir(), log: { flush: { kind: 'none' } }, wal: { store, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 1 } } },
  });
  running.push(broker);
  return broker;
}
