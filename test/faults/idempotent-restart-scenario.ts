// Black-box run (a) of issue 9: a kafkajs idempotent producer (retries on, acks -1) writes unique
// values to one real broker process (file WAL store) while the broker is killed with kill -9 or
// stopped with SIGTERM and restarted at seeded moments; then everything is read back with a
// kafkajs consumer and checked against what was acknowledged: 0 lost, 0 duplicated, 0 misplaced.
// Issue 24: some restarts may come up on a removed data directory (a replaced instance): the WAL
// store lies outside it, so the broker must recover everything from the store alone.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { SeededRandom } from '../../src/util/random.ts';
import { AckLedger, type AckedRecord, type LedgerVerdict } from '../support/ack-ledger.ts';
import { BrokerProcess } from '../support/broker-process.ts';
import { withDeadline } from '../support/deadline.ts';

export interface IdempotentRestartOptions {
  readonly seed: number;
  /** Where the broker's data and its file WAL store live (created). */
  readonly directory: string;
  /** Records to acknowledge in all. */
  readonly records: number;
  /** Restarts, each a kill -9 or a SIGTERM (seeded), at seeded points of the stream. */
  readonly restarts: number;
  /** Restarts (seeded among them) that come up on an empty data directory; default 0. */
  readonly wipes?: number;
  /** The stops to draw from, cycled from a seeded first; default both. */
  readonly stops?: readonly Stop[];
  /** How the broker is started (BrokerProcessOptions.launcher); default bun. */
  readonly launcher?: 'bun' | 'npm start';
  /** Partitions of the topic; default 1. */
  readonly partitions?: number;
  readonly log?: (line: string) => void;
}

export interface IdempotentRestartResult {
  readonly verdict: LedgerVerdict;
  /** What was done, in order: "kill -9 after 137 acks", "SIGTERM after 240 acks, data directory removed", ... */
  readonly faults: string[];
}

const TOPIC = 'idempotent-restart';
export type Stop = 'kill -9' | 'SIGTERM';
const STOPS: readonly Stop[] = ['kill -9', 'SIGTERM'];
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
  const args = ['--wal-store', `file:${objects}`, '--upload-interval-ms', String(UPLOAD_INTERVAL_MS), '--partitions', String(options.partitions ?? 1)];
  const broker = new BrokerProcess({ nodeId: 1, data, args, launcher: options.launcher ?? 'bun' });
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
    const stops = options.stops ?? STOPS;
    const firstKind = random.nextInt(stops.length); // then cycling, so every run has each kind when restarts >= stops
    const wiped = wipedRestarts(random, options.restarts, options.wipes ?? 0);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, retry: { initialRetryTime: 50, maxRetryTime: 500, retries: 1000 } });
    await producer.connect();
    // One fault at a time: triggers may lie a few acks apart, and acks go on in a fault's delay,
    // so a trigger due while the last restart is under way waits for it (two at once stopped a
    // broker another was starting: "broker 1 is already running").
    let faulting: Promise<void> = Promise.resolve();
    let sent = 0;
    while (ledger.size < options.records) {
      while (triggers.length > 0 && ledger.size >= triggers[0]!) {
        await faulting;
        triggers.shift();
        const kind = stops[(firstKind + faults.length) % stops.length]!;
        const wipe = wiped.has(faults.length) ? data : null;
        faults.push(`${kind} after ${ledger.size} acks${wipe === null ? '' : ', data directory removed'}`);
        faulting = fault(broker, kind, random.nextInt(FAULT_DELAY_MS_MAX + 1), random.nextInt(DOWN_MS_MAX + 1), wipe, say);
        faulting.catch(() => {}); // awaited at the next trigger or the end: not an unhandled rejection meanwhile
      }
      const count = Math.min(1 + random.nextInt(RECORDS_PER_SEND_MAX), options.records - ledger.size);
      const values = Array.from({ length: count }, () => `seed-${options.seed}-record-${sent++}`);
      await sendAndRecord(producer, values, random.nextInt(options.partitions ?? 1), ledger);
    }
    await faulting;
    await producer.disconnect();
    const read = await readBack(kafka);
    return { verdict: ledger.verify(read), faults };
  } finally {
    // kill -9 of npm would leave the broker it started running: that one is stopped as a supervisor stops it.
    if (options.launcher === 'npm start') await broker.terminate();
    else await broker.kill();
  }
}

/** Ack counts at which faults fire: one in each of `restarts` equal stretches of the run, seeded within it. */
function faultTriggers(random: SeededRandom, records: number, restarts: number): number[] {
  const stretch = records / (restarts + 1);
  return Array.from({ length: restarts }, (_, i) => Math.floor(stretch * (i + 0.5) + random.nextInt(Math.max(1, Math.floor(stretch)))));
}

/** Which restarts (by index) come up on an empty data directory: `wipes` of them, seeded. */
function wipedRestarts(random: SeededRandom, restarts: number, wipes: number): Set<number> {
  const order = Array.from({ length: restarts }, (_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = random.nextInt(i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return new Set(order.slice(0, wipes));
}

/** Stops the broker, removes its data directory when `wipe` names it (a replaced instance), and starts it again. */
async function fault(broker: BrokerProcess, kind: Stop, delayMs: number, downMs: number, wipe: string | null, say: (line: string) => void): Promise<void> {
  await Bun.sleep(delayMs);
  say(`${kind}`);
  if (kind === 'kill -9') await broker.kill();
  else await broker.terminate();
  if (wipe !== null) rmSync(wipe, { recursive: true, force: true });
  await Bun.sleep(downMs);
  await broker.start();
  say('restarted');
}

/** One send of `values` to `partition` (one partition a send: its answer names one base offset). */
async function sendAndRecord(producer: Producer, values: string[], partition: number, ledger: AckLedger): Promise<void> {
  const sent = producer.send({ topic: TOPIC, acks: -1, messages: values.map((value) => ({ value, partition })) });
  const [result] = await withDeadline(sent, SEND_TIMEOUT_MS, `a send of ${values.length} records`);
  const baseOffset = Number(result!.baseOffset);
  values.forEach((value, i) => ledger.acked({ topic: TOPIC, partition: result!.partition, offset: baseOffset + i, value }));
}

/** Every record of every partition of the topic up to its end, as a consumer sees it. */
async function readBack(kafka: Kafka): Promise<AckedRecord[]> {
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map((await admin.fetchTopicOffsets(TOPIC)).map(({ partition, high }) => [partition, Number(high)]));
  await admin.disconnect();
  const read: AckedRecord[] = [];
  const reached = () => [...ends].every(([partition, end]) => end === 0 || read.some((record) => record.partition === partition && record.offset + 1 >= end));
  if (reached()) return read;
  const consumer = kafka.consumer({ groupId: `read-back-${Date.now()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`read back ${read.length} records, not up to the ends ${JSON.stringify([...ends])}, in ${READ_BACK_TIMEOUT_MS} ms`)), READ_BACK_TIMEOUT_MS);
    void consumer.run({
      eachBatch: async ({ batch }) => {
        for (const message of batch.messages) read.push({ topic: batch.topic, partition: batch.partition, offset: Number(message.offset), value: message.value?.toString() ?? '' });
        if (reached()) {
          clearTimeout(timer);
          done();
        }
      },
    });
  });
  await consumer.disconnect();
  return read.filter((record) => record.offset < ends.get(record.partition)!);
}
