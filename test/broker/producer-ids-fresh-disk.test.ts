// Cluster brokers are stateless (docs/design.md contract 14): one may come back on an empty disk with its node id,
// and serve the same topics, whose producer state lives in the partitions' logs rebuilt from the
// object store. Producer ids were reserved in a file on the broker's local disk, so such a broker
// handed out again ids its earlier life gave to producers that are still writing. Two producers
// with one id and epoch share one sequence space at every partition: the new producer's first
// batch (sequence 0) is answered as a duplicate of the old one's, with the old one's offset, and
// its records are never written. Ids are now reserved cluster-wide, in the control records by
// compare-and-swap (as Kafka's controller hands out id blocks).
import { expect, test } from 'bun:test';
import { ControlProducerIdBlocks, ProducerIds } from '../../src/broker/producers.ts';
import { Broker } from '../../src/broker/broker.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { tempDir } from '../support/temp-dir.ts';

const T0 = 1_700_000_000_000;

test('a cluster broker back on an empty disk never hands out a producer id it handed out before', async () => {
  const control = new ControlStore(new MemoryStore(), 'c'); // the cluster's control records outlive any broker's disk
  const before = await new ProducerIds(new ControlProducerIdBlocks(control)).allocate(); // given to producer A, which goes on writing
  const after = await new ProducerIds(new ControlProducerIdBlocks(control)).allocate(); // the same broker after its disk was replaced
  // What sharing an id costs: B's first batch is taken for A's and dropped, acknowledged at A's offset.
  const log = PartitionLog.open(tempDir());
  log.append(buildRecordBatch([{ value: 'from A', timestamp: T0 }], { nowMs: T0, producerId: before, producerEpoch: 0, baseSequence: 0 }), 0);
  const fromB = log.append(buildRecordBatch([{ value: 'from B', timestamp: T0 }], { nowMs: T0, producerId: after, producerEpoch: 0, baseSequence: 0 }), 0);
  await log.close();
  expect(fromB.duplicate).toBe(false);
  expect(after).not.toBe(before);
});

test('through the broker: a cluster broker restarted on an empty data directory hands out new producer ids', async () => {
  const store = new MemoryStore();
  const start = (directory: string) =>
    Broker.start({
      listenHost: '127.0.0.1',
      listenPort: 0,
      nodeId: 3,
      cluster: { store, leaseMs: 2000, scanIntervalMs: 100 },
      engine: { directory, log: { flush: { kind: 'none' } }, wal: { store, writerId: 'broker-3', config: { uploadIntervalMs: 2 } } },
    });
  const first = await start(tempDir());
  const before = [await first.context.producers.allocate(), await first.context.producers.allocate()];
  await first.stop();
  const second = await start(tempDir()); // same node id, a fresh disk
  const after = await second.context.producers.allocate();
  await second.stop();
  expect(before).not.toContain(after);
});
