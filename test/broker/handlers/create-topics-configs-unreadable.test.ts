// Found by the simulation (issue 25, seed 32): a cluster CreateTopics whose create-if-absent took
// effect then read the new topic's configs back from the control store, and a store that failed
// that read turned a created topic into KAFKA_STORAGE_ERROR, an answer Kafka never gives
// CreateTopics (the client takes it for "not created" while the topic exists). Created, the topic
// is answered created; the configs it could not read are answered null, the read's error in
// topicConfigErrorCode (CreateTopics v5+, as Kafka).
import { expect, test } from 'bun:test';
import { handleCreateTopics } from '../../../src/broker/handlers/topics.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { startOneBrokerCluster } from '../../support/one-broker-cluster.ts';

test('a created topic whose configs cannot be read back is answered created, its configs null', async () => {
  const store = new MemoryStore();
  const broker = await startOneBrokerCluster(store);
  try {
    store.injectFault({ operation: 'get', kind: 'Unavailable', keyPrefix: 'control/topics/t', count: 100 });
    const topic = { name: 't', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] };
    const answer = await handleCreateTopics(broker.context, { topics: [topic], timeoutMs: 5_000, validateOnly: false });
    expect(answer.topics.map((t) => [t.name, t.errorCode, t.configs, t.topicConfigErrorCode])).toEqual([['t', ErrorCode.NONE, null, ErrorCode.KAFKA_STORAGE_ERROR]]);
    expect(await broker.context.topology.partitionCount('t')).toBe(1);
  } finally {
    await broker.stop();
  }
});
