// [C1] A broker starting up scans once before it serves (Metadata right from the start), and that
// scan adopts what the records name it leader of: after a restart, a rebuild of every partition it
// led, which can take longer than a lease. Its lease must be renewed all the while, or the others
// count it dead mid-rebuild and take over the very partitions it is rebuilding.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import type { BrokerRecord } from '../../src/cluster/control-records.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { testClusterNode } from '../support/cluster-node.ts';
import { settle, settleUntil } from '../support/settle.ts';

const LEASE_MS = 1000;

test('a first scan that rebuilds for longer than a lease keeps the lease renewed', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const control = new ControlStore(store, 'c');
  let adopting = false;
  let rebuilt!: () => void;
  const node = testClusterNode({
    store,
    clock,
    nodeId: 1,
    control,
    self: { leaseMs: LEASE_MS },
    adopt: async () => {
      adopting = true;
      await new Promise<void>((resolve) => (rebuilt = resolve)); // a long rebuild
    },
  });
  await node.createTopic('t', 1);
  const starting = node.start();
  await settleUntil(() => adopting, 'the first scan adopting t-0');
  const before = (await control.read<BrokerRecord>('brokers/1'))!.value.renewedAtMs;
  for (let elapsed = 0; elapsed < 2 * LEASE_MS; elapsed += 50) {
    clock.advance(50);
    await settle();
  }
  const during = (await control.read<BrokerRecord>('brokers/1'))!.value.renewedAtMs;
  expect(during - before).toBeGreaterThanOrEqual(LEASE_MS); // renewed while the rebuild went on
  rebuilt();
  await starting;
  node.stop();
});

test('while a scan rebuilds for longer than a lease, a broker that renews all along stays live (Metadata, replica sets, group coordinators)', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  let adopting = false;
  let rebuilt!: () => void;
  const make = (nodeId: number, adopt: () => Promise<void>) => testClusterNode({ store, clock, nodeId, self: { leaseMs: LEASE_MS }, adopt });
  const b = make(2, async () => {});
  await b.start();
  const a = make(1, async () => {
    adopting = true;
    await new Promise<void>((resolve) => (rebuilt = resolve));
  });
  await a.createTopic('t', 2);
  const starting = a.start(); // its first scan adopts a partition, for a long time
  await settleUntil(() => adopting, 'the first scan adopting');
  for (let elapsed = 0; elapsed < 2 * LEASE_MS; elapsed += 50) {
    clock.advance(50); // b renews every lease / 3 and scans
    await settle();
  }
  expect(
    a
      .liveBrokers()
      .map((broker) => broker.nodeId)
      .sort(),
  ).toEqual([1, 2]);
  rebuilt();
  await starting;
  a.stop();
  b.stop();
});
