// Black-box run (a) of issue 9: a kafkajs idempotent producer (retries on, acks -1) writes unique
// values to one real broker process (file WAL store) while the broker is killed with kill -9 or
// stopped with SIGTERM and restarted at seeded moments; then everything is read back with a
// kafkajs consumer and checked against what was acknowledged: 0 lost, 0 duplicated, 0 misplaced.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { SeededRandom } from '../../src/util/random.ts';
import { AckLedger, type AckedRecord, type LedgerVerdict } from '../support/ack-ledger.ts';
import { BrokerProcess } from '../support/broker-process.ts';

export interface IdempotentRestartOptions {
  readonly seed: number;
  /** Where the broker's data and its file WAL store live (created). */
  readonly directory: string;
  /** Records to acknowledge in all. */
  readonly records: number;
  /** Restarts, each a kill -9 or a SIGTERM (seeded), at seeded points of the stream. */
  readonly restarts: number;
  readonly log?: (line: string) => void;
}

export interface IdempotentRestartResult {
  readonly verdict: LedgerVerdict;
  /** What was done, in order: "kill -9 after 137 acks", ... */
  readonly faults: string[];
}

const TOPIC = 'idempotent-restart';
/** Records per send: a seeded count up to this, so batches have different sizes. */
const RECORDS_PER_SEND_MAX = 8;
/** A fault fires this long (seeded, up to) after its trigger point, while the next send is in flight. */
const FAULT_DELAY_MS_MAX = 30;
/** How long the broker stays down before its restart (seeded, up to): the producer retries meanwhile. */
const DOWN_MS_MAX = 300;
/** A WAL object closes this soon: several objects per run, and acks=all waits little. */
const UPLOAD_INTERVAL_MS = 5;
/** The consumer gives up reading back after this long without reaching the end. */
const READ_BACK_TIMEOUT_MS = 30_000;
/** A send still unacknowledged after this long fails the run (a wedged broker), so the broker is still killed. */
const SEND_TIMEOUT_MS = 45_000;

export async function runIdempotentRestart(options: IdempotentRestartOptions): Promise<IdempotentRestartResult> {
  const random = new SeededRandom(options.seed);
  const say = options.log ?? (() => {});
  const data = join(options.directory, 'data');
  const objects = join(options.directory, 'objects');
  mkdirSync(objects, { recursive: true });
  const broker = new BrokerProcess({ nodeId: 1, data, args: ['--wal-store', `file:${objects}`, '--upload-interval-ms', String(UPLOAD_INTERVAL_MS), '--partitions', '1'] });
  await broker.start();
  const kafka = new Kafka({
    clientId: `idempotent-restart-${options.seed}`,
    brokers: [broker.bootstrap],
    logLevel: logLevel.NOTHING,
    retry: { initialRetryTime: 50, maxRetryTime: 500, retries: 1000 },
  });
  const ledger = new AckLedger();
  const faults: string[] = [];
  try {
    const triggers = faultTriggers(random, options.records, options.restarts);
    const firstKind = random.nextInt(2); // then alternating, so every run has both kinds when restarts >= 2
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, retry: { initialRetryTime: 50, maxRetryTime: 500, retries: 1000 } });
    await producer.connect();
    const pending: Promise<void>[] = [];
    let sent = 0;
    while (ledger.size < options.records) {
      while (triggers.length > 0 && ledger.size >= triggers[0]!) {
        triggers.shift();
        const kind = (firstKind + faults.length) % 2 === 0 ? 'kill -9' : 'SIGTERM';
        faults.push(`${kind} after ${ledger.size} acks`);
        pending.push(fault(broker, kind, random.nextInt(FAULT_DELAY_MS_MAX + 1), random.nextInt(DOWN_MS_MAX + 1), say));
      }
      const count = Math.min(1 + random.nextInt(RECORDS_PER_SEND_MAX), options.records - ledger.size);
      const values = Array.from({ length: count }, () => `seed-${options.seed}-record-${sent++}`);
      await sendAndRecord(producer, values, ledger);
    }
    await Promise.all(pending);
    await producer.disconnect();
    const read = await readBack(kafka);
    return { verdict: ledger.verify(read), faults };
  } finally {
    await broker.kill();
  }
}

/** Ack counts at which faults fire: one in each of `restarts` equal stretches of the run, seeded within it. */
function faultTriggers(random: SeededRandom, records: number, restarts: number): number[] {
  const stretch = records / (restarts + 1);
  return Array.from({ length: restarts }, (_, i) => Math.floor(stretch * (i + 0.5) + random.nextInt(Math.max(1, Math.floor(stretch)))));
}

async function fault(broker: BrokerProcess, kind: 'kill -9' | 'SIGTERM', delayMs: number, downMs: number, say: (line: string) => void): Promise<void> {
  await Bun.sleep(delayMs);
  say(`${kind}`);
  if (kind === 'kill -9') await broker.kill();
  else await broker.terminate();
  await Bun.sleep(downMs);
  await broker.start();
  say('restarted');
}

async function sendAndRecord(producer: Producer, values: string[], ledger: AckLedger): Promise<void> {
  const sent = producer.send({ topic: TOPIC, acks: -1, messages: values.map((value) => ({ value })) });
  const [result] = await withDeadline(sent, SEND_TIMEOUT_MS, `a send of ${values.length} records`);
  const baseOffset = Number(result!.baseOffset);
  values.forEach((value, i) => ledger.acked({ topic: TOPIC, partition: result!.partition, offset: baseOffset + i, value }));
}

/** Every record of the topic up to its end, as a consumer sees it. */
async function readBack(kafka: Kafka): Promise<AckedRecord[]> {
  const admin = kafka.admin();
  await admin.connect();
  const end = Number((await admin.fetchTopicOffsets(TOPIC))[0]!.high);
  await admin.disconnect();
  const read: AckedRecord[] = [];
  if (end === 0) return read;
  const consumer = kafka.consumer({ groupId: `read-back-${Date.now()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`read back ${read.length} records, not up to offset ${end}, in ${READ_BACK_TIMEOUT_MS} ms`)), READ_BACK_TIMEOUT_MS);
    void consumer.run({
      eachBatch: async ({ batch }) => {
        for (const message of batch.messages) {
          read.push({ topic: batch.topic, partition: batch.partition, offset: Number(message.offset), value: message.value?.toString() ?? '' });
          if (Number(message.offset) + 1 >= end) {
            clearTimeout(timer);
            done();
          }
        }
      },
    });
  });
  await consumer.disconnect();
  return read;
}

/** `promise`, or a rejection naming `what` once `timeoutMs` passed. */
export async function withDeadline<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not finish within ${timeoutMs} ms`)), timeoutMs)));
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
