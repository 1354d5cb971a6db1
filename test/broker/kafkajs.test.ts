// kafkajs 2.x, unchanged, against a Ferry broker on loopback: produce (acks all, gzip,
// idempotent), consume by partition and in a group, admin.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { CompressionTypes, Kafka, logLevel } from 'kafkajs';
import { Broker } from '../../src/broker/broker.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

setDefaultTimeout(60_000);

let broker: Broker;
let kafka: Kafka;
// One broker for the whole file (tempDir would remove it after the first test).
const directory = mkdtempSync(join(tmpdir(), 'ferry-broker-'));

beforeAll(async () => {
  broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    defaultPartitions: 3,
    metricsListen: { host: '127.0.0.1', port: 0 },
    engine: { directory, log: { flush: { kind: 'none' } }, wal: { store: new MemoryStore({ latency: 's3-express', seed: 1 }), writerId: 'broker-1', config: { uploadIntervalMs: 2 } } },
  });
  kafka = new Kafka({ clientId: 'ferry-test', brokers: [`127.0.0.1:${broker.port}`], logLevel: logLevel.NOTHING, retry: { retries: 3 } });
});

afterAll(async () => {
  await broker?.stop();
  rmSync(directory, { recursive: true, force: true });
});

describe('kafkajs against a Ferry broker', () => {
  test('admin creates, lists and deletes topics', async () => {
    const admin = kafka.admin();
    await admin.connect();
    expect(await admin.createTopics({ topics: [{ topic: 'admin-made', numPartitions: 4 }] })).toBe(true);
    expect(await admin.listTopics()).toContain('admin-made');
    const metadata = await admin.fetchTopicMetadata({ topics: ['admin-made'] });
    expect(metadata.topics[0]!.partitions.length).toBe(4);
    await admin.deleteTopics({ topics: ['admin-made'] });
    expect(await admin.listTopics()).not.toContain('admin-made');
    await admin.disconnect();
  });

  test('produces with acks all and gzip, and reads every message back by partition, in order', async () => {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 3 }] });
    await admin.disconnect();
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const sent: { partition: number; offset: string; value: string }[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const messages = Array.from({ length: 20 }, (_, i) => ({ key: `customer-${(batch * 20 + i) % 7}`, value: `order-${batch}-${i}` }));
      const results = await producer.send({ topic: 'orders', messages, acks: -1, compression: batch % 2 === 0 ? CompressionTypes.GZIP : CompressionTypes.None });
      for (const result of results) sent.push({ partition: result.partition, offset: result.baseOffset!, value: '' });
    }
    await producer.disconnect();
    const consumer = kafka.consumer({ groupId: 'reader-by-partition', maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic: 'orders', fromBeginning: true });
    const received = new Map<number, string[]>();
    let count = 0;
    await new Promise<void>((done) => {
      void consumer.run({
        eachMessage: async ({ partition, message }) => {
          received.set(partition, [...(received.get(partition) ?? []), `${message.offset}:${message.value!.toString()}`]);
          if (++count === 200) done();
        },
      });
    });
    await consumer.disconnect();
    expect(count).toBe(200);
    for (const [, values] of received) {
      const offsets = values.map((v) => Number(v.split(':')[0]));
      expect(offsets).toEqual(offsets.map((_, i) => i)); // every offset once, in order
    }
    // keyed messages stay on one partition each (murmur2, the same as Kafka's partitioner)
    const partitionsOfKey = new Map<string, Set<number>>();
    for (const [partition, values] of received)
      for (const v of values) {
        const [, batch, i] = /order-(\d+)-(\d+)/.exec(v)!.map(Number);
        const key = `customer-${(batch! * 20 + i!) % 7}`;
        partitionsOfKey.set(key, new Set([...(partitionsOfKey.get(key) ?? []), partition]));
      }
    for (const partitions of partitionsOfKey.values()) expect(partitions.size).toBe(1);
  });

  test('two consumers in one group split the partitions and together read everything once', async () => {
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'grouped', messages: Array.from({ length: 90 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })), acks: -1 });
    await producer.disconnect();
    const seen = new Map<string, string>();
    const consumers = [kafka.consumer({ groupId: 'pair', maxWaitTimeInMs: 100 }), kafka.consumer({ groupId: 'pair', maxWaitTimeInMs: 100 })];
    const assignments: number[][] = [[], []];
    await Promise.all(
      consumers.map(async (consumer, index) => {
        await consumer.connect();
        consumer.on(consumer.events.GROUP_JOIN, (event) => (assignments[index] = event.payload.memberAssignment.grouped ?? []));
        await consumer.subscribe({ topic: 'grouped', fromBeginning: true });
        await consumer.run({ eachMessage: async ({ message, partition }) => void seen.set(message.value!.toString(), `${index}:${partition}`) });
      }),
    );
    const deadline = Date.now() + 30_000;
    while (seen.size < 90 && Date.now() < deadline) await Bun.sleep(50);
    await Promise.all(consumers.map((c) => c.disconnect()));
    expect(seen.size).toBe(90);
    const byConsumer = new Set([...seen.values()].map((v) => v.split(':')[0]));
    expect(byConsumer.size).toBe(2); // both members got partitions
  });

  test('committed offsets survive: a restarted group member resumes after what it committed', async () => {
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'resume', messages: Array.from({ length: 10 }, (_, i) => ({ value: `first-${i}` })), acks: -1 });
    const readAll = async (expected: number) => {
      const consumer = kafka.consumer({ groupId: 'resumer', maxWaitTimeInMs: 100 });
      await consumer.connect();
      await consumer.subscribe({ topic: 'resume', fromBeginning: true });
      const values: string[] = [];
      await new Promise<void>(
        (done) =>
          void consumer.run({
            eachMessage: async ({ message }) => {
              values.push(message.value!.toString());
              if (values.length === expected) done();
            },
          }),
      );
      await consumer.disconnect(); // commits on the way out
      return values;
    };
    expect((await readAll(10)).length).toBe(10);
    await producer.send({ topic: 'resume', messages: [{ value: 'second-0' }, { value: 'second-1' }], acks: -1 });
    await producer.disconnect();
    expect((await readAll(2)).sort()).toEqual(['second-0', 'second-1']); // keyless: spread over partitions, so no order between them
  });

  test('GET /metrics serves Prometheus text with request counts and WAL latency', async () => {
    const text = await (await fetch(`http://127.0.0.1:${broker.metricsPort}/metrics`)).text();
    expect(text).toMatch(/ferry_broker_requests_total\{api="Produce"\} [1-9]/);
    expect(text).toContain('# TYPE ferry_wal_produce_to_durable_seconds histogram');
    expect((await fetch(`http://127.0.0.1:${broker.metricsPort}/other`)).status).toBe(404);
  });
});
