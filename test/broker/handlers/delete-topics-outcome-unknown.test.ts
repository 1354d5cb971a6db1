// Found by the simulation (seeds 1049, 1742): a cluster DeleteTopics whose store write failed after
// the topic record was marked `deleting` answered KAFKA_STORAGE_ERROR. The topic was gone all the
// same (and a scan now finishes the delete), but the client took the error for "nothing happened".
// A topic change whose control-store write fails partway has an unknown outcome: REQUEST_TIMED_OUT,
// as Kafka answers when its controller did not finish in time.
import { expect, test } from 'bun:test';
import { handleDeleteTopics } from '../../../src/broker/handlers/topics.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { startOneBrokerCluster } from '../../support/one-broker-cluster.ts';

test('a delete whose control-store write fails after the mark answers REQUEST_TIMED_OUT, not a storage error', async () => {
  const store = new MemoryStore();
  const broker = await startOneBrokerCluster(store);
  try {
    expect(await broker.context.topology.createTopic('t', 1)).toBe(true);
    store.injectFault({ operation: 'delete', kind: 'Unavailable', keyPrefix: 'control/topics/', count: 100 });
    const answer = await handleDeleteTopics(broker.context, { topicNames: ['t'], topics: [], timeoutMs: 5_000 });
    expect(answer.responses.map((r) => [r.name, r.errorCode])).toEqual([['t', ErrorCode.REQUEST_TIMED_OUT]]);
  } finally {
    await broker.stop();
  }
});
