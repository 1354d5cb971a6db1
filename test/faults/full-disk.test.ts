// Issue 9 "Done when" (e), finding 16: a broker whose data directory fills up answers
// KAFKA_STORAGE_ERROR (retriable) and, once space is freed while it runs, takes produce requests
// again without a restart; nothing acknowledged is lost, duplicated or moved. The data directory
// is a small tmpfs (mounting needs root, as on the CI machines; without it the test says so and
// is skipped). The WAL store is elsewhere: only the data directory fills.
import { expect, setDefaultTimeout, test } from 'bun:test';
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { AckLedger, describeVerdict } from '../support/ack-ledger.ts';
import { BrokerProcess } from '../support/broker-process.ts';
import { withDeadline } from './idempotent-restart-run.ts';
import { tempDir } from '../support/temp-dir.ts';

setDefaultTimeout(120_000);

/** The data directory's size: a few hundred records of 1 KiB fill it. */
const DISK_BYTES = 2 * 1024 * 1024;
const VALUE_BYTES = 1024;
const TOPIC = 'full-disk';
const FILL_CHUNK_BYTES = 4096;
/** How long the broker may take to answer the first produce on the full disk (a loaded CI machine). */
const FAILURE_LOG_WAIT_MS = 30_000;
/** How long the disk stays full after the first failure: several retries, two shipped checkpoints. */
const SPELL_MS = 2500;
/** A send or the read back not done after this long fails the test (the broker is wedged), inside the test's own timeout. */
const STEP_TIMEOUT_MS = 30_000;

function mountTmpfs(directory: string): boolean {
  const mounted = Bun.spawnSync(['mount', '-t', 'tmpfs', '-o', `size=${DISK_BYTES}`, 'tmpfs', directory], { stderr: 'pipe' });
  if (mounted.exitCode === 0) return true;
  console.warn(`full-disk test skipped: cannot mount a tmpfs (needs root): ${mounted.stderr.toString().trim()}`);
  return false;
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

test('produce resumes without a restart once a full data directory has room again', async () => {
  const root = tempDir();
  const disk = join(root, 'disk');
  mkdirSync(disk);
  if (!mountTmpfs(disk)) return;
  const broker = new BrokerProcess({ nodeId: 1, data: join(disk, 'data'), args: ['--wal-store', `file:${join(root, 'objects')}`, '--upload-interval-ms', '5'] });
  try {
    await broker.start();
    const kafka = new Kafka({ clientId: 'full-disk', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, retry: { initialRetryTime: 50, maxRetryTime: 200, retries: 1000 } });
    await producer.connect();
    const ledger = new AckLedger();
    let sent = 0;
    const send = async () => {
      const values = Array.from({ length: 4 }, () => `record-${sent++}-${'x'.repeat(VALUE_BYTES)}`);
      const [result] = await withDeadline(producer.send({ topic: TOPIC, acks: -1, messages: values.map((value) => ({ value })) }), STEP_TIMEOUT_MS, 'a send');
      values.forEach((value, i) => ledger.acked({ topic: TOPIC, partition: result!.partition, offset: Number(result!.baseOffset) + i, value }));
    };
    for (let i = 0; i < 20; i++) await send();
    fillDisk(join(disk, 'filler'));
    // Retried by the producer (KAFKA_STORAGE_ERROR is retriable) until the disk has room again.
    const blocked = send();
    for (let waitedMs = 0; !broker.output().includes('storage: writes to'); waitedMs += 20) {
      if (waitedMs > FAILURE_LOG_WAIT_MS) throw new Error(`the broker never logged its failed writes:\n${broker.output()}`);
      await Bun.sleep(20);
    }
    await Bun.sleep(SPELL_MS); // a spell of failed attempts, and the broker's periodic work meanwhile
    expect(broker.running).toBe(true);
    rmSync(join(disk, 'filler'));
    await blocked;
    for (let i = 0; i < 20; i++) await send();
    expect(broker.output()).toContain('storage: writes succeed again');
    expect(broker.output()).not.toContain('error:'); // no uncaught error on the way (the shipped checkpoint's timer)
    expect(broker.output().split('\n').filter((line) => line.includes('storage: writes to'))).toHaveLength(1); // once per spell
    await producer.disconnect();
    const verdict = ledger.verify(await withDeadline(readAll(kafka), STEP_TIMEOUT_MS, 'reading back'));
    expect({ lost: verdict.lost.length, duplicated: verdict.duplicated.length, misplaced: verdict.misplaced.length, acknowledged: verdict.acknowledged, summary: describeVerdict(verdict) })
      .toEqual({ lost: 0, duplicated: 0, misplaced: 0, acknowledged: 164, summary: describeVerdict(verdict) });
  } finally {
    await broker.kill();
    Bun.spawnSync(['umount', disk]);
  }
});

async function readAll(kafka: Kafka): Promise<{ topic: string; partition: number; offset: number; value: string }[]> {
  const admin = kafka.admin();
  await admin.connect();
  const end = Number((await admin.fetchTopicOffsets(TOPIC))[0]!.high);
  await admin.disconnect();
  const read: { topic: string; partition: number; offset: number; value: string }[] = [];
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
