// Failover from kill -9 of a partition leader to the first acknowledged produce on the new leader
// (issue 11 item 5), with a real client: 3 `ferry broker` processes on one file store at default
// lease and scan settings, kafkajs producing acks=all to one partition one message at a time; each
// round kills that partition's leader with SIGKILL, times kill -> first acknowledged send, then
// restarts the killed broker on its directory and port. Prints every round and p50/p99.
//   npx bun bench/failover-kill.ts [--rounds 20] [--partitions 6] [--peer-port off] [--history-mb 0]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Subprocess } from 'bun';
import { Kafka, logLevel } from 'kafkajs';

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '20' }, partitions: { type: 'string', default: '6' }, 'peer-port': { type: 'string' }, 'history-mb': { type: 'string', default: '0' }, 'lease-ms': { type: 'string' } } });
const ROUNDS = Number(args.rounds);
const PARTITIONS = Number(args.partitions);
const BROKERS = 3;
const FIRST_PORT = 29092;
const CLI = `${import.meta.dir}/../src/cli.ts`;
const TOPIC = 'failover';
/** After a restart: the broker is in every scan's view and the partition's leader is settled. */
const SETTLE_MS = 3_000;
const MESSAGE_BYTES = 1_000;

const root = mkdtempSync(join(tmpdir(), 'ferry-failover-bench-'));
let lastKillAt = 0;
const processes = new Map<number, Subprocess<'ignore', 'pipe', 'inherit'>>();

async function startBroker(nodeId: number): Promise<void> {
  const extra = [...(args['peer-port'] === undefined ? [] : ['--peer-port', args['peer-port']]), ...(args['lease-ms'] === undefined ? [] : ['--lease-ms', args['lease-ms']])];
  const cli = ['broker', '--node-id', String(nodeId), '--listen', `127.0.0.1:${FIRST_PORT + nodeId - 1}`, '--data', join(root, `broker-${nodeId}`), '--wal-store', `file:${join(root, 'objects')}`, '--cluster-store', `file:${join(root, 'objects')}`, '--metrics', 'off', '--partitions', String(PARTITIONS), ...extra];
  const child = Bun.spawn([process.execPath, CLI, ...cli], { stdout: 'pipe', stderr: 'inherit' });
  const reader = child.stdout.getReader();
  let text = '';
  while (!text.includes('listening on')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`broker ${nodeId} exited: ${text}`);
    text += new TextDecoder().decode(value);
  }
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      if (process.env.FAILOVER_DEBUG !== undefined) for (const line of new TextDecoder().decode(value).split('\n')) if (/exited|claimed|serving|gone|released/.test(line)) console.log(`  ${(performance.now() - lastKillAt).toFixed(0)} ms broker ${nodeId}: ${line}`);
    }
  })();
  processes.set(nodeId, child);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

try {
  for (let id = 1; id <= BROKERS; id++) await startBroker(id);
  const kafka = new Kafka({ clientId: 'failover-bench', brokers: Array.from({ length: BROKERS }, (_, i) => `127.0.0.1:${FIRST_PORT + i}`), logLevel: process.env.KAFKAJS_DEBUG === undefined ? logLevel.NOTHING : logLevel.DEBUG, retry: { retries: 100, initialRetryTime: 50, maxRetryTime: 500 } });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS }] });
  const leaderOf = async () => (await admin.fetchTopicMetadata({ topics: [TOPIC] })).topics[0]!.partitions.find((p) => p.partitionId === 0)!.leader;
  while ((await leaderOf()) < 1) await Bun.sleep(100);
  const producer = kafka.producer({ allowAutoTopicCreation: false, retry: { retries: 100, initialRetryTime: 50, maxRetryTime: 500 } });
  await producer.connect();
  const payload = 'x'.repeat(MESSAGE_BYTES);
  const send = () => producer.send({ topic: TOPIC, acks: -1, messages: [{ partition: 0, value: payload }] });
  const historyMessages = Math.ceil((Number(args['history-mb']) * 1e6) / MESSAGE_BYTES);
  for (let sent = 0; sent < historyMessages; sent += 1000) await producer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: 1000 }, () => ({ partition: 0, value: payload })) });
  const results: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    await send(); // the partition is led and acknowledging
    const victim = await leaderOf();
    const killedAt = performance.now();
    lastKillAt = killedAt;
    processes.get(victim)!.kill('SIGKILL');
    await processes.get(victim)!.exited;
    await send();
    const tookMs = performance.now() - killedAt;
    results.push(tookMs);
    console.log(`round ${round}: killed broker ${victim}, first acknowledged produce on the new leader (broker ${await leaderOf()}) after ${tookMs.toFixed(0)} ms`);
    await startBroker(victim);
    await Bun.sleep(SETTLE_MS);
  }
  await producer.disconnect();
  await admin.disconnect();
  const sorted = [...results].sort((a, b) => a - b);
  console.log(`kill -9 -> first acknowledged produce over ${ROUNDS} kills: p50 ${percentile(sorted, 50).toFixed(0)} ms, p99 ${percentile(sorted, 99).toFixed(0)} ms, min ${sorted[0]!.toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms`);
} finally {
  for (const child of processes.values()) child.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
}
