// Cluster brokers in one process that tier (docs/tier-protocol.md): small segments so that they
// roll, a tier round only when a test asks for one (tierer.tierDue), WAL and control records in
// `store`, tiered segments in `tierStore` (by default the same store).
import { Broker } from '../../src/broker/broker.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import type { LoggerOption } from '../../src/observability/logger.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { tempDir } from './temp-dir.ts';

/** Segment size of these brokers' logs: a few batches each, so segments roll and tier. */
export const TIERED_SEGMENT_BYTES = 2048;
/** Tier rounds and WAL collector passes run only when a test asks (one an hour otherwise). */
const TIER_INTERVAL_MS = 3_600_000;

/** Starts broker `nodeId` on a fresh directory and adds it to `running` (a test's afterEach stops them); its lines go to `log` when given. */
export async function startTieredBroker(store: ObjectStore, nodeId: number, running: Broker[], tierStore: ObjectStore = store, log?: LoggerOption): Promise<Broker> {
  const broker = await Broker.start({
    ...(log === undefined ? {} : { log }),
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId,
    cluster: { store, leaseMs: 1000, scanIntervalMs: 50 },
    engine: {
      directory: tempDir(),
      log: { flush: { kind: 'none' }, segmentBytes: TIERED_SEGMENT_BYTES },
      wal: { store, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 1 } },
      tier: { store: tierStore, control: new ControlStore(store, ''), intervalMs: TIER_INTERVAL_MS },
      walGcIntervalMs: TIER_INTERVAL_MS, // WAL garbage collection too runs only when a test asks (walCollector.collect)
    },
  });
  running.push(broker);
  return broker;
}
