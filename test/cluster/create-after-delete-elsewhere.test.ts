// Found by the simulation (seed 175): a topic deleted through one broker and created again through
// another within one scan interval. CreateTopics looked at the topics the second broker last
// scanned, still found the deleted incarnation there, and answered TOPIC_ALREADY_EXISTS without
// trying: the admin took the topic for re-created, yet no record of it existed, so nothing ever
// led its partitions. The create-if-absent of the topic's record decides, not a broker's cache.
import { expect, test } from 'bun:test';
import type { BrokerContext } from '../../src/broker/context.ts';
import { handleCreateTopics } from '../../src/broker/handlers/topics.ts';
import { ErrorCode } from '../../src/protocol/error-codes.ts';
import { ClusterTopology } from '../../src/broker/topology.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import type { TopicRecord } from '../../src/cluster/control-records.ts';
import { RegisteredAddresses } from '../../src/cluster/replica-address.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { testClusterNode } from '../support/cluster-node.ts';
import { advanceThrough } from '../support/settle.ts';
import { OPEN_SECURITY } from '../support/broker-security.ts';

/** A scan interval no test here reaches: the node scans only when the test says. */
const NO_SCANS_OF_ITS_OWN_MS = 1e9;

const CREATE = { topics: [{ name: 't', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false };

test('a topic deleted through another broker is created again, though this broker still lists the old one', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  // The creator is node 1, the controller (the lowest live node id), which the create goes to.
  const deleter = testClusterNode({ store, clock, nodeId: 2 });
  const creator = testClusterNode({ store, clock, nodeId: 1, scanIntervalMs: NO_SCANS_OF_ITS_OWN_MS });
  await deleter.start();
  await creator.start();
  expect(await deleter.createTopic('t', 2)).toBe(true);
  await creator.scan(); // broker 1 lists t (the first incarnation)
  const first = creator.topics().get('t')!.topicId;
  expect(await advanceThrough(clock, deleter.deleteTopic('t'), 'the delete', 50)).toBe(true); // broker 1 has not scanned since; [L8] the delete waits out the other broker's lease-long sighting of the topic

  const topology = new ClusterTopology(creator, 1, new RegisteredAddresses(clock));
  expect(topology.topics().has('t')).toBe(true);
  const context = { ...OPEN_SECURITY, nodeId: 1, topology, defaultPartitions: 1 } as unknown as BrokerContext;
  const response = await handleCreateTopics(context, CREATE);

  expect(response.topics[0]!.errorCode).toBe(ErrorCode.NONE);
  const record = await new ControlStore(store, 'c').read<TopicRecord>('topics/t');
  expect(record).not.toBeNull();
  expect(record!.value.topicId).not.toBe(first);
  expect(creator.topics().get('t')!.topicId).toBe(record!.value.topicId);
});

test('a topic whose record exists still answers TOPIC_ALREADY_EXISTS', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const node = testClusterNode({ store, clock, nodeId: 1 });
  await node.start();
  expect(await node.createTopic('t', 2)).toBe(true);
  const engine = { checkTopicConfigs() {} }; // a validating create checks configs with the engine's defaults
  const context = { ...OPEN_SECURITY, nodeId: 1, topology: new ClusterTopology(node, 1, new RegisteredAddresses(clock)), defaultPartitions: 1, engine } as unknown as BrokerContext;
  expect((await handleCreateTopics(context, CREATE)).topics[0]!.errorCode).toBe(ErrorCode.TOPIC_ALREADY_EXISTS);
  expect((await handleCreateTopics(context, { ...CREATE, validateOnly: true })).topics[0]!.errorCode).toBe(ErrorCode.TOPIC_ALREADY_EXISTS);
});
