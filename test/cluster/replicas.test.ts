// Replication factor 2 across brokers: the follower rebuilds the partition from WAL objects
// alone, and a consumer that names its rack (KIP-392) is sent to the replica in its rack.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { Broker } from '../../src/broker/broker.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(60_000);

const root = mkdtempSync(join(tmpdir(), 'ferry-replicas-'));
const brokers: Broker[] = [];

afterAll(async () => {
  for (const broker of brokers) await broker.stop().catch(() => {});
  rmSync(root, { recursive: true, force: true });
});

function requests(broker: Broker, api: string): number {
  const match = new RegExp(`ferry_broker_requests_total\\{api="${api}"\\} (\\d+)`).exec(broker.metrics.renderPrometheus());
  return Number(match?.[1] ?? 0);
}

test('RF 2: acks=all waits for the follower, which rebuilds from the WAL; a consumer in its rack reads from it', async () => {
  const store = new MemoryStore({ latency: 's3-express', seed: 7 });
  for (const [nodeId, rack] of [
    [1, 'az-a'],
    [2, 'az-b'],
  ] as const) {
    brokers.push(
      await Broker.start({
        listenHost: '127.0.0.1',
        listenPort: 0,
        nodeId,
        rack,
        minInsyncReplicas: 2,
        cluster: { store, leaseMs: 2000, scanIntervalMs: 100 },
        engine: { directory: join(root, `broker-${nodeId}`), log: { flush: { kind: 'none' } }, wal: { store, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 2 } } },
      }),
    );
  }
  const kafka = new Kafka({ clientId: 'replicas', brokers: brokers.map((b) => `127.0.0.1:${b.port}`), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [
      { topic: 'zoned', numPartitions: 1, replicationFactor: 2 },
      { topic: 'fanned', numPartitions: 4, replicationFactor: 2 },
    ],
  });
  let partition = { leader: -1, replicas: [] as number[] };
  for (let i = 0; i < 200 && !(partition.leader > 0 && partition.replicas.length === 2); i++) {
    partition = (await admin.fetchTopicMetadata({ topics: ['zoned'] })).topics[0]!.partitions[0]!;
    await Bun.sleep(50);
  }
  expect(partition.replicas.length).toBe(2);
  const leader = brokers.find((b) => b.context.nodeId === partition.leader)!;
  const follower = brokers.find((b) => b.context.nodeId !== partition.leader)!;

  // min.insync.replicas 2: each acknowledgement needs the follower's report (a Fetch with its replica id).
  const reportsBefore = requests(leader, 'Fetch');
  const producer = kafka.producer();
  await producer.connect();
  for (let i = 0; i < 30; i++) await producer.send({ topic: 'zoned', acks: -1, messages: [{ value: `z-${i}` }] });
  await producer.disconnect();
  expect(requests(leader, 'Fetch') - reportsBefore).toBeGreaterThanOrEqual(30);

  // The follower's copy comes from the object store, byte for byte the leader's batches.
  await until(() => follower.context.engine.serves('zoned', 0) && follower.context.engine.fetch('zoned', 0, 0).highWatermark === 30, 'the follower to apply');
  const ours = follower.context.engine.fetch('zoned', 0, 0, { maxBytes: 1 << 20 }).batches.map((b) => Buffer.from(b.bytes).toString('hex'));
  const theirs = leader.context.engine.fetch('zoned', 0, 0, { maxBytes: 1 << 20 }).batches.map((b) => Buffer.from(b.bytes).toString('hex'));
  expect(ours).toEqual(theirs);
  let refused: unknown;
  try {
    await new Kafka({ clientId: 'direct', brokers: [`127.0.0.1:${follower.port}`], logLevel: logLevel.NOTHING, retry: { retries: 0 } }).producer().send({ topic: 'zoned', messages: [{ value: 'x' }] });
  } catch (error) {
    refused = error;
  }
  expect(refused).toBeDefined(); // only the leader takes writes (the client is told NOT_LEADER / redirected)

  // Four partitions over two brokers: each follows the other's two from one reader of its stream.
  const fanned = kafka.producer();
  await fanned.connect();
  for (let i = 0; i < 40; i++) await fanned.send({ topic: 'fanned', acks: -1, messages: [{ partition: i % 4, value: `f-${i}` }] });
  await fanned.disconnect();
  const copies = (broker: Broker, p: number) =>
    broker.context.engine.serves('fanned', p) ? broker.context.engine.fetch('fanned', p, 0, { maxBytes: 1 << 20 }).batches.map((b) => Buffer.from(b.bytes).toString('hex')) : null;
  await until(() => [0, 1, 2, 3].every((p) => brokers.every((b) => copies(b, p)?.length === 10)), 'both copies of every fanned partition');
  for (const p of [0, 1, 2, 3]) expect(copies(brokers[0]!, p)).toEqual(copies(brokers[1]!, p));

  // KIP-392: a consumer in the follower's rack is sent there by the leader.
  const before = requests(follower, 'Fetch');
  const consumer = new Kafka({ clientId: 'zone-b', brokers: [`127.0.0.1:${leader.port}`], logLevel: logLevel.NOTHING }).consumer({
    groupId: 'zone-b-readers',
    rackId: follower.context.rack!,
    maxWaitTimeInMs: 100,
  });
  await consumer.connect();
  await consumer.subscribe({ topic: 'zoned', fromBeginning: true });
  const values: string[] = [];
  await new Promise<void>(
    (done) =>
      void consumer.run({
        eachMessage: async ({ message }) => {
          values.push(message.value!.toString());
          if (values.length === 30) done();
        },
      }),
  );
  await consumer.disconnect();
  expect(values).toEqual(Array.from({ length: 30 }, (_, i) => `z-${i}`));
  expect(requests(follower, 'Fetch') - before).toBeGreaterThan(0);

  // Deleting a topic of the cluster: every broker lets it go.
  await admin.createTopics({ topics: [{ topic: 'scratch', numPartitions: 2 }] });
  await until(() => brokers.every((b) => b.context.topology.topics().has('scratch')), 'the topic to appear');
  await admin.deleteTopics({ topics: ['scratch'] });
  await until(() => brokers.every((b) => !b.context.topology.topics().has('scratch') && !b.context.engine.serves('scratch', 0) && !b.context.engine.serves('scratch', 1)), 'every broker to let it go');
  expect((await admin.listTopics()).sort()).toEqual(['fanned', 'zoned']);
  await admin.disconnect();

  // Without its follower, the leader cannot acknowledge with acks=all (min.insync.replicas 2).
  await follower.stop();
  brokers.splice(brokers.indexOf(follower), 1);
  const lonely = new Kafka({ clientId: 'lonely', brokers: [`127.0.0.1:${leader.port}`], logLevel: logLevel.NOTHING, retry: { retries: 0 } }).producer();
  await lonely.connect();
  let timedOut: unknown;
  try {
    await lonely.send({ topic: 'zoned', acks: -1, timeout: 500, messages: [{ value: 'unreplicated' }] });
  } catch (error) {
    timedOut = error;
  }
  await lonely.disconnect();
  expect(String(timedOut)).toMatch(/timed out|Request Timed Out|REQUEST_TIMED_OUT/i);
});
