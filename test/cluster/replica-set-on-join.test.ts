// Review of issue 9 finding 6: a partition's followers are "the next replicationFactor - 1 live
// brokers after its leader by node id", so a broker that joins (or comes back) with a node id
// between the leader's and a follower's takes that follower's place at once. The caught-up
// follower leaves the replica set (and the in-sync set, and stops following), and with
// min.insync.replicas = replication factor acks=all waits until the newcomer has rebuilt the
// whole partition from the object store. Kafka never moves a replica because a broker joined.
import { expect, test } from 'bun:test';
import type { ClusterNode } from '../../src/cluster/node.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { testClusterNode } from '../support/cluster-node.ts';

function node(store: MemoryStore, clock: ManualClock, nodeId: number): ClusterNode {
  return testClusterNode({ store, clock, nodeId });
}

// Open: replica sets are computed from the live brokers, so a newcomer can take a caught-up
// follower's place (acks then wait for its rebuild; nothing is lost). Needs replica sets recorded
// in the partition record. Kept as a todo; `bun test --todo` runs it.
test.todo('a broker joining the cluster does not take the place of a caught-up follower', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const leader = node(store, clock, 1);
  const follower = node(store, clock, 3);
  await leader.start();
  await follower.start();
  await leader.createTopic('t', 1, 2);
  await leader.scan();
  await follower.scan();
  expect(leader.leaderOf('t', 0)?.broker.nodeId).toBe(1);
  expect(leader.followersOf('t', 0).map((b) => b.nodeId)).toEqual([3]);
  const newcomer = node(store, clock, 2);
  await newcomer.start();
  await leader.scan();
  expect(leader.followersOf('t', 0).map((b) => b.nodeId)).toEqual([3]);
  for (const n of [leader, follower, newcomer]) n.stop();
});
