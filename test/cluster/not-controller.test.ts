// The controller's requests go to the controller (issue 24): the live broker with the lowest node
// id, as every broker sees the same records. Another broker answers CreateTopics, DeleteTopics and
// CreatePartitions NOT_CONTROLLER (the client reads Metadata again); once the controller's lease
// lapses unrenewed (a paused process), the next live broker is the controller and serves them.
import { expect, test } from 'bun:test';
import type { BrokerContext } from '../../src/broker/context.ts';
import { handleCreatePartitions } from '../../src/broker/handlers/partition-admin.ts';
import { handleCreateTopics, handleDeleteTopics } from '../../src/broker/handlers/topics.ts';
import { ErrorCode } from '../../src/protocol/error-codes.ts';
import { ClusterTopology } from '../../src/broker/topology.ts';
import type { ClusterNode } from '../../src/cluster/node.ts';
import { RegisteredAddresses } from '../../src/cluster/replica-address.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { OPEN_SECURITY } from '../support/broker-security.ts';
import { testClusterNode } from '../support/cluster-node.ts';
import { advanceThrough, passTime } from '../support/settle.ts';

/** The test nodes' lease (test/support/cluster-node.ts). */
const LEASE_MS = 1000;
/** A scan interval no test here reaches: the nodes scan only when the test says. */
const NO_SCANS_OF_THEIR_OWN_MS = 1e9;

function contextOf(node: ClusterNode, clock: ManualClock): BrokerContext {
  const topology = new ClusterTopology(node, 1, new RegisteredAddresses(clock));
  return { ...OPEN_SECURITY, nodeId: node.nodeId, defaultPartitions: 1, defaultReplicationFactor: 1, engine: { checkTopicConfigs: () => {} }, topology } as unknown as BrokerContext;
}

const create = (name: string) => ({ topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false });
const grow = (name: string) => ({ topics: [{ name, count: 2, assignments: null }], timeoutMs: 1000, validateOnly: false });

test('a broker that is not the controller answers its requests NOT_CONTROLLER; once the controller is paused past its lease, it is the controller', async () => {
  const store = new MemoryStore();
  // Each node on a clock of its own: node 1's standing still is a paused process (no renewal, no scan).
  const clocks = [new ManualClock(), new ManualClock()] as const;
  const nodes = [1, 2].map((nodeId, i) => testClusterNode({ store, clock: clocks[i]!, nodeId, scanIntervalMs: NO_SCANS_OF_THEIR_OWN_MS }));
  for (const node of nodes) await node.start();
  for (const node of nodes) await node.scan();
  const [controller, other] = nodes.map((node, i) => contextOf(node, clocks[i]!)) as [BrokerContext, BrokerContext];
  expect([controller.topology.controllerId(), other.topology.controllerId()]).toEqual([1, 1]);

  const refused = await handleCreateTopics(other, create('t'));
  expect(refused.topics.map((t) => [t.name, t.errorCode])).toEqual([['t', ErrorCode.NOT_CONTROLLER]]);
  expect(refused.topics[0]!.errorMessage).toContain('the controller is broker 1');
  expect(await other.topology.partitionCount('t')).toBeNull(); // nothing was created
  expect((await handleCreateTopics(controller, create('t'))).topics.map((t) => t.errorCode)).toEqual([ErrorCode.NONE]);
  await nodes[1]!.scan();
  expect((await handleCreatePartitions(other, grow('t'))).results.map((r) => r.errorCode)).toEqual([ErrorCode.NOT_CONTROLLER]);
  expect((await handleDeleteTopics(other, { topicNames: ['t'], topics: [], timeoutMs: 1000 })).responses.map((r) => r.errorCode)).toEqual([ErrorCode.NOT_CONTROLLER]);

  // Node 1 is paused: node 2's clock runs past node 1's lease, and its scan finds the lease lapsed.
  await passTime(clocks[1], LEASE_MS + 100);
  await nodes[1]!.scan();
  expect(other.topology.controllerId()).toBe(2);
  expect((await handleCreatePartitions(other, grow('t'))).results.map((r) => r.errorCode)).toEqual([ErrorCode.NONE]);
  const deleted = await advanceThrough(clocks[1], handleDeleteTopics(other, { topicNames: ['t'], topics: [], timeoutMs: 1000 }), 'the delete', 50);
  expect(deleted.responses.map((r) => r.errorCode)).toEqual([ErrorCode.NONE]);
  for (const node of nodes) await node.stop();
});
