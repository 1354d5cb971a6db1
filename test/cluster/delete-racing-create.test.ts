// Issue 9 finding 5, review: a topic deleted on one broker while another creates it again and
// claims its partition. The delete removes the partition records after the topic record, without
// any condition, so it can remove the record of the new incarnation that was claimed meanwhile.
// The claimer then sees its partition unrecorded, lets it go and claims it afresh with a rebuild
// from nothing, though its own stream holds what it acknowledged for the new incarnation.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import type { PartitionRecord, TopicRecord } from '../../src/cluster/control-records.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { advanceThrough } from '../support/settle.ts';
import { testClusterNode } from '../support/cluster-node.ts';

/** A memory store (or a view of `inner`) whose deletes under `prefix` wait until `open()`, so a delete can be caught halfway. */
function storeWithHeldDeletes(prefix: string, inner: ObjectStore = new MemoryStore()): { store: ObjectStore; hold(): void; open(): void; reached: Promise<void> } {
  let gate: Promise<void> | null = null;
  let release = () => {};
  let reachedGate = () => {};
  const reached = new Promise<void>((resolve) => (reachedGate = resolve));
  const store = new Proxy(inner, {
    get: (target, name) => {
      if (name === 'delete') {
        return async (key: string) => {
          while (gate !== null && key.startsWith(prefix)) {
            reachedGate();
            await gate;
          }
          return target.delete(key);
        };
      }
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as ObjectStore;
  return {
    store,
    reached,
    hold: () => void (gate = new Promise<void>((resolve) => (release = resolve))),
    open: () => {
      gate = null;
      release();
    },
  };
}

function clusterNode(store: ObjectStore, clock: ManualClock, nodeId: number, events: string[]) {
  return testClusterNode({
    store,
    clock,
    nodeId,
    random: new SeededRandom(nodeId),
    adopt: async (topic, partition, _partitions, { next, rebuildFrom }) =>
      void events.push(`${nodeId} adopt ${topic}/${partition} ${next.topicId} epoch ${next.leaderEpoch} rebuilding from [${rebuildFrom.map((s) => s.writerId)}]`),
    release: async (topic, partition) => void events.push(`${nodeId} release ${topic}/${partition}`),
    forget: async (topic) => void events.push(`${nodeId} forget ${topic}`),
  });
}

test('a delete still under way never removes the partition record of the incarnation created again meanwhile', async () => {
  const { store, hold, open } = storeWithHeldDeletes('c/control/partitions/');
  const clock = new ManualClock();
  const events: string[] = [];
  const control = new ControlStore(store, 'c');
  const a = clusterNode(store, clock, 1, events);
  const b = clusterNode(store, clock, 2, events);
  await a.start();
  await b.start();
  await a.createTopic('d1', 1);
  await a.scan(); // a leads the first incarnation
  hold();
  const deleting = a.deleteTopic('d1'); // its partition records' removal waits
  const gone = async () => {
    const record = await control.read<TopicRecord>('topics/d1');
    return record === null || record.value.deleting === true;
  };
  while (!(await gone())) await new Promise((resolve) => setImmediate(resolve));
  // Meanwhile b creates d1 again (an auto-create, another admin) and claims its partition as soon
  // as the name is free; the first incarnation's record is then a leftover, replaced whole [L4].
  events.length = 0;
  let created = await b.createTopic('d1', 1);
  if (created) await b.scan();
  open();
  await deleting;
  if (!created) created = await b.createTopic('d1', 1); // the name was free only once the delete was done
  expect(created).toBe(true);
  const second = (await control.read<TopicRecord>('topics/d1'))!.value.topicId;
  await b.scan();
  await b.scan();
  // The new incarnation's record survives the old one's delete, and b serves what it adopted once
  // (a release and a fresh claim would rebuild from nothing, dropping what b's stream acknowledged),
  // at the epoch one above the first incarnation's 0 (epochs rise across incarnations, [L4]).
  expect((await control.read<PartitionRecord>('partitions/d1/0'))?.value).toEqual({ topicId: second, leader: 2, leaderEpoch: 1, chain: [{ writerId: 'broker-2', epoch: 0 }] });
  expect(events.filter((event) => event.startsWith('2 '))).toEqual([`2 adopt d1/0 ${second} epoch 1 rebuilding from []`]);
  a.stop();
  b.stop();
});

test('a second delete of the same topic, caught halfway, never removes the records of the incarnation created after the first', async () => {
  const shared = new MemoryStore();
  const slow = storeWithHeldDeletes('c/control/', shared); // b's view of the store: its deletes can be held
  const clock = new ManualClock();
  const events: string[] = [];
  const control = new ControlStore(shared, 'c');
  const a = clusterNode(shared, clock, 1, events);
  const b = clusterNode(slow.store, clock, 2, events);
  await a.start();
  await b.start();
  await a.createTopic('d1', 1);
  await a.scan();
  slow.hold();
  const second = b.deleteTopic('d1'); // two admins delete d1 at once; b's removals wait
  await advanceThrough(clock, slow.reached, "b's delete reaching its removals", 50); // [L8] the delete waits out the other broker's lease-long sighting of the topic (a leads d1/0)
  expect(await a.deleteTopic('d1')).toBe(true); // the first delete finishes
  expect(await a.createTopic('d1', 1)).toBe(true); // and the name gets a new incarnation, which a claims
  const created = (await control.read<TopicRecord>('topics/d1'))!.value.topicId;
  await a.scan();
  slow.open();
  await second;
  await a.scan();
  expect((await control.read<TopicRecord>('topics/d1'))?.value).toEqual({ topicId: created, partitions: 1, replicationFactor: 1, leaderEpochBase: 1 });
  expect((await control.read<PartitionRecord>('partitions/d1/0'))?.value).toEqual({ topicId: created, leader: 1, leaderEpoch: 1, chain: [{ writerId: 'broker-1', epoch: 0 }] });
  expect(a.leaderOf('d1', 0)?.record.topicId).toBe(created);
  a.stop();
  b.stop();
});
