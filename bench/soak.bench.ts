/**
 * Memory under a long steady load (issue 27 item 5): does a broker's RSS stay flat once warm?
 * Not in the default `npm run bench` set (bench/run.ts runs it when named or with --long).
 *
 * One `ferry broker` process (`bun src/cli.ts broker`, WAL and tier on the file store, as
 * `npm start` runs it) with bounded retention, set by a config file as a deployment would:
 * segments of SEGMENT_BYTES roll every few seconds, are tiered, leave the local disk past
 * LOCAL_RETENTION_BYTES and the tier record past RETENTION_BYTES, so that every path that
 * allocates per segment (rolls, tier uploads and merges, retention, WAL GC) runs hundreds of
 * times. The tier's objects themselves go TIER_ORPHAN_DELAY_MS (10 min) after retention let them
 * go, at the orphan sweeper's next round (every 5 min): a 10-minute run deletes none, and the
 * data directory grows by 3-4.5 GB a minute at 50 MB/s (DISK_FREE_MIN_BYTES ends a run early).
 * A producer offers a steady rate (default 50 MB/s of 1 KiB messages, acks=all): kcat reading its
 * stdin, fed on a fixed schedule (bench/lib/paced-kcat.ts). The broker's RSS is sampled every second (its peak is the
 * kernel's high-water mark); every minute the bench reads the partition's end offset (what the
 * broker appended), the broker's own metrics (its JS heap in use, WAL GC and tier deletes) and
 * the data directory's size, and prints a progress line on stderr.
 *
 * Report: RSS per minute (min, median, max), and after the warm-up (the first minute; half the
 * run when it is shorter than two) min, median, max and least-squares slopes in MiB per minute:
 * of the floor (each minute's minimum, RSS after a collection: what a leak raises), of each
 * minute's median, and of every sample (bench/lib/rss-trend.ts says why the floor is the test).
 * Targets: the floor's slope at most SLOPE_GOAL_MIB_PER_MINUTE, the peak within the bound the engine's
 * limits imply (bench/lib/rss-bounds.ts, one producer connection), and the broker appending the
 * offered rate in every minute after the warm-up. At the end kcat must have had every message
 * acknowledged and the end offset must equal the messages sent.
 *
 * What runs on the shared 2-core VM showed (Bun 1.4.5): at 50 MB/s for 10 minutes RSS swings
 * every few seconds between a floor of ~190-230 MiB and teeth of 550-860 MiB (peak 878-890 MiB
 * against a bound of 1,219); the floor's slope after minute 1 was 0.12, 2.8 and 1.4 (+-0.9) MiB/min
 * in three runs, the median's 5-7 MiB/min. JavaScriptCore's own log (BUN_JSC_logGC=1, a separate
 * diagnostic run) showed why: ~260 eden and ~36 full collections a minute, and the heap left after
 * a full collection rising from ~100 to ~150 MiB over the first 4-5 minutes, then level; the teeth
 * follow it (the eden budget is proportional to the heap). At 20 MB/s for 25 minutes the floor
 * was level from minute 2 (157-166 MiB, slope 0.14 MiB/min; median -1). So the 10-minute slope at
 * 50 MB/s catches the end of a warm-up, not a leak; `--minutes 25` tells them apart.
 */
import { type Dirent, readdirSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseBenchArgs } from './lib/args.ts';
import { KCAT_PRODUCER_CONFIG, kcatEndOffset } from './lib/kafka-clients.ts';
import { type RunningTarget, startFerryBroker } from './lib/kafka-targets.ts';
import { PacedKcat, type PacedRunEnd } from './lib/paced-kcat.ts';
import { type MetricSample, scrapePrometheus } from './lib/prometheus-text.ts';
import { findKcat } from './lib/rdkafka-tools.ts';
import { writeBenchResults } from './lib/results.ts';
import { mib, processRss, RssSampler, type RssWindow } from './lib/rss.ts';
import { brokerProduceTerms, fileStoreDirectTerm, type RssTerm, rssBound } from './lib/rss-bounds.ts';
import { judgeRssPeak } from './lib/rss-report.ts';
import { MS_PER_MINUTE, rssPerWindow, rssSlopeMibPerMinute, type WindowRss, windowSlopeMibPerMinute } from './lib/rss-trend.ts';
import { median } from './lib/stats.ts';
import { printTable } from './lib/table.ts';
import { atLeast, atMost, printTargets } from './lib/targets.ts';
import { makeTempDir, removeTempDir } from './lib/temp-dir.ts';
import { formatNumber, KIB_BYTES, MIB_BYTES } from './lib/units.ts';
import { parsePositiveInteger, takeValueFlags } from './lib/value-flags.ts';
import type { SoakMinute, SoakResults, TargetResult } from './report/results.ts';

const TOPIC = 'soak';
const PARTITION = 0;
const VALUE_BYTES = KIB_BYTES;
const MINUTES_DEFAULT = 10;
const QUICK_MINUTES = 1;
/** MB/s of message values (MB = 10^6 B): 48,828 messages of 1 KiB a second. */
const RATE_MB_PER_SECOND_DEFAULT = 50;
const BYTES_PER_MB = 1_000_000;
/** RSS read this often; the peak in between is the kernel's high-water mark. */
const RSS_SAMPLE_INTERVAL_MS = 1000;
/** Left out of the trend: the JIT, the first segments and the collector's first cycles settle in it. */
const WARMUP_MS = MS_PER_MINUTE;
/**
 * The floor's slope (each window's minimum, RSS after a collection: bench/lib/rss-trend.ts) at
 * most this: a leak of 1 MiB/min is 1.4 GiB a day, a broker that grows so needs a restart within
 * days. The teeth above the floor are garbage, bounded by the peak's target.
 */
const SLOPE_GOAL_MIB_PER_MINUTE = 1;
/** The trend's windows are a minute long, shorter when the run has fewer than this many minutes. */
const TREND_WINDOWS_MIN = 6;
/** The broker appended at least this fraction of the offered rate in each minute after the warm-up. */
const APPENDED_FRACTION_MIN = 0.97;
/** Segments roll every ~2.7 s at 50 MB/s; each is tiered in 32 MiB pieces first (TIER_TAIL_MAX_BYTES), merged at the roll. */
const SEGMENT_BYTES = 128 * MIB_BYTES;
/** Tiered segments local disk keeps: two. */
const LOCAL_RETENTION_BYTES = 256 * MIB_BYTES;
/** The whole log (tier and local): ~20 s at 50 MB/s, so retention moves the log start from the first minute on. */
const RETENTION_BYTES = 1024 * MIB_BYTES;
/** Kafka's default is 5 minutes: retention must run many times within the run. */
const RETENTION_CHECK_INTERVAL_MS = 5000;
/**
 * The run ends early when the data directory's file system has less than this free: tiered
 * objects retention removed from the tier record are deleted only TIER_ORPHAN_DELAY_MS (10 min)
 * later, so at 50 MB/s the tier holds every segment and its pieces, 3-4.5 GB a minute, for a
 * run's first 10 to 15 minutes.
 */
const DISK_FREE_MIN_BYTES = 8 * 1024 * MIB_BYTES;
const KCAT_CONNECTIONS = 1;
const KCAT_REQUEST_BYTES_MAX = 1024 * 1024;

const USAGE = `
bun bench/soak.bench.ts [--quick] [--minutes N] [--rate-mb N] [--cpu-prof DIR]   (npm run bench -- --long, or -- soak)

A Ferry broker (file store, segments of ${SEGMENT_BYTES / MIB_BYTES} MiB, local retention ${LOCAL_RETENTION_BYTES / MIB_BYTES} MiB,
retention ${RETENTION_BYTES / MIB_BYTES} MiB) under a steady kcat producer (1 KiB messages, acks=all) for minutes: the broker's
RSS every second, per minute and its slope after the first minute, beside the bound of its limits.
Needs kcat (apt-get install -y kcat). Progress per minute on stderr.
  --minutes N     how long the producer runs (default ${MINUTES_DEFAULT})
  --rate-mb N     MB/s of message values offered (default ${RATE_MB_PER_SECOND_DEFAULT}; MB = 10^6 B)
  --quick         ${QUICK_MINUTES} minute (a smoke run: the trend is then taken over its second half)
  --cpu-prof DIR  write a CPU profile of the broker (bun --cpu-prof, .cpuprofile + .md) into DIR; its RSS is
                  then no measure of the broker's (measured with the profiler on: ~5 GiB after one minute)
  --help          this text`;

interface Settings {
  readonly quick: boolean;
  readonly minutes: number;
  readonly rateMbPerSecond: number;
  readonly cpuProfileDirectory: string | undefined;
}

function parseArgs(argv: readonly string[]): Settings {
  const { values, rest } = takeValueFlags(argv, ['minutes', 'rate-mb', 'cpu-prof']);
  const { quick } = parseBenchArgs(rest, USAGE);
  const rate = Number(values.get('rate-mb') ?? RATE_MB_PER_SECOND_DEFAULT);
  if (!(rate > 0)) throw new Error(`--rate-mb must be a positive number, got ${JSON.stringify(values.get('rate-mb'))}`);
  const minutesText = values.get('minutes');
  return {
    quick,
    minutes: minutesText === undefined ? (quick ? QUICK_MINUTES : MINUTES_DEFAULT) : parsePositiveInteger('minutes', minutesText),
    rateMbPerSecond: rate,
    cpuProfileDirectory: values.get('cpu-prof'),
  };
}

/** The broker's defaults for every topic, as a deployment's server.properties would set them. */
function writeBrokerConfig(directory: string): string {
  const path = join(directory, 'soak.properties');
  const lines = [
    `log.segment.bytes=${SEGMENT_BYTES}`,
    `log.local.retention.bytes=${LOCAL_RETENTION_BYTES}`,
    `log.retention.bytes=${RETENTION_BYTES}`,
    `log.retention.check.interval.ms=${RETENTION_CHECK_INTERVAL_MS}`,
  ];
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/** Bytes of every file under `directory`; files removed during the walk (retention, GC) count as gone. */
function directoryBytes(directory: string): number {
  let bytes = 0;
  let entries: Dirent[];
  try {
    entries = readdirSync(directory, { withFileTypes: true });
  } catch {
    return 0; // removed since its parent was listed
  }
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) bytes += directoryBytes(path);
    else if (entry.isFile()) bytes += statSync(path, { throwIfNoEntry: false })?.size ?? 0;
  }
  return bytes;
}

/** Bytes an unprivileged process may still write on the file system holding `directory`. */
function freeDiskBytes(directory: string): number {
  const stats = statfsSync(directory);
  return stats.bavail * stats.bsize;
}

/** What the bench reads at each minute's end, beside the RSS samples. */
interface Checkpoint {
  readonly atMs: number;
  readonly messagesWritten: number;
  readonly endOffset: number;
  readonly metrics: MetricSample;
  readonly diskBytes: number;
}

const TIER_DELETES = 'ferry_object_store_requests_total{operation="delete",store="tier"}';
const WAL_GC_DELETES = 'ferry_wal_gc_deleted_objects_total';
const HEAP_USED = 'ferry_process_heap_used_bytes';

async function checkpoint(kcat: string, broker: RunningTarget, producer: PacedKcat, startMs: number): Promise<Checkpoint> {
  return {
    atMs: performance.now() - startMs,
    messagesWritten: producer.messagesWritten,
    endOffset: await kcatEndOffset(kcat, broker.bootstrap, TOPIC, PARTITION),
    metrics: await scrapePrometheus(broker.metricsUrl!),
    diskBytes: directoryBytes(broker.dataDirectory!),
  };
}

/** One minute's row: RSS from the samples, the rest from the checkpoints at its start and end. */
function minuteOf(minute: number, window: RssWindow, from: Checkpoint, to: Checkpoint): SoakMinute {
  const rss = rssPerWindow(window.samples, MS_PER_MINUTE).find((row) => row.index === minute);
  const seconds = (to.atMs - from.atMs) / 1000;
  const heapUsed = to.metrics.get(HEAP_USED);
  return {
    minute,
    rssMinMib: rss === undefined ? Number.NaN : mib(rss.minBytes),
    rssMedianMib: rss === undefined ? Number.NaN : mib(rss.medianBytes),
    rssMaxMib: rss === undefined ? Number.NaN : mib(rss.maxBytes),
    heapUsedMib: heapUsed === undefined ? null : mib(heapUsed),
    offeredMbPerSecond: ((to.messagesWritten - from.messagesWritten) * VALUE_BYTES) / BYTES_PER_MB / seconds,
    appendedMbPerSecond: ((to.endOffset - from.endOffset) * VALUE_BYTES) / BYTES_PER_MB / seconds,
    diskMib: mib(to.diskBytes),
    tierDeletes: (to.metrics.get(TIER_DELETES) ?? 0) - (from.metrics.get(TIER_DELETES) ?? 0),
    walGcDeletes: (to.metrics.get(WAL_GC_DELETES) ?? 0) - (from.metrics.get(WAL_GC_DELETES) ?? 0),
  };
}

function progressLine(row: SoakMinute, settings: Settings, behindMessages: number): string {
  const messagesPerSecond = (settings.rateMbPerSecond * BYTES_PER_MB) / VALUE_BYTES;
  return `  minute ${row.minute + 1}/${settings.minutes}: RSS ${formatNumber(row.rssMinMib)}-${formatNumber(row.rssMaxMib)} MiB (median ${formatNumber(row.rssMedianMib)}), heap ${
    row.heapUsedMib === null ? '-' : formatNumber(row.heapUsedMib)
  } MiB; offered ${formatNumber(row.offeredMbPerSecond, 1)} MB/s, appended ${formatNumber(row.appendedMbPerSecond, 1)} MB/s, feed behind ${formatNumber(behindMessages / messagesPerSecond, 2)} s; disk ${formatNumber(row.diskMib)} MiB; deletes: tier ${row.tierDeletes}, WAL GC ${row.walGcDeletes}`;
}

interface SoakRun {
  /** Why the run ended before its minutes were up; null when it ran them all. */
  readonly stoppedEarly: string | null;
  readonly startRssBytes: number;
  readonly window: RssWindow;
  readonly minutes: SoakMinute[];
  readonly end: PacedRunEnd;
  readonly endOffset: number;
}

/** Starts the producer, checkpoints every minute until the run's end, then drains the producer. */
async function produceFor(settings: Settings, kcat: string, broker: RunningTarget): Promise<SoakRun> {
  const rss = processRss(broker.pid);
  const startRssBytes = rss.current()!;
  const sampler = new RssSampler(rss, RSS_SAMPLE_INTERVAL_MS).start();
  const producer = new PacedKcat({
    kcat,
    bootstrap: broker.bootstrap,
    topic: TOPIC,
    messagesPerSecond: (settings.rateMbPerSecond * BYTES_PER_MB) / VALUE_BYTES,
    valueBytes: VALUE_BYTES,
    config: KCAT_PRODUCER_CONFIG,
  });
  const startMs = performance.now();
  const minutes: SoakMinute[] = [];
  let stoppedEarly: string | null = null;
  let previous: Checkpoint = { atMs: 0, messagesWritten: 0, endOffset: 0, metrics: await scrapePrometheus(broker.metricsUrl!), diskBytes: 0 };
  for (let minute = 0; minute < settings.minutes; minute++) {
    await Bun.sleep(Math.max(0, startMs + (minute + 1) * MS_PER_MINUTE - performance.now()));
    const behind = producer.behindMessages;
    const current = await checkpoint(kcat, broker, producer, startMs);
    const row = minuteOf(minute, sampler.window()!, previous, current);
    minutes.push(row);
    console.error(progressLine(row, settings, behind));
    previous = current;
    const free = freeDiskBytes(broker.dataDirectory!);
    if (free < DISK_FREE_MIN_BYTES && minute + 1 < settings.minutes) {
      stoppedEarly = `after minute ${minute + 1}: ${formatNumber(free / MIB_BYTES)} MiB free on the data directory's file system, under ${formatNumber(DISK_FREE_MIN_BYTES / MIB_BYTES)}`;
      console.error(`  stopping early ${stoppedEarly}`);
      break;
    }
  }
  const end = await producer.stop();
  const window = sampler.stop()!;
  const endOffset = await kcatEndOffset(kcat, broker.bootstrap, TOPIC, PARTITION);
  return { stoppedEarly, startRssBytes, window, minutes, end, endOffset };
}

const MINUTE_COLUMNS = [
  { title: 'minute' },
  { title: 'RSS min' },
  { title: 'median' },
  { title: 'max' },
  { title: 'heap used' },
  { title: 'offered MB/s' },
  { title: 'appended MB/s' },
  { title: 'disk MiB' },
  { title: 'tier deletes' },
  { title: 'WAL GC deletes' },
] as const;

function minuteRows(minutes: readonly SoakMinute[]): string[][] {
  return minutes.map((row) => [
    String(row.minute + 1),
    formatNumber(row.rssMinMib),
    formatNumber(row.rssMedianMib),
    formatNumber(row.rssMaxMib),
    row.heapUsedMib === null ? '-' : formatNumber(row.heapUsedMib),
    formatNumber(row.offeredMbPerSecond, 1),
    formatNumber(row.appendedMbPerSecond, 1),
    formatNumber(row.diskMib),
    String(row.tierDeletes),
    String(row.walGcDeletes),
  ]);
}

/** The trend is taken after WARMUP_MS, or over the second half of a run shorter than two of them. */
function trendFromMs(minutes: number): number {
  return Math.min(WARMUP_MS, (minutes * MS_PER_MINUTE) / 2);
}

/** RSS after the warm-up: its range, and the slopes of its floor (the target), its median and every sample. */
interface Trend {
  readonly fromMs: number;
  readonly windowMs: number;
  readonly floor: readonly WindowRss[];
  readonly minBytes: number;
  readonly medianBytes: number;
  readonly maxBytes: number;
  readonly floorSlope: number | null;
  readonly floorSlopeError: number | null;
  readonly medianSlope: number | null;
  readonly sampleSlope: number | null;
  /**
   * The floor's slope over the run's second half, and its first and last window: under npm start's
   * MIMALLOC_PURGE_DELAY=-1 RSS is the allocator's high-water mark, which climbs in steps while
   * the load meets new peaks and then levels. Printed beside the target, not judged.
   */
  readonly secondHalf: { readonly fromMs: number; readonly slope: number | null; readonly firstBytes: number; readonly lastBytes: number } | null;
}

function trendOf(run: SoakRun): Trend {
  const runMs = run.minutes.length * MS_PER_MINUTE;
  const fromMs = trendFromMs(run.minutes.length);
  const windowMs = Math.min(MS_PER_MINUTE, runMs / TREND_WINDOWS_MIN);
  // Whole windows of the producer's run only: the last sample, taken as it drains, is no window's floor.
  const samples = run.window.samples.filter((sample) => sample.atMs < runMs);
  const windows = rssPerWindow(samples, windowMs).filter((window) => window.fromMs >= fromMs && window.fromMs + windowMs <= runMs);
  const after = samples.filter((sample) => sample.atMs >= fromMs).map((sample) => sample.bytes);
  const floor = windowSlopeMibPerMinute(windows, fromMs, (window) => window.minBytes);
  const halfMs = Math.max(fromMs, runMs / 2);
  const late = windows.filter((window) => window.fromMs >= halfMs);
  return {
    fromMs,
    windowMs,
    floor: windows,
    minBytes: Math.min(...after),
    medianBytes: median(after),
    maxBytes: Math.max(...after),
    floorSlope: floor.slope,
    floorSlopeError: floor.standardError,
    medianSlope: windowSlopeMibPerMinute(windows, fromMs, (window) => window.medianBytes).slope,
    sampleSlope: rssSlopeMibPerMinute(samples, fromMs),
    // Only when it differs from the trend above (a run of at least two warm-ups), from its first whole window.
    secondHalf:
      late.length < 2 || halfMs <= fromMs
        ? null
        : { fromMs: late[0]!.fromMs, slope: windowSlopeMibPerMinute(late, halfMs, (window) => window.minBytes).slope, firstBytes: late[0]!.minBytes, lastBytes: late.at(-1)!.minBytes },
  };
}

const slopeText = (slope: number | null): string => (slope === null ? '-' : formatNumber(slope, 2));

function printRun(settings: Settings, run: SoakRun, trend: Trend): void {
  if (run.stoppedEarly !== null) console.log(`The run stopped early, ${run.stoppedEarly}.`);
  printTable(
    `Broker RSS per minute (MiB; sampled every ${RSS_SAMPLE_INTERVAL_MS / 1000} s), its JS heap in use at the minute's end, what was offered and appended, the data directory, deletes`,
    MINUTE_COLUMNS,
    minuteRows(run.minutes),
  );
  console.log(
    `After ${formatNumber(trend.fromMs / 1000)} s: RSS ${formatNumber(mib(trend.minBytes))}-${formatNumber(mib(trend.maxBytes))} MiB, median ${formatNumber(mib(trend.medianBytes))}; peak of the run ${formatNumber(mib(run.window.peakBytes))} MiB (kernel high-water mark)`,
  );
  console.log(
    `Slopes after ${formatNumber(trend.fromMs / 1000)} s, least squares, MiB/min: the floor (each ${formatNumber(trend.windowMs / 1000)} s window's minimum: RSS after a collection) ${slopeText(trend.floorSlope)} (standard error ${slopeText(trend.floorSlopeError)}); each window's median ${slopeText(trend.medianSlope)}; every sample ${slopeText(trend.sampleSlope)}`,
  );
  const late = trend.secondHalf;
  if (late !== null) {
    console.log(
      `Second half (from ${formatNumber(late.fromMs / 1000)} s): floor slope ${slopeText(late.slope)} MiB/min, floor ${formatNumber(mib(late.firstBytes))} -> ${formatNumber(mib(late.lastBytes))} MiB (not judged: where the allocator's high-water mark has levelled, with npm start's MIMALLOC_PURGE_DELAY=-1, or not)`,
    );
  }
  const messagesPerSecond = (settings.rateMbPerSecond * BYTES_PER_MB) / VALUE_BYTES;
  console.log(
    `Producer: ${formatNumber(run.end.messages)} messages, ${formatNumber((run.end.messages * VALUE_BYTES) / BYTES_PER_MB / (run.end.feedMs / 1000), 1)} MB/s offered over ${formatNumber(run.end.feedMs / 1000, 1)} s (goal ${settings.rateMbPerSecond}); the feed was at most ${formatNumber(run.end.behindMaxMessages / messagesPerSecond, 2)} s behind its schedule; the last acknowledgements took ${formatNumber(run.end.drainMs / 1000, 2)} s after it stopped; kcat CPU ${formatNumber((100 * run.end.kcatCpuMs) / run.end.feedMs)}%`,
  );
  console.log(
    `Acknowledged: kcat reported no failed delivery and exited 0; the end offset is ${formatNumber(run.endOffset)} for ${formatNumber(run.end.messages)} messages sent${run.endOffset === run.end.messages ? '' : ' (MISMATCH)'}`,
  );
}

/** The soak's broker runs on the file store: its produce terms and the store's direct writes. */
function soakTerms(): RssTerm[] {
  return [...brokerProduceTerms(KCAT_CONNECTIONS, KCAT_REQUEST_BYTES_MAX), fileStoreDirectTerm(KCAT_REQUEST_BYTES_MAX)];
}

function soakTargets(settings: Settings, run: SoakRun, trend: Trend): TargetResult[] {
  const steady = run.minutes.filter((row) => row.minute * MS_PER_MINUTE >= trend.fromMs || row.minute === run.minutes.length - 1);
  const slowestMbPerSecond = Math.min(...steady.map((row) => row.appendedMbPerSecond));
  return [
    ...(trend.floorSlope === null ? [] : [atMost('soak', `RSS floor slope after ${formatNumber(trend.fromMs / 1000)} s`, trend.floorSlope, SLOPE_GOAL_MIB_PER_MINUTE, ' MiB/min')]),
    judgeRssPeak('soak', 'broker', run.window.peakBytes, run.startRssBytes, soakTerms()),
    atLeast('soak', 'appended, slowest minute after the warm-up', slowestMbPerSecond, APPENDED_FRACTION_MIN * settings.rateMbPerSecond, ' MB/s'),
  ];
}

function report(settings: Settings, run: SoakRun): SoakResults {
  const trend = trendOf(run);
  printRun(settings, run, trend);
  const targets = soakTargets(settings, run, trend);
  printTargets('Targets: a flat RSS under a steady load (issue 27 item 5)', targets);
  if (run.endOffset !== run.end.messages) throw new Error(`the broker's end offset ${run.endOffset} is not the ${run.end.messages} messages kcat had acknowledged`);
  return {
    minutes: run.minutes.length,
    rateMbPerSecond: settings.rateMbPerSecond,
    trendFromS: trend.fromMs / 1000,
    startRssMib: mib(run.startRssBytes),
    peakRssMib: mib(run.window.peakBytes),
    boundRssMib: mib(rssBound(run.startRssBytes, soakTerms()).boundBytes),
    floorSlopeMibPerMinute: trend.floorSlope,
    floorSlopeStandardErrorMibPerMinute: trend.floorSlopeError,
    medianSlopeMibPerMinute: trend.medianSlope,
    sampleSlopeMibPerMinute: trend.sampleSlope,
    slopeGoalMibPerMinute: SLOPE_GOAL_MIB_PER_MINUTE,
    perMinute: run.minutes,
    floor: trend.floor.map((window) => ({ atS: window.fromMs / 1000, mib: mib(window.minBytes) })),
    rss: run.window.samples.map((sample) => ({ atS: sample.atMs / 1000, mib: mib(sample.bytes) })),
    targets,
  };
}

function describeRun(settings: Settings): void {
  console.log(
    `soak bench: Bun ${Bun.version}, ${settings.minutes} min at ${settings.rateMbPerSecond} MB/s of ${VALUE_BYTES} B messages (${formatNumber((settings.rateMbPerSecond * BYTES_PER_MB) / VALUE_BYTES)}/s)${settings.quick ? ' (--quick)' : ''}`,
  );
  console.log(
    `  broker: bun src/cli.ts broker, WAL and tier on the file store; segment.bytes ${SEGMENT_BYTES / MIB_BYTES} MiB, local.retention.bytes ${LOCAL_RETENTION_BYTES / MIB_BYTES} MiB, retention.bytes ${RETENTION_BYTES / MIB_BYTES} MiB, retention checked every ${RETENTION_CHECK_INTERVAL_MS / 1000} s`,
  );
  console.log(
    `  producer: kcat -P from a paced pipe, ${Object.entries(KCAT_PRODUCER_CONFIG)
      .map(([name, value]) => `${name}=${value}`)
      .join(' ')}; broker RSS every ${RSS_SAMPLE_INTERVAL_MS / 1000} s`,
  );
}

async function main(): Promise<void> {
  const settings = parseArgs(process.argv.slice(2));
  const kcat = findKcat();
  if (kcat === null) {
    console.log('soak bench: skipped, kcat not found (apt-get install -y kcat)');
    return;
  }
  describeRun(settings);
  const configDirectory = makeTempDir('soak-config');
  try {
    const broker = await startFerryBroker({
      walStore: (data) => `file:${join(data, 'objects')}`,
      extraArguments: ['--config', writeBrokerConfig(configDirectory)],
      cpuProfileDirectory: settings.cpuProfileDirectory,
      cpuProfileName: 'soak-broker',
    });
    let results: SoakResults;
    try {
      results = report(settings, await produceFor(settings, kcat, broker));
    } finally {
      await broker.stop();
    }
    writeBenchResults('soak', results);
  } finally {
    removeTempDir(configDirectory);
  }
}

await main();
