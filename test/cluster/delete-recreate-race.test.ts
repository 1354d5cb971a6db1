// A topic deleted by one broker while another creates it again (the delete is still going, one
// partition record at a time). The delete must remove only the records of the incarnation it
// deletes: removing the new incarnation's partition record throws away its chain, and the next
// claim (by its own leader, or anyone) rebuilds from nothing and hands acknowledged offsets out
// again (L2, L4 of docs/cluster-protocol.md).
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import type { PartitionRecord, TopicRecord } from '../../src/cluster/control-records.ts';
import type { ClaimPlan } from '../../src/cluster/takeover.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { testClusterNode } from '../support/cluster-node.ts';
import { advanceUntil, settle } from '../support/settle.ts';

/** A store whose DELETEs of `key` wait until the test lets them go. */
function deleteGate(inner: MemoryStore, key: string): { store: ObjectStore; open: () => void; reached: () => boolean } {
  let reached = false;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const remove = async (k: string): Promise<void> => {
    if (k === key) {
      reached = true;
      await gate;
    }
    return inner.delete(k);
  };
  const store = new Proxy(inner, {
    get: (target, name) => {
      if (name === 'delete') return remove;
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as ObjectStore;
  return { store, open, reached: () => reached };
}

function node(store: ObjectStore, clock: ManualClock, nodeId: number, adopted: { nodeId: number; topicId: string; plan: ClaimPlan }[]) {
  return testClusterNode({
    store,
    clock,
    nodeId,
    adopt: async (_topic, _partition, _partitions, plan) => void adopted.push({ nodeId, topicId: plan.next.topicId, plan }),
  });
}

test('while a topic delete runs its name cannot be created again; the incarnation created after it keeps its partition record', async () => {
  const inner = new MemoryStore();
  const clock = new ManualClock();
  const gated = deleteGate(inner, 'c/control/partitions/t/0');
  const adopted: { nodeId: number; topicId: string; plan: ClaimPlan }[] = [];
  const admin = node(gated.store, clock, 1, adopted); // the broker a DeleteTopics request reached
  const leader = node(inner, clock, 2, adopted);
  await admin.start();
  await leader.start();
  const control = new ControlStore(inner, 'c');
  await leader.createTopic('t', 1);
  await leader.scan(); // broker 2 leads t-0 (first incarnation)
  const deleting = admin.deleteTopic('t'); // marks topics/t deleting, then waits at partitions/t/0
  await advanceUntil(clock, gated.reached, 'the delete reached the partition record', 50); // [L8] the delete waits out the other broker's lease-long sighting of the topic
  // While the delete runs, the name is taken: no new incarnation can be created under it (L4).
  expect(await leader.createTopic('t', 1)).toBe(false);
  gated.open();
  await deleting;
  await settle();
  expect(await leader.createTopic('t', 1)).toBe(true); // created again once the delete is done
  const second = (await control.read<TopicRecord>('topics/t'))!.value.topicId;
  await leader.scan(); // claims t-0 of the new incarnation
  await admin.scan();
  await leader.scan();
  // The new incarnation is adopted once, at leader epoch 1 (one above the first incarnation's 0,
  // [L4]) with nothing to rebuild, and its record stays: nothing of the old delete removes it.
  const ofSecond = adopted.filter((a) => a.topicId === second).map((a) => ({ epoch: a.plan.next.leaderEpoch, rebuildFrom: a.plan.rebuildFrom.length }));
  expect(ofSecond).toEqual([{ epoch: 1, rebuildFrom: 0 }]);
  expect((await control.read<PartitionRecord>('partitions/t/0'))?.value.topicId).toBe(second);
  admin.stop();
  leader.stop();
});
