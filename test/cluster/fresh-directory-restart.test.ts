// A stateless cluster broker replaced on an empty data directory (a new container, a lost disk)
// with the same node id and writer id. Its writer epoch must not be one its earlier life already
// wrote: the takeover plan takes a chain that ends in the broker's current stream for one that
// holds nothing of the partition yet (L7 of docs/cluster-protocol.md), so a reused stream id makes
// it serve the partition without rebuilding what that stream holds.
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { Broker } from '../../src/broker/broker.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import type { PartitionRecord } from '../../src/cluster/control-records.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { tempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(60_000);

const running: Broker[] = [];
afterEach(async () => {
  for (const broker of running.splice(0)) await broker.stop().catch(() => {});
});

async function start(store: ObjectStore, directory: string): Promise<Broker> {
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    cluster: { store, leaseMs: 1000, scanIntervalMs: 50 },
    engine: { directory, log: { flush: { kind: 'none' } }, wal: { store, writerId: 'broker-1', config: { uploadIntervalMs: 1 } } },
  });
  running.push(broker);
  return broker;
}

test('a broker restarted on an empty data directory serves what its earlier life acknowledged, at the same offsets', async () => {
  const store = new MemoryStore();
  let broker = await start(store, tempDir());
  await broker.context.topology.createTopic('t', 1);
  await until(() => broker.context.engine.serves('t', 0), 'the first adoption');
  for (const value of ['a', 'b']) await broker.context.engine.produce('t', [{ value }], { partition: 0, acks: 'all' });
  running.splice(running.indexOf(broker), 1);
  await broker.stop();
  broker = await start(store, tempDir()); // same node id and writer id, nothing on disk
  await until(() => broker.context.engine.serves('t', 0), 'the adoption after the restart');
  const engine = broker.context.engine;
  const record = (await new ControlStore(store, '').read<PartitionRecord>('partitions/t/0'))!.value;
  expect(record.chain.length).toBe(2); // its earlier stream, sealed, then a new one
  expect(engine.offsetFor('t', 0, -1).offset).toBe(2); // the high watermark: both acknowledged records
  const values = engine.fetch('t', 0, 0).batches.flatMap((batch) => [...batch.records()].map((r) => new TextDecoder().decode(r.value!)));
  expect(values).toEqual(['a', 'b']);
});
