// Black-box run (c) of issue 9: a topic deleted and created again, then its leader killed. Three
// `ferry broker` processes share one file store. Brokers 2 and 3 each lead one partition of a
// filler topic first, so with three live brokers their fair share is full and broker 1 leads every
// incarnation of the topic under test: its one WAL stream carries the frames of all of them, which
// is what a takeover must tell apart (docs/design.md contract 10). Then broker 1 is killed with SIGKILL,
// and a survivor must serve exactly the last incarnation's acknowledged records, at their offsets,
// and put the next write right after them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import { SeededRandom } from '../../src/util/random.ts';
import { AckLedger, type AckedRecord, describeVerdict } from '../support/ack-ledger.ts';
import { BrokerProcess, killAll } from '../support/broker-process.ts';

/** Short, so a takeover happens within seconds (the broker's --lease-ms). */
const LEASE_MS = 1500;
const SCAN_INTERVAL_MS = 200;
/** Polling for the cluster to settle (leaders elected, a topic gone everywhere). */
const POLL_INTERVAL_MS = 100;
const SETTLE_TIMEOUT_MS = 30_000;
const TOPIC = 'd1';
const FILLER_TOPIC = 'filler';

export interface TopicRecreateOptions {
  readonly seed: number;
  /** Incarnations of the topic deleted before the last one is written and its leader killed. */
  readonly deletedIncarnationsMax?: number;
  readonly log?: (line: string) => void;
}

export interface TopicRecreateResult {
  readonly seed: number;
  readonly deletedIncarnations: number;
  /** Records written (acks=all) to the deleted incarnations. */
  readonly oldRecords: number;
  readonly verdict: ReturnType<AckLedger['verify']>;
  /** Records of a deleted incarnation read back from the last one. */
  readonly served: readonly AckedRecord[];
  readonly highWatermark: number;
  /** Where the write after the takeover landed; it must be highWatermark. */
  readonly nextOffset: number;
  /** Empty when the run held: each entry says what broke. */
  readonly problems: readonly string[];
}

async function until<T>(what: string, probe: () => Promise<T | null>): Promise<T> {
  const deadline = performance.now() + SETTLE_TIMEOUT_MS;
  for (;;) {
    const value = await probe().catch(() => null);
    if (value !== null) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(POLL_INTERVAL_MS);
  }
}

/**
 * Creates the topic, asking again while a broker still answers that it exists: a broker learns of
 * a deletion made through another one only on its next scan.
 */
async function create(admin: Admin): Promise<void> {
  await until(`${TOPIC} to be created`, async () => ((await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1 }] })) ? true : null));
}

/** The leader of each partition of `topic` once every one has a live leader. */
async function leaders(admin: Admin, topic: string, partitions: number): Promise<number[]> {
  return until(`leaders of ${topic}`, async () => {
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    const found = metadata.topics[0]!.partitions.sort((a, b) => a.partitionId - b.partitionId).map((p) => p.leader);
    return found.length === partitions && found.every((leader) => leader > 0) ? found : null;
  });
}

/** Writes `count` records one by one with acks=all, each acknowledged offset noted. */
async function write(kafka: Kafka, prefix: string, count: number, ledger: AckLedger | null): Promise<AckedRecord[]> {
  const producer = kafka.producer({ allowAutoTopicCreation: false, retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 } });
  await producer.connect();
  const acked: AckedRecord[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const value = `${prefix}-${i}`;
      const [result] = await producer.send({ topic: TOPIC, acks: -1, messages: [{ partition: 0, value }] });
      const record = { topic: TOPIC, partition: 0, offset: Number(result!.baseOffset), value };
      acked.push(record);
      ledger?.acked(record);
    }
  } finally {
    await producer.disconnect();
  }
  return acked;
}

/** Every record of partition 0 below `highWatermark`, read from the start by a consumer group. */
async function readAll(kafka: Kafka, groupId: string, highWatermark: number): Promise<AckedRecord[]> {
  const read: AckedRecord[] = [];
  if (highWatermark === 0) return read;
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    await new Promise<void>((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`read ${read.length} records, not up to offset ${highWatermark}`)), SETTLE_TIMEOUT_MS);
      void consumer.run({
        eachMessage: async ({ partition, message }) => {
          read.push({ topic: TOPIC, partition, offset: Number(message.offset), value: message.value!.toString() });
          if (Number(message.offset) >= highWatermark - 1) {
            clearTimeout(timer);
            done();
          }
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return read;
}

async function highWatermarkOf(admin: Admin): Promise<number> {
  const offsets = await admin.fetchTopicOffsets(TOPIC);
  return Number(offsets.find((o) => o.partition === 0)!.high);
}

function brokerOutputs(brokers: readonly BrokerProcess[]): string {
  return brokers.map((b) => `--- broker ${b.options.nodeId} ---\n${b.output()}`).join('\n');
}

const CLIENT_RETRY = { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 };

/** Three brokers on one file store, ports distinct (free ports are picked one by one and may repeat). */
function brokersOn(root: string): [BrokerProcess, BrokerProcess, BrokerProcess] {
  const store = `file:${join(root, 'objects')}`;
  const args = [
    '--wal-store',
    store,
    '--cluster-store',
    store,
    '--lease-ms',
    String(LEASE_MS),
    '--scan-interval-ms',
    String(SCAN_INTERVAL_MS),
    '--upload-interval-ms',
    '2',
    '--no-auto-create',
    '--create-store',
  ];
  const brokers: BrokerProcess[] = [];
  for (const nodeId of [1, 2, 3]) {
    let broker: BrokerProcess;
    do broker = new BrokerProcess({ nodeId, data: join(root, `broker-${nodeId}`), args });
    while (brokers.some((other) => other.port === broker.port));
    brokers.push(broker);
  }
  return brokers as [BrokerProcess, BrokerProcess, BrokerProcess];
}

/** Brokers 2 and 3 take one filler partition each (fair share 1 of 2), then broker 1 joins: it alone has room for the topic under test. */
async function startCluster([first, second, third]: readonly BrokerProcess[]): Promise<Kafka> {
  await Promise.all([second!.start(), third!.start()]);
  const setup = new Kafka({ clientId: 'topic-recreate-setup', brokers: [second!.bootstrap, third!.bootstrap], logLevel: logLevel.NOTHING, retry: CLIENT_RETRY }).admin();
  await setup.connect();
  await until('brokers 2 and 3 to see each other', async () => ((await setup.describeCluster()).brokers.length === 2 ? true : null));
  await setup.createTopics({ topics: [{ topic: FILLER_TOPIC, numPartitions: 2 }] });
  const fillerLeaders = await leaders(setup, FILLER_TOPIC, 2);
  await setup.disconnect();
  if ([...fillerLeaders].sort().join() !== '2,3') throw new Error(`setup: filler partitions led by ${fillerLeaders.join(', ')}, not by brokers 2 and 3`);
  await first!.start();
  const kafka = new Kafka({ clientId: 'topic-recreate', brokers: [first!, second!, third!].map((b) => b.bootstrap), logLevel: logLevel.NOTHING, retry: CLIENT_RETRY });
  const admin = kafka.admin();
  await admin.connect();
  await until('three live brokers', async () => ((await admin.describeCluster()).brokers.length === 3 ? true : null));
  await admin.disconnect();
  return kafka;
}

/** Creates the topic and checks broker 1 leads it (the setup's promise). */
async function createOnFirst(admin: Admin, what: string): Promise<void> {
  await create(admin);
  const [leader] = await leaders(admin, TOPIC, 1);
  if (leader !== 1) throw new Error(`setup: ${what} is led by broker ${leader}, not 1`);
}

/** Incarnations written, then deleted: their frames stay in broker 1's stream. Returns the records written. */
async function writeDeletedIncarnations(kafka: Kafka, admin: Admin, count: number, random: SeededRandom, log: (line: string) => void): Promise<number> {
  let written = 0;
  for (let incarnation = 0; incarnation < count; incarnation++) {
    await createOnFirst(admin, `incarnation ${incarnation}`);
    const records = 1 + random.nextInt(8);
    await write(kafka, `old${incarnation}`, records, null);
    written += records;
    await admin.deleteTopics({ topics: [TOPIC] });
    await until(`${TOPIC} to be gone`, async () => (!(await admin.listTopics()).includes(TOPIC) ? true : null));
    log(`incarnation ${incarnation}: ${records} records written, then deleted`);
  }
  return written;
}

/** What the survivors serve once one of them leads the topic, and where the next write lands. */
async function readFromSurvivors(survivors: readonly BrokerProcess[], groupId: string): Promise<{ successor: number; highWatermark: number; read: AckedRecord[]; next: AckedRecord }> {
  const kafka = new Kafka({ clientId: 'topic-recreate-check', brokers: survivors.map((b) => b.bootstrap), logLevel: logLevel.NOTHING, retry: CLIENT_RETRY });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [successor] = await until('a survivor to lead the topic', async () => {
      const found = await leaders(admin, TOPIC, 1);
      return found[0] === 1 ? null : found;
    });
    const highWatermark = await until('the successor to serve the topic', () => highWatermarkOf(admin)); // it answers NOT_LEADER until its rebuild is done
    const read = await readAll(kafka, groupId, highWatermark);
    const [next] = await write(kafka, 'next', 1, null);
    return { successor: successor!, highWatermark, read, next: next! };
  } finally {
    await admin.disconnect();
  }
}

export async function runTopicRecreate(options: TopicRecreateOptions): Promise<TopicRecreateResult> {
  const random = new SeededRandom(options.seed);
  const log = options.log ?? (() => {});
  const deletedIncarnations = 1 + random.nextInt(options.deletedIncarnationsMax ?? 1);
  const root = mkdtempSync(join(tmpdir(), 'ferry-topic-recreate-'));
  const brokers = brokersOn(root);
  const [first, second, third] = brokers;
  const problems: string[] = [];
  try {
    const kafka = await startCluster(brokers);
    const admin = kafka.admin();
    await admin.connect();
    const oldRecords = await writeDeletedIncarnations(kafka, admin, deletedIncarnations, random, log);
    // The last incarnation: written with acks=all, then its leader is killed.
    await createOnFirst(admin, 'the last incarnation');
    await admin.disconnect();
    const ledger = new AckLedger();
    const count = 1 + random.nextInt(8);
    const acked = await write(kafka, 'new', count, ledger);
    for (const [i, record] of acked.entries()) if (record.offset !== i) problems.push(`the new incarnation acknowledged ${record.value} at offset ${record.offset}, expected ${i}`);
    await Bun.sleep(random.nextInt(300));
    await first.kill();
    log(`last incarnation: ${count} records acknowledged at offsets ${acked.map((r) => r.offset).join(',')}; broker 1 killed`);

    const { successor, highWatermark, read, next } = await readFromSurvivors([second, third], `check-${options.seed}`);
    const verdict = ledger.verify(read);
    const served = read.filter((record) => !record.value.startsWith('new-'));
    log(`broker ${successor} took over: high watermark ${highWatermark}, next write at ${next.offset}; ${describeVerdict(verdict)}`);
    if (verdict.lost.length + verdict.duplicated.length + verdict.misplaced.length > 0) problems.push(describeVerdict(verdict));
    if (served.length > 0) problems.push(`${served.length} records of a deleted incarnation served, first ${JSON.stringify(served[0])}`);
    if (highWatermark !== count) problems.push(`high watermark ${highWatermark} after ${count} acknowledged records`);
    if (next.offset !== count) problems.push(`the next write landed at offset ${next.offset}, expected ${count}`);
    if (problems.length > 0) problems.push(brokerOutputs(brokers));
    return { seed: options.seed, deletedIncarnations, oldRecords, verdict, served, highWatermark, nextOffset: next.offset, problems };
  } catch (error) {
    throw new Error(`seed ${options.seed}: ${error instanceof Error ? error.message : String(error)}\n${brokerOutputs(brokers)}`);
  } finally {
    await killAll(brokers);
    rmSync(root, { recursive: true, force: true });
  }
}
