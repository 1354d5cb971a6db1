// Review of issue 9 findings 12 and 13 (KIP-392): the leader sends a consumer that names its rack
// to a follower in that rack. Kafka picks only a follower that is in sync and holds the fetch
// offset (RackAwareReplicaSelector over replicas caught up to it); sending the consumer to a
// follower that never reported, or is behind the offset, makes it bounce between that follower
// (OFFSET_OUT_OF_RANGE, or no connection at all) and the leader, and never read.
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { Kafka, logLevel } from 'kafkajs';
import type { FetchRequest } from '../../src/broker/apis/fetch.ts';
import { Broker } from '../../src/broker/broker.ts';
import { handleFetch } from '../../src/broker/handlers/fetch.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';
import { fetchRequest as fetchRequestOf } from '../support/requests.ts';

setDefaultTimeout(60_000);

const brokers: Broker[] = [];
afterEach(async () => {
  for (const broker of brokers.splice(0)) await broker.stop().catch(() => {});
});

function consumerFetch(topic: string, fetchOffset: number, rackId: string): FetchRequest {
  return fetchRequestOf({
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset, logStartOffset: -1, partitionMaxBytes: 1 << 20 }] }],
    forgottenTopicsData: [],
    rackId,
  });
}

test("a consumer in a follower's rack is not sent to a follower that never reported holding its fetch offset", async () => {
  const store = new MemoryStore();
  // Broker 2, in rack r2, holds a live lease and is the partition's follower, but applies and reports nothing.
  await new ControlStore(store, '').put('brokers/2', { nodeId: 2, host: '127.0.0.1', port: 1, rack: 'r2', stream: { writerId: 'broker-2', epoch: 0 }, leaseMs: 60_000, renewedAtMs: Date.now() });
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    rack: 'r1',
    cluster: { store, leaseMs: 2000, scanIntervalMs: 50 },
    engine: { directory: tempDir(), log: { flush: { kind: 'none' } }, wal: { store, writerId: 'broker-1', config: { uploadIntervalMs: 2 } } },
  });
  brokers.push(broker);
  const kafka = new Kafka({ clientId: 'racks', brokers: [`127.0.0.1:${broker.port}`], logLevel: logLevel.NOTHING, retry: { retries: 3 } });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'racked', numPartitions: 1, replicationFactor: 2 }] });
  await admin.disconnect();
  await until(() => broker.context.engine.leads('racked', 0), 'broker 1 to lead the partition');
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: 'racked', acks: -1, messages: [{ value: 'one' }, { value: 'two' }] }); // min.insync.replicas 1
  await producer.disconnect();
  const answer = (await handleFetch(broker.context, consumerFetch('racked', 0, 'r2'))).responses[0]!.partitions[0]!;
  expect({ preferredReadReplica: answer.preferredReadReplica, batches: answer.records?.length ?? 0 }).toEqual({ preferredReadReplica: -1, batches: 1 });
});
