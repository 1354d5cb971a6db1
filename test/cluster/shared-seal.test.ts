// [C4] The partitions a dead broker led are adopted at once, and each seals its stream: the
// adoptions under way share one seal of each stream (each LISTed the whole stream before: four
// adoptions of one broker's partitions took up to 1.2 s to seal two streams). A later adoption
// checks the seal again.
import { expect, test } from 'bun:test';
import { PartitionHost } from '../../src/cluster/partition-host.ts';
import type { ClaimPlan } from '../../src/cluster/takeover.ts';
import { Engine } from '../../src/engine/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ListOptions, ListPage } from '../../src/store/object-store.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { type StreamId, walObjectKey } from '../../src/wal/keys.ts';
import { idOf } from '../support/topic-ids.ts';
import { tempDir } from '../support/temp-dir.ts';
import { managedBy } from '../support/cluster-policy.ts';

class ListCountingStore extends MemoryStore {
  readonly lists = new Map<string, number>();
  override async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    this.lists.set(prefix, (this.lists.get(prefix) ?? 0) + 1);
    return super.list(prefix, options);
  }
}

const DEAD: StreamId = { writerId: 'broker-1', epoch: 0 };
const OWN: StreamId = { writerId: 'broker-2', epoch: 0 };
const TOPIC_ID = idOf('orders');

/** Broker 2's engine and PartitionHost over `store`, and the plan of an adoption that seals and rebuilds `stream`. */
async function adoptingHost(store: MemoryStore) {
  const clock = new ManualClock();
  const engine = await Engine.open({ directory: tempDir(), clock, cluster: managedBy(), log: { flush: { kind: 'none' } }, wal: { store, writerId: OWN.writerId, config: { uploadIntervalMs: 1 } } });
  const host = new PartitionHost({ engine, store, prefix: '', nodeId: 2, clock, readChain: async () => [], readRecord: async () => null, replicationFactor: () => 1, leaderOf: () => null });
  const plan = (stream: StreamId): ClaimPlan => ({ kind: 'claim', seal: [stream], rebuildFrom: [stream], settled: null, next: { topicId: TOPIC_ID, leader: 2, leaderEpoch: 1, chain: [stream, OWN] } });
  return { engine, host, plan };
}

test('adoptions under way at once seal a stream they share once', async () => {
  const store = new ListCountingStore();
  const { engine, host, plan } = await adoptingHost(store);
  const dead = DEAD;
  const listsOf = (stream: StreamId) => {
    const streamPrefix = walObjectKey('', stream, 0).replace(/[^/]+$/, '');
    return [...store.lists].filter(([prefix]) => prefix.startsWith(streamPrefix)).reduce((sum, [, count]) => sum + count, 0);
  };
  const alone = { writerId: 'broker-3', epoch: 0 };
  await host.adopt('orders', 4, 5, plan(alone)); // one adoption: its seal's LISTs, its rebuild's, and the rebuild's check of the seal it met [F2]
  const sealAndRebuild = listsOf(alone);
  await Promise.all([0, 1, 2, 3].map((partition) => host.adopt('orders', partition, 5, plan(dead))));
  // One seal's LISTs, then one LIST of the stream and one check of the seal they met, both shared by the four rebuilds [K7].
  expect(listsOf(dead)).toBe(sealAndRebuild - 2 + 1 + 1);
  for (const partition of [0, 1, 2, 3]) expect(engine.serves('orders', partition)).toBe(true);
  host.stop();
  await engine.close();
});

test("one scan's adoptions, run together, seal a stream once however they are paced; a later adoption checks again", async () => {
  const store = new ListCountingStore();
  const { engine, host, plan: planOf } = await adoptingHost(store);
  const plan = planOf(DEAD);
  const sealedAt = walObjectKey('', DEAD, 0);
  const puts = { seals: 0 };
  const put = store.put.bind(store);
  store.put = (key, body, options) => {
    if (key === sealedAt) puts.seals++;
    return put(key, body, options);
  };
  const streamLists = () => {
    const streamPrefix = sealedAt.replace(/[^/]+$/, '');
    return [...store.lists].filter(([prefix]) => prefix.startsWith(streamPrefix)).reduce((sum, [, count]) => sum + count, 0);
  };
  let afterFirst = 0;
  await host.adoptTogether(async () => {
    await host.adopt('orders', 0, 4, plan); // seals the empty stream at 0
    afterFirst = streamLists();
    for (const partition of [1, 2]) await host.adopt('orders', partition, 4, plan); // one after another, as a pool paces them
  });
  expect(puts.seals).toBe(1);
  // The later adoptions of the batch seal nothing: no LIST of the stream for a seal (their rebuilds' LIST is shared [K7]).
  expect(streamLists()).toBe(afterFirst);
  await host.adopt('orders', 3, 4, plan); // outside the batch: the seal is checked again (a LIST), and found
  expect(streamLists()).toBeGreaterThan(afterFirst);
  expect(puts.seals).toBe(1);
  for (const partition of [0, 1, 2, 3]) expect(engine.serves('orders', partition)).toBe(true);
  host.stop();
  await engine.close();
});
