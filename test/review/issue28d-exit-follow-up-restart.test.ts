// Review 28d, src/cluster/node.ts [K1]: after a peer's exit, the follow-up scans go on "while a
// partition record it read still names the exited broker ... and [the cost] ends once every
// partition it led has another leader". They test the node id only (HeldPartitions.ledBy), not the
// exited incarnation: when the killed broker restarts under the same node id (the usual kill -9 and
// restart) and claims again what still names it, every survivor that heard of the exit keeps
// scanning five times a second for the whole EXIT_FOLLOW_UP_MS (60 s): ~300 scans, each reading
// every broker, topic and partition record, though the partitions' leader is alive and known.
import { expect, test } from 'bun:test';
import type { PeerWatch } from '../../src/cluster/membership.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { fakePeers } from '../support/fake-peers.ts';
import type { ListOptions, ListPage } from '../../src/store/object-store.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { servedHooks, testClusterNode } from '../support/cluster-node.ts';
import { advanceUntil, passTime } from '../support/settle.ts';

const LONG_LEASE_MS = 600_000;

/** A view of the shared store that counts the LISTs of partition records made through it (one a scan). */
class CountingView extends MemoryStore {
  partitionLists = 0;
  constructor(readonly inner: MemoryStore) {
    super();
  }
  override get: MemoryStore['get'] = (key, options) => this.inner.get(key, options);
  override put: MemoryStore['put'] = (key, body, options) => this.inner.put(key, body, options);
  override delete: MemoryStore['delete'] = (key) => this.inner.delete(key);
  override head: MemoryStore['head'] = (key) => this.inner.head(key);
  override async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    if (prefix.includes('partitions')) this.partitionLists++;
    return this.inner.list(prefix, options);
  }
}

test('a survivor stops its follow-up scans once the exited broker restarted under its node id and leads again', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const served = new Map<string, number>();
  const peersOfB = fakePeers(7002);
  const viewOfB = new CountingView(store);
  const node = (nodeId: number, peers: PeerWatch, extra: object = {}) =>
    testClusterNode({ store, clock, nodeId, peers, self: { leaseMs: LONG_LEASE_MS }, scanIntervalMs: LONG_LEASE_MS, ...servedHooks(served, nodeId), ...extra });
  const a = node(1, fakePeers(7001).peers);
  await a.start();
  await a.createTopic('t', 4);
  await a.scan(); // a alone: it leads all four
  const b = node(2, peersOfB.peers, { control: new ControlStore(viewOfB, 'c') });
  const c = node(3, fakePeers(7003).peers);
  await b.start();
  await c.start();
  await b.scan();
  await c.scan();
  expect([...served.values()]).toEqual([1, 1, 1, 1]);
  a.stop(); // kill -9: only b's peer link sees it
  peersOfB.state.exited(1, a.incarnation);
  await advanceUntil(clock, () => [...served.values()].filter((n) => n === 2).length === 2, 'b claims its fair share of a', 1, 1_000);
  // The killed broker comes back as node 1 (a new process, its stream in the next epoch) and claims again what still names it.
  const a2 = testClusterNode({
    store,
    clock,
    nodeId: 1,
    peers: fakePeers(7001).peers,
    self: { leaseMs: LONG_LEASE_MS, stream: { writerId: 'broker-1', epoch: 1 } },
    scanIntervalMs: LONG_LEASE_MS,
    ...servedHooks(served, 1),
  });
  await a2.start();
  await a2.scan();
  expect([...served.values()].sort()).toEqual([1, 1, 2, 2]); // node 1 (its new incarnation) leads the two b did not take
  await passTime(clock, 1_000, 25);
  const listsBefore = viewOfB.partitionLists; // b has seen the new records by now
  await passTime(clock, 60_000, 50);
  const scansAfter = viewOfB.partitionLists - listsBefore;
  // Nothing changed in this minute: node 1 leads two partitions, alive, renewing. A scan or two would do.
  expect(scansAfter).toBeLessThanOrEqual(5);
  for (const n of [a2, b, c]) n.stop();
}, 120_000);
