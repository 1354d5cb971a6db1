// Review of issue 9 findings 6 and 13: followers re-target their reports and leaders count their
// replica sets from ClusterNode.leaderOf. A broker that neither leads nor follows a partition must
// forget its record when another broker deletes the topic: otherwise the map of partition records
// grows with every deleted topic, and a topic created again under the same name is described
// (Metadata, the followers' report targets, the replica sets) with the deleted incarnation's
// leader and epoch until someone claims it.
import { expect, test } from 'bun:test';
import type { ClusterNode } from '../../src/cluster/node.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { servedHooks, testClusterNode } from '../support/cluster-node.ts';

function node(store: MemoryStore, clock: ManualClock, nodeId: number, served: Map<string, number>): ClusterNode {
  return testClusterNode({ store, clock, nodeId, ...servedHooks(served, nodeId) });
}

test('a broker uninvolved in a partition forgets its leader once another broker deleted the topic', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const served = new Map<string, number>();
  const [a, b, c] = [1, 2, 3].map((id) => node(store, clock, id, served));
  for (const n of [a!, b!, c!]) await n.start();
  await a!.createTopic('gone', 1);
  await a!.scan(); // a claims gone/0 (its fair share is one)
  await c!.scan(); // c sees a lead it; c neither leads nor follows it (replication factor 1)
  expect(c!.leaderOf('gone', 0)?.broker.nodeId).toBe(1);
  expect(await a!.deleteTopic('gone')).toBe(true);
  await c!.scan();
  expect(c!.leaderOf('gone', 0)).toBeNull();
  for (const n of [a!, b!, c!]) n.stop();
});
