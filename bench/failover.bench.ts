/**
 * Failover of a partition leader, measured with a real client (issue 11 item 5): 3 `ferry broker`
 * processes on loopback share one file store (WAL objects in one directory, control records in
 * another, so the control store's requests can be counted apart), a topic of N partitions, and a
 * kafkajs producer sending one message at a time to partition 0 with acks=all, all the time.
 *
 * For each history size (ascending, on the same cluster: the topic is filled up to each size in
 * turn, across all partitions, with acks=all), >= 20 rounds of: find the leader of partition 0,
 * kill -9 it, and time kill -> the first acknowledgement of a produce sent after the kill (it can
 * only come from a new leader); then restart the killed broker and wait until the cluster is
 * whole again (3 brokers in the metadata, every partition led by a live broker with all its
 * replicas in sync, a produce acknowledged since the restart). Failover times go into an HDR histogram per history size.
 *
 * Each round also times kill -> every partition the killed broker led acknowledging a produce sent
 * after the kill (issue 28: a takeover of many partitions, one kafkajs producer sweeping all of
 * them), and counts the surviving brokers' WAL GETs meanwhile beside the objects of the dead
 * broker's newest stream: a takeover that reads the stream once per adopted partition shows as
 * GETs ~ partitions x objects. At 1,000 partitions and more the run judges issue 28's targets.
 *
 * Then the cluster idles (no client traffic) for a while and each broker's store census
 * (bench/lib/store-census-preload.ts: the FileStore's own request tally, written to a file by a
 * preload, the broker's code unchanged) gives its control-store requests per broker-minute, and
 * what an idle 3-broker cluster's control store costs per month at S3 Express request prices.
 *
 * The producer's retries (kafkajs: RETRY_INITIAL_MS doubling to RETRY_MAX_MS) add up to one
 * retry interval to each failover time: the client's polling, not the broker's.
 *
 * What one full run showed at ac5c934 (shared 2-core VM, defaults, RF 1, 8 partitions, 20 kills
 * each): p50 11.2 s / p99 12.4 s at 100 MB of history, 13.1 s / 15.3 s at 1 GB (the lease, then a
 * rebuild that grows with the chain); idle control store 216 PUT-class + 55 GET-class requests
 * per broker-minute, $31.9/month for the cluster. With --lease-ms 700 --scan-interval-ms 200
 * (quick run): p50 1.5 s, $208/month. At f77556e (defaults, 20 kills each, `--history
 * 100MB,1GB,10GB`): p50 0.222 / 0.211 / 0.226 s, p99 0.482 / 0.485 / 1.80 s; idle control store
 * $31.8/month. `--keep` leaves the brokers' logs: each takeover's `serving` line says how long its
 * seal and its rebuild took.
 */
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import { S3_EXPRESS_ONE_ZONE_PRICES } from '../src/store/pricing.ts';
import { OBJECTS_DIR } from '../src/store/file.ts';
import { DIRECTORY_SUFFIX, directoryPathOf, OBJECT_SUFFIX } from '../src/store/file-keys.ts';
import type { StoreStats } from '../src/store/stats.ts';
import { walRoot } from '../src/wal/keys.ts';
import { parseBenchArgs } from './lib/args.ts';
import { ClusterBroker } from './lib/cluster-broker.ts';
import { LatencyRecorder } from './lib/latency.ts';
import { median } from './lib/stats.ts';
import { requestCounts, requestRates, requestUsdPerMonthAt, statsDifference, statsSum, type RequestRates } from './lib/storage-cost.ts';
import { printTable } from './lib/table.ts';
import { atMost, printTargets } from './lib/targets.ts';
import type { TargetResult } from './report/results.ts';
import { keepTempDir, makeTempDir, removeTempDir } from './lib/temp-dir.ts';
import { formatNumber, formatSignificant, KIB_BYTES, mbPerSecond } from './lib/units.ts';
import { parseDecimalSize, parsePositiveInteger, takeValueFlags } from './lib/value-flags.ts';

const TOPIC = 'failover';
const BROKER_COUNT = 3;
const PARTITIONS_DEFAULT = 8;
const HISTORIES_DEFAULT = '100MB,1GB';
const QUICK_HISTORIES = '50MB';
const KILLS = 20;
const QUICK_KILLS = 5;
const IDLE_SECONDS = 60;
const QUICK_IDLE_SECONDS = 20;
/** Before the idle window: in-flight work (tiering, a last scan) settles. */
const IDLE_SETTLE_MS = 5_000;
/** Fill: messages of this size, this many per send, this many sends in flight. */
const FILL_VALUE_BYTES = 4 * KIB_BYTES;
const FILL_MESSAGES_PER_SEND = 256;
const FILL_SENDS_IN_FLIGHT = 4;
/** The probe's message: small, so its produce time is the broker's, not the transfer's. */
const PROBE_VALUE_BYTES = 100;
/** kafkajs retries: a send that fails is retried after RETRY_INITIAL_MS, doubling up to RETRY_MAX_MS. */
const RETRY_INITIAL_MS = 50;
const RETRY_MAX_MS = 200;
const SEND_RETRIES = 20;
/** A round whose failover takes longer is counted as failed (and the bench goes on). */
const FAILOVER_TIMEOUT_MS = 180_000;
const WHOLE_TIMEOUT_MS = 180_000;
const POLL_MS = 100;
/** Between rounds the cluster runs whole for a moment, so a round never starts mid-rebalance. */
const SETTLE_BETWEEN_ROUNDS_MS = 1_000;
const SECONDS_PER_MINUTE = 60;
/** After the last partition's acknowledgement, a census interval and a margin: every broker's census then counts the failover's reads. */
const CENSUS_SETTLE_MS = 1_200;
/** A broker's writer id when none is given (`ferry broker --help`): its WAL stream's key segment. */
const writerIdOf = (nodeId: number): string => `broker-${nodeId}`;
/** Issue 28's failover targets, judged at this many partitions and more. */
const TARGET_PARTITIONS_MIN = 1000;
/** kill -9 -> every partition the dead broker led acknowledged, p99 over the kills (= the maximum at 20). */
const TARGET_EVERY_PARTITION_P99_S = 5;
/**
 * The takeover's WAL GETs per object of the dead stream, by the survivor that made the most: each
 * object read once by each broker that adopts from it (one GET: shared reads fetch whole objects),
 * not once per adopted partition. The partitions a dead broker led are spread over the survivors
 * by fair share, so the cluster's total is about one read per adopting survivor.
 */
const TARGET_GETS_PER_OBJECT_MAX = 1.5;

const USAGE = `
bun bench/failover.bench.ts [--quick] [--history LIST] [--kills N] [--partitions N]
                            [--replication-factors LIST] [--lease-ms N] [--scan-interval-ms N] [--idle-seconds N] [--keep]

${BROKER_COUNT} ferry brokers on loopback, one file store; kafkajs produces to partition 0 with acks=all all the
time. Per history size: kill -9 the leader of partition 0, time kill -> first acknowledged produce
sent after the kill, and kill -> every partition it led acknowledged (with the WAL GETs that took),
restart it, wait until the cluster is whole; p50/p99/max. Then idle
control-store requests per broker-minute and $/month at S3 Express request prices.
  --quick                   ${QUICK_KILLS} kills at ${QUICK_HISTORIES}, ${QUICK_IDLE_SECONDS} s idle window (a smoke run; ~3 minutes)
  --history LIST            history sizes, ascending, MB/GB = 10^6/10^9 bytes (default ${HISTORIES_DEFAULT}); 10GB works
                            but its fill alone takes several minutes (kafkajs fills at tens of MB/s here)
  --kills N                 rounds per history size (default ${KILLS})
  --partitions N            partitions of the topic (default ${PARTITIONS_DEFAULT}); from ${TARGET_PARTITIONS_MIN}, issue 28's targets are judged
  --replication-factors L   scenarios, e.g. 1,3 (default 1; 3 is KIP-style followers on the other brokers)
  --lease-ms N              the brokers' --lease-ms (default: the broker's own default)
  --scan-interval-ms N      the brokers' --scan-interval-ms (default: the broker's own default)
  --idle-seconds N          length of the idle window (default ${IDLE_SECONDS})
  --keep                    keep the run's directory (the brokers' logs, stores and data) and print its path
  --help                    this text`;

interface Settings {
  readonly histories: readonly number[];
  readonly kills: number;
  readonly partitions: number;
  readonly replicationFactors: readonly number[];
  readonly leaseMs: number | undefined;
  readonly scanIntervalMs: number | undefined;
  readonly idleSeconds: number;
  /** Keep the run's directory for a look at the brokers' logs afterwards. */
  readonly keep: boolean;
}

function parseArgs(argv: readonly string[]): Settings {
  const { values, rest } = takeValueFlags(argv, ['history', 'kills', 'partitions', 'replication-factors', 'lease-ms', 'scan-interval-ms', 'idle-seconds']);
  const keep = rest.includes('--keep');
  const { quick } = parseBenchArgs(
    rest.filter((arg) => arg !== '--keep'),
    USAGE,
  );
  const integer = (name: string, fallback: number): number => (values.has(name) ? parsePositiveInteger(name, values.get(name)!) : fallback);
  const optional = (name: string): number | undefined => (values.has(name) ? parsePositiveInteger(name, values.get(name)!) : undefined);
  const histories = (values.get('history') ?? (quick ? QUICK_HISTORIES : HISTORIES_DEFAULT)).split(',').map(parseDecimalSize);
  if (histories.some((size, index) => index > 0 && size <= histories[index - 1]!)) throw new Error('--history sizes must ascend: the topic is filled up to each in turn');
  const replicationFactors = (values.get('replication-factors') ?? '1').split(',').map((text) => parsePositiveInteger('replication-factors', text));
  if (replicationFactors.some((rf) => rf > BROKER_COUNT)) throw new Error(`a replication factor is at most ${BROKER_COUNT}, the brokers there are`);
  return {
    histories,
    kills: integer('kills', quick ? QUICK_KILLS : KILLS),
    partitions: integer('partitions', PARTITIONS_DEFAULT),
    replicationFactors,
    leaseMs: optional('lease-ms'),
    scanIntervalMs: optional('scan-interval-ms'),
    idleSeconds: integer('idle-seconds', quick ? QUICK_IDLE_SECONDS : IDLE_SECONDS),
    keep,
  };
}

const sleep = (ms: number): Promise<void> => Bun.sleep(ms);

/** Sends one message to partition 0 at a time, acks=all, for as long as it runs; records each acknowledgement. */
class ProbeProducer {
  /** Each acknowledged send: when it was sent and when its acknowledgement came (performance.now()). */
  readonly acks: { sentMs: number; ackedMs: number }[] = [];
  failedSends = 0;
  #running = true;
  #loop: Promise<void> | null = null;
  readonly #value = Buffer.alloc(PROBE_VALUE_BYTES, 'p');

  constructor(readonly producer: Producer) {}

  start(): void {
    this.#loop = this.#run();
  }

  async #run(): Promise<void> {
    while (this.#running) {
      const sentMs = performance.now();
      try {
        await this.producer.send({ topic: TOPIC, acks: -1, messages: [{ partition: 0, value: this.#value }] });
        this.acks.push({ sentMs, ackedMs: performance.now() });
      } catch {
        this.failedSends++; // retries ran out (the outage is longer): send again at once
      }
    }
  }

  /** The first acknowledgement of a send made at or after `sinceMs`, waiting up to `timeoutMs`. */
  async firstAckSentAfter(sinceMs: number, timeoutMs: number): Promise<number | null> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const ack = this.acks[this.#firstSentAtOrAfter(sinceMs)];
      if (ack !== undefined) return ack.ackedMs;
      if (performance.now() > deadline) return null;
      await sleep(5);
    }
  }

  /** Sends are made one after another, so `acks` is in sentMs order: a binary search finds the first at or after `sinceMs`. */
  #firstSentAtOrAfter(sinceMs: number): number {
    let low = 0;
    let high = this.acks.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.acks[middle]!.sentMs < sinceMs) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  async stop(): Promise<void> {
    this.#running = false;
    await this.#loop;
  }
}

interface Round {
  readonly historyBytes: number;
  readonly victim: number;
  /** null: no acknowledgement within FAILOVER_TIMEOUT_MS. */
  readonly failoverMs: number | null;
  readonly newLeader: number | null;
  /** Restart of the killed broker -> the cluster whole again. */
  readonly wholeMs: number;
  /** The partitions the killed broker led, and kill -> the last of them acknowledging a produce sent after the kill (null: not all within FAILOVER_TIMEOUT_MS). */
  readonly partitionsMoved: number;
  readonly everyPartitionMs: number | null;
  /** The surviving brokers' GET-class requests to the WAL store from the kill until every partition was acknowledged, all of them and by the survivor that made the most. */
  readonly walGets: number;
  readonly walGetsMostBySurvivor: number;
  /** The WAL objects of the killed broker's newest stream when it was killed. */
  readonly deadStreamObjects: number;
}

interface Scenario {
  readonly replicationFactor: number;
  readonly rounds: Round[];
  readonly fills: { bytes: number; elapsedMs: number }[];
  idle?: IdleCost;
}

interface IdleCost {
  readonly seconds: number;
  readonly control: RequestRates;
  readonly wal: RequestRates;
}

async function leaderOf(admin: Admin, partition: number): Promise<number> {
  const metadata = await admin.fetchTopicMetadata({ topics: [TOPIC] });
  return metadata.topics[0]!.partitions.find((p) => p.partitionId === partition)?.leader ?? -1;
}

async function partitionsLedBy(admin: Admin, nodeId: number): Promise<number[]> {
  const metadata = await admin.fetchTopicMetadata({ topics: [TOPIC] });
  return metadata.topics[0]!.partitions.filter((p) => p.leader === nodeId).map((p) => p.partitionId);
}

/**
 * Sends one probe message to each of `partitions` (acks=all), each again until one is
 * acknowledged; resolves with when the last of them was (performance.now()), or null if one
 * was not by the deadline.
 */
async function everyPartitionAcked(producer: Producer, partitions: readonly number[], timeoutMs: number): Promise<number | null> {
  const deadline = performance.now() + timeoutMs;
  const value = Buffer.alloc(PROBE_VALUE_BYTES, 'e');
  const ackedAt = async (partition: number): Promise<number | null> => {
    while (performance.now() < deadline) {
      try {
        await producer.send({ topic: TOPIC, acks: -1, messages: [{ partition, value }] });
        return performance.now();
      } catch {
        // retries ran out (its new leader is not serving yet): send again
      }
    }
    return null;
  };
  const acked = await Promise.all(partitions.map(ackedAt));
  return acked.some((atMs) => atMs === null) ? null : Math.max(...(acked as number[]));
}

/** The objects of `writerId`'s newest WAL stream in the file store at `root`, as its files lie (src/store/file-keys.ts). */
function newestStreamObjects(root: string, writerId: string): number {
  const writer = join(root, OBJECTS_DIR, directoryPathOf(`${walRoot('')}${writerId}/`)!);
  const epochs = readdirSync(writer)
    .filter((name) => name.endsWith(DIRECTORY_SUFFIX))
    .sort();
  if (epochs.length === 0) return 0;
  return readdirSync(join(writer, epochs.at(-1)!)).filter((name) => name.endsWith(OBJECT_SUFFIX)).length;
}

/** The GET-class requests `brokers` made to the store at `root` so far, by their last census (0 for one with none yet). */
function getRequestsSoFar(brokers: readonly ClusterBroker[], root: string): number[] {
  return brokers.map((broker) => storeStatsOf(broker, root)).map((entry) => (entry === null ? 0 : requestCounts(entry.stats).getClass));
}

/** 3 brokers in the metadata, every partition led by one of them, every replica in sync. */
async function isWhole(admin: Admin, brokers: readonly ClusterBroker[]): Promise<boolean> {
  try {
    const cluster = await admin.describeCluster();
    const live = new Set(brokers.filter((broker) => broker.running).map((broker) => broker.nodeId));
    if (cluster.brokers.length !== brokers.length || !cluster.brokers.every((broker) => live.has(broker.nodeId))) return false;
    const metadata = await admin.fetchTopicMetadata({ topics: [TOPIC] });
    // With followers (RF > 1), whole also means every replica is back in sync: the next kill must find them so.
    return metadata.topics[0]!.partitions.every((p) => live.has(p.leader) && p.isr.length === p.replicas.length);
  } catch {
    return false;
  }
}

async function waitWhole(admin: Admin, brokers: readonly ClusterBroker[], probe: ProbeProducer, sinceMs: number): Promise<void> {
  const deadline = performance.now() + WHOLE_TIMEOUT_MS;
  while (!(await isWhole(admin, brokers)) || (await probe.firstAckSentAfter(sinceMs, 0)) === null) {
    if (performance.now() > deadline) throw new Error(`the cluster was not whole ${WHOLE_TIMEOUT_MS} ms after a restart`);
    await sleep(POLL_MS);
  }
}

/** Produces `bytes` more to the topic, spread over its partitions, acks=all. */
async function fill(producer: Producer, bytes: number, partitions: number): Promise<void> {
  const value = Buffer.alloc(FILL_VALUE_BYTES, 'h');
  const sends = Math.ceil(bytes / (FILL_VALUE_BYTES * FILL_MESSAGES_PER_SEND));
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < sends) {
      const send = next++;
      const messages = Array.from({ length: FILL_MESSAGES_PER_SEND }, (_, index) => ({ partition: (send * FILL_MESSAGES_PER_SEND + index) % partitions, value }));
      await producer.send({ topic: TOPIC, acks: -1, messages });
    }
  };
  await Promise.all(Array.from({ length: FILL_SENDS_IN_FLIGHT }, worker));
}

function storeStatsOf(broker: ClusterBroker, root: string): { atMs: number; stats: StoreStats } | null {
  const census = broker.census();
  const entries = census?.stores.filter((store) => store.root === root) ?? [];
  if (census === null || entries.length === 0) return null;
  // The same root opened twice would be two entries: their requests add up.
  return { atMs: census.writtenAtMs, stats: entries.map((entry) => entry.stats).reduce(statsSum) };
}

const sumRates = (rates: readonly RequestRates[]): RequestRates => ({
  putClassPerSecond: rates.reduce((sum, rate) => sum + rate.putClassPerSecond, 0),
  getClassPerSecond: rates.reduce((sum, rate) => sum + rate.getClassPerSecond, 0),
});

/** Every broker's requests to `root` per second over the idle window, summed. */
async function idleRates(brokers: readonly ClusterBroker[], roots: { control: string; wal: string }, seconds: number): Promise<IdleCost> {
  const snapshot = () => brokers.map((broker) => ({ control: storeStatsOf(broker, roots.control), wal: storeStatsOf(broker, roots.wal) }));
  const before = snapshot();
  await sleep(seconds * 1000);
  const after = snapshot();
  const rates = (which: 'control' | 'wal'): RequestRates =>
    sumRates(
      brokers.map((broker, index) => {
        const from = before[index]![which];
        const to = after[index]![which];
        if (from === null || to === null) throw new Error(`broker ${broker.nodeId} wrote no store census for its ${which} store`);
        return requestRates(statsDifference(from.stats, to.stats), to.atMs - from.atMs);
      }),
    );
  return { seconds, control: rates('control'), wal: rates('wal') };
}

async function runScenario(settings: Settings, replicationFactor: number): Promise<Scenario> {
  const directory = makeTempDir('failover');
  const objects = resolve(directory, 'objects');
  const control = resolve(directory, 'control');
  const shared = [
    '--wal-store',
    `file:${objects}`,
    '--cluster-store',
    `file:${control}`,
    '--create-store',
    ...(settings.leaseMs === undefined ? [] : ['--lease-ms', String(settings.leaseMs)]),
    ...(settings.scanIntervalMs === undefined ? [] : ['--scan-interval-ms', String(settings.scanIntervalMs)]),
  ];
  const brokers = Array.from({ length: BROKER_COUNT }, (_, index) => new ClusterBroker({ nodeId: index + 1, directory, args: shared }));
  const scenario: Scenario = { replicationFactor, rounds: [], fills: [] };
  const kafka = new Kafka({
    clientId: 'failover-bench',
    brokers: brokers.map((broker) => broker.bootstrap),
    logLevel: logLevel.NOTHING,
    retry: { initialRetryTime: RETRY_INITIAL_MS, maxRetryTime: RETRY_MAX_MS, retries: SEND_RETRIES },
  });
  const admin = kafka.admin();
  const filler = kafka.producer({ allowAutoTopicCreation: false });
  const probe = new ProbeProducer(kafka.producer({ allowAutoTopicCreation: false, maxInFlightRequests: 1 }));
  const sweeper = kafka.producer({ allowAutoTopicCreation: false });
  try {
    await Promise.all(brokers.map((broker) => broker.start()));
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: settings.partitions, replicationFactor }], waitForLeaders: true });
    await Promise.all([filler.connect(), probe.producer.connect(), sweeper.connect()]);
    const startMs = performance.now();
    probe.start();
    await waitWhole(admin, brokers, probe, startMs);
    let filled = 0;
    for (const history of settings.histories) {
      const fillStartMs = performance.now();
      await fill(filler, history - filled, settings.partitions);
      scenario.fills.push({ bytes: history - filled, elapsedMs: performance.now() - fillStartMs });
      console.error(`  RF ${replicationFactor}: filled to ${formatNumber(history / 1e6)} MB at ${formatNumber(mbPerSecond(history - filled, performance.now() - fillStartMs), 1)} MB/s`);
      filled = history;
      for (let kill = 0; kill < settings.kills; kill++) scenario.rounds.push(await runRound({ admin, brokers, probe, sweeper, walStoreRoot: objects }, history, kill));
    }
    await probe.stop();
    await sleep(IDLE_SETTLE_MS);
    console.error(`  RF ${replicationFactor}: idle for ${settings.idleSeconds} s`);
    scenario.idle = await idleRates(brokers, { control, wal: objects }, settings.idleSeconds);
    return scenario;
  } finally {
    await probe.stop();
    await Promise.allSettled([filler.disconnect(), probe.producer.disconnect(), sweeper.disconnect(), admin.disconnect()]);
    await Promise.all(brokers.map((broker) => broker.stop()));
    if (settings.keep) {
      keepTempDir(directory);
      console.error(`  RF ${replicationFactor}: kept ${directory}`);
    } else removeTempDir(directory);
  }
}

/** What a round works with: the cluster, its admin, the partition-0 probe, the producer that sweeps every moved partition, and the WAL store's root. */
interface RoundContext {
  readonly admin: Admin;
  readonly brokers: readonly ClusterBroker[];
  readonly probe: ProbeProducer;
  readonly sweeper: Producer;
  readonly walStoreRoot: string;
}

async function runRound(context: RoundContext, historyBytes: number, kill: number): Promise<Round> {
  const { admin, brokers, probe } = context;
  await sleep(SETTLE_BETWEEN_ROUNDS_MS);
  const victimId = await leaderOf(admin, 0);
  const victim = brokers.find((broker) => broker.nodeId === victimId);
  if (victim === undefined) throw new Error(`partition 0 has no live leader (${victimId}) before round ${kill + 1}`);
  const moved = await partitionsLedBy(admin, victimId);
  const survivors = brokers.filter((broker) => broker !== victim);
  const getsBefore = getRequestsSoFar(survivors, context.walStoreRoot);
  const killMs = performance.now();
  await victim.kill();
  const deadStreamObjects = newestStreamObjects(context.walStoreRoot, writerIdOf(victimId));
  const [ackedMs, everyAckedMs] = await Promise.all([probe.firstAckSentAfter(killMs, FAILOVER_TIMEOUT_MS), everyPartitionAcked(context.sweeper, moved, FAILOVER_TIMEOUT_MS)]);
  const failoverMs = ackedMs === null ? null : ackedMs - killMs;
  const everyPartitionMs = everyAckedMs === null ? null : everyAckedMs - killMs;
  const newLeader = ackedMs === null ? null : await leaderOf(admin, 0).catch(() => null);
  await sleep(CENSUS_SETTLE_MS);
  const walGetsBySurvivor = getRequestsSoFar(survivors, context.walStoreRoot).map((gets, index) => gets - getsBefore[index]!);
  const walGets = walGetsBySurvivor.reduce((sum, gets) => sum + gets, 0);
  const restartMs = performance.now();
  await victim.start();
  await waitWhole(admin, brokers, probe, performance.now());
  const wholeMs = performance.now() - restartMs;
  const timed = (ms: number | null) => (ms === null ? 'TIMEOUT' : `${formatNumber(ms)} ms`);
  console.error(
    `    ${formatNumber(historyBytes / 1e6)} MB, kill ${kill + 1}: broker ${victimId} -> ${newLeader ?? '?'} in ${timed(failoverMs)}, all ${moved.length} of its partitions in ${timed(everyPartitionMs)} (${formatNumber(walGets)} WAL GETs, ${walGetsBySurvivor.map(formatNumber).join(' + ')} by survivor, its stream held ${formatNumber(deadStreamObjects)} objects), whole ${formatNumber(wholeMs)} ms after restart`,
  );
  if (newLeader === victimId) throw new Error(`partition 0 was acknowledged by broker ${victimId} after it was killed`);
  return {
    historyBytes,
    victim: victimId,
    failoverMs,
    newLeader,
    wholeMs,
    partitionsMoved: moved.length,
    everyPartitionMs,
    walGets,
    walGetsMostBySurvivor: Math.max(0, ...walGetsBySurvivor),
    deadStreamObjects,
  };
}

function report(settings: Settings, scenarios: readonly Scenario[]): void {
  const brokerSettings = `--lease-ms ${settings.leaseMs ?? 'default'}, --scan-interval-ms ${settings.scanIntervalMs ?? 'default'}`;
  const rows: string[][] = [];
  for (const scenario of scenarios) {
    for (const history of settings.histories) {
      const rounds = scenario.rounds.filter((round) => round.historyBytes === history);
      const recorder = new LatencyRecorder();
      for (const round of rounds) if (round.failoverMs !== null) recorder.recordMs(round.failoverMs);
      const timeouts = rounds.filter((round) => round.failoverMs === null).length;
      const ok = recorder.count > 0;
      const fill = scenario.fills[settings.histories.indexOf(history)]!;
      rows.push([
        String(scenario.replicationFactor),
        formatNumber(history / 1e6),
        formatNumber(rounds.length),
        formatNumber(timeouts),
        ok ? formatSignificant(recorder.percentileMs(50) / 1000) : '-',
        ok ? formatSignificant(recorder.percentileMs(99) / 1000) : '-',
        ok ? formatSignificant(recorder.percentileMs(100) / 1000) : '-',
        rounds.length > 0 ? formatSignificant(median(rounds.map((round) => round.wholeMs)) / 1000) : '-',
        formatNumber(mbPerSecond(fill.bytes, fill.elapsedMs), 1),
      ]);
    }
  }
  printTable(
    `Failover: kill -9 of partition 0's leader -> first acks=all produce acknowledged on the new leader (kafkajs, retry ${RETRY_INITIAL_MS}-${RETRY_MAX_MS} ms; ${BROKER_COUNT} brokers, ${settings.partitions} partitions, ${brokerSettings}; history in MB = 10^6 B; HDR histogram)`,
    [
      { title: 'RF' },
      { title: 'history MB' },
      { title: 'kills' },
      { title: 'timeouts' },
      { title: 'p50 s' },
      { title: 'p99 s' },
      { title: 'max s' },
      { title: 'whole s (median)' },
      { title: 'fill MB/s' },
    ],
    rows,
  );
  printEveryPartition(settings, scenarios, brokerSettings);
  const idleRows = scenarios
    .filter((scenario) => scenario.idle !== undefined)
    .flatMap((scenario) => {
      const idle = scenario.idle!;
      const perBrokerMinute = (rates: RequestRates, which: 'put' | 'get') =>
        formatNumber(((which === 'put' ? rates.putClassPerSecond : rates.getClassPerSecond) * SECONDS_PER_MINUTE) / BROKER_COUNT, 1);
      return (['control', 'wal'] as const).map((which) => [
        String(scenario.replicationFactor),
        which === 'control' ? 'control store' : 'WAL store',
        perBrokerMinute(idle[which], 'put'),
        perBrokerMinute(idle[which], 'get'),
        formatSignificant(requestUsdPerMonthAt(idle[which])),
      ]);
    });
  printTable(
    `Idle cluster: requests per broker-minute over a ${settings.idleSeconds} s window with no client traffic (PUT class includes LIST), and $/month for the idle ${BROKER_COUNT}-broker cluster at ${S3_EXPRESS_ONE_ZONE_PRICES.name} request prices ($${S3_EXPRESS_ONE_ZONE_PRICES.putClassUsdPer1000}/1k PUT, $${S3_EXPRESS_ONE_ZONE_PRICES.getClassUsdPer1000}/1k GET; ${brokerSettings})`,
    [{ title: 'RF' }, { title: 'store', align: 'left' }, { title: 'PUT-class/min' }, { title: 'GET-class/min' }, { title: '$/month, cluster' }],
    idleRows,
  );
}

/** Per scenario and history: kill -> every moved partition acknowledged, and the takeover's WAL GETs beside the dead stream's objects; issue 28's targets at 1,000 partitions and more. */
function printEveryPartition(settings: Settings, scenarios: readonly Scenario[], brokerSettings: string): void {
  const rows: string[][] = [];
  const goals: TargetResult[] = [];
  for (const scenario of scenarios) {
    for (const history of settings.histories) {
      const rounds = scenario.rounds.filter((round) => round.historyBytes === history);
      if (rounds.length === 0) continue;
      const recorder = new LatencyRecorder();
      for (const round of rounds) if (round.everyPartitionMs !== null) recorder.recordMs(round.everyPartitionMs);
      const timeouts = rounds.filter((round) => round.everyPartitionMs === null).length;
      const getsPerObject = median(rounds.map((round) => round.walGets / Math.max(1, round.deadStreamObjects)));
      const mostPerObject = median(rounds.map((round) => round.walGetsMostBySurvivor / Math.max(1, round.deadStreamObjects)));
      const seconds = (percentile: number) => (recorder.count > 0 ? formatSignificant(recorder.percentileMs(percentile) / 1000) : '-');
      rows.push([
        String(scenario.replicationFactor),
        formatNumber(history / 1e6),
        formatNumber(median(rounds.map((round) => round.partitionsMoved))),
        formatNumber(timeouts),
        seconds(50),
        seconds(99),
        seconds(100),
        formatNumber(median(rounds.map((round) => round.walGets))),
        formatNumber(median(rounds.map((round) => round.deadStreamObjects))),
        formatSignificant(getsPerObject),
        formatSignificant(mostPerObject),
      ]);
      if (settings.partitions < TARGET_PARTITIONS_MIN) continue;
      const where = `RF ${scenario.replicationFactor}, ${formatNumber(history / 1e6)} MB, ${settings.partitions} partitions`;
      // A round that timed out counts as the longest failover there is.
      const p99Seconds = timeouts > 0 ? Number.POSITIVE_INFINITY : recorder.percentileMs(99) / 1000;
      goals.push(atMost('failover', `${where}: kill -> every moved partition acked, p99`, p99Seconds, TARGET_EVERY_PARTITION_P99_S, ' s'));
      goals.push(atMost('failover', `${where}: WAL GETs per dead-stream object, by the survivor that made most`, mostPerObject, TARGET_GETS_PER_OBJECT_MAX, 'x'));
    }
  }
  printTable(
    `Failover of every partition: kill -9 of partition 0's leader -> each partition it led has acknowledged an acks=all produce sent after the kill (one kafkajs producer sending to all of them, each again until acknowledged); WAL GETs = the surviving brokers' GET-class requests to the WAL store meanwhile (store census), beside the objects of the dead broker's newest stream at the kill (${BROKER_COUNT} brokers, ${settings.partitions} partitions, ${brokerSettings})`,
    [
      { title: 'RF' },
      { title: 'history MB' },
      { title: 'partitions moved' },
      { title: 'timeouts' },
      { title: 'p50 s' },
      { title: 'p99 s' },
      { title: 'max s' },
      { title: 'WAL GETs' },
      { title: 'dead stream objects' },
      { title: 'GETs/object' },
      { title: 'most by one survivor' },
    ],
    rows,
  );
  if (goals.length > 0) printTargets(`Issue 28's failover targets, this run (at ${TARGET_PARTITIONS_MIN} partitions and more)`, goals);
}

async function main(): Promise<void> {
  const settings = parseArgs(process.argv.slice(2));
  const scenarios: Scenario[] = [];
  for (const replicationFactor of settings.replicationFactors) scenarios.push(await runScenario(settings, replicationFactor));
  report(settings, scenarios);
}

await main();
