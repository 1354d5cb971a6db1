// One ClusterNode for the tests of src/cluster: the setup every such test repeated (control
// records under prefix 'c', a loopback broker record, a writer that is never fenced, hooks that do
// nothing), with each test naming only what it is about. Every field can be overridden.
import { ControlStore } from '../../src/control/control-store.ts';
import { ClusterNode, type ClusterNodeOptions } from '../../src/cluster/node.ts';
import type { WriterEpochs } from '../../src/cluster/partition-claims.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import type { Clock } from '../../src/util/clock.ts';
import type { StreamId } from '../../src/wal/keys.ts';

/** The control-store prefix of every test node: its records are under `c/control/`. */
const TEST_CONTROL_PREFIX = 'c';
/** A lease long enough that a test passes time in steps of tens of ms without lapsing it unawares. */
const TEST_LEASE_MS = 1000;
/** How often a test node scans on its own; a test that scans only when it says sets a long one. */
const TEST_SCAN_INTERVAL_MS = 100;
/** Node n is recorded at this port plus n (a record only: nothing listens on it). */
const TEST_PORT_BASE = 9000;

export type TestClusterNodeOptions = Partial<Omit<ClusterNodeOptions, 'self' | 'clock'>> & {
  /** Holds the control records, under prefix 'c' (a `control` given instead is used as it is). */
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly nodeId: number;
  /** Fields of the broker record to set; the rest are node `nodeId` on 127.0.0.1, stream broker-<nodeId> epoch 0. */
  readonly self?: Partial<Omit<ClusterNodeOptions['self'], 'nodeId'>>;
};

/** A ClusterNode with the defaults above; not started. */
export function testClusterNode({ store, clock, nodeId, self, ...overrides }: TestClusterNodeOptions): ClusterNode {
  const record = { nodeId, host: '127.0.0.1', port: TEST_PORT_BASE + nodeId, rack: null, stream: { writerId: `broker-${nodeId}`, epoch: 0 }, leaseMs: TEST_LEASE_MS, ...self };
  return new ClusterNode({
    control: new ControlStore(store, TEST_CONTROL_PREFIX),
    self: record,
    writer: unfencedWriter(record.stream),
    clock,
    scanIntervalMs: TEST_SCAN_INTERVAL_MS,
    adopt: async () => {},
    release: async () => {},
    follow: async () => {},
    unfollow: async () => {},
    forget: async () => {},
    ...overrides,
  });
}

/** A writer that is never fenced; asked for a new epoch anyway, it answers the stream's next one. */
function unfencedWriter(stream: StreamId): WriterEpochs {
  return {
    whenFailed: () => new Promise(() => {}),
    startNewEpoch: async () => ({ writerId: stream.writerId, epoch: stream.epoch + 1 }),
  };
}

/**
 * Hooks that keep `served` (partition `topic/partition` to the node serving it) as node `nodeId`
 * adopts, releases and forgets: the cluster's assignment, shared by the nodes of one test.
 */
export function servedHooks(served: Map<string, number>, nodeId: number): Pick<ClusterNodeOptions, 'adopt' | 'release' | 'forget'> {
  return {
    adopt: async (topic, partition) => void served.set(`${topic}/${partition}`, nodeId),
    release: async (topic, partition) => void served.delete(`${topic}/${partition}`),
    forget: async (topic) => {
      for (const id of [...served.keys()]) if (id.startsWith(`${topic}/`)) served.delete(id);
    },
  };
}
