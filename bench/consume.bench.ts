/**
 * A real Kafka consumer reading a partition from its start: `kcat -C` against the Ferry broker,
 * beside a raw read of the same segment bytes from the broker's data directory, and beside
 * librdkafka's mock cluster (rdkafka_mock.h, in memory) as a reference peer, in the same run.
 *
 * Per round, servers in an order that rotates every round, each a fresh process:
 * - ferry:  `bun src/cli.ts broker` (WAL on the file store, the CLI's default). Filled untimed with
 *           `kcat -P` (acks=all, linger.ms=5, batch.size=1000000: ~1 MB batches), then, once the
 *           broker's CPU has settled (it finishes WAL work for a second or two after the last ack),
 *           CONSUMES_PER_ROUND timed `kcat -C -e -q -o beginning -t T -p 0`, each followed by a
 *           raw read of the partition's .log segment files (order alternating by round);
 * - raw read: in this bench's process, every .log file of the partition read start to end with
 *           readSync in 1 MiB reads into one reused buffer: the copy out of the page cache that any
 *           reader of these bytes makes, and nothing else. The page cache is warm for both: the
 *           broker wrote the bytes a moment before (local log flush none) and nothing evicts them
 *           between the two (the data is a fraction of this machine's memory);
 * - librdkafka mock: bench/mock-cluster/mock-cluster.c. It keeps only the last 5 MiB of each
 *           partition (hard-coded in librdkafka), so the same messages are spread over enough
 *           partitions (MOCK_MESSAGES_PER_PARTITION each, filled with one `kcat -P -p i` each) and
 *           kcat reads them all (`-t T`, no -p). The mock adds whole message sets while under a
 *           limit, so its responses may run past the 1 MiB a Kafka broker (and Ferry) stops at.
 * kcat -C is the bound of that table, not the broker (it parses and prints every record: the mock
 * reaches about the same share of the raw read). So beside each of Ferry's consumes the bench also
 * times what the broker's fetch path does with a client that costs next to nothing:
 * - fetch-drain: bench/mock-cluster/fetch-drain.c, one Fetch in flight on one connection, each for
 *           the offset after the last batch of the one before, max.partition.fetch.bytes 1 MiB (as
 *           kcat's), reading each response into one reused buffer and looking only at batch headers;
 * - socket floor: the same program streaming the partition's .log files through a loopback socket
 *           to a reader, read(2) of 1 MiB then write(2): the copies a broker without sendfile makes
 *           (Bun's sockets have none), with no request round trips: no broker serving from the page
 *           cache without sendfile beats it here. fetch-drain's record count and batch bytes are
 *           checked against what was written and the segment files; the floor's byte count too.
 * Each timed run's messages and value bytes are checked against what was written. A round's
 * figure per target is the median of its consumes; the tables show medians over rounds.
 *
 * kcat's config for every consume: fetch.wait.max.ms=10. With librdkafka's default of 500 ms
 * every run would end with a long poll at the end offset that kcat's exit waits for (on Ferry
 * and on the mock alike): 500 ms of idle time in a run of a few hundred.
 */
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { ConsumeResults } from './report/results.ts';
import { type ClientConfig, kcatConsume, kcatEndOffset, kcatProduceFile, writeMessageFile, KCAT_PRODUCER_CONFIG } from './lib/kafka-clients.ts';
import { type RunningTarget, startFerryBroker, startMockCluster } from './lib/kafka-targets.ts';
import { buildRdkafkaPrograms, findKcat } from './lib/rdkafka-tools.ts';
import { maxOf, median, minOf, pairedRatios } from './lib/stats.ts';
import { writeBenchResults } from './lib/results.ts';
import { printTable } from './lib/table.ts';
import { atLeast, printTargets } from './lib/targets.ts';
import { makeTempDir } from './lib/temp-dir.ts';
import { formatBytes, formatNumber, formatSignificant, KIB_BYTES, MIB_BYTES, mbPerSecond } from './lib/units.ts';
import { parseProfiledBenchArgs } from './lib/args.ts';

const TOPIC = 'bench';
const PARTITION = 0;
const VALUE_BYTES = KIB_BYTES;
/** Data per round (value bytes, MB = 10^6 B); --quick takes a tenth. */
const DATA_BYTES = 200_000_000;
const QUICK_DATA_BYTES = 20_000_000;
const ROUND_COUNT = 5;
const QUICK_ROUND_COUNT = 3;
/** Timed consumes of the same filled partition per round (each beside a raw read on Ferry). */
const CONSUMES_PER_ROUND = 3;
/** Untimed consume before the timed ones: warms the broker's JIT on its fetch path. */
const WARMUP_MESSAGES = 4000;
/** What every consume runs with (see the header): no trailing long poll. */
const CONSUME_CONFIG: ClientConfig = { 'fetch.wait.max.ms': '10' };
/** The mock keeps 5 MiB per partition; this many 1 KiB messages (~3.6 MB with overhead) stay well inside. */
const MOCK_MESSAGES_PER_PARTITION = 3500;
/** fetch-drain's runs take a fraction of a second; one that has not ended after this is killed and fails the bench. */
const DRAIN_TIMEOUT_MS = 120_000;
/** Issue 27's consume target: a fetch at least this share of the raw read (and, here, of the socket floor). */
const FETCH_OVER_BASELINE_GOAL = 0.8;
/** fetch-drain's max.partition.fetch.bytes: librdkafka's default, which kcat -C runs with. */
const FETCH_PARTITION_MAX_BYTES = MIB_BYTES;
/** Server CPU is shown per GB (10^9 B) of values read. */
const BYTES_PER_GB = 1e9;
/** The raw read's read size: a fetch's partition limit (max.partition.fetch.bytes). */
const RAW_READ_BYTES = MIB_BYTES;
/** The broker counts as settled once it used at most this share of a core over one window. */
const SETTLED_CPU_FRACTION = 0.05;
const SETTLE_WINDOW_MS = 250;
/** Past this, measure anyway (and say so): a broker that never settles is itself a finding. */
const SETTLE_TIMEOUT_MS = 20_000;

const USAGE = `
bun bench/consume.bench.ts [--quick] [--cpu-prof DIR]

kcat -C reading a partition of 1 KiB messages from its start: against the Ferry broker, beside a
raw read of the same segment files (readSync, 1 MiB reads into one reused buffer, in this process)
and beside librdkafka's mock cluster; then Ferry read by fetch-drain (a C Fetch loop that looks only at
batch headers: kcat is the bound of the first table) beside the same bytes through a loopback socket. The page cache is WARM for both Ferry and the raw read: the
broker wrote the segment a moment before and nothing evicts it. Fresh servers each round, order
rotating; ${CONSUMES_PER_ROUND} timed consumes per server per round; kcat with ${Object.entries(CONSUME_CONFIG)
  .map(([name, value]) => `${name}=${value}`)
  .join(' ')}.
Needs kcat, a C compiler and librdkafka-dev (apt-get install -y kcat gcc librdkafka-dev); without
the latter two the mock peer and fetch-drain are skipped.
  --quick          ${QUICK_DATA_BYTES / 1e6} MB per round, ${QUICK_ROUND_COUNT} rounds (a smoke run; full: ${DATA_BYTES / 1e6} MB, ${ROUND_COUNT} rounds)
  --cpu-prof DIR   write a CPU profile of every Ferry broker (bun --cpu-prof, .cpuprofile + .md) into DIR
  --help           this text`;

interface Settings {
  readonly quick: boolean;
  readonly cpuProfileDirectory: string | undefined;
  readonly roundCount: number;
  readonly messageCount: number;
}

/** One timed read: how long, and the CPU of the side that served it (the server, or this process for the raw read). */
interface Sample {
  readonly elapsedMs: number;
  readonly serverCpuMs: number | null;
  /** kcat's own CPU; null for the raw read. */
  readonly clientCpuMs: number | null;
}

type RowName = 'ferry' | 'raw read' | 'librdkafka mock' | 'ferry, fetch-drain' | 'socket floor';

interface Server {
  readonly name: 'ferry' | 'librdkafka mock';
  start(round: number): Promise<RunningTarget>;
  fill(running: RunningTarget, kcat: string, files: MessageFiles): Promise<void>;
  /** The partition kcat reads, or null for all of them. */
  readonly consumedPartition: number | null;
}

interface MessageFiles {
  /** Every message, for Ferry's one partition. */
  readonly all: string;
  /** The mock's partitions: a file per distinct message count, and the count of each partition in order. */
  readonly mockFiles: ReadonlyMap<number, string>;
  readonly mockCounts: readonly number[];
}

/** What a round needs besides the servers: kcat, the message files, the raw read's buffer, fetch-drain (null without a C compiler). */
interface Tools {
  readonly kcat: string;
  readonly files: MessageFiles;
  readonly buffer: Uint8Array;
  readonly fetchDrain: string | null;
}

function parseArgs(argv: readonly string[]): Settings {
  const { quick, cpuProfileDirectory } = parseProfiledBenchArgs(argv, USAGE);
  return {
    quick,
    cpuProfileDirectory,
    roundCount: quick ? QUICK_ROUND_COUNT : ROUND_COUNT,
    messageCount: Math.round((quick ? QUICK_DATA_BYTES : DATA_BYTES) / VALUE_BYTES),
  };
}

/** The mock's partitions: full ones of MOCK_MESSAGES_PER_PARTITION, the last holding the rest. */
function mockPartitionCounts(messageCount: number): number[] {
  const counts: number[] = [];
  for (let left = messageCount; left > 0; left -= MOCK_MESSAGES_PER_PARTITION) counts.push(Math.min(left, MOCK_MESSAGES_PER_PARTITION));
  return counts;
}

function writeMessageFiles(settings: Settings): MessageFiles {
  const scratch = makeTempDir('consume-messages');
  const all = join(scratch, 'all.txt');
  writeMessageFile(all, settings.messageCount, VALUE_BYTES);
  const mockCounts = mockPartitionCounts(settings.messageCount);
  const mockFiles = new Map<number, string>();
  for (const count of new Set(mockCounts)) {
    const file = join(scratch, `mock-${count}.txt`);
    writeMessageFile(file, count, VALUE_BYTES);
    mockFiles.set(count, file);
  }
  return { all, mockFiles, mockCounts };
}

function serversOf(settings: Settings, mockCluster: string | null): Server[] {
  const profile = (round: number) => (settings.cpuProfileDirectory === undefined ? {} : { cpuProfileDirectory: settings.cpuProfileDirectory, cpuProfileName: `consume-ferry-round${round + 1}` });
  const servers: Server[] = [
    {
      name: 'ferry',
      consumedPartition: PARTITION,
      start: (round) => startFerryBroker({ walStore: (data) => `file:${join(data, 'objects')}`, ...profile(round) }),
      fill: async (running, kcat, files) => {
        await kcatProduceFile(kcat, running.bootstrap, TOPIC, files.all, KCAT_PRODUCER_CONFIG, PARTITION);
        const endOffset = await kcatEndOffset(kcat, running.bootstrap, TOPIC, PARTITION);
        if (endOffset !== settings.messageCount) throw new Error(`ferry: the partition holds ${endOffset} of ${settings.messageCount} messages after filling`);
      },
    },
  ];
  if (mockCluster !== null) {
    const partitions = mockPartitionCounts(settings.messageCount).length;
    servers.push({
      name: 'librdkafka mock',
      consumedPartition: null,
      start: () => startMockCluster(mockCluster, TOPIC, partitions),
      fill: async (running, kcat, files) => {
        for (const [partition, count] of files.mockCounts.entries()) await kcatProduceFile(kcat, running.bootstrap, TOPIC, files.mockFiles.get(count)!, KCAT_PRODUCER_CONFIG, partition);
      },
    });
  }
  return servers;
}

/** Waits until the server's CPU use over a window falls to SETTLED_CPU_FRACTION; false if it never did. */
async function settle(running: RunningTarget): Promise<boolean> {
  const deadlineMs = performance.now() + SETTLE_TIMEOUT_MS;
  let before = running.cpuMs();
  while (before !== null && performance.now() < deadlineMs) {
    await Bun.sleep(SETTLE_WINDOW_MS);
    const after = running.cpuMs();
    if (after === null) return true;
    if (after - before <= SETTLED_CPU_FRACTION * SETTLE_WINDOW_MS) return true;
    before = after;
  }
  return before === null;
}

/** The partition's segment files in offset order (their names are their base offsets, zero-padded). */
function segmentFiles(dataDirectory: string, partition: number): string[] {
  const directory = join(dataDirectory, `${TOPIC}-${partition}`);
  return readdirSync(directory)
    .filter((name) => name.endsWith('.log'))
    .sort()
    .map((name) => join(directory, name));
}

/** Reads every file start to end in RAW_READ_BYTES reads into one buffer; returns the bytes read. */
function readWhole(files: readonly string[], buffer: Uint8Array): number {
  let total = 0;
  for (const file of files) {
    const fd = openSync(file, 'r');
    try {
      for (;;) {
        const count = readSync(fd, buffer, 0, buffer.length, null);
        if (count === 0) break;
        total += count;
      }
    } finally {
      closeSync(fd);
    }
  }
  return total;
}

function timedRawRead(files: readonly string[], buffer: Uint8Array, expectedBytes: number): Sample {
  const cpu = process.cpuUsage();
  const startMs = performance.now();
  const bytes = readWhole(files, buffer);
  const elapsedMs = performance.now() - startMs;
  const used = process.cpuUsage(cpu);
  if (bytes !== expectedBytes) throw new Error(`raw read: ${bytes} bytes read, the segment files hold ${expectedBytes}`);
  return { elapsedMs, serverCpuMs: (used.user + used.system) / 1000, clientCpuMs: null };
}

async function timedConsume(server: Server, running: RunningTarget, kcat: string, settings: Settings): Promise<Sample> {
  const serverCpuBefore = running.cpuMs();
  const run = await kcatConsume(kcat, running.bootstrap, TOPIC, { partition: server.consumedPartition, config: CONSUME_CONFIG });
  const serverCpuAfter = running.cpuMs();
  const expectedBytes = settings.messageCount * VALUE_BYTES;
  if (run.messages !== settings.messageCount || run.valueBytes !== expectedBytes) {
    throw new Error(`${server.name}: kcat -C read ${run.messages} messages (${run.valueBytes} B), ${settings.messageCount} (${expectedBytes} B) were written`);
  }
  return { elapsedMs: run.elapsedMs, serverCpuMs: serverCpuBefore === null || serverCpuAfter === null ? null : serverCpuAfter - serverCpuBefore, clientCpuMs: run.cpuMs };
}

/** `fetch-drain OUTPUT_KIND key=value ...` as numbers; fails on anything else. */
function drainOutput(program: Bun.SyncSubprocess<'pipe', 'pipe'>, kind: string): Map<string, number> {
  const line = program.stdout.toString().trim();
  if (program.exitCode !== 0 || !line.startsWith(`${kind} `))
    throw new Error(`fetch-drain ${kind} failed (exit ${program.exitCode ?? program.signalCode}): ${program.stderr.toString().trim() || line}`);
  return new Map(
    line
      .split(' ')
      .slice(1)
      .map((pair) => [pair.split('=')[0]!, Number(pair.split('=')[1])]),
  );
}

/**
 * fetch-drain's Fetch loop over the whole partition; the elapsed time is its own (from its first
 * request to its last response). Every record must come back, in batches whose bytes are exactly
 * the partition's segment files.
 */
function timedFetchDrain(fetchDrain: string, running: RunningTarget, settings: Settings, segmentBytes: number): Sample {
  const [host, port] = running.bootstrap.split(':') as [string, string];
  const serverCpuBefore = running.cpuMs();
  const program = Bun.spawnSync([fetchDrain, 'fetch', host, port, TOPIC, String(PARTITION), '0', String(settings.messageCount), String(FETCH_PARTITION_MAX_BYTES)], {
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: DRAIN_TIMEOUT_MS,
  });
  const serverCpuAfter = running.cpuMs();
  const output = drainOutput(program, 'fetch');
  if (output.get('records') !== settings.messageCount) throw new Error(`fetch-drain read ${output.get('records')} records, ${settings.messageCount} were written`);
  if (output.get('record_bytes') !== segmentBytes) throw new Error(`fetch-drain read ${output.get('record_bytes')} B of batches, the segment files hold ${segmentBytes} B`);
  const usage = program.resourceUsage;
  return {
    elapsedMs: output.get('ns')! / 1e6,
    serverCpuMs: serverCpuBefore === null || serverCpuAfter === null ? null : serverCpuAfter - serverCpuBefore,
    clientCpuMs: usage === undefined ? null : Number(usage.cpuTime.total) / 1000,
  };
}

/** The segment files through a loopback socket (fetch-drain floor); its CPU is both ends' (the reader is its child). */
function timedSocketFloor(fetchDrain: string, segments: readonly string[], segmentBytes: number): Sample {
  const program = Bun.spawnSync([fetchDrain, 'floor', ...segments], { stdout: 'pipe', stderr: 'pipe', timeout: DRAIN_TIMEOUT_MS });
  const output = drainOutput(program, 'floor');
  if (output.get('bytes') !== segmentBytes) throw new Error(`socket floor: ${output.get('bytes')} bytes streamed, the segment files hold ${segmentBytes}`);
  const usage = program.resourceUsage;
  return { elapsedMs: output.get('ns')! / 1e6, serverCpuMs: usage === undefined ? null : Number(usage.cpuTime.total) / 1000, clientCpuMs: null };
}

interface ServerRound {
  readonly consumes: Sample[];
  /** Ferry only: the raw reads beside its consumes, and the bytes of its segment files. */
  readonly raws: Sample[];
  /** Ferry only, with fetch-drain built: its Fetch loops and socket floors beside the consumes. */
  readonly drains: Sample[];
  readonly floors: Sample[];
  readonly segmentBytes: number | null;
  readonly settled: boolean;
}

/** One server's part of a round: start, fill, settle, warm up, then the timed consumes (and, beside Ferry's, raw reads). */
async function runServer(server: Server, round: number, settings: Settings, tools: Tools): Promise<ServerRound> {
  const { kcat, files, buffer, fetchDrain } = tools;
  const running = await server.start(round);
  try {
    await server.fill(running, kcat, files);
    const settled = await settle(running);
    if (!settled) console.error(`  round ${round + 1}: ${server.name} still busy after ${SETTLE_TIMEOUT_MS / 1000} s; measuring anyway`);
    await kcatConsume(kcat, running.bootstrap, TOPIC, { partition: server.consumedPartition, config: CONSUME_CONFIG, messageLimit: WARMUP_MESSAGES });
    const segments = running.dataDirectory === null ? null : segmentFiles(running.dataDirectory, PARTITION);
    const segmentBytes = segments === null ? null : segments.reduce((sum, file) => sum + statSync(file).size, 0);
    const consumes: Sample[] = [];
    const raws: Sample[] = [];
    const drains: Sample[] = [];
    const floors: Sample[] = [];
    for (let index = 0; index < CONSUMES_PER_ROUND; index++) {
      Bun.gc(true);
      const rawFirst = (round + index) % 2 === 1;
      if (segments !== null && rawFirst) raws.push(timedRawRead(segments, buffer, segmentBytes!));
      consumes.push(await timedConsume(server, running, kcat, settings));
      if (segments !== null && !rawFirst) raws.push(timedRawRead(segments, buffer, segmentBytes!));
      if (segments === null || fetchDrain === null) continue;
      if (rawFirst) floors.push(timedSocketFloor(fetchDrain, segments, segmentBytes!));
      drains.push(timedFetchDrain(fetchDrain, running, settings, segmentBytes!));
      if (!rawFirst) floors.push(timedSocketFloor(fetchDrain, segments, segmentBytes!));
    }
    return { consumes, raws, drains, floors, segmentBytes, settled };
  } finally {
    await running.stop();
  }
}

/** Per row, each round's figure: the median of that round's samples. */
interface RowRounds {
  readonly mbPerSecond: number[];
  readonly serverCpuFraction: (number | null)[];
  readonly clientCpuFraction: (number | null)[];
  /** The serving side's CPU per GB of values read: what the broker's fetch path costs, whatever limits the rate. */
  readonly serverMsPerGb: (number | null)[];
}

type RoundFigure = { readonly [Key in keyof RowRounds]: RowRounds[Key][number] };

function roundFigure(samples: readonly Sample[], valueBytes: number): RoundFigure {
  const per = (pick: (sample: Sample) => number | null, over: (sample: Sample) => number): number | null =>
    samples.every((sample) => pick(sample) !== null) ? median(samples.map((sample) => pick(sample)! / over(sample))) : null;
  return {
    mbPerSecond: median(samples.map((sample) => mbPerSecond(valueBytes, sample.elapsedMs))),
    serverCpuFraction: per(
      (sample) => sample.serverCpuMs,
      (sample) => sample.elapsedMs,
    ),
    clientCpuFraction: per(
      (sample) => sample.clientCpuMs,
      (sample) => sample.elapsedMs,
    ),
    serverMsPerGb: per(
      (sample) => sample.serverCpuMs,
      () => valueBytes / BYTES_PER_GB,
    ),
  };
}

const range = (values: readonly number[], format: (value: number) => string): string => `${format(minOf(values))}-${format(maxOf(values))}`;
const medianOrDash = (values: readonly (number | null)[], format: (value: number) => string): string => (values.some((value) => value === null) ? '-' : format(median(values as number[])));
const percent = (fractions: readonly (number | null)[]): string => medianOrDash(fractions, (value) => `${formatNumber(100 * value)}%`);

/** A ratio table's columns: each row beside the first, `over` naming that ratio, `client` the client's CPU. */
function ratioColumns(over: string, client: string) {
  return [
    { title: 'target', align: 'left' },
    { title: 'MB/s' },
    { title: '(range)' },
    { title: over },
    { title: '(range)' },
    { title: 'server CPU' },
    { title: 'server ms/GB' },
    { title: client },
  ] as const;
}

const THROUGHPUT_COLUMNS = ratioColumns('ferry/this', 'kcat CPU');

const ROW_NAMES: readonly RowName[] = ['ferry', 'raw read', 'librdkafka mock'];
const FETCH_PATH_ROW_NAMES: readonly RowName[] = ['ferry, fetch-drain', 'socket floor', 'raw read'];
const FETCH_PATH_COLUMNS = ratioColumns('drain/this', 'client CPU');

/** The rows of `names` that ran, each beside `reference` (the first of them): MB/s, reference/this paired per round, CPU. */
function ratioRows(rows: ReadonlyMap<RowName, RowRounds>, names: readonly RowName[]): string[][] {
  const reference = names[0]!;
  const referenceRates = rows.get(reference)!.mbPerSecond;
  return names
    .filter((name) => rows.has(name))
    .map((name) => {
      const row = rows.get(name)!;
      const ratios = name === reference ? null : pairedRatios(referenceRates, row.mbPerSecond);
      return [
        name,
        formatNumber(median(row.mbPerSecond), 1),
        range(row.mbPerSecond, (value) => formatNumber(value, 1)),
        ratios === null ? '-' : formatSignificant(median(ratios)),
        ratios === null ? '-' : range(ratios, formatSignificant),
        percent(row.serverCpuFraction),
        medianOrDash(row.serverMsPerGb, (value) => formatNumber(value)),
        percent(row.clientCpuFraction),
      ];
    });
}

function describeRun(settings: Settings, servers: readonly Server[], peerNote: string): void {
  const dataMb = (settings.messageCount * VALUE_BYTES) / 1e6;
  console.log(
    `consume bench: Bun ${Bun.version}, ${cpus().length} cpus, ${settings.roundCount} rounds${settings.quick ? ' (--quick)' : ''}, ${CONSUMES_PER_ROUND} timed consumes per server per round`,
  );
  console.log(`  servers (fresh process per round, order rotating): ${servers.map((server) => server.name).join(', ')}; ${peerNote}`);
  console.log(`  data: ${formatNumber(settings.messageCount)} x ${formatBytes(VALUE_BYTES)} messages (${formatNumber(dataMb)} MB of values), filled untimed with kcat -P`);
  console.log(
    `  kcat -C -e -q -o beginning -t ${TOPIC} -p ${PARTITION} -X ${Object.entries(CONSUME_CONFIG)
      .map(([name, value]) => `${name}=${value}`)
      .join(' -X ')} (the mock: every partition)`,
  );
  console.log(`  raw read: the partition's .log files, readSync of ${formatBytes(RAW_READ_BYTES)} into one reused buffer, in this process; page cache warm (as for the broker)`);
  if (settings.cpuProfileDirectory !== undefined) console.log(`  CPU profiles of the Ferry brokers go to ${settings.cpuProfileDirectory}`);
}

async function main(): Promise<void> {
  const settings = parseArgs(process.argv.slice(2));
  const kcat = findKcat();
  if (kcat === null) {
    console.log('consume bench: skipped, kcat not found (apt-get install -y kcat)');
    return;
  }
  const build = buildRdkafkaPrograms();
  const mockPartitions = mockPartitionCounts(settings.messageCount).length;
  const peerNote = build.ok
    ? `peer: librdkafka mock cluster, ${mockPartitions} partitions of at most ${formatNumber(MOCK_MESSAGES_PER_PARTITION)} messages (it keeps 5 MiB per partition)`
    : `peer unavailable: ${build.reason}`;
  const servers = serversOf(settings, build.ok ? build.programs.mockCluster : null);
  describeRun(settings, servers, peerNote);
  const tools: Tools = { kcat, files: writeMessageFiles(settings), buffer: Buffer.allocUnsafeSlow(RAW_READ_BYTES), fetchDrain: build.ok ? build.programs.fetchDrain : null };
  const valueBytes = settings.messageCount * VALUE_BYTES;

  const rows = new Map<RowName, RowRounds>();
  const addRound = (name: RowName, samples: readonly Sample[]) => {
    const figure = roundFigure(samples, valueBytes);
    const row = rows.get(name) ?? { mbPerSecond: [], serverCpuFraction: [], clientCpuFraction: [], serverMsPerGb: [] };
    row.mbPerSecond.push(figure.mbPerSecond);
    row.serverCpuFraction.push(figure.serverCpuFraction);
    row.clientCpuFraction.push(figure.clientCpuFraction);
    row.serverMsPerGb.push(figure.serverMsPerGb);
    rows.set(name, row);
  };
  let segmentBytes = 0;
  let unsettledRounds = 0;
  const startMs = performance.now();
  for (let round = 0; round < settings.roundCount; round++) {
    for (let index = 0; index < servers.length; index++) {
      const server = servers[(round + index) % servers.length]!;
      const result = await runServer(server, round, settings, tools);
      addRound(server.name, result.consumes);
      if (result.raws.length > 0) addRound('raw read', result.raws);
      if (result.drains.length > 0) addRound('ferry, fetch-drain', result.drains);
      if (result.floors.length > 0) addRound('socket floor', result.floors);
      if (result.segmentBytes !== null) segmentBytes = result.segmentBytes;
      if (!result.settled) unsettledRounds++;
      const last = (name: RowName, label: string) => (rows.has(name) && result.raws.length > 0 ? `, ${label} ${formatNumber(rows.get(name)!.mbPerSecond.at(-1)!, 1)} MB/s` : '');
      const besides = `${last('raw read', 'raw read')}${result.drains.length > 0 ? `${last('ferry, fetch-drain', 'fetch-drain')}${last('socket floor', 'socket floor')}` : ''}`;
      console.error(`  round ${round + 1}: ${server.name} ${formatNumber(rows.get(server.name)!.mbPerSecond.at(-1)!, 1)} MB/s${besides} (${formatNumber((performance.now() - startMs) / 1000, 1)} s)`);
    }
  }

  printTable(
    `kcat -C from the start of a partition, ${formatBytes(VALUE_BYTES)} messages (medians over rounds of each round's median; MB = 10^6 value bytes; ferry/this = paired per round; CPU = process CPU time / wall time during the timed read, the raw read's is this process's; server ms/GB = that CPU per GB of values)`,
    THROUGHPUT_COLUMNS,
    ratioRows(rows, ROW_NAMES),
  );
  console.log(
    `Ferry's segment files: ${formatNumber(segmentBytes)} B for ${formatNumber(valueBytes)} B of values (${formatNumber((100 * (segmentBytes - valueBytes)) / valueBytes, 1)}% batch and record overhead)`,
  );
  if (unsettledRounds > 0) console.log(`${unsettledRounds} server round(s) measured while the server was still busy after filling`);
  const mock = rows.get('librdkafka mock');
  if (mock !== undefined) {
    const mockOverRaw = median(pairedRatios(mock.mbPerSecond, rows.get('raw read')!.mbPerSecond));
    console.log(`The mock, a C broker serving from memory, reaches ${formatSignificant(mockOverRaw)}x the raw read with this client: about the most any broker gets from kcat -C here.`);
  }
  if (!build.ok) console.log(`\npeer unavailable: ${build.reason}`);
  const ferryOverRaw = median(pairedRatios(rows.get('ferry')!.mbPerSecond, rows.get('raw read')!.mbPerSecond));
  const targets = [atLeast('consume', 'kcat -C fetch vs raw read of the segment', ferryOverRaw, FETCH_OVER_BASELINE_GOAL, 'x')];
  if (rows.has('ferry, fetch-drain')) {
    printTable(
      `Ferry's fetch path without kcat's cost: fetch-drain (C, one Fetch in flight, max.partition.fetch.bytes ${formatBytes(FETCH_PARTITION_MAX_BYTES)}, batch headers only) beside the same segment bytes through a loopback socket (read+write, no round trips) and the raw read (same units; drain/this paired per round; the floor's and fetch-drain's client CPU include process start)`,
      FETCH_PATH_COLUMNS,
      ratioRows(rows, FETCH_PATH_ROW_NAMES),
    );
    const drain = rows.get('ferry, fetch-drain')!.mbPerSecond;
    targets.push(atLeast('consume', 'fetch-drain fetch vs raw read of the segment', median(pairedRatios(drain, rows.get('raw read')!.mbPerSecond)), FETCH_OVER_BASELINE_GOAL, 'x'));
    targets.push(atLeast('consume', 'fetch-drain fetch vs the loopback socket floor', median(pairedRatios(drain, rows.get('socket floor')!.mbPerSecond)), FETCH_OVER_BASELINE_GOAL, 'x'));
  }
  printTargets('Targets (issue 27)', targets);
  writeBenchResults('consume', { ...consumeResults(rows, segmentBytes, build.ok ? null : build.reason), targets });
}

/** The report's view of the throughput table (bench/report/results.ts). */
function consumeResults(rows: ReadonlyMap<RowName, RowRounds>, segmentBytes: number, peerUnavailable: string | null): ConsumeResults {
  const ferry = rows.get('ferry')!.mbPerSecond;
  const throughput = ROW_NAMES.filter((name) => rows.has(name)).map((name) => {
    const rates = rows.get(name)!.mbPerSecond;
    const kind = name === 'ferry' ? 'ferry' : name === 'raw read' ? 'raw read' : 'peer';
    return {
      target: name,
      kind,
      mbPerSecond: median(rates),
      minMbPerSecond: minOf(rates),
      maxMbPerSecond: maxOf(rates),
      ferryOverThis: name === 'ferry' ? null : median(pairedRatios(ferry, rates)),
    } as const;
  });
  return { messageBytes: VALUE_BYTES, segmentBytes, throughput, peerUnavailable };
}

await main();
