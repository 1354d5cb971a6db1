// kafkajs, unchanged, creating topics with configs on a Ferry broker: the configs are kept and take
// effect (LogAppendTime stamps the batches and the Produce response says when; max.message.bytes
// refuses a larger batch), and a bad config creates no topic.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { Kafka, logLevel } from 'kafkajs';
import { Broker } from '../../src/broker/broker.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

setDefaultTimeout(60_000);

let broker: Broker;
let kafka: Kafka;
// One broker for the whole file (tempDir would remove its directory after the first test).
const directory = mkdtempSync(join(tmpdir(), 'ferry-topic-configs-'));

beforeAll(async () => {
  broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    engine: { directory, log: { flush: { kind: 'none' } }, wal: { store: new MemoryStore(), writerId: 'broker-1', config: { uploadIntervalMs: 1 } } },
  });
  kafka = new Kafka({ clientId: 'ferry-topic-configs', brokers: [`127.0.0.1:${broker.port}`], logLevel: logLevel.NOTHING, retry: { retries: 2 } });
});

afterAll(async () => {
  await broker?.stop();
  rmSync(directory, { recursive: true, force: true });
});

test("message.timestamp.type=LogAppendTime: the Produce response and the consumed records carry the broker's append time", async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'stamped', numPartitions: 1, configEntries: [{ name: 'message.timestamp.type', value: 'LogAppendTime' }] }] });
  await admin.disconnect();
  expect(broker.context.engine.topicConfigs('stamped')).toEqual({ 'message.timestamp.type': 'LogAppendTime' });
  const producer = kafka.producer();
  await producer.connect();
  const before = Date.now();
  const [sent] = await producer.send({ topic: 'stamped', acks: -1, messages: [{ value: 'a', timestamp: String(before - 3_600_000) }] });
  await producer.disconnect();
  const appendTime = Number(sent!.logAppendTime);
  expect(appendTime).toBeGreaterThanOrEqual(before);
  expect(appendTime).toBeLessThanOrEqual(Date.now());
  const consumer = kafka.consumer({ groupId: 'stamped-reader', maxWaitTimeInMs: 50 });
  await consumer.connect();
  await consumer.subscribe({ topic: 'stamped', fromBeginning: true });
  const timestamp = await new Promise<string>((done) => void consumer.run({ eachMessage: async ({ message }) => done(message.timestamp) }));
  await consumer.disconnect();
  expect(Number(timestamp)).toBe(appendTime);
});

test('max.message.bytes refuses a larger batch (MESSAGE_TOO_LARGE); a bad config creates no topic (INVALID_CONFIG)', async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'small', numPartitions: 1, configEntries: [{ name: 'max.message.bytes', value: '1000' }] }] });
  await expect(admin.createTopics({ topics: [{ topic: 'bad', numPartitions: 1, configEntries: [{ name: 'retention.ms', value: 'abc' }] }] })).rejects.toMatchObject({
    errors: [expect.objectContaining({ type: 'INVALID_CONFIG' })],
  });
  expect(await admin.listTopics()).not.toContain('bad');
  await admin.disconnect();
  const producer = kafka.producer({ retry: { retries: 0 } });
  await producer.connect();
  await producer.send({ topic: 'small', acks: -1, messages: [{ value: 'x' }] });
  await expect(producer.send({ topic: 'small', acks: -1, messages: [{ value: 'x'.repeat(2000) }] })).rejects.toMatchObject({ type: 'MESSAGE_TOO_LARGE' });
  await producer.disconnect();
});
