import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import type { PartitionRecord } from '../../src/cluster/control-records.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { type Clock, ManualClock } from '../../src/util/clock.ts';
import { servedHooks, testClusterNode } from '../support/cluster-node.ts';
import { advanceThrough, passTime } from '../support/settle.ts';

function node(store: MemoryStore, clock: Clock, nodeId: number, served: Map<string, number>) {
  return testClusterNode({ store, clock, nodeId, ...servedHooks(served, nodeId) });
}

/** Nodes 1 and 2 started on one store, a manual clock, and the map of who serves what. */
async function twoNodes() {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const served = new Map<string, number>();
  const a = node(store, clock, 1, served);
  const b = node(store, clock, 2, served);
  await a.start();
  await b.start();
  return { store, clock, served, a, b };
}

test('brokers split partitions fairly; when one stops renewing, the other takes its share with a longer chain', async () => {
  const { store, clock, served, a, b } = await twoNodes();
  expect(await a.createTopic('t', 4)).toBe(true);
  expect(await b.createTopic('t', 4)).toBe(false);
  await a.scan();
  await b.scan();
  expect([...served.values()].filter((n) => n === 1).length).toBe(2);
  expect([...served.values()].filter((n) => n === 2).length).toBe(2);
  await a.scan(); // reads the two records b wrote since a's last scan
  const before = store.stats().requests;
  await a.scan(); // nothing changed: one LIST per record prefix, no GET
  const after = store.stats().requests;
  expect(after.get - before.get).toBe(0);
  expect(after.list - before.list).toBe(3);
  const fromA = [...served].find(([, n]) => n === 1)![0];
  a.stop(); // a stops renewing: once its lease passed unrenewed, it is dead to b
  await passTime(clock, 1100);
  await b.scan();
  expect([...served.values()]).toEqual([2, 2, 2, 2]);
  const control = new ControlStore(store, 'c');
  const record = (await control.read<PartitionRecord>(`partitions/${fromA}`))!.value;
  expect(record.leader).toBe(2);
  expect(record.leaderEpoch).toBe(1);
  expect(record.chain.map((s) => s.writerId)).toEqual(['broker-1', 'broker-2']); // b rebuilds from a's stream first
  expect(b.leaderOf('t', 0)?.broker.nodeId).toBe(2);
  b.stop();
});

test('a lost compare-and-swap never yields two leaders for one epoch', async () => {
  const store = new MemoryStore({ latency: 's3-express', seed: 5 });
  const clock = new ManualClock();
  const served = new Map<string, number>();
  const nodes = [1, 2, 3].map((id) => node(store, clock, id, served));
  for (const n of nodes) await n.start();
  await nodes[0]!.createTopic('race', 1);
  await Promise.all(nodes.map((n) => n.scan())); // all three try to claim the one partition at once
  const record = (await new ControlStore(store, 'c').read<PartitionRecord>('partitions/race/0'))!.value;
  expect(record.leaderEpoch).toBe(0);
  expect(served.get('race/0')).toBe(record.leader);
  for (const n of nodes) n.stop();
});

test('a deleted topic is let go of by every broker', async () => {
  const { store, clock, served, a, b } = await twoNodes();
  await a.createTopic('doomed', 2);
  await a.scan();
  await b.scan();
  expect(served.size).toBe(2);
  expect(await advanceThrough(clock, b.deleteTopic('doomed'), 'the delete', 50)).toBe(true); // [L8] the delete waits out the other broker's lease-long sighting of the topic
  await a.scan();
  expect(served.size).toBe(0);
  expect(await new ControlStore(store, 'c').list('partitions/doomed/')).toEqual([]);
  expect(await a.deleteTopic('doomed')).toBe(false);
  a.stop();
  b.stop();
});

test('a broker whose wall clock is an hour ahead never takes over a healthy one: liveness is judged on the local monotonic clock (finding 9)', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const ahead: Clock = {
    nowMs: () => clock.nowMs() + 3_600_000,
    monotonicMs: () => clock.monotonicMs(),
    setTimer: (ms, callback) => clock.setTimer(ms, callback),
    immediate: (callback) => clock.immediate(callback),
  };
  const served = new Map<string, number>();
  const a = node(store, clock, 1, served);
  const b = node(store, ahead, 2, served);
  await a.start();
  await b.start();
  await a.createTopic('t', 4);
  await passTime(clock, 3000); // many leases long, both renewing
  expect([...served.values()].sort()).toEqual([1, 1, 2, 2]);
  a.stop();
  b.stop();
});

test('a broker is dead to the others once its lease passed without a renewal, not twice that (finding 9)', async () => {
  const { served, clock, a, b } = await twoNodes();
  await a.createTopic('t', 2);
  await passTime(clock, 200);
  expect([...served.values()].sort()).toEqual([1, 2]);
  a.stop();
  await passTime(clock, 1000 + 200); // the lease, plus a scan interval or two to notice
  expect([...served.values()]).toEqual([2, 2]);
  b.stop();
});
