// Black-box run (d) of issue 9: three cluster brokers on one file store, a topic with replication
// factor 3 and min.insync.replicas 2, a producer with acks=all; kill -9 one broker. acks=all must
// resume on every partition (the dead broker led one of them and followed the others) within a
// bound of the lease plus a few scans, and nothing acknowledged may be lost, duplicated or moved.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { SeededRandom } from '../../src/util/random.ts';
import { AckLedger, type AckedRecord, type LedgerVerdict } from '../support/ack-ledger.ts';
import { BrokerProcess, killAll } from '../support/broker-process.ts';

export interface MinInsyncRunOptions {
  readonly seed: number;
  /** Short, so a takeover happens within the run; the resume bound is derived from it. */
  readonly leaseMs: number;
  readonly scanIntervalMs: number;
  /** Records acknowledged on each partition before the kill. */
  readonly recordsBefore: number;
  /** Records acknowledged on each partition after it resumed. */
  readonly recordsAfter: number;
  readonly log?: (line: string) => void;
}

export interface MinInsyncRunResult {
  readonly victim: number;
  /** Per partition: ms from the kill to its first acks=all acknowledgement, null if none within the bound. */
  readonly resumedAfterMs: (number | null)[];
  readonly boundMs: number;
  readonly verdict: LedgerVerdict;
  /** The surviving brokers' output, for a failure message. */
  readonly output: string;
}

const TOPIC = 'min-insync';
const PARTITIONS = 3;
const BROKERS = 3;
/** Slack on top of lease + scans for a loaded machine (2 cores shared by many processes). */
const RESUME_SLACK_MS = 15_000;
/** Scans a takeover may need: see the lease lapse, claim, seal and rebuild, followers re-target. */
const RESUME_SCANS = 5;
/** Each acks=all attempt's produce timeout; a failed attempt is retried with a new value. */
const ATTEMPT_TIMEOUT_MS = 1000;
const RETRY_PAUSE_MS = 100;
const READ_BACK_TIMEOUT_MS = 30_000;

export async function runMinInsync(options: MinInsyncRunOptions): Promise<MinInsyncRunResult> {
  const random = new SeededRandom(options.seed);
  const log = options.log ?? (() => {});
  const root = mkdtempSync(join(tmpdir(), 'ferry-min-insync-'));
  const store = `file:${join(root, 'store')}`;
  const args = [
    '--wal-store',
    store,
    '--cluster-store',
    store,
    '--create-store',
    '--replication-factor',
    '3',
    '--min-insync-replicas',
    '2',
    '--lease-ms',
    String(options.leaseMs),
    '--scan-interval-ms',
    String(options.scanIntervalMs),
    '--upload-interval-ms',
    '5',
    '--no-auto-create',
  ];
  const brokers = Array.from({ length: BROKERS }, (_, i) => new BrokerProcess({ nodeId: i + 1, data: join(root, `broker-${i + 1}`), args }));
  const ledger = new AckLedger();
  let sent = 0;
  const value = () => `s${options.seed}-v${sent++}`;
  try {
    await Promise.all(brokers.map((broker) => broker.start()));
    const kafka = new Kafka({ clientId: 'min-insync', brokers: brokers.map((b) => b.bootstrap), logLevel: logLevel.NOTHING, retry: { retries: 0 } });
    await createAndAwaitReplicas(kafka);
    const producer = kafka.producer({ retry: { retries: 0 }, allowAutoTopicCreation: false });
    await producer.connect();
    for (let partition = 0; partition < PARTITIONS; partition++) {
      for (let i = 0; i < options.recordsBefore; i++) {
        if (!(await produceOne(producer, ledger, partition, value, performance.now() + READ_BACK_TIMEOUT_MS))) throw new Error(`partition ${partition} acknowledged nothing before the kill`);
      }
    }
    const victim = brokers[random.nextInt(BROKERS)]!;
    log(`seed ${options.seed}: ${ledger.size} acknowledged; kill -9 broker ${victim.options.nodeId}`);
    await victim.kill();
    const killedAt = performance.now();
    const boundMs = options.leaseMs + RESUME_SCANS * options.scanIntervalMs + RESUME_SLACK_MS;
    const resumedAfterMs = await Promise.all(
      Array.from({ length: PARTITIONS }, async (_, partition) => {
        if (!(await produceOne(producer, ledger, partition, value, killedAt + boundMs))) return null;
        const after = performance.now() - killedAt;
        for (let i = 1; i < options.recordsAfter; i++) await produceOne(producer, ledger, partition, value, performance.now() + boundMs);
        return Math.round(after);
      }),
    );
    log(`seed ${options.seed}: resumed after ${resumedAfterMs.map((ms) => (ms === null ? 'never' : `${ms} ms`)).join(', ')} (bound ${boundMs} ms)`);
    await producer.disconnect();
    const survivors = brokers.filter((b) => b !== victim);
    const read = await readBack(new Kafka({ clientId: 'min-insync-reader', brokers: survivors.map((b) => b.bootstrap), logLevel: logLevel.NOTHING }));
    const verdict = ledger.verify(read);
    return { victim: victim.options.nodeId, resumedAfterMs, boundMs, verdict, output: survivors.map((b) => `--- broker ${b.options.nodeId}\n${b.output()}`).join('\n') };
  } finally {
    await killAll(brokers);
    rmSync(root, { recursive: true, force: true });
  }
}

/** Creates the topic and waits until every partition has a leader and two followers. */
async function createAndAwaitReplicas(kafka: Kafka): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS, replicationFactor: 3 }] });
    const deadline = performance.now() + READ_BACK_TIMEOUT_MS;
    for (;;) {
      const partitions = await admin.fetchTopicMetadata({ topics: [TOPIC] }).then(
        (m) => m.topics[0]!.partitions,
        () => [],
      );
      if (partitions.length === PARTITIONS && partitions.every((p) => p.leader > 0 && p.replicas.length === 3)) return;
      if (performance.now() > deadline) throw new Error(`the topic's partitions did not get three replicas: ${JSON.stringify(partitions)}`);
      await Bun.sleep(100);
    }
  } finally {
    await admin.disconnect();
  }
}

/**
 * Sends a fresh record (each attempt a new value, so nothing is acknowledged twice) until one is
 * acknowledged with acks=all or the deadline passes; returns whether one was.
 */
async function produceOne(producer: Producer, ledger: AckLedger, partition: number, value: () => string, deadline: number): Promise<boolean> {
  while (performance.now() < deadline) {
    const v = value();
    try {
      const [meta] = await producer.send({ topic: TOPIC, acks: -1, timeout: ATTEMPT_TIMEOUT_MS, messages: [{ partition, value: v }] });
      ledger.acked({ topic: TOPIC, partition, offset: Number(meta!.baseOffset), value: v });
      return true;
    } catch {
      await Bun.sleep(RETRY_PAUSE_MS);
    }
  }
  return false;
}

/** Everything the topic holds up to each partition's high watermark. */
async function readBack(kafka: Kafka): Promise<AckedRecord[]> {
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map((await admin.fetchTopicOffsets(TOPIC)).map((p) => [p.partition, Number(p.high)]));
  await admin.disconnect();
  const records: AckedRecord[] = [];
  const consumer = kafka.consumer({ groupId: `min-insync-reader-${Date.now()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  const reached = new Map<number, number>();
  const done = () => [...ends].every(([partition, end]) => (reached.get(partition) ?? 0) >= end);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`read back timed out: ends ${JSON.stringify([...ends])}, reached ${JSON.stringify([...reached])}`)), READ_BACK_TIMEOUT_MS);
    if (done()) {
      clearTimeout(timer);
      resolve();
      return;
    }
    void consumer
      .run({
        eachMessage: async ({ partition, message }) => {
          records.push({ topic: TOPIC, partition, offset: Number(message.offset), value: message.value!.toString() });
          reached.set(partition, Number(message.offset) + 1);
          if (done()) {
            clearTimeout(timer);
            resolve();
          }
        },
      })
      .catch(reject);
  }).finally(() => consumer.disconnect());
  return records;
}
