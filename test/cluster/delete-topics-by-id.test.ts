// Review of issue 12 (DeleteTopics v6 by id, KIP-516). An id names one incarnation: a delete by
// the id of a deleted incarnation must delete nothing (UNKNOWN_TOPIC_ID), and a request naming
// both a name and an id must not delete the name's topic when the id is another's.
import { expect, test } from 'bun:test';
import type { BrokerContext } from '../../src/broker/context.ts';
import { handleDeleteTopics } from '../../src/broker/handlers/topics.ts';
import { ErrorCode } from '../../src/protocol/error-codes.ts';
import { ClusterTopology } from '../../src/broker/topology.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import type { TopicRecord } from '../../src/cluster/control-records.ts';
import { RegisteredAddresses } from '../../src/cluster/replica-address.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import type { Uuid } from '../../src/util/uuid.ts';
import { testClusterNode } from '../support/cluster-node.ts';
import { advanceThrough } from '../support/settle.ts';
import { OPEN_SECURITY } from '../support/broker-security.ts';

/** A scan interval no test here reaches: the node scans only when the test says. */
const NO_SCANS_OF_ITS_OWN_MS = 1e9;

/** Broker 2 creates t, broker 1 (the controller: the lowest live node id) lists it, broker 2 deletes and creates t again; broker 1 has not scanned since. */
async function recreatedElsewhere() {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const other = testClusterNode({ store, clock, nodeId: 2 });
  const stale = testClusterNode({ store, clock, nodeId: 1, scanIntervalMs: NO_SCANS_OF_ITS_OWN_MS });
  await other.start();
  await stale.start();
  expect(await other.createTopic('t', 1)).toBe(true);
  await stale.scan();
  const first = stale.topics().get('t')!.topicId;
  expect(await advanceThrough(clock, other.deleteTopic('t'), 'the delete', 50)).toBe(true);
  expect(await other.createTopic('t', 1)).toBe(true);
  const control = new ControlStore(store, 'c');
  const second = (await control.read<TopicRecord>('topics/t'))!.value.topicId;
  expect(second).not.toBe(first);
  const context = { ...OPEN_SECURITY, nodeId: 1, topology: new ClusterTopology(stale, 2, new RegisteredAddresses(clock)) } as unknown as BrokerContext;
  return { clock, control, first, second, context };
}

test('DeleteTopics v6 by the id of a deleted incarnation deletes nothing, though this broker still lists that incarnation', async () => {
  const { clock, control, first, second, context } = await recreatedElsewhere();
  const response = await advanceThrough(clock, handleDeleteTopics(context, { topics: [{ name: null, topicId: first as Uuid }], topicNames: [], timeoutMs: 1000 }), 'the delete by id', 50);
  expect(response.responses[0]!.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_ID);
  const record = await control.read<TopicRecord>('topics/t');
  expect(record?.value.topicId).toBe(second); // the new incarnation stands, unmarked
  expect(record?.value.deleting).not.toBe(true);
});

test("DeleteTopics v6 naming a topic by both name and another incarnation's id does not delete the current one", async () => {
  const { clock, control, first, second, context } = await recreatedElsewhere();
  const response = await advanceThrough(clock, handleDeleteTopics(context, { topics: [{ name: 't', topicId: first as Uuid }], topicNames: [], timeoutMs: 1000 }), 'the delete by name and id', 50);
  // Kafka's controller: "You may not specify both topic name and topic id." (INVALID_REQUEST).
  expect(response.responses[0]!.errorCode).not.toBe(ErrorCode.NONE);
  const record = await control.read<TopicRecord>('topics/t');
  expect(record?.value.topicId).toBe(second);
  expect(record?.value.deleting).not.toBe(true);
});
