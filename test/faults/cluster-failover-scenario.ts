// Black-box run (b) of issue 9: three `ferry broker` processes on one file store, a kafkajs
// idempotent producer (acks=all) on a 3-partition topic, then kill -9 and restart of a leader
// (twice), and SIGSTOP of a leader past its lease, then SIGCONT. Verdict: every acknowledged record is
// read back once, at the offset its acknowledgement named; and the paused leader acknowledged
// nothing that is missing from the final log or sits at an offset another leader handed out.
// A second client reaches only the paused broker (every connection it opens goes there), and
// keeps producing through the pause, so that broker's answers after SIGCONT are all recorded.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { SeededRandom } from '../../src/util/random.ts';
import { type AckedRecord, AckLedger, describeVerdict, type LedgerVerdict } from '../support/ack-ledger.ts';
import { BrokerProcess, killAll, runFailure } from '../support/broker-process.ts';
import { readTopicBack } from '../support/read-back.ts';

export interface ScenarioOptions {
  readonly seed: number;
  /** Records the main producer sends before, between and after the faults (per phase). */
  readonly recordsPerPhase: number;
  readonly leaseMs: number;
  /** Keep the data directories (for a post-mortem) instead of removing them. */
  readonly keep?: boolean;
  readonly log?: (line: string) => void;
}

export interface ScenarioResult {
  readonly seed: number;
  readonly verdict: LedgerVerdict;
  /**
   * Acknowledgements the paused broker's own client received: before SIGSTOP (or while stopped:
   * sent before it), after SIGCONT, and among those, for records first sent after SIGSTOP. The
   * broker cannot have received those before its lease ended, so if it acknowledged one after
   * losing the partition, it decided to after its lease ended: a failure even when the record is
   * in the log. (An answer decided before SIGSTOP may still reach the client after SIGCONT.)
   */
  readonly pausedAcks: { readonly before: number; readonly afterResume: number; readonly sentAfterStop: number };
  /** Whether the paused broker's partition had another leader after the pause (it was taken over). */
  readonly takenOver: boolean;
  /** Two acknowledged records at one partition offset (a leader handing out an offset twice). */
  readonly offsetsHandedOutTwice: { partition: number; offset: number; values: string[] }[];
  readonly directory: string;
}

const TOPIC = 'ledger';
const PARTITIONS = 3;
const BROKERS = 3;
const SCAN_INTERVAL_MS = 100;
/** kill -9 and restart rounds before the pause. */
const KILL_ROUNDS = 2;
/** Enough retries to ride through a takeover (a lease plus a scan) at the backoff below. */
const CLIENT_RETRY = { retries: 60, initialRetryTime: 50, maxRetryTime: 500 };

export function describeResult(result: ScenarioResult): string {
  return `seed ${result.seed}: ${describeVerdict(result.verdict)}; ${result.offsetsHandedOutTwice.length} offsets handed out twice; the paused leader acknowledged ${result.pausedAcks.before} to its own client before SIGSTOP and ${result.pausedAcks.afterResume} after SIGCONT, ${result.pausedAcks.sentAfterStop} of them sent after SIGSTOP (all checked against the final log); its partition ${result.takenOver ? 'was' : 'was not'} taken over`;
}

export function passed(result: ScenarioResult): boolean {
  const { lost, duplicated, misplaced } = result.verdict;
  const staleAcks = result.takenOver ? result.pausedAcks.sentAfterStop : 0; // a partition it still led may ack again under a renewed lease
  return lost.length === 0 && duplicated.length === 0 && misplaced.length === 0 && result.offsetsHandedOutTwice.length === 0 && staleAcks === 0;
}

export async function runClusterFailover(options: ScenarioOptions): Promise<ScenarioResult> {
  const random = new SeededRandom(options.seed);
  const log = options.log ?? (() => {});
  const root = mkdtempSync(join(tmpdir(), 'ferry-cluster-failover-'));
  const objects = join(root, 'objects');
  mkdirSync(objects);
  const args = [
    '--wal-store',
    `file:${objects}`,
    '--cluster-store',
    `file:${objects}`,
    '--lease-ms',
    String(options.leaseMs),
    '--scan-interval-ms',
    String(SCAN_INTERVAL_MS),
    '--upload-interval-ms',
    '2',
    '--no-auto-create',
  ];
  const brokers = Array.from({ length: BROKERS }, (_, i) => new BrokerProcess({ nodeId: i + 1, data: join(root, `broker-${i + 1}`), args }));
  const ledger = new Acks();
  const pausedAcks = { before: 0, afterResume: 0, sentAfterStop: 0 };
  const pause: { phase: 'before' | 'stopped' | 'resumed' } = { phase: 'before' };
  let next = 0;
  try {
    await Promise.all(brokers.map((broker) => broker.start()));
    const kafka = new Kafka({ clientId: 'run-b', brokers: brokers.map((b) => b.bootstrap), logLevel: logLevel.NOTHING, retry: CLIENT_RETRY, requestTimeout: 10_000 });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS }], waitForLeaders: true });
    const leaders = async () => (await admin.fetchTopicMetadata({ topics: [TOPIC] })).topics[0]!.partitions.sort((a, b) => a.partitionId - b.partitionId).map((p) => p.leader);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, retry: CLIENT_RETRY });
    await producer.connect();
    const phase = async (name: string) => {
      log(`phase ${name}: ${options.recordsPerPhase} records`);
      await produce(producer, ledger, options.recordsPerPhase, () => next++, 'main');
    };
    await phase('before faults');

    // kill -9 of a partition's leader, a while into a phase, and its restart; twice, so that a
    // broker restarted while still named leader restarts once more over what it wrote since.
    for (let round = 0; round < KILL_ROUNDS; round++) {
      const killedLeader = (await leaders())[random.nextInt(PARTITIONS)]!;
      const victim = brokers[killedLeader - 1]!;
      const during = produce(producer, ledger, options.recordsPerPhase, () => next++, 'main');
      await Bun.sleep(random.nextInt(200));
      log(`kill -9 broker ${killedLeader}`);
      await victim.kill();
      await during;
      await victim.start();
      log(`restarted broker ${killedLeader}`);
      await phase('after the restart');
    }

    // SIGSTOP of a leader past its lease, a client of its own producing through the pause, SIGCONT.
    const leadersNow = await leaders();
    const pausedPartition = random.nextInt(PARTITIONS);
    const pausedId = leadersNow[pausedPartition]!;
    const paused = brokers[pausedId - 1]!;
    const own = new Kafka({
      clientId: 'run-b-paused',
      brokers: [paused.bootstrap],
      logLevel: logLevel.NOTHING,
      retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 500 },
      requestTimeout: 3 * options.leaseMs,
      socketFactory: ({ onConnect }) => connect({ host: '127.0.0.1', port: paused.port }, onConnect), // every broker it is told of is the paused one
    });
    const ownProducer = own.producer({ idempotent: false, maxInFlightRequests: 1, retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 500 } });
    await ownProducer.connect();
    let pausing = true;
    const ownLoop = (async () => {
      while (pausing) {
        const value = `paused-${next++}`;
        const sentAfterStop = pause.phase !== 'before'; // retries of an earlier value keep its first send's phase
        try {
          const [result] = await ownProducer.send({ topic: TOPIC, acks: -1, messages: [{ partition: pausedPartition, value }] });
          ledger.acked({ topic: TOPIC, partition: pausedPartition, offset: Number(result!.baseOffset), value });
          // An answer read while the broker is stopped left it before SIGSTOP.
          if (pause.phase !== 'resumed') pausedAcks.before++;
          else {
            pausedAcks.afterResume++;
            if (sentAfterStop) pausedAcks.sentAfterStop++;
          }
        } catch {
          await Bun.sleep(20);
        }
      }
    })();
    const mainDuring = produce(producer, ledger, options.recordsPerPhase, () => next++, 'main');
    await Bun.sleep(50 + random.nextInt(150));
    log(`SIGSTOP broker ${pausedId} (leads partition ${pausedPartition})`);
    paused.pause();
    pause.phase = 'stopped';
    await Bun.sleep(options.leaseMs * 2 + random.nextInt(options.leaseMs)); // past its lease: others take over
    log(`SIGCONT broker ${pausedId}`);
    pause.phase = 'resumed';
    paused.resume();
    await mainDuring;
    await Bun.sleep(options.leaseMs); // the resumed broker answers what queued up while it was stopped
    pausing = false;
    await ownLoop;
    await ownProducer.disconnect().catch(() => {});
    await phase('after the pause');
    await producer.disconnect();

    const takenOver = (await leaders())[pausedPartition] !== pausedId;
    for (const line of paused
      .output()
      .split('\n')
      .filter((l) => /writer epoch|released|lease|claimed|sealed/.test(l)))
      log(`broker ${pausedId}: ${line}`);
    // Every partition's log to its end, from whoever leads it now.
    const ends = await admin.fetchTopicOffsets(TOPIC);
    await admin.disconnect();
    const read = await readTopicBack(
      kafka,
      TOPIC,
      ends.reduce((sum, p) => sum + Number(p.high), 0),
      'run-b-check',
    );
    const verdict = ledger.ledger.verify(read);
    return { seed: options.seed, verdict, pausedAcks, offsetsHandedOutTwice: handedOutTwice(ledger.list), takenOver, directory: root };
  } catch (error) {
    throw runFailure(options.seed, error, brokers);
  } finally {
    await killAll(brokers);
    if (options.keep !== true) rmSync(root, { recursive: true, force: true });
  }
}

/** What was acknowledged: the ledger's verdict, and the list to find offsets handed out twice. */
class Acks {
  readonly ledger = new AckLedger();
  readonly list: AckedRecord[] = [];

  acked(record: AckedRecord): void {
    this.ledger.acked(record);
    this.list.push(record);
  }
}

/** Sends `count` single-record batches round-robin over the partitions, recording each acknowledgement. */
async function produce(producer: Producer, ledger: Acks, count: number, nextId: () => number, tag: string): Promise<void> {
  for (let i = 0; i < count; i++) {
    const id = nextId();
    const partition = id % PARTITIONS;
    const value = `${tag}-${id}`;
    const [result] = await producer.send({ topic: TOPIC, acks: -1, messages: [{ partition, value }] });
    ledger.acked({ topic: TOPIC, partition, offset: Number(result!.baseOffset), value });
  }
}

/** Acknowledged records that share a partition offset: only one of them can be in the log there. */
function handedOutTwice(acks: readonly AckedRecord[]): { partition: number; offset: number; values: string[] }[] {
  const byOffset = new Map<string, string[]>();
  for (const record of acks) {
    const key = `${record.partition}/${record.offset}`;
    byOffset.set(key, [...(byOffset.get(key) ?? []), record.value]);
  }
  return [...byOffset].filter(([, values]) => values.length > 1).map(([key, values]) => ({ partition: Number(key.split('/')[0]), offset: Number(key.split('/')[1]), values }));
}
