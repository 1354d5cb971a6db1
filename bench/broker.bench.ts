/**
 * A real Kafka client producing 1 KiB messages to the Ferry broker, beside the same client
 * against librdkafka's built-in mock cluster (rdkafka_mock.h) in the same run, as a reference
 * peer: an in-memory broker in C that acknowledges as soon as it appended, the floor for any
 * broker on this machine with this client.
 *
 * Servers, each a fresh process per round (so producer and server CPU are separate processes):
 * - ferry file:        `bun src/cli.ts broker` as `npm start` runs it (bench/lib/kafka-targets.ts):
 *                      every default (WAL on the file store under ./data/objects, 1 MiB / 5 ms
 *                      uploads, rolled segments tiered, local log flush none), its own port;
 * - ferry s3-express:  the same with `--wal-store memory://?latency=s3-express`, the memory store's
 *                      S3 Express One Zone latency model (assumed, see src/store/latency.ts): what
 *                      an acknowledgement costs when it waits for one S3E1Z PUT. The tier has a
 *                      store of its own, `--tier-store file:<data>/tier`, as in production (an
 *                      S3 Express WAL bucket needs one: `ferry broker --help`; S3 Standard there).
 *                      With the tier in the memory model too, the broker's process held every
 *                      tiered byte in fresh memory that a real store keeps on its side: paired
 *                      probes gave 106 MB per CPU-second that way against 153 with the tier apart.
 *                      The tier's upload to S3 (an HTTP client's work) is not in this figure: the
 *                      local file store's direct writes stand in for it;
 * - librdkafka mock:   bench/mock-cluster/mock-cluster.c, built here with `cc ... -lrdkafka`.
 * Per round and server, in an order that rotates every round: untimed kcat warm-up (creates the
 * topic, warms the broker's JIT), the ack-latency probes, an untimed kcat run of the timed size
 * (the broker's memory touched, as a broker's that has been up a while), then the timed kcat run.
 *
 * Throughput: `kcat -P -l file` of N x 1 KiB messages, acks=all, linger.ms=5, batch.size=1000000,
 * wall clock from spawn to exit; the partition's end offset is checked before and after.
 * Ack latency: kcat reports no per-message times, so bench/mock-cluster/ack-latency.c (librdkafka,
 * same build) sends 1 KiB messages open-loop at a fixed rate with acks=all and records each
 * delivery report's latency from the moment the message was due. Two client settings:
 * librdkafka's default pipelining, and one request in flight (the client batches while it waits).
 * Beside them, the ack floor of the same run (bench/lib/ack-floor.ts). The Ferry brokers run with
 * stage timers (src/metrics/stage-timers.ts): where their CPU went, per produce request. Issue
 * 27's targets are judged from these numbers and printed last (bench/lib/targets.ts).
 */
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { BrokerResults, TargetResult as TargetResultOfBench } from './report/results.ts';
import { parseProfiledBenchArgs } from './lib/args.ts';
import { writeBackDirtyPages } from './lib/child-processes.ts';
import { ackLatencies, type ClientConfig, type ClientRun, kcatEndOffset, kcatProduceFile, writeMessageFile, KCAT_PRODUCER_CONFIG } from './lib/kafka-clients.ts';
import { type RunningTarget, startFerryBroker, startMockCluster } from './lib/kafka-targets.ts';
import { kcatRunAtAckDelay, latenciesAtAckDelay, wholeAckDelayMs } from './lib/ack-time-reference.ts';
import { type FloorShape, type FloorStore, putLatenciesMs, recordFloor } from './lib/ack-floor.ts';
import { LatencyRecorder } from './lib/latency.ts';
import { atLeast, atMost, printTargets } from './lib/targets.ts';
import { delta, type MetricSample, scrapePrometheus } from './lib/prometheus-text.ts';
import { buildRdkafkaPrograms, findKcat, type RdkafkaPrograms } from './lib/rdkafka-tools.ts';
import { maxOf, median, minOf, pairedRatios } from './lib/stats.ts';
import { writeBenchResults } from './lib/results.ts';
import { printTable } from './lib/table.ts';
import { mib, processRss, RssSampler } from './lib/rss.ts';
import { brokerProduceTerms, fileStoreDirectTerm, fileStoreTierTerm } from './lib/rss-bounds.ts';
import { judgeRssPeak } from './lib/rss-report.ts';
import { makeTempDir } from './lib/temp-dir.ts';
import { formatBytes, formatNumber, formatSignificant, KIB_BYTES, mbPerSecond, perSecond } from './lib/units.ts';

const TOPIC = 'bench';
const PARTITION = 0;
const VALUE_BYTES = KIB_BYTES;
/** Data per timed kcat run (value bytes, MB = 10^6 B); --quick takes a tenth. */
const DATA_BYTES = 200_000_000;
const QUICK_DATA_BYTES = 20_000_000;
/** Untimed kcat run before the probes: creates the topic on Ferry and warms its JIT. */
const WARMUP_BYTES = 16_000_000;
const QUICK_WARMUP_BYTES = 4_000_000;
const ROUND_COUNT = 3;
const QUICK_ROUND_COUNT = 2;
/** The broker's latencies are exposed in seconds (Prometheus base units); the table prints ms. */
const MS_PER_SECOND = 1000;
const LATENCY_RATE_PER_SECOND = 2000;
/** Measured per round per probe (unrecorded warm-up before it); 3 rounds make 7.5 s, 15,000 samples. */
const LATENCY_DURATION_MS = 2500;
const QUICK_LATENCY_DURATION_MS = 1000;
const LATENCY_WARMUP_MS = 500;
/** `ferry broker`'s default --upload-interval-ms: a WAL object closes this long after its first append. */
const UPLOAD_INTERVAL_MS = 5;
/** The ack floor of the probe's requests: its linger, the upload interval, one PUT of what a request carries at its rate. */
const FLOOR_SHAPE: FloorShape = {
  lingerMs: Number(KCAT_PRODUCER_CONFIG['linger.ms']),
  uploadIntervalMs: UPLOAD_INTERVAL_MS,
  objectBytes: Math.round((LATENCY_RATE_PER_SECOND * (Number(KCAT_PRODUCER_CONFIG['linger.ms']) + UPLOAD_INTERVAL_MS) * VALUE_BYTES) / MS_PER_SECOND),
};
/** Issue 27's targets: throughput against the mock, CPU per byte, the one-in-flight probe against the floor. */
const TARGET_VS_MOCK = 0.8;
const TARGET_MB_PER_CPU_SECOND = 150;
const TARGET_P50_OVER_FLOOR_MS = 2;
const TARGET_P99_OVER_FLOOR = 1.2;
/** The probe mode the latency targets judge: the per-request ack time. */
const TARGET_LATENCY_MODE = '1 in flight';
const QUICK_LATENCY_WARMUP_MS = 250;
/** kcat's producer sends on one connection requests of at most batch.size plus headers: 1 MiB covers one. */
const KCAT_CONNECTIONS = 1;
const KCAT_REQUEST_BYTES_MAX = 1024 * 1024;
/** The server's RSS is sampled this often during the timed run; its peak is the kernel's high-water mark. */
const RSS_SAMPLE_INTERVAL_MS = 100;
/** Log bytes per value byte of a 1 KiB record: its record header (~10 B) and a share of its batch's 61. */
const LOG_BYTES_PER_VALUE_BYTE = 1.05;

interface LatencyMode {
  readonly name: string;
  readonly description: string;
  readonly config: ClientConfig;
}

const LATENCY_MODES: readonly LatencyMode[] = [
  {
    name: 'pipelined',
    description: "acks=all, linger.ms=5, librdkafka's default max.in.flight (1,000,000): requests queue at a server slower than 1 per 5 ms",
    config: { acks: 'all', 'linger.ms': '5' },
  },
  {
    name: '1 in flight',
    description: 'acks=all, linger.ms=5, max.in.flight=1: the client batches while one request waits, so this is the per-request ack time',
    config: { acks: 'all', 'linger.ms': '5', 'max.in.flight.requests.per.connection': '1' },
  },
];

const USAGE = `
bun bench/broker.bench.ts [--quick] [--cpu-prof DIR]

kcat producing 1 KiB messages (acks=all, linger.ms=5) to the Ferry broker (WAL on the file store,
and on the memory store's s3-express latency model) and to librdkafka's mock cluster, alternating
rounds: MB/s and MB per broker CPU-second, p50/p99/p999 ack latency at ${LATENCY_RATE_PER_SECOND} msg/s from a
librdkafka probe beside the ack floor (linger + upload interval + one PUT, same run), where the
broker's CPU went per produce request (stage timers), and issue 27's targets against this run.
Needs kcat, a C compiler and librdkafka-dev (apt-get install -y kcat gcc librdkafka-dev); without
the latter two the mock peer and the latency probe are skipped.
  --quick          ${QUICK_DATA_BYTES / 1e6} MB per kcat run, ${QUICK_ROUND_COUNT} rounds, ${QUICK_LATENCY_DURATION_MS / 1000} s probes (a smoke run)
  --cpu-prof DIR   write a CPU profile of every Ferry broker (bun --cpu-prof, .cpuprofile + .md) into DIR
  --help           this text`;

interface Target {
  readonly name: string;
  readonly isFerry: boolean;
  /** Where its WAL goes, for the ack floor's PUTs (bench/lib/ack-floor.ts); null: no floor (the mock). */
  readonly floorStore: FloorStore | null;
  /** Copies of every produced byte the server keeps in its own memory: a memory:// WAL store holds each WAL object until the WAL is collected. */
  readonly storeCopiesInMemory: number;
  start(round: number): Promise<RunningTarget>;
}

interface ThroughputRound {
  readonly elapsedMs: number;
  readonly messages: number;
  readonly clientCpuMs: number;
  readonly serverCpuMs: number | null;
  /** The server process's RSS right after its start, and its peak during the timed run; null where /proc is missing. */
  readonly serverStartRssBytes: number | null;
  readonly serverRssPeakBytes: number | null;
  /** Ferry only: the broker's metrics before and after the timed run. */
  readonly metrics: { readonly before: MetricSample; readonly after: MetricSample } | null;
}

interface TargetResult {
  readonly throughput: ThroughputRound[];
  /** The CRC32C implementation each round's server said it chose (Ferry only). */
  readonly crc32c: Set<string>;
  /** Per latency mode: all rounds pooled, and each round's own recorder (for the p99 range). */
  readonly latency: Map<string, { pooled: LatencyRecorder; rounds: LatencyRecorder[] }>;
  /** The ack floor's samples, all rounds pooled (Ferry only): linger + upload interval + one PUT. */
  readonly floor: LatencyRecorder;
}

interface Settings {
  readonly quick: boolean;
  readonly cpuProfileDirectory: string | undefined;
  readonly roundCount: number;
  readonly messageCount: number;
  readonly warmupMessageCount: number;
  readonly latencyDurationMs: number;
  readonly latencyWarmupMs: number;
}

function parseArgs(argv: readonly string[]): Settings {
  const { quick, cpuProfileDirectory } = parseProfiledBenchArgs(argv, USAGE);
  return {
    quick,
    cpuProfileDirectory,
    roundCount: quick ? QUICK_ROUND_COUNT : ROUND_COUNT,
    messageCount: Math.round((quick ? QUICK_DATA_BYTES : DATA_BYTES) / VALUE_BYTES),
    warmupMessageCount: Math.round((quick ? QUICK_WARMUP_BYTES : WARMUP_BYTES) / VALUE_BYTES),
    latencyDurationMs: quick ? QUICK_LATENCY_DURATION_MS : LATENCY_DURATION_MS,
    latencyWarmupMs: quick ? QUICK_LATENCY_WARMUP_MS : LATENCY_WARMUP_MS,
  };
}

function targetsOf(settings: Settings, programs: RdkafkaPrograms | null): Target[] {
  const profile = (name: string, round: number) =>
    settings.cpuProfileDirectory === undefined ? {} : { cpuProfileDirectory: settings.cpuProfileDirectory, cpuProfileName: `${name}-round${round + 1}` };
  const targets: Target[] = [
    { name: 'ferry file', isFerry: true, floorStore: 'file', storeCopiesInMemory: 0, start: (round) => startFerryBroker({ stageTimers: true, ...profile('ferry-file', round) }) },
    {
      name: 'ferry s3-express',
      isFerry: true,
      floorStore: 's3-express',
      storeCopiesInMemory: 1,
      start: (round) =>
        startFerryBroker({ walStore: () => 'memory://?latency=s3-express', tierStore: (data) => `file:${join(data, 'tier')}`, stageTimers: true, ...profile('ferry-s3-express', round) }),
    },
  ];
  if (programs !== null) targets.push({ name: 'librdkafka mock', isFerry: false, floorStore: null, storeCopiesInMemory: 1, start: () => startMockCluster(programs.mockCluster, TOPIC) });
  return targets;
}

/** One round on one server: warm-up, latency probes, timed kcat run; the server is stopped whatever happens. */
async function runRound(
  target: Target,
  round: number,
  settings: Settings,
  kcat: string,
  programs: RdkafkaPrograms | null,
  files: { data: string; warmup: string },
  result: TargetResult,
): Promise<void> {
  const running = await target.start(round);
  const serverStartRssBytes = processRss(running.pid).current();
  if (running.crc32c !== null) result.crc32c.add(running.crc32c);
  try {
    await kcatProduceFile(kcat, running.bootstrap, TOPIC, files.warmup, KCAT_PRODUCER_CONFIG);
    if (programs !== null) {
      for (const mode of LATENCY_MODES) {
        const latencies = await ackLatencies(programs.ackLatency, running.bootstrap, TOPIC, {
          ratePerSecond: LATENCY_RATE_PER_SECOND,
          durationMs: settings.latencyDurationMs,
          warmupMs: settings.latencyWarmupMs,
          valueBytes: VALUE_BYTES,
          config: mode.config,
        });
        const recorders = result.latency.get(mode.name)!;
        const roundRecorder = new LatencyRecorder();
        for (const latencyMs of latencies) {
          recorders.pooled.recordMs(latencyMs);
          roundRecorder.recordMs(latencyMs);
        }
        recorders.rounds.push(roundRecorder);
      }
      if (target.floorStore !== null) recordFloor(result.floor, FLOOR_SHAPE, await putLatenciesMs(target.floorStore, FLOOR_SHAPE.objectBytes, round));
    }
    // An untimed run of the timed size after the probes (so they meet a broker as quiet as before):
    // the process touches the memory such a run uses, as a broker that has been up a while has. On
    // the virtual machines measured here the host backs guest memory lazily, and a fresh process's
    // first hundreds of MB cost the broker up to twice the CPU per MB of the next (issue 27 part
    // four, the same build, three rounds each: 200 MB after a 16 MB warm-up 100-121 MB per
    // CPU-second, after a 300 MB one 136-189): the timed run measures the broker, not the first
    // touch of its memory.
    await kcatProduceFile(kcat, running.bootstrap, TOPIC, files.data, KCAT_PRODUCER_CONFIG);
    Bun.gc(true);
    const startOffset = await kcatEndOffset(kcat, running.bootstrap, TOPIC, PARTITION);
    const metricsBefore = running.metricsUrl === null ? null : await scrapePrometheus(running.metricsUrl);
    const serverCpuBefore = running.cpuMs();
    const serverRss = new RssSampler(processRss(running.pid), RSS_SAMPLE_INTERVAL_MS).start();
    const run = await kcatProduceFile(kcat, running.bootstrap, TOPIC, files.data, KCAT_PRODUCER_CONFIG);
    const serverRssWindow = serverRss.stop();
    const serverCpuAfter = running.cpuMs();
    const metricsAfter = running.metricsUrl === null ? null : await scrapePrometheus(running.metricsUrl);
    const endOffset = await kcatEndOffset(kcat, running.bootstrap, TOPIC, PARTITION);
    if (endOffset - startOffset !== settings.messageCount) throw new Error(`${target.name}: kcat exited after ${endOffset - startOffset} of ${settings.messageCount} messages were appended`);
    result.throughput.push({
      elapsedMs: run.elapsedMs,
      messages: settings.messageCount,
      clientCpuMs: run.cpuMs,
      serverCpuMs: serverCpuBefore === null || serverCpuAfter === null ? null : serverCpuAfter - serverCpuBefore,
      serverStartRssBytes,
      serverRssPeakBytes: serverRssWindow?.peakBytes ?? null,
      metrics: metricsBefore === null || metricsAfter === null ? null : { before: metricsBefore, after: metricsAfter },
    });
  } finally {
    await running.stop();
    writeBackDirtyPages();
  }
}

const mbPerSecondOf = (round: ThroughputRound): number => mbPerSecond(round.messages * VALUE_BYTES, round.elapsedMs);
const range = (values: readonly number[], format: (value: number) => string): string => `${format(minOf(values))}-${format(maxOf(values))}`;
const percentOf = (partMs: number, wholeMs: number): string => `${formatNumber((100 * partMs) / wholeMs)}%`;

function throughputRows(targets: readonly Target[], results: ReadonlyMap<string, TargetResult>, peer: Target | undefined): string[][] {
  const peerMbPerSecond = peer === undefined ? null : results.get(peer.name)!.throughput.map(mbPerSecondOf);
  return targets.map((target) => {
    const rounds = results.get(target.name)!.throughput;
    const rates = rounds.map(mbPerSecondOf);
    const ratios = peerMbPerSecond === null || target === peer ? null : pairedRatios(rates, peerMbPerSecond);
    const serverCpu = rounds.every((round) => round.serverCpuMs !== null) ? percentOf(median(rounds.map((round) => round.serverCpuMs!)), median(rounds.map((round) => round.elapsedMs))) : '-';
    return [
      target.name,
      formatNumber(median(rates), 1),
      range(rates, (value) => formatNumber(value, 1)),
      formatNumber(median(rounds.map((round) => perSecond(round.messages, round.elapsedMs)))),
      ratios === null ? '-' : formatSignificant(median(ratios)),
      ratios === null ? '-' : range(ratios, formatSignificant),
      serverCpu,
      rounds.every((round) => round.serverCpuMs !== null && round.serverCpuMs > 0) ? formatNumber(median(rounds.map(mbPerCpuSecondOf))) : '-',
      rounds.every((round) => round.serverRssPeakBytes !== null) ? formatNumber(mib(median(rounds.map((round) => round.serverRssPeakBytes!)))) : '-',
      percentOf(median(rounds.map((round) => round.clientCpuMs)), median(rounds.map((round) => round.elapsedMs))),
      formatNumber(median(rounds.map((round) => round.clientCpuMs / ((round.messages * VALUE_BYTES) / 1e6))), 1),
    ];
  });
}

function latencyRows(targets: readonly Target[], results: ReadonlyMap<string, TargetResult>, peer: Target | undefined): string[][] {
  const rows: string[][] = [];
  for (const mode of LATENCY_MODES) {
    const peerP99 = peer === undefined ? null : results.get(peer.name)!.latency.get(mode.name)!.pooled.percentileMs(99);
    for (const target of targets) {
      const { pooled, rounds } = results.get(target.name)!.latency.get(mode.name)!;
      const roundP99s = rounds.map((recorder) => recorder.percentileMs(99));
      rows.push([
        target.name,
        mode.name,
        formatNumber(pooled.count),
        formatSignificant(pooled.percentileMs(50)),
        formatSignificant(pooled.percentileMs(99)),
        formatSignificant(pooled.percentileMs(99.9)),
        formatSignificant(pooled.percentileMs(100)),
        range(roundP99s, formatSignificant),
        peerP99 === null || target === peer ? '-' : formatSignificant(pooled.percentileMs(99) / peerP99),
        ...floorCells(results.get(target.name)!.floor),
      ]);
    }
  }
  return rows;
}

/**
 * Beside each Ferry target's one-in-flight probe: the same probe against the mock cluster
 * acknowledging every request exactly the floor's ack time (upload interval + one PUT p50) after
 * it arrives (bench/lib/ack-time-reference.ts), the best a broker that waits one upload interval
 * can do with this client. Run after the rounds, as long as one target's rounds of probes.
 */
async function printAckTimeReference(targets: readonly Target[], results: ReadonlyMap<string, TargetResult>, settings: Settings, programs: RdkafkaPrograms): Promise<void> {
  const mode = LATENCY_MODES.find((candidate) => candidate.name === TARGET_LATENCY_MODE)!;
  const rows: string[][] = [];
  for (const target of targets.filter((candidate) => candidate.isFerry && results.get(candidate.name)!.floor.count > 0)) {
    const result = results.get(target.name)!;
    const ackTimeMs = result.floor.percentileMs(50) - FLOOR_SHAPE.lingerMs;
    const reference = new LatencyRecorder();
    const run = {
      ratePerSecond: LATENCY_RATE_PER_SECOND,
      durationMs: settings.latencyDurationMs * settings.roundCount,
      warmupMs: settings.latencyWarmupMs,
      valueBytes: VALUE_BYTES,
      config: mode.config,
    };
    for (const latencyMs of await latenciesAtAckDelay(programs.mockCluster, programs.ackLatency, TOPIC, ackTimeMs, run)) reference.recordMs(latencyMs);
    const ferry = result.latency.get(mode.name)!.pooled;
    rows.push([
      target.name,
      formatSignificant(ackTimeMs),
      String(wholeAckDelayMs(ackTimeMs)),
      ...[50, 99].flatMap((percentile) => [formatSignificant(reference.percentileMs(percentile)), formatSignificant(ferry.percentileMs(percentile))]),
    ]);
  }
  printTable(
    `${mode.name} at ${LATENCY_RATE_PER_SECOND} msg/s against a broker that acks every request exactly the floor's ack time (upload interval + one PUT p50) after it arrives: librdkafka's mock with its responses delayed, beside Ferry's (bench/lib/ack-time-reference.ts)`,
    ACK_TIME_REFERENCE_COLUMNS,
    rows,
  );
}

/**
 * Beside each Ferry target's throughput: kcat's, run as the rounds run it, against the mock cluster
 * acknowledging every request the floor's ack time after it arrives (bench/lib/ack-time-reference.ts):
 * what a server that costs no CPU and acknowledges one upload interval and one PUT later reaches
 * with this client on this machine, and the client's CPU per MB there. Run after the rounds.
 */
async function printThroughputAtAckTime(
  targets: readonly Target[],
  results: ReadonlyMap<string, TargetResult>,
  settings: Settings,
  kcat: string,
  mockProgram: string,
  file: string,
  peer: Target,
): Promise<void> {
  const peerMbPerSecond = median(results.get(peer.name)!.throughput.map(mbPerSecondOf));
  const rows: string[][] = [];
  for (const target of targets.filter((candidate) => candidate.isFerry && results.get(candidate.name)!.floor.count > 0)) {
    const result = results.get(target.name)!;
    const ackTimeMs = result.floor.percentileMs(50) - FLOOR_SHAPE.lingerMs;
    const runs: ClientRun[] = [];
    for (let round = 0; round < settings.roundCount; round++) runs.push(await kcatRunAtAckDelay(mockProgram, kcat, TOPIC, file, KCAT_PRODUCER_CONFIG, ackTimeMs));
    const megabytes = (settings.messageCount * VALUE_BYTES) / 1e6;
    const delayedMbPerSecond = median(runs.map((run) => mbPerSecond(settings.messageCount * VALUE_BYTES, run.elapsedMs)));
    rows.push([
      target.name,
      String(wholeAckDelayMs(ackTimeMs)),
      formatNumber(delayedMbPerSecond, 1),
      formatSignificant(delayedMbPerSecond / peerMbPerSecond),
      formatNumber(median(runs.map((run) => run.cpuMs / megabytes)), 1),
      formatSignificant(median(result.throughput.map(mbPerSecondOf)) / peerMbPerSecond),
    ]);
  }
  printTable(
    `kcat -P as above against a server that costs no CPU and acks every request the floor's ack time (upload interval + one PUT p50) after it arrives: librdkafka's mock with its responses delayed, ${settings.roundCount} runs each after the rounds (medians; ratios of medians to the undelayed mock's; bench/lib/ack-time-reference.ts)`,
    THROUGHPUT_AT_ACK_TIME_COLUMNS,
    rows,
  );
}

const THROUGHPUT_AT_ACK_TIME_COLUMNS = [
  { title: 'target', align: 'left' },
  { title: 'mock delay ms' },
  { title: 'delayed mock MB/s' },
  { title: 'vs mock' },
  { title: 'kcat CPU ms/MB' },
  { title: 'ferry vs mock' },
] as const;

const ACK_TIME_REFERENCE_COLUMNS = [
  { title: 'target', align: 'left' },
  { title: 'floor ack time ms' },
  { title: 'mock delay ms' },
  { title: 'mock p50' },
  { title: 'ferry p50' },
  { title: 'mock p99' },
  { title: 'ferry p99' },
] as const;

/** The floor's p50 and p99 beside a target's latencies ('-' where it has none). */
function floorCells(floor: LatencyRecorder): string[] {
  return floor.count === 0 ? ['-', '-'] : [formatSignificant(floor.percentileMs(50)), formatSignificant(floor.percentileMs(99))];
}

const mbPerCpuSecondOf = (round: ThroughputRound): number => (round.messages * VALUE_BYTES) / 1e6 / (round.serverCpuMs! / MS_PER_SECOND);

/**
 * Issue 27's goals for each Ferry target, judged from this run: kcat throughput against the mock
 * (median of the paired per-round ratios), MB of acks=all produce per broker CPU-second (median
 * over rounds), and the one-in-flight probe's p50 and p99 against the ack floor.
 */
function judgeTargets(targets: readonly Target[], results: ReadonlyMap<string, TargetResult>, peer: Target | undefined): TargetResultOfBench[] {
  const goals: TargetResultOfBench[] = [];
  for (const target of targets.filter((candidate) => candidate.isFerry)) {
    const result = results.get(target.name)!;
    const rates = result.throughput.map(mbPerSecondOf);
    if (peer !== undefined) {
      const ratio = median(pairedRatios(rates, results.get(peer.name)!.throughput.map(mbPerSecondOf)));
      goals.push(atLeast('broker', `${target.name}: kcat acks=all MB/s vs librdkafka mock`, ratio, TARGET_VS_MOCK, 'x'));
    }
    if (result.throughput.every((round) => round.serverCpuMs !== null && round.serverCpuMs > 0)) {
      goals.push(atLeast('broker', `${target.name}: MB produced per broker CPU-second`, median(result.throughput.map(mbPerCpuSecondOf)), TARGET_MB_PER_CPU_SECOND, ''));
    }
    const probe = result.latency.get(TARGET_LATENCY_MODE)?.pooled;
    if (probe !== undefined && probe.count > 0 && result.floor.count > 0) {
      const floorP50 = result.floor.percentileMs(50);
      const floorP99 = result.floor.percentileMs(99);
      goals.push(
        atMost(
          'broker',
          `${target.name}: ack p50, ${TARGET_LATENCY_MODE} (floor p50 ${formatSignificant(floorP50)} ms + ${TARGET_P50_OVER_FLOOR_MS})`,
          probe.percentileMs(50),
          floorP50 + TARGET_P50_OVER_FLOOR_MS,
          ' ms',
        ),
      );
      goals.push(
        atMost(
          'broker',
          `${target.name}: ack p99, ${TARGET_LATENCY_MODE} (${TARGET_P99_OVER_FLOOR} x floor p99 ${formatSignificant(floorP99)} ms)`,
          probe.percentileMs(99),
          TARGET_P99_OVER_FLOOR * floorP99,
          ' ms',
        ),
      );
    }
  }
  return goals;
}

/** What the Ferry broker's own metrics say about the timed kcat runs (means over each run, medians over rounds). */
function ferryMetricRows(targets: readonly Target[], results: ReadonlyMap<string, TargetResult>): string[][] {
  const produce = 'api="Produce"';
  return targets
    .filter((target) => target.isFerry)
    .map((target) => {
      const rounds = results.get(target.name)!.throughput.filter((round) => round.metrics !== null);
      const per = (compute: (before: MetricSample, after: MetricSample, round: ThroughputRound) => number): number =>
        median(rounds.map((round) => compute(round.metrics!.before, round.metrics!.after, round)));
      const requests = (b: MetricSample, a: MetricSample) => delta(b, a, `ferry_broker_requests_total{${produce}}`);
      const walBytes = (b: MetricSample, a: MetricSample) => delta(b, a, 'ferry_wal_bytes_total');
      const objects = (b: MetricSample, a: MetricSample) => delta(b, a, 'ferry_wal_objects_total');
      const mean = (name: string) => (b: MetricSample, a: MetricSample) => delta(b, a, `${name}_sum`) / delta(b, a, `${name}_count`);
      const produceMeanMs = (b: MetricSample, a: MetricSample) =>
        (MS_PER_SECOND * delta(b, a, `ferry_broker_request_latency_seconds_sum{${produce}}`)) / delta(b, a, `ferry_broker_request_latency_seconds_count{${produce}}`);
      return [
        target.name,
        formatNumber(per(requests)),
        formatNumber(per((b, a) => walBytes(b, a) / requests(b, a) / KIB_BYTES)),
        formatSignificant(per(produceMeanMs)),
        formatNumber(per(objects)),
        formatNumber(per((b, a) => walBytes(b, a) / objects(b, a) / KIB_BYTES)),
        formatSignificant(per(mean('ferry_wal_upload_latency_seconds')) * MS_PER_SECOND),
        formatSignificant(per(mean('ferry_wal_produce_to_durable_seconds')) * MS_PER_SECOND),
        formatSignificant(per((b, a, round) => (produceMeanMs(b, a) * requests(b, a)) / round.elapsedMs)),
        formatNumber(
          per((b, a) => mbPerSecond(walBytes(b, a) / requests(b, a), produceMeanMs(b, a))),
          1,
        ),
        formatSignificant(per(mean('ferry_process_event_loop_delay_seconds')) * MS_PER_SECOND),
      ];
    });
}

const STAGE_SECONDS = 'ferry_stage_seconds_total{stage="';
const COPIES = 'ferry_stage_copies_total{site="';
const COPIED_BYTES = 'ferry_stage_copied_bytes_total{site="';
const MICROSECONDS_PER_SECOND = 1e6;

/** The label values of one family in a scrape (e.g. every stage), in first-seen order. */
function labelValues(sample: MetricSample, prefix: string): string[] {
  return [...sample.keys()].filter((series) => series.startsWith(prefix)).map((series) => series.slice(prefix.length, series.indexOf('"', prefix.length)));
}

/**
 * Where each Ferry broker's CPU went over the timed runs (src/metrics/stage-timers.ts): per
 * stage, main-thread CPU self time per produce request and its share of the process's CPU time;
 * the main thread's unstaged rest (promise plumbing, timers, GC on that thread, the metrics
 * scrapes), the other threads' (file I/O on the thread pool, the socket layer, GC helpers), and
 * the hot path's byte copies per request. Medians over rounds.
 */
function stageRows(targets: readonly Target[], results: ReadonlyMap<string, TargetResult>): string[][] {
  const rows: string[][] = [];
  for (const target of targets.filter((candidate) => candidate.isFerry)) {
    const rounds = results.get(target.name)!.throughput.filter((round) => round.metrics !== null && round.serverCpuMs !== null);
    if (rounds.length === 0) continue;
    const requests = (round: ThroughputRound) => delta(round.metrics!.before, round.metrics!.after, 'ferry_broker_requests_total{api="Produce"}');
    const stages = labelValues(rounds[0]!.metrics!.after, STAGE_SECONDS);
    const secondsOf = (round: ThroughputRound, stage: string) => delta(round.metrics!.before, round.metrics!.after, `${STAGE_SECONDS}${stage}"}`);
    const row = (name: string, seconds: (round: ThroughputRound) => number, copies: string): string[] => [
      target.name,
      name,
      formatSignificant(median(rounds.map((round) => (MICROSECONDS_PER_SECOND * seconds(round)) / requests(round)))),
      percentOf(median(rounds.map((round) => MS_PER_SECOND * seconds(round))), median(rounds.map((round) => round.serverCpuMs!))),
      copies,
    ];
    for (const stage of stages) rows.push(row(stage, (round) => secondsOf(round, stage), ''));
    const staged = (round: ThroughputRound) => stages.reduce((sum, stage) => sum + secondsOf(round, stage), 0);
    const mainThread = (round: ThroughputRound) => delta(round.metrics!.before, round.metrics!.after, 'ferry_stage_main_thread_seconds_total');
    rows.push(row('main thread, no stage', (round) => mainThread(round) - staged(round), ''));
    rows.push(row('other threads', (round) => round.serverCpuMs! / MS_PER_SECOND - mainThread(round), ''));
    for (const site of labelValues(rounds[0]!.metrics!.after, COPIES)) {
      const perRequest = (series: string) => median(rounds.map((round) => delta(round.metrics!.before, round.metrics!.after, `${series}${site}"}`) / requests(round)));
      rows.push([target.name, `copy: ${site}`, '', '', `${formatSignificant(perRequest(COPIES))} x ${formatBytes(Math.round(perRequest(COPIED_BYTES) / Math.max(1, perRequest(COPIES))))}`]);
    }
  }
  return rows;
}

const STAGE_COLUMNS = [{ title: 'target', align: 'left' }, { title: 'stage', align: 'left' }, { title: 'us/request' }, { title: 'of server CPU' }, { title: 'copies/request', align: 'left' }] as const;

const THROUGHPUT_COLUMNS = [
  { title: 'target', align: 'left' },
  { title: 'MB/s' },
  { title: '(range)' },
  { title: 'msgs/s' },
  { title: 'vs mock' },
  { title: '(range)' },
  { title: 'server CPU' },
  { title: 'MB/CPU-s' },
  { title: 'server RSS peak MiB' },
  { title: 'kcat CPU' },
  { title: 'kcat CPU ms/MB' },
] as const;

const LATENCY_COLUMNS = [
  { title: 'target', align: 'left' },
  { title: 'client', align: 'left' },
  { title: 'samples' },
  { title: 'p50 ms' },
  { title: 'p99 ms' },
  { title: 'p999 ms' },
  { title: 'max ms' },
  { title: 'p99 rounds' },
  { title: 'p99 vs mock' },
  { title: 'floor p50' },
  { title: 'floor p99' },
] as const;

const FERRY_METRIC_COLUMNS = [
  { title: 'target', align: 'left' },
  { title: 'produce reqs' },
  { title: 'KiB/req' },
  { title: 'ms/req' },
  { title: 'WAL objects' },
  { title: 'KiB/object' },
  { title: 'upload ms' },
  { title: 'append->durable ms' },
  { title: 'reqs in flight' },
  { title: '1-in-flight MB/s' },
  { title: 'loop lag ms' },
] as const;

function describeRun(settings: Settings, targets: readonly Target[], programs: RdkafkaPrograms | null, peerNote: string): void {
  console.log(`broker bench: Bun ${Bun.version}, ${cpus().length} cpus, ${settings.roundCount} rounds${settings.quick ? ' (--quick)' : ''}, librdkafka ${programs?.librdkafkaVersion ?? "(kcat's)"}`);
  console.log(`  targets (fresh process per round, order rotating): ${targets.map((target) => target.name).join(', ')}`);
  console.log(`  ${peerNote}`);
  console.log(
    `  throughput: kcat -P, ${formatNumber(settings.messageCount)} x ${formatBytes(VALUE_BYTES)} messages (${formatNumber((settings.messageCount * VALUE_BYTES) / 1e6)} MB) per run, ${Object.entries(
      KCAT_PRODUCER_CONFIG,
    )
      .map(([name, value]) => `${name}=${value}`)
      .join(' ')}; untimed warm-up run of ${formatNumber(settings.warmupMessageCount)} messages first, and an untimed run of the timed size after the latency probes`,
  );
  if (programs === null) {
    console.log('  ack latency: unavailable (the probe needs the same build as the mock)');
  } else {
    console.log(
      `  ack latency: ack-latency probe, ${LATENCY_RATE_PER_SECOND} msg/s of ${formatBytes(VALUE_BYTES)} for ${settings.latencyDurationMs / 1000} s per round (after ${settings.latencyWarmupMs} ms unrecorded), latency from each message's due time to its delivery report`,
    );
    for (const mode of LATENCY_MODES) console.log(`    ${mode.name}: ${mode.description}`);
  }
  if (settings.cpuProfileDirectory !== undefined) console.log(`  CPU profiles of the Ferry brokers go to ${settings.cpuProfileDirectory}`);
}

async function main(): Promise<void> {
  const settings = parseArgs(process.argv.slice(2));
  const kcat = findKcat();
  if (kcat === null) {
    console.log('broker bench: skipped, kcat not found (apt-get install -y kcat)');
    return;
  }
  const build = buildRdkafkaPrograms();
  const programs = build.ok ? build.programs : null;
  const peerNote = build.ok ? 'peer: librdkafka mock cluster (rdkafka_mock.h, in-memory, acks on append)' : `peer: unavailable: ${build.reason}`;
  const targets = targetsOf(settings, programs);
  const peer = targets.find((target) => !target.isFerry);
  describeRun(settings, targets, programs, peerNote);

  const scratch = makeTempDir('broker-messages');
  const files = { data: join(scratch, 'data.txt'), warmup: join(scratch, 'warmup.txt') };
  writeMessageFile(files.data, settings.messageCount, VALUE_BYTES);
  writeMessageFile(files.warmup, settings.warmupMessageCount, VALUE_BYTES);

  const results = new Map<string, TargetResult>(
    targets.map((target) => [
      target.name,
      { throughput: [], crc32c: new Set<string>(), floor: new LatencyRecorder(), latency: new Map(LATENCY_MODES.map((mode) => [mode.name, { pooled: new LatencyRecorder(), rounds: [] }])) },
    ]),
  );
  const startMs = performance.now();
  for (let round = 0; round < settings.roundCount; round++) {
    for (let index = 0; index < targets.length; index++) {
      const target = targets[(round + index) % targets.length]!;
      await runRound(target, round, settings, kcat, programs, files, results.get(target.name)!);
      const last = results.get(target.name)!.throughput.at(-1)!;
      const crc32c = [...results.get(target.name)!.crc32c].join('/');
      console.error(
        `  round ${round + 1}: ${target.name}: ${formatNumber(mbPerSecondOf(last), 1)} MB/s${crc32c === '' ? '' : `, CRC32C ${crc32c}`} (${formatNumber((performance.now() - startMs) / 1000, 1)} s)`,
      );
    }
  }

  printTable(
    `kcat -P throughput, ${formatBytes(VALUE_BYTES)} messages, acks=all (medians over rounds; MB = 10^6 value bytes; CPU = process CPU time / wall time during the timed run; MB/CPU-s = MB produced per second of the broker process's CPU; kcat CPU ms/MB = the client's CPU per MB sent, which grows when its queue stays full against a server slower than it, and the two share this machine's cores)`,
    THROUGHPUT_COLUMNS,
    throughputRows(targets, results, peer),
  );
  const crc32cs = targets.flatMap((target) => (results.get(target.name)!.crc32c.size === 0 ? [] : [`${target.name} ${[...results.get(target.name)!.crc32c].join('/')}`]));
  if (crc32cs.length > 0) console.log(`CRC32C implementation each broker chose at start: ${crc32cs.join(', ')}`);
  if (programs !== null) {
    printTable(
      `Ack latency at ${LATENCY_RATE_PER_SECOND} msg/s, acks=all (all rounds pooled; "p99 rounds" = range of each round's p99; floor = linger ${FLOOR_SHAPE.lingerMs} ms + upload interval ${FLOOR_SHAPE.uploadIntervalMs} ms + one PUT of ${formatBytes(FLOOR_SHAPE.objectBytes)} to the target's WAL store, same run: bench/lib/ack-floor.ts)`,
      LATENCY_COLUMNS,
      latencyRows(targets, results, peer),
    );
    await printAckTimeReference(targets, results, settings, programs);
    if (peer !== undefined) await printThroughputAtAckTime(targets, results, settings, kcat, programs.mockCluster, files.data, peer);
  }
  printTable(
    "Ferry broker's own metrics over the timed kcat runs (means over the run, medians over rounds; reqs in flight = sum of Produce handling time / wall time; 1-in-flight MB/s = KiB/req / ms/req, the bound of one connection served one request at a time; loop lag = how late the broker's 100 ms event-loop probe fired, a sign of long synchronous work or GC pauses)",
    FERRY_METRIC_COLUMNS,
    ferryMetricRows(targets, results),
  );
  printTable(
    "Where the Ferry broker's CPU went over the timed kcat runs (FERRY_STAGE_TIMERS=1; main-thread CPU self time per produce request, medians over rounds; other threads: the file I/O thread pool, GC helpers; copies: buffers filled by a copy, per request x mean size)",
    STAGE_COLUMNS,
    stageRows(targets, results),
  );
  if (!build.ok) console.log(`\npeer: unavailable: ${build.reason}`);
  const goals = [...judgeTargets(targets, results, peer), ...serverRssTargets(targets, results, settings)];
  printTargets("Issue 27's targets, this run (bench/lib/targets.ts; RSS bounds: bench/lib/rss-bounds.ts)", goals);
  writeBenchResults('broker', { ...brokerResults(targets, results, build.ok ? null : build.reason), targets: goals });
}

/**
 * Each Ferry target's peak RSS over the timed runs (the most of any round) against the bound of
 * its round with the least start RSS: that plus the engine's budgets under one kcat connection,
 * plus the copies of a round's produced bytes a memory:// store keeps in the broker.
 */
function serverRssTargets(targets: readonly Target[], results: ReadonlyMap<string, TargetResult>, settings: Settings): TargetResultOfBench[] {
  const probeMessages = LATENCY_MODES.length * Math.round((LATENCY_RATE_PER_SECOND * (settings.latencyDurationMs + settings.latencyWarmupMs)) / 1000);
  const roundLogBytes = (settings.warmupMessageCount + probeMessages + settings.messageCount) * VALUE_BYTES * LOG_BYTES_PER_VALUE_BYTE;
  return targets
    .filter((target) => target.isFerry)
    .flatMap((target) => {
      const rounds = results.get(target.name)!.throughput.filter((round) => round.serverStartRssBytes !== null && round.serverRssPeakBytes !== null);
      if (rounds.length === 0) return [];
      const peakBytes = maxOf(rounds.map((round) => round.serverRssPeakBytes!));
      const startRssBytes = minOf(rounds.map((round) => round.serverStartRssBytes!));
      const terms = brokerProduceTerms(KCAT_CONNECTIONS, KCAT_REQUEST_BYTES_MAX);
      // A memory:// WAL (its objects held in the broker) tiers into a file store: that store's tier staging only.
      if (target.storeCopiesInMemory > 0) terms.push({ name: 'memory store', bytes: target.storeCopiesInMemory * roundLogBytes }, fileStoreTierTerm());
      else terms.push(fileStoreDirectTerm(KCAT_REQUEST_BYTES_MAX));
      return [judgeRssPeak('broker', `${target.name} server`, peakBytes, startRssBytes, terms)];
    });
}

/** The report's view of the throughput table (bench/report/results.ts). */
function brokerResults(targets: readonly Target[], results: ReadonlyMap<string, TargetResult>, peerUnavailable: string | null): BrokerResults {
  const throughput = targets.map((target) => {
    const rates = results.get(target.name)!.throughput.map(mbPerSecondOf);
    return { target: target.name, isPeer: !target.isFerry, mbPerSecond: median(rates), minMbPerSecond: minOf(rates), maxMbPerSecond: maxOf(rates) };
  });
  return { messageBytes: VALUE_BYTES, throughput, peerUnavailable };
}

await main();
