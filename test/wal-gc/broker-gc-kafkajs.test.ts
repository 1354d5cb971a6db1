// WAL garbage collection in a broker, seen through the Kafka protocol (docs/tier-protocol.md [G]):
// a producer writes through tiering with small segments, the collector runs after each round, the
// WAL store's object count stays bounded while the tier grows, and kafkajs still reads every
// record from offset 0 (from the tier, then the local log).
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { Kafka, logLevel } from 'kafkajs';
import { Broker } from '../../src/broker/broker.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tempDir } from '../support/temp-dir.ts';

setDefaultTimeout(60_000);

const ROUNDS = 6;
const RECORDS_PER_ROUND = 25;
const RECORDS = ROUNDS * RECORDS_PER_ROUND;
/** Tier rounds and collector passes run when the test asks. */
const DRIVEN_BY_THE_TEST_MS = 3_600_000;
let broker: Broker;
let kafka: Kafka;
const wal = new MemoryStore({ latency: 's3-express', seed: 3 });
const tier = new MemoryStore({ latency: 's3-express', seed: 4 });

beforeAll(async () => {
  broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    engine: {
      directory: tempDir(),
      log: { flush: { kind: 'none' }, segmentBytes: 4096, localRetentionBytes: 1 },
      wal: { store: wal, writerId: 'broker-1', config: { uploadIntervalMs: 2 } },
      tier: { store: tier, control: new ControlStore(tier, ''), intervalMs: DRIVEN_BY_THE_TEST_MS },
      walGcIntervalMs: DRIVEN_BY_THE_TEST_MS,
    },
  });
  kafka = new Kafka({ clientId: 'ferry-wal-gc-test', brokers: [`127.0.0.1:${broker.port}`], logLevel: logLevel.NOTHING, retry: { retries: 3 } });
});

afterAll(async () => {
  await broker?.stop();
});

test('the WAL stays bounded while the tier grows, and kafkajs reads every record from 0', async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'history', numPartitions: 1 }] });
  await admin.disconnect();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const engine = broker.context.engine;
  const walObjects: number[] = [];
  const tierObjects: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < RECORDS_PER_ROUND; i++) await producer.send({ topic: 'history', acks: -1, messages: [{ value: `event-${round * RECORDS_PER_ROUND + i}-`.padEnd(200, 'x') }] });
    while ((await engine.tierer!.tierDue()) > 0);
    engine.enforceRetention();
    await engine.walCollector!.collect();
    walObjects.push((await wal.list('wal/')).objects.length);
    tierObjects.push((await tier.list('tier/')).objects.length);
  }
  await producer.disconnect();
  // One WAL object per acks=all send at most: without GC the WAL would hold RECORDS of them.
  expect(Math.max(...walObjects)).toBeLessThan(2 * RECORDS_PER_ROUND);
  expect(tierObjects.at(-1)!).toBeGreaterThan(tierObjects[0]!);
  expect(engine.localLogStartOffset('history', 0)).toBeGreaterThan(0);

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
