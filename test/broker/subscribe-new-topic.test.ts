// Issue 12, wrong answer 3: a kafkajs consumer subscribed to three topics, one of them created
// just before (through another client, in a cluster through another broker), got "Unknown topic
// or partition" for it instead of seeing it on its next metadata refresh.
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { Kafka, logLevel } from 'kafkajs';
import { Broker } from '../../src/broker/broker.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tempDir } from '../support/temp-dir.ts';

setDefaultTimeout(60_000);

const brokers: Broker[] = [];
const MESSAGES_PER_TOPIC = 5;
/** Long enough for a consumer's group join and first fetches; shorter than the test's timeout. */
const READ_DEADLINE_MS = 30_000;

afterEach(async () => {
  for (const broker of brokers.splice(0)) await broker.stop().catch(() => {});
});

async function startSingle(): Promise<void> {
  brokers.push(await Broker.start({ listenHost: '127.0.0.1', listenPort: 0, nodeId: 1, engine: { directory: tempDir(), log: { flush: { kind: 'none' } } } }));
}

async function startCluster(count: number): Promise<void> {
  const store = new MemoryStore();
  for (let nodeId = 1; nodeId <= count; nodeId++) {
    brokers.push(
      await Broker.start({
        listenHost: '127.0.0.1',
        listenPort: 0,
        nodeId,
        cluster: { store, leaseMs: 10_000, scanIntervalMs: 1000 },
        engine: { directory: tempDir(), log: { flush: { kind: 'none' } }, wal: { store, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 2 } } },
      }),
    );
  }
}

function client(broker: Broker, clientId: string): Kafka {
  return new Kafka({ clientId, brokers: [`127.0.0.1:${broker.port}`], logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 100 } });
}

/**
 * Two topics exist with records; a third is created through `creator` and a consumer (bootstrapped
 * at `reader`) subscribes to all three at once: it reads every record of each, the new one too.
 */
async function subscribeWithNewTopic(creator: Broker, reader: Broker, prefix: string): Promise<void> {
  const topics = [`${prefix}-old-a`, `${prefix}-old-b`, `${prefix}-new`];
  const admin = client(creator, 'creator').admin();
  await admin.connect();
  await admin.createTopics({ topics: topics.slice(0, 2).map((topic) => ({ topic, numPartitions: 2 })) });
  const producer = client(creator, 'producer').producer();
  await producer.connect();
  for (const topic of topics.slice(0, 2)) await producer.send({ topic, acks: -1, messages: Array.from({ length: MESSAGES_PER_TOPIC }, (_, i) => ({ value: `${topic}-${i}` })) });
  await admin.createTopics({ topics: [{ topic: topics[2]!, numPartitions: 2 }], waitForLeaders: false });
  await admin.disconnect();

  const consumer = client(reader, 'reader').consumer({ groupId: `${prefix}-group`, maxWaitTimeInMs: 100 });
  const errors: string[] = [];
  consumer.on(consumer.events.CRASH, (event) => void errors.push(String(event.payload.error)));
  const seen = new Set<string>();
  try {
    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void seen.add(message.value!.toString()) });
    await producer.send({ topic: topics[2]!, acks: -1, messages: Array.from({ length: MESSAGES_PER_TOPIC }, (_, i) => ({ value: `${topics[2]}-${i}` })) });
    const deadline = performance.now() + READ_DEADLINE_MS;
    while (seen.size < topics.length * MESSAGES_PER_TOPIC && errors.length === 0 && performance.now() < deadline) await Bun.sleep(50);
  } finally {
    await producer.disconnect();
    await consumer.disconnect();
  }
  expect(errors).toEqual([]);
  expect(seen.size).toBe(topics.length * MESSAGES_PER_TOPIC);
}

test('single broker: a consumer subscribed to a topic created just before reads it with the others', async () => {
  await startSingle();
  await subscribeWithNewTopic(brokers[0]!, brokers[0]!, 'single');
});

test('cluster: a consumer bootstrapped at one broker reads a topic just created through another', async () => {
  await startCluster(2);
  await subscribeWithNewTopic(brokers[0]!, brokers[1]!, 'cluster');
});
