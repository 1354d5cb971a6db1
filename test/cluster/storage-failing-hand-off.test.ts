// A leader whose local disk fails (a full disk) keeps its lease through the control store; unless
// it says so in its broker record, no one takes its partitions and acks=all on them fails for as
// long as the disk does (simulation seeds 5401, 6118, 9279, 18225). Kafka takes a failed log
// directory's partitions offline and elects their leaders among the other replicas.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import type { LocalStorage } from '../../src/cluster/membership.ts';
import type { BrokerRecord } from '../../src/cluster/control-records.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { servedHooks, testClusterNode } from '../support/cluster-node.ts';
import { passTime } from '../support/settle.ts';

/** Longer than any test here: the nodes scan only when a test says. */
const SCAN_NEVER_MS = 3_600_000;
/** The test nodes' lease (test/support/cluster-node.ts): renewals run every third of it. */
const LEASE_MS = 1000;

/** A disk a test fails and mends; `recheck` reports it as it is, as a probe write would. */
class TestStorage implements LocalStorage {
  broken = false;
  rechecks = 0;
  /** How long the test says WAL uploads have failed. */
  walFailingMs = 0;
  walStoreFailingForMs(): number {
    return this.walFailingMs;
  }
  failing(): boolean {
    return this.broken;
  }
  recheck(): boolean {
    this.rechecks++;
    return this.broken;
  }
}

async function twoNodes() {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const served = new Map<string, number>();
  const storage = new TestStorage();
  const a = testClusterNode({ store, clock, nodeId: 1, storage, scanIntervalMs: SCAN_NEVER_MS, ...servedHooks(served, 1) });
  const b = testClusterNode({ store, clock, nodeId: 2, scanIntervalMs: SCAN_NEVER_MS, ...servedHooks(served, 2) });
  await a.start();
  await b.start();
  await a.createTopic('t', 2);
  await a.scan();
  await b.scan();
  return { store, clock, served, storage, a, b };
}

test('a broker whose disk fails says so at its next renewal, stops acting as leader, and another broker takes over what it led while its lease is still renewed', async () => {
  const { store, clock, served, storage, a, b } = await twoNodes();
  const fromA = [...served].filter(([, n]) => n === 1).map(([id]) => id);
  expect(fromA.length).toBe(1);
  storage.broken = true;
  await passTime(clock, LEASE_MS / 2); // one renewal: a's lease is live all along
  const record = (await new ControlStore(store, 'c').read<BrokerRecord>('brokers/1'))!.value;
  expect(record.storageFailing).toBe(true);
  expect(a.leaseHeld()).toBe(false); // still renewed, so alive to others, but no longer acting as leader: others may take over now
  await b.scan();
  expect([...served.values()]).toEqual([2, 2]);
  await a.scan(); // lets go of what b took, claims nothing back
  expect(a.leaderOf(fromA[0]!.split('/')[0]!, Number(fromA[0]!.split('/')[1]))?.broker.nodeId).toBe(2);
  expect(storage.rechecks).toBeGreaterThan(0); // each scan while the disk fails asks it again
  a.stop();
  b.stop();
});

test('a broker whose disk fails claims nothing, not even a partition up for grabs, until the disk works again', async () => {
  const { clock, served, storage, a, b } = await twoNodes();
  storage.broken = true;
  b.stop(); // b's partition is up for grabs once its lease ran out
  await passTime(clock, LEASE_MS + 100);
  await a.scan();
  expect([...served.values()].filter((n) => n === 1).length).toBe(1); // only its own, which no one else could take
  storage.broken = false;
  await passTime(clock, LEASE_MS / 2); // a renewal without the flag
  await a.scan();
  expect([...served.values()]).toEqual([1, 1]);
  a.stop();
});

test('a broker whose disk works is never taken over for it: no flag in its record', async () => {
  const { store, clock, served, a, b } = await twoNodes();
  await passTime(clock, LEASE_MS / 2);
  expect((await new ControlStore(store, 'c').read<BrokerRecord>('brokers/1'))!.value.storageFailing).toBeUndefined();
  await b.scan();
  expect([...served.values()].sort()).toEqual([1, 2]);
  a.stop();
  b.stop();
});

test('WAL uploads failing for a lease with none landing count as a failing disk; failing for less do not', async () => {
  const { store, clock, served, storage, a, b } = await twoNodes();
  const flag = async () => (await new ControlStore(store, 'c').read<BrokerRecord>('brokers/1'))!.value.storageFailing;
  storage.walFailingMs = LEASE_MS - 1; // a short outage: a dead broker would cost more than riding it out
  await passTime(clock, LEASE_MS / 2);
  expect(await flag()).toBeUndefined();
  await b.scan();
  expect([...served.values()].sort()).toEqual([1, 2]);
  storage.walFailingMs = LEASE_MS;
  await passTime(clock, LEASE_MS / 2);
  expect(await flag()).toBe(true);
  await b.scan();
  expect([...served.values()]).toEqual([2, 2]);
  storage.walFailingMs = 0; // uploads land again
  await passTime(clock, LEASE_MS / 2);
  expect(await flag()).toBeUndefined();
  a.stop();
  b.stop();
});
