// A cluster broker whose WAL store may be cut (test/support/cuttable-store.ts), as the [C1]
// storageFailing tests start it (docs/cluster-protocol.md): short leases, fast scans and uploads.
import { join } from 'node:path';
import { Broker } from '../../src/broker/broker.ts';
import type { BrokerRecord } from '../../src/cluster/control-records.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import type { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';

export const CUT_TEST_LEASE_MS = 1000;
const CUT_TEST_SCAN_MS = 50;

/** Starts broker `nodeId` in `root`, on control store `control`, writing its WAL to `walStore`. */
export function startWalCutBroker(root: string, control: MemoryStore, walStore: ObjectStore, nodeId: number, options: { minInsyncReplicas?: number } = {}): Promise<Broker> {
  return Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId,
    ...(options.minInsyncReplicas === undefined ? {} : { minInsyncReplicas: options.minInsyncReplicas }),
    cluster: { store: control, leaseMs: CUT_TEST_LEASE_MS, scanIntervalMs: CUT_TEST_SCAN_MS },
    engine: {
      directory: join(root, `broker-${nodeId}`),
      log: { flush: { kind: 'none' } },
      wal: { store: walStore, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 1 } },
    },
  });
}

/** Whether broker `nodeId`'s record in the control store says storageFailing. */
export async function recordSaysStorageFailing(control: MemoryStore, nodeId: number): Promise<boolean> {
  return (await new ControlStore(control, '').read<BrokerRecord>(`brokers/${nodeId}`))?.value.storageFailing === true;
}
