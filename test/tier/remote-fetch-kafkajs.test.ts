// Reads from the tier through the Kafka protocol (docs/tier-protocol.md [D2], [D3]): once local
// retention has removed tiered segments from the broker's disk, kafkajs, unchanged, still finds
// the partition's earliest offset at the tier's start and reads every record from offset 0.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { Kafka, logLevel } from 'kafkajs';
import { Broker } from '../../src/broker/broker.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tempDir } from '../support/temp-dir.ts';

setDefaultTimeout(60_000);

const RECORDS = 120;
let broker: Broker;
let kafka: Kafka;

beforeAll(async () => {
  const store = new MemoryStore({ latency: 's3-express', seed: 2 });
  broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    engine: {
      directory: tempDir(),
      log: { flush: { kind: 'none' }, segmentBytes: 4096, localRetentionBytes: 1 },
      wal: { store, writerId: 'broker-1', config: { uploadIntervalMs: 2 } },
      tier: { store, control: new ControlStore(store, ''), intervalMs: 3_600_000 },
    },
  });
  kafka = new Kafka({ clientId: 'ferry-tier-test', brokers: [`127.0.0.1:${broker.port}`], logLevel: logLevel.NOTHING, retry: { retries: 3 } });
});

afterAll(async () => {
  await broker?.stop();
});

test('kafkajs reads every record from offset 0 after the local log dropped what the tier holds', async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'history', numPartitions: 1 }] });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  for (let i = 0; i < RECORDS; i++) await producer.send({ topic: 'history', acks: -1, messages: [{ value: `event-${i}-`.padEnd(200, 'x') }] });
  await producer.disconnect();
  const engine = broker.context.engine;
  while ((await engine.tierer!.tierDue()) > 0);
  expect(engine.enforceRetention()).toBeGreaterThan(0);
  const localStart = engine.localLogStartOffset('history', 0);
  expect(localStart).toBeGreaterThan(0);

  const [earliest] = await admin.fetchTopicOffsetsByTimestamp('history', 0); // timestamp 0: the first record at or after it
  expect(earliest!.offset).toBe('0');
  const offsets = await admin.fetchTopicOffsets('history');
  expect(offsets[0]).toMatchObject({ low: '0', high: String(RECORDS) });
  await admin.disconnect();

  const consumer = kafka.consumer({ groupId: 'from-the-start', maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic: 'history', fromBeginning: true });
  const received: { offset: number; value: string }[] = [];
  await new Promise<void>((done) => {
    void consumer.run({
      eachMessage: async ({ message }) => {
        received.push({ offset: Number(message.offset), value: message.value!.toString() });
        if (received.length === RECORDS) done();
      },
    });
  });
  await consumer.disconnect();
  expect(received.map((r) => r.offset)).toEqual(Array.from({ length: RECORDS }, (_, i) => i));
  expect(received.every((r, i) => r.value.startsWith(`event-${i}-`))).toBe(true);
});
