// Black-box run (e) of issue 9 (finding 16): a broker whose data directory (a small tmpfs) fills
// up while a kafkajs idempotent producer writes to it, then has room again while it runs. The
// producer's sends are retried through KAFKA_STORAGE_ERROR and must resume without a restart;
// everything acknowledged is read back once, at its offset. The WAL store is elsewhere: only the
// data directory fills. Mounting a tmpfs needs root (as on the CI machines).
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { SeededRandom } from '../../src/util/random.ts';
import { AckLedger, type AckedRecord, type LedgerVerdict } from '../support/ack-ledger.ts';
import { BrokerProcess } from '../support/broker-process.ts';
import { withDeadline } from '../support/deadline.ts';

/** The data directory's size: a few hundred records of a KiB fill it. */
const DISK_BYTES = 2 * 1024 * 1024;
const RECORDS_PER_SEND = 4;
const TOPIC = 'full-disk';
const FILL_CHUNK_BYTES = 4096;
/** How long the broker may take to answer the first produce on the full disk (a loaded CI machine). */
const FAILURE_LOG_WAIT_MS = 30_000;
/** A send or the read back not done after this long fails the run (a wedged broker); the broker is still killed. */
const STEP_TIMEOUT_MS = 30_000;
/** Seeded ranges: sends before the disk fills and after it has room, record sizes, how long it stays full. */
const SENDS_MIN = 10;
const SENDS_SPREAD = 20;
const VALUE_BYTES_MIN = 256;
const VALUE_BYTES_SPREAD = 1792;
const FULL_MS_MIN = 1000;
const FULL_MS_SPREAD = 2000;
export const FAILURE_LINE = 'storage: writes to';
export const RECOVERY_LINE = 'storage: writes succeed again';
/** The WAL writer's lines when its uploads meet the full disk (the WAL store on the same disk). */
export const WAL_FAILURE_LINE = 'WAL uploads failing';
export const WAL_RECOVERY_LINE = 'WAL uploads succeed again';

/**
 * What lies on the disk that fills up: `log` (the data directory; the WAL store is elsewhere) or
 * `wal` (the file store the WAL objects go to; the local log has room, so appends succeed and the
 * uploads meet the full disk: before issue 9 the writer then gave up for good).
 */
export type FullDiskPlacement = 'log' | 'wal';

export interface FullDiskResult {
  readonly verdict: LedgerVerdict;
  /** The broker's "writes fail" and "succeed again" lines: one each per spell. */
  readonly failureLines: number;
  readonly recoveryLines: number;
  /** Whether the broker printed an uncaught error on the way. */
  readonly uncaughtError: boolean;
  /** The broker process ran throughout: started once, still running at the end. */
  readonly ranThroughout: boolean;
  /** The WAL writer's "uploads failing" and "succeed again" lines (same-disk placement). */
  readonly walFailureLines: number;
  readonly walRecoveryLines: number;
  readonly plan: string;
}

/** Mounts a tmpfs of DISK_BYTES at `directory`; the reason when it cannot (not root). */
export function mountTmpfs(directory: string): string | null {
  const mounted = Bun.spawnSync(['mount', '-t', 'tmpfs', '-o', `size=${DISK_BYTES}`, 'tmpfs', directory], { stderr: 'pipe' });
  return mounted.exitCode === 0 ? null : mounted.stderr.toString().trim() || `mount exited ${mounted.exitCode}`;
}

/** Runs it once in `root` (a fresh directory) with the tmpfs already mounted at `root/disk`. */
export async function runFullDisk(seed: number, root: string, full: FullDiskPlacement = 'log'): Promise<FullDiskResult> {
  const random = new SeededRandom(seed);
  const disk = join(root, 'disk');
  const sendsBefore = SENDS_MIN + random.nextInt(SENDS_SPREAD);
  const sendsAfter = SENDS_MIN + random.nextInt(SENDS_SPREAD);
  const valueBytes = VALUE_BYTES_MIN + random.nextInt(VALUE_BYTES_SPREAD);
  const fullMs = FULL_MS_MIN + random.nextInt(FULL_MS_SPREAD);
  const plan = `${full} disk full, ${sendsBefore} sends of ${RECORDS_PER_SEND} x ${valueBytes} B, disk full for ${fullMs} ms after the first failure, ${sendsAfter} sends`;
  const [data, objects] = full === 'log' ? [join(disk, 'data'), join(root, 'objects')] : [join(root, 'data'), join(disk, 'objects')];
  mkdirSync(objects, { recursive: true });
  const broker = new BrokerProcess({ nodeId: 1, data, args: ['--wal-store', `file:${objects}`, '--upload-interval-ms', '5'] });
  try {
    await broker.start();
    const kafka = new Kafka({ clientId: `full-disk-${seed}`, brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, retry: { initialRetryTime: 50, maxRetryTime: 200, retries: 1000 } });
    await producer.connect();
    const ledger = new AckLedger();
    const sender = { sent: 0, valueBytes };
    for (let i = 0; i < sendsBefore; i++) await send(producer, ledger, sender);
    fillDisk(join(disk, 'filler'));
    const blocked = send(producer, ledger, sender); // retried (KAFKA_STORAGE_ERROR is retriable) until there is room
    blocked.catch(() => {}); // awaited below; if the run fails before, its failure is the one reported
    const failed = () => broker.output().includes(FAILURE_LINE) || broker.output().includes(WAL_FAILURE_LINE);
    for (let waitedMs = 0; !failed(); waitedMs += 20) {
      if (waitedMs > FAILURE_LOG_WAIT_MS) throw new Error(`the broker never logged its failed writes:\n${broker.output()}`);
      await Bun.sleep(20);
    }
    await Bun.sleep(fullMs);
    rmSync(join(disk, 'filler'));
    await blocked;
    for (let i = 0; i < sendsAfter; i++) await send(producer, ledger, sender);
    await producer.disconnect();
    const verdict = ledger.verify(await withDeadline(readAll(kafka), STEP_TIMEOUT_MS, 'reading back'));
    const running = broker.running;
    const lines = broker.output().split('\n');
    return {
      verdict,
      failureLines: lines.filter((line) => line.includes(FAILURE_LINE)).length,
      recoveryLines: lines.filter((line) => line.includes(RECOVERY_LINE)).length,
      walFailureLines: lines.filter((line) => line.includes(WAL_FAILURE_LINE)).length,
      walRecoveryLines: lines.filter((line) => line.includes(WAL_RECOVERY_LINE)).length,
      uncaughtError: lines.some((line) => line.startsWith('error:')),
      ranThroughout: running && lines.filter((line) => line.includes(`listening on ${broker.bootstrap}`)).length === 1,
      plan,
    };
  } finally {
    await broker.kill();
  }
}

async function send(producer: Producer, ledger: AckLedger, sender: { sent: number; valueBytes: number }): Promise<void> {
  const values = Array.from({ length: RECORDS_PER_SEND }, () => `record-${sender.sent++}-${'x'.repeat(sender.valueBytes)}`);
  const [result] = await withDeadline(producer.send({ topic: TOPIC, acks: -1, messages: values.map((value) => ({ value })) }), STEP_TIMEOUT_MS, 'a send');
  values.forEach((value, i) => ledger.acked({ topic: TOPIC, partition: result!.partition, offset: Number(result!.baseOffset) + i, value }));
}

/** Fills the disk under `path` until ENOSPC; the file is closed so removing it frees the space. */
function fillDisk(path: string): void {
  const fd = openSync(path, 'w');
  try {
    const chunk = new Uint8Array(FILL_CHUNK_BYTES);
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}

async function readAll(kafka: Kafka): Promise<AckedRecord[]> {
  const admin = kafka.admin();
  await admin.connect();
  const end = Number((await admin.fetchTopicOffsets(TOPIC))[0]!.high);
  await admin.disconnect();
  const read: AckedRecord[] = [];
  const consumer = kafka.consumer({ groupId: `full-disk-read-${Date.now()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  await new Promise<void>((done) => {
    void consumer.run({
      eachBatch: async ({ batch }) => {
        for (const message of batch.messages) {
          read.push({ topic: batch.topic, partition: batch.partition, offset: Number(message.offset), value: message.value?.toString() ?? '' });
          if (Number(message.offset) + 1 >= end) done();
        }
      },
    });
  });
  await consumer.disconnect();
  return read;
}
