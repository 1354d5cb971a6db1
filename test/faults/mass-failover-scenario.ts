// Black-box run of issue 28's "done when": three `ferry broker` processes on one file store, one
// of them leading most of a topic's few hundred partitions (it was alone when the topic was
// created, so it claimed them all), a kafkajs idempotent producer (acks=all) sending one record
// to every partition per request, and a kill -9 of that broker under the load. The survivors
// take over every partition it led, each rebuilt from its WAL stream ([K7]: read once for all of
// them). Verdict: every acknowledged record is read back once, at the offset its acknowledgement
// named, and no offset was handed out twice.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Admin, Kafka, logLevel, type Producer } from 'kafkajs';
import { SeededRandom } from '../../src/util/random.ts';
import { type AckedRecord, AckLedger, type LedgerVerdict } from '../support/ack-ledger.ts';
import { BrokerProcess, killAll, runFailure } from '../support/broker-process.ts';
import { readTopicBack } from '../support/read-back.ts';

export interface MassFailoverOptions {
  readonly seed: number;
  readonly partitions: number;
  /** 1: the survivors rebuild every partition from the dead broker's WAL stream; 2: its followers are promoted. */
  readonly replicationFactor: number;
  /** Requests (one record per partition each) acknowledged before the kill, and after every partition moved. */
  readonly roundsBefore: number;
  readonly roundsAfter: number;
  readonly leaseMs: number;
  readonly keep?: boolean;
  readonly log?: (line: string) => void;
}

export interface MassFailoverResult {
  readonly seed: number;
  readonly verdict: LedgerVerdict;
  /** Partitions the killed broker led at the kill. */
  readonly moved: number;
  /** From the kill to the moment every partition had acknowledged a record sent after it. */
  readonly everyPartitionAckedMs: number;
  readonly offsetsHandedOutTwice: number;
  readonly directory: string;
}

const TOPIC = 'mass-failover';
const BROKERS = 3;
const SCAN_INTERVAL_MS = 100;
/** Rides through a takeover of every partition (a lease, a scan and the rebuilds) at the backoff below. */
const CLIENT_RETRY = { retries: 100, initialRetryTime: 50, maxRetryTime: 500 };
/** The kill lands within this long of a request being sent: mostly while it is on its way. */
const KILL_JITTER_MS = 30;

export function describeMassFailover(result: MassFailoverResult): string {
  const { verdict } = result;
  return `seed ${result.seed}: ${verdict.acknowledged} acknowledged, ${verdict.read} read back: ${verdict.lost.length} lost, ${verdict.duplicated.length} duplicated, ${verdict.misplaced.length} misplaced, ${result.offsetsHandedOutTwice} offsets handed out twice; the killed broker led ${result.moved} partitions, every one acknowledged again ${result.everyPartitionAckedMs} ms after the kill${verdict.lost.length > 0 ? `; first lost ${JSON.stringify(verdict.lost[0])}` : ''}${verdict.duplicated.length > 0 ? `; first duplicated ${JSON.stringify(verdict.duplicated[0])}` : ''}${verdict.misplaced.length > 0 ? `; first misplaced ${JSON.stringify(verdict.misplaced[0])}` : ''}`;
}

export function massFailoverPassed(result: MassFailoverResult): boolean {
  const { lost, duplicated, misplaced } = result.verdict;
  return lost.length === 0 && duplicated.length === 0 && misplaced.length === 0 && result.offsetsHandedOutTwice === 0;
}

export async function runMassFailover(options: MassFailoverOptions): Promise<MassFailoverResult> {
  const random = new SeededRandom(options.seed);
  const log = options.log ?? (() => {});
  const root = mkdtempSync(join(tmpdir(), 'ferry-mass-failover-'));
  const objects = join(root, 'objects');
  mkdirSync(objects);
  const args = ['--wal-store', `file:${objects}`, '--cluster-store', `file:${objects}`, '--lease-ms', String(options.leaseMs), '--scan-interval-ms', String(SCAN_INTERVAL_MS), '--no-auto-create'];
  const brokers = Array.from({ length: BROKERS }, (_, i) => new BrokerProcess({ nodeId: i + 1, data: join(root, `broker-${i + 1}`), args }));
  const [first, ...others] = brokers as [BrokerProcess, ...BrokerProcess[]];
  const ledger = new AckLedger();
  const offsets = new Set<string>();
  let offsetsHandedOutTwice = 0;
  const record = (acked: AckedRecord) => {
    const at = `${acked.partition}/${acked.offset}`;
    if (offsets.has(at)) offsetsHandedOutTwice++;
    offsets.add(at);
    ledger.acked(acked);
  };
  try {
    // Alone, the first broker claims every partition of the new topic; the others join after.
    await first.start();
    const kafka = new Kafka({ clientId: 'mass-failover', brokers: brokers.map((b) => b.bootstrap), logLevel: logLevel.NOTHING, retry: CLIENT_RETRY, requestTimeout: 10_000 });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: options.partitions, replicationFactor: options.replicationFactor }], waitForLeaders: true });
    await Promise.all(others.map((broker) => broker.start()));
    await waitFollowed(admin, options.replicationFactor);
    const victimId = first.options.nodeId;
    const led = await partitionsLedBy(admin, victimId);
    log(`broker ${victimId} leads ${led.length} of ${options.partitions} partitions`);
    if (led.length * 2 <= options.partitions) throw new Error(`broker ${victimId} leads only ${led.length} of ${options.partitions} partitions`);

    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, retry: CLIENT_RETRY, allowAutoTopicCreation: false });
    await producer.connect();
    const load = new Load(producer, options.partitions, record);
    for (let round = 0; round < options.roundsBefore; round++) await load.round();
    // kill -9 while a request is on its way: its records are acknowledged by the new leaders or not at all.
    const during = load.round();
    await Bun.sleep(random.nextInt(KILL_JITTER_MS));
    const killedAt = performance.now();
    await first.kill();
    log(`kill -9 broker ${victimId}`);
    await during;
    await load.round(); // sent after the kill, it waits for an acknowledgement from every partition
    const everyPartitionAckedMs = Math.round(performance.now() - killedAt);
    log(`every partition acknowledged again ${everyPartitionAckedMs} ms after the kill`);
    for (let round = 0; round < options.roundsAfter; round++) await load.round();
    await producer.disconnect();

    const ends = await admin.fetchTopicOffsets(TOPIC);
    await admin.disconnect();
    const read = await readTopicBack(
      kafka,
      TOPIC,
      ends.map((p) => Number(p.high)).reduce((sum, end) => sum + end, 0),
      'mass-failover-check',
    );
    return { seed: options.seed, verdict: ledger.verify(read), moved: led.length, everyPartitionAckedMs, offsetsHandedOutTwice, directory: root };
  } catch (error) {
    throw runFailure(options.seed, error, brokers);
  } finally {
    await killAll(brokers);
    if (options.keep !== true) rmSync(root, { recursive: true, force: true });
  }
}

/** One request per round carrying a record for every partition; each acknowledgement goes to the ledger. */
class Load {
  readonly #producer: Producer;
  readonly #partitions: number;
  readonly #acked: (record: AckedRecord) => void;
  #next = 0;

  constructor(producer: Producer, partitions: number, acked: (record: AckedRecord) => void) {
    this.#producer = producer;
    this.#partitions = partitions;
    this.#acked = acked;
  }

  async round(): Promise<void> {
    const messages = Array.from({ length: this.#partitions }, (_, partition) => ({ partition, value: `r-${this.#next++}` }));
    const results = await this.#producer.send({ topic: TOPIC, acks: -1, messages });
    const byPartition = new Map(results.map((r) => [r.partition, Number(r.baseOffset)]));
    for (const { partition, value } of messages) {
      const offset = byPartition.get(partition);
      if (offset === undefined) throw new Error(`no acknowledgement for partition ${partition} in a request that succeeded`);
      this.#acked({ topic: TOPIC, partition, offset, value });
    }
  }
}

async function partitionsLedBy(admin: Admin, nodeId: number): Promise<number[]> {
  const metadata = await admin.fetchTopicMetadata({ topics: [TOPIC] });
  return metadata.topics[0]!.partitions.filter((p) => p.leader === nodeId).map((p) => p.partitionId);
}

/** Until every partition's replica set is full (at replication factor 2 the joined brokers follow). */
async function waitFollowed(admin: Admin, replicationFactor: number): Promise<void> {
  for (;;) {
    const metadata = await admin.fetchTopicMetadata({ topics: [TOPIC] });
    if (metadata.topics[0]!.partitions.every((p) => p.isr.length >= replicationFactor)) return;
    await Bun.sleep(SCAN_INTERVAL_MS);
  }
}
