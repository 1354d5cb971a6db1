// Two broker processes share one object store (docs/cluster-protocol.md). The leader of a
// partition is killed with SIGKILL while a kafkajs producer writes with acks=all; the survivor
// takes the partition over (seals, rebuilds from the WAL objects) and the producer goes on. Every
// acknowledged message is then read back from the survivor once, in order, at its offset.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { Kafka, logLevel } from 'kafkajs';

setDefaultTimeout(90_000);

const root = mkdtempSync(join(tmpdir(), 'ferry-failover-'));
const brokers: { nodeId: number; port: number; process: Subprocess<'ignore', 'pipe', 'inherit'> }[] = [];
const CLI = `${import.meta.dir}/../../src/cli.ts`;
const LEASE_MS = 1500;

afterAll(() => {
  for (const broker of brokers) broker.process.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

async function startBroker(nodeId: number): Promise<number> {
  const args = [
    'broker',
    '--node-id',
    String(nodeId),
    '--listen',
    '127.0.0.1:0',
    '--data',
    join(root, `broker-${nodeId}`),
    '--wal-store',
    `file:${join(root, 'objects')}`,
    '--cluster-store',
    `file:${join(root, 'objects')}`,
    '--create-store',
    '--lease-ms',
    String(LEASE_MS),
    '--scan-interval-ms',
    '200',
    '--metrics',
    'off',
  ];
  const child = Bun.spawn([process.execPath, CLI, ...args], { stdout: 'pipe', stderr: 'inherit' });
  const reader = child.stdout.getReader();
  let text = '';
  while (!/listening on 127\.0\.0\.1:(\d+)/.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`broker ${nodeId} exited: ${text}`);
    text += new TextDecoder().decode(value);
  }
  const port = Number(/listening on 127\.0\.0\.1:(\d+)/.exec(text)![1]);
  void (async () => {
    while (!(await reader.read()).done);
  })(); // keep draining its log
  brokers.push({ nodeId, port, process: child });
  return port;
}

test('SIGKILL of a partition leader: the other broker takes over and nothing acknowledged is lost', async () => {
  const ports = [await startBroker(1), await startBroker(2)];
  const kafka = new Kafka({
    clientId: 'failover-test',
    brokers: ports.map((port) => `127.0.0.1:${port}`),
    logLevel: logLevel.NOTHING,
    retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 },
  });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 2 }], waitForLeaders: true });
  const leaders = async () => (await admin.fetchTopicMetadata({ topics: ['orders'] })).topics[0]!.partitions.map((p) => p.leader);
  for (let i = 0; i < 100 && (await leaders()).some((leader) => leader < 0); i++) await Bun.sleep(100);
  expect((await leaders()).every((leader) => leader > 0)).toBe(true);

  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const acknowledged: { partition: number; offset: number; value: string }[] = [];
  const send = async (i: number) => {
    const partition = i % 2;
    const [result] = await producer.send({ topic: 'orders', acks: -1, messages: [{ partition, value: `m-${i}` }] });
    acknowledged.push({ partition, offset: Number(result!.baseOffset), value: `m-${i}` });
  };
  let i = 0;
  for (; i < 40; i++) await send(i);
  const victim = (await leaders())[0]!;
  brokers.find((b) => b.nodeId === victim)!.process.kill('SIGKILL');
  const survivor = brokers.find((b) => b.nodeId !== victim)!;
  for (; i < 80; i++) await send(i); // retried by kafkajs until the survivor leads partition 0
  await producer.disconnect();
  expect(await leaders()).toEqual([survivor.nodeId, survivor.nodeId]);
  // Everything the log holds (acknowledged or not): reading up to these ends shows any duplicate.
  const ends = (await admin.fetchTopicOffsets('orders')).reduce((sum, p) => sum + Number(p.high), 0);
  await admin.disconnect();

  // Read both partitions from the survivor alone.
  const reader = new Kafka({ clientId: 'failover-reader', brokers: [`127.0.0.1:${survivor.port}`], logLevel: logLevel.NOTHING });
  const consumer = reader.consumer({ groupId: 'failover-check', maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic: 'orders', fromBeginning: true });
  const read: { partition: number; offset: number; value: string }[] = [];
  await new Promise<void>(
    (done) =>
      void consumer.run({
        eachMessage: async ({ partition, message }) => {
          read.push({ partition, offset: Number(message.offset), value: message.value!.toString() });
          if (read.length >= ends) done();
        },
      }),
  );
  await consumer.disconnect();
  expect(ends).toBe(acknowledged.length);

  for (const partition of [0, 1]) {
    const got = read.filter((r) => r.partition === partition);
    const acked = acknowledged.filter((a) => a.partition === partition);
    expect(got.map((r) => r.offset)).toEqual(got.map((_, index) => index)); // contiguous, from 0, once each
    expect(got.map((r) => r.value)).toEqual(acked.map((a) => a.value)); // every acknowledged one, in order, nothing else
    expect(acked.map((a) => a.offset)).toEqual(acked.map((_, index) => index));
  }
});
