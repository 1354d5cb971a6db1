// [K1] End to end: two `ferry broker` processes on one file store, with a lease far longer than the
// test may wait. The leader of a partition is killed with SIGKILL; the survivor learns it from the
// peer link (the connection ends, the listener refuses) and leads the partition within seconds, and
// a kafkajs acks=all produce succeeds there: nothing waited for the lease.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { Kafka, logLevel } from 'kafkajs';

setDefaultTimeout(60_000);

/** Far past TAKEOVER_BOUND_MS: a takeover within the bound cannot have come from the lease. */
const LEASE_MS = 60_000;
const TAKEOVER_BOUND_MS = 5_000;
const CLI = `${import.meta.dir}/../../src/cli.ts`;
const root = mkdtempSync(join(tmpdir(), 'ferry-kill-takeover-'));
const brokers: { nodeId: number; port: number; process: Subprocess<'ignore', 'pipe', 'inherit'> }[] = [];

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
    '--metrics',
    'off',
    ...(process.env.FERRY_TEST_PEER_PORT === undefined ? [] : ['--peer-port', process.env.FERRY_TEST_PEER_PORT]),
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
  })();
  brokers.push({ nodeId, port, process: child });
  return port;
}

test('kill -9 of a leader: the survivor acknowledges on its partition within seconds, long before the lease', async () => {
  const ports = [await startBroker(1), await startBroker(2)];
  const kafka = new Kafka({
    clientId: 'kill-takeover',
    brokers: ports.map((port) => `127.0.0.1:${port}`),
    logLevel: logLevel.NOTHING,
    retry: { retries: 100, initialRetryTime: 50, maxRetryTime: 200 },
  });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 2 }] });
  const leaders = async () => (await admin.fetchTopicMetadata({ topics: ['orders'] })).topics[0]!.partitions.sort((x, y) => x.partitionId - y.partitionId).map((p) => p.leader);
  // The second broker's first scan sees the first one as new: a whole lease would pass before it
  // takes anything over, so both lead a partition only once each claimed its own share.
  for (let i = 0; i < 200 && new Set(await leaders()).size < 2; i++) await Bun.sleep(100);
  expect(new Set(await leaders())).toEqual(new Set([1, 2]));
  await Bun.sleep(2_500); // a scan of each (every 1 s by default) sees the other's peer port and connects

  const producer = kafka.producer({ retry: { retries: 100, initialRetryTime: 50, maxRetryTime: 200 } });
  await producer.connect();
  await producer.send({ topic: 'orders', acks: -1, messages: [{ partition: 0, value: 'before' }] });
  const victim = (await leaders())[0]!;
  const killedAt = performance.now();
  brokers.find((b) => b.nodeId === victim)!.process.kill('SIGKILL');
  const [result] = await producer.send({ topic: 'orders', acks: -1, messages: [{ partition: 0, value: 'after' }] });
  const tookMs = performance.now() - killedAt;
  expect(tookMs).toBeLessThan(TAKEOVER_BOUND_MS);
  expect(Number(result!.baseOffset)).toBe(1); // 'before' kept at 0: the survivor rebuilt it from the WAL
  expect(await leaders()).toEqual([3 - victim, 3 - victim]);
  await producer.disconnect();
  await admin.disconnect();
});
