// [K1] A peer's exit, as the peer links report it (src/cluster/peer-links.ts), makes its broker dead
// at once, but only while its broker record still names the exited incarnation: the store stays the
// arbiter. The survivor then claims its partitions long before the lease would have run out.
import { expect, test } from 'bun:test';
import type { PeerWatch } from '../../src/cluster/membership.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { fakePeers } from '../support/fake-peers.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { servedHooks, testClusterNode } from '../support/cluster-node.ts';
import { advanceUntil, settle } from '../support/settle.ts';

/** Lease far longer than any wait of these tests: a takeover seen here came from the exit. */
const LONG_LEASE_MS = 600_000;

async function twoNodes() {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const served = new Map<string, number>();
  const peersOfA = fakePeers(7001);
  const peersOfB = fakePeers(7002);
  const a = testClusterNode({ store, clock, nodeId: 1, peers: peersOfA.peers, self: { leaseMs: LONG_LEASE_MS }, scanIntervalMs: LONG_LEASE_MS, ...servedHooks(served, 1) });
  const b = testClusterNode({ store, clock, nodeId: 2, peers: peersOfB.peers, self: { leaseMs: LONG_LEASE_MS }, scanIntervalMs: LONG_LEASE_MS, ...servedHooks(served, 2) });
  await a.start();
  await b.start();
  await a.createTopic('t', 2);
  await a.scan();
  await b.scan();
  await a.scan();
  return { store, clock, served, a, b, peersOfA, peersOfB };
}

test('each node publishes its peer port and watches the other under its incarnation', async () => {
  const { a, b, peersOfA, peersOfB } = await twoNodes();
  expect(peersOfB.state.watched).toEqual([{ nodeId: 1, host: '127.0.0.1', port: 7001, incarnation: a.incarnation }]);
  expect(peersOfA.state.watched).toEqual([{ nodeId: 2, host: '127.0.0.1', port: 7002, incarnation: b.incarnation }]);
  await b.resign();
  expect(peersOfB.state.closed).toBe(true); // links close after the resignation
});

test('an exited peer whose record still names it: its partitions are taken over at once, not after its lease', async () => {
  const { clock, served, a, b, peersOfB } = await twoNodes();
  expect([...served.values()].sort()).toEqual([1, 2]);
  a.stop(); // the process is gone: no renewal, no resignation
  peersOfB.state.exited(1, a.incarnation);
  await advanceUntil(clock, () => [...served.values()].every((n) => n === 2), 'node 2 serves both partitions', 1, 1_000);
  expect(b.liveBrokers().map((r) => r.nodeId)).toEqual([2]);
});

test('an exit of an incarnation the record no longer names changes nothing (another process is that node now)', async () => {
  const { clock, served, a, peersOfB } = await twoNodes();
  peersOfB.state.exited(1, 'an-older-incarnation');
  clock.advance(1_000);
  await settle(50);
  expect([...served.values()].sort()).toEqual([1, 2]);
  a.stop();
});

test('a renewal after the exit report brings the broker back: the lease judges a newer record', async () => {
  const { clock, a, b, peersOfB } = await twoNodes();
  peersOfB.state.exited(1, a.incarnation); // a false report: a is alive and renews
  await settle(50);
  expect(b.liveBrokers().map((r) => r.nodeId)).toEqual([2]);
  clock.advance(LONG_LEASE_MS / 3); // a's renewal timer
  await settle(50);
  await b.scan();
  expect(
    b
      .liveBrokers()
      .map((r) => r.nodeId)
      .sort(),
  ).toEqual([1, 2]);
  a.stop();
  b.stop();
});

test("after an exit, a survivor keeps scanning while a partition record still names the exited broker, so another survivor's late claims reach its view however late they come", async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const served = new Map<string, number>();
  const peersOfB = fakePeers(7002);
  const aLeaseMs = 20_000; // c, with no link to a, waits it out; every scan interval stays LONG_LEASE_MS
  const node = (nodeId: number, peers: PeerWatch, leaseMs = LONG_LEASE_MS) =>
    testClusterNode({ store, clock, nodeId, peers, self: { leaseMs }, scanIntervalMs: LONG_LEASE_MS, ...servedHooks(served, nodeId) });
  const [a, b, c] = [node(1, fakePeers(7001).peers, aLeaseMs), node(2, peersOfB.peers), node(3, fakePeers(7003).peers)];
  await a.start();
  await a.createTopic('t', 2);
  await a.scan(); // a leads both partitions
  await b.start();
  await c.start();
  await b.scan();
  await c.scan();
  a.stop(); // gone; only b hears of it, and claims its fair share: one of the two
  peersOfB.state.exited(1, a.incarnation);
  await advanceUntil(clock, () => [...served.values()].includes(2), 'b serves one partition', 1, 1_000);
  const left = [0, 1].find((partition) => served.get(`t/${partition}`) !== 2)!;
  expect(b.leaderOf('t', left)?.broker.nodeId ?? null).toBeNull(); // still a's record: no live leader in b's view
  clock.advance(5_000); // far past 20 follow-ups of 25 ms
  await settle(50);
  // c has no peer link to a: it takes the other over only once a's lease is gone, at a scan of its own
  clock.advance(aLeaseMs);
  await c.scan();
  expect(served.get(`t/${left}`)).toBe(3);
  await advanceUntil(clock, () => b.leaderOf('t', left)?.broker.nodeId === 3, "c's claim in b's view", 25, 400);
  for (const n of [b, c]) n.stop();
});
