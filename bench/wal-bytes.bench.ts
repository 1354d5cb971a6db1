/**
 * Cost and bytes of a sustained produce run (issue 11 item 6): what the WAL store, the tier and
 * the local disk hold over time, beside the bound a collected WAL should stay under, and what
 * keeping history costs per GB-month next to classic Kafka and KIP-405.
 *
 * The embedded engine (src/engine/engine.ts), the way a broker runs it: WAL on a memory store with
 * the s3-express latency model, tiering on into a second memory store (the tier, S3 Standard's
 * place; `--tier-on-disk` puts it on a file store instead, to spare memory on a long run), tier
 * records in a third memory store (as a cluster's control store), local log flush none. An open-loop
 * producer offers a fixed rate over 64 partitions: every TICK_MS it appends, round-robin, the
 * 16 KiB batches (1 KiB records) due by then, with acks=all in flight (bounded). Segments are
 * small (--segment-bytes) so that they roll and tier within the run.
 *
 * Every SAMPLE_INTERVAL_MS it lists the WAL store (objects under wal/) and the tier, and walks the
 * local directory; its own LIST requests are taken out of the bills. It prints the series, the
 * steady-state WAL bytes (the most held in the run's second half, and the growth over it) beside
 * the bound of bench/lib/wal-bound.ts computed from the configuration, the tier's upload bill
 * per GB, and $/GB-month of storage (bench/lib/storage-cost.ts).
 *
 * WAL garbage collection (issue 11 item 4) may not be on this build: without it the WAL bytes
 * grow with everything produced, and the bench says so (it counts the WAL store's deletes). When
 * the engine takes a collector interval, `--wal-gc-interval-ms` passes it as walGcIntervalMs.
 *
 * What one full run showed at ac5c934 (no WAL GC on that build): the WAL held all 6.05 GB
 * produced (+605 MB/min) against a bound of 570 MB; the tier 5.9 GB in 1,408 segments at 280
 * PUTs/GB ($0.0014/GB); storage $0.023/GB-month for Ferry once collected ($0.133 uncollected)
 * against $0.24 for classic Kafka and $0.057 for KIP-405.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ControlStore } from '../src/control/control-store.ts';
import { Engine, type EngineOptions } from '../src/engine/index.ts';
import { FileStore } from '../src/store/file.ts';
import { MemoryStore } from '../src/store/memory.ts';
import type { ObjectStore } from '../src/store/object-store.ts';
import type { StoreStats } from '../src/store/stats.ts';
import { STREAMING_PART_BYTES_DEFAULT } from '../src/store/streaming-upload.ts';
import { TIER_INTERVAL_MS } from '../src/tier/tierer.ts';
import { DEFAULT_WAL_WRITER_CONFIG } from '../src/wal/writer.ts';
import { parseBenchArgs } from './lib/args.ts';
import { buildFullBatch, PRODUCER_BATCH_BYTES_MAX } from './lib/batches.ts';
import { BYTES_PER_GB, walBill } from './lib/s3-prices.ts';
import { storageBills, tierUploadBill } from './lib/storage-cost.ts';
import { printTable } from './lib/table.ts';
import { makeTempDir, removeTempDir } from './lib/temp-dir.ts';
import { formatBytes, formatNumber, formatSignificant, KIB_BYTES, MIB_BYTES } from './lib/units.ts';
import { parseDecimalSize, parsePositiveInteger, takeValueFlags } from './lib/value-flags.ts';
import { walBound } from './lib/wal-bound.ts';

const TOPIC = 'bench';
const PARTITIONS = 64;
const RECORD_VALUE_BYTES = KIB_BYTES;
const RATE_BYTES_PER_SECOND_DEFAULT = 10_000_000;
const DURATION_MS = 10 * 60_000;
const QUICK_DURATION_MS = 60_000;
/** Segments roll within the run: ~27 s per partition at 10 MB/s over 64 (quick: ~7 s). */
const SEGMENT_BYTES = 4 * MIB_BYTES;
const QUICK_SEGMENT_BYTES = MIB_BYTES;
const SAMPLE_INTERVAL_MS = 15_000;
const QUICK_SAMPLE_INTERVAL_MS = 5_000;
/** The producer wakes this often and appends every batch due by then. */
const TICK_MS = 10;
/** acks=all appends waiting for durability at once; past it the producer waits (and falls behind). */
const IN_FLIGHT_APPENDS_MAX = 4096;
/** The bound's collector round when the engine's interval is not given (assumed: the tierer's). */
const GC_INTERVAL_MS_ASSUMED = TIER_INTERVAL_MS;
/** Storage bills are per GB of history kept this long (Kafka's default retention.ms: 7 days)... */
const RETENTION_MS = 7 * 24 * 3600 * 1000;
/** ...of which KIP-405 keeps this much on its brokers' disks (local.retention.ms; an assumption). */
const KIP405_LOCAL_RETENTION_MS = 24 * 3600 * 1000;
const WAL_ROOT = 'wal/';
const LIST_PAGE_KEYS = 1000;

const USAGE = `
bun bench/wal-bytes.bench.ts [--quick] [--mb-per-second N] [--minutes N] [--segment-bytes N]
                             [--wal-gc-interval-ms N] [--tier-on-disk]

A sustained produce run (default ${RATE_BYTES_PER_SECOND_DEFAULT / 1e6} MB/s for ${DURATION_MS / 60_000} minutes over ${PARTITIONS} partitions) through the
embedded engine, WAL on the memory store's s3-express model, tiering into a second memory store.
Prints WAL/tier/local bytes over time, steady WAL bytes vs the bound from the configuration,
tier upload cost per GB, and $/GB-month of storage beside classic Kafka and KIP-405.
  --quick                  ${QUICK_DURATION_MS / 60_000} minute, ${formatBytes(QUICK_SEGMENT_BYTES)} segments, a sample every ${QUICK_SAMPLE_INTERVAL_MS / 1000} s
  --mb-per-second N        offered rate (MB = 10^6 bytes of batches)
  --minutes N              run length
  --segment-bytes N        segment.bytes of the topic (default ${formatBytes(SEGMENT_BYTES)}, quick ${formatBytes(QUICK_SEGMENT_BYTES)})
  --wal-gc-interval-ms N   pass walGcIntervalMs to the engine (WAL garbage collection, once it exists)
  --tier-on-disk           the tier on a file store in the temp directory instead of in memory
                           (a full run holds ~6 GB in the tier; without WAL GC as much again in the WAL)
  --help                   this text`;

interface Settings {
  readonly quick: boolean;
  readonly bytesPerSecond: number;
  readonly durationMs: number;
  readonly segmentBytes: number;
  readonly sampleIntervalMs: number;
  readonly walGcIntervalMs: number | undefined;
  readonly tierOnDisk: boolean;
}

function parseArgs(argv: readonly string[]): Settings {
  const tierOnDisk = argv.includes('--tier-on-disk');
  const { values, rest } = takeValueFlags(
    argv.filter((arg) => arg !== '--tier-on-disk'),
    ['mb-per-second', 'minutes', 'segment-bytes', 'wal-gc-interval-ms'],
  );
  const { quick } = parseBenchArgs(rest, USAGE);
  const value = (name: string, parse: (text: string) => number): number | undefined => (values.has(name) ? parse(values.get(name)!) : undefined);
  const mbPerSecond = value('mb-per-second', (text) => parseDecimalSize(`${text}MB`));
  const minutes = value('minutes', (text) => parsePositiveInteger('minutes', text));
  return {
    quick,
    bytesPerSecond: mbPerSecond ?? RATE_BYTES_PER_SECOND_DEFAULT,
    durationMs: minutes === undefined ? (quick ? QUICK_DURATION_MS : DURATION_MS) : minutes * 60_000,
    segmentBytes: value('segment-bytes', parseDecimalSize) ?? (quick ? QUICK_SEGMENT_BYTES : SEGMENT_BYTES),
    sampleIntervalMs: quick ? QUICK_SAMPLE_INTERVAL_MS : SAMPLE_INTERVAL_MS,
    walGcIntervalMs: value('wal-gc-interval-ms', (text) => parsePositiveInteger('wal-gc-interval-ms', text)),
    tierOnDisk,
  };
}

interface Holdings {
  readonly bytes: number;
  readonly objects: number;
}

interface Sample {
  readonly atMs: number;
  readonly producedBytes: number;
  readonly wal: Holdings;
  readonly tier: Holdings;
  readonly localBytes: number;
  readonly walDeletes: number;
}

/** Lists a store under `prefix`, counting the LIST requests it sends so the bills can leave them out. */
class StoreCensus {
  listRequests = 0;
  constructor(
    readonly store: ObjectStore,
    readonly prefix: string,
  ) {}

  async holdings(): Promise<Holdings> {
    let bytes = 0;
    let objects = 0;
    let token: string | undefined;
    do {
      this.listRequests++;
      const page = await this.store.list(this.prefix, { maxKeys: LIST_PAGE_KEYS, ...(token === undefined ? {} : { token }) });
      for (const object of page.objects) {
        bytes += object.size;
        objects++;
      }
      token = page.nextToken;
    } while (token !== undefined);
    return { bytes, objects };
  }

  /** The store's stats without this census's LIST requests. */
  statsWithoutCensus(): StoreStats {
    const stats = this.store.stats();
    return { ...stats, requests: { ...stats.requests, list: stats.requests.list - this.listRequests } };
  }
}

function directoryBytes(directory: string): number {
  let bytes = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) bytes += directoryBytes(path);
    else if (entry.isFile()) bytes += statSync(path).size;
  }
  return bytes;
}

/** Appends the batches due every tick, round-robin over the partitions, each a fresh copy (offsets are set in place). */
class OpenLoopProducer {
  producedBytes = 0;
  inFlight = 0;
  failures = 0;
  /** Ticks at which the in-flight bound held the producer back. */
  heldBackTicks = 0;
  /**
   * Stamped with the run's start: retention.ms (7 days) runs during the run, and a batch from a
   * fixed past instant would be expired at once, emptying the local log at the first check.
   */
  readonly #batch = buildFullBatch(RECORD_VALUE_BYTES, PRODUCER_BATCH_BYTES_MAX, Date.now());
  #sent = 0;

  constructor(
    readonly engine: Engine,
    readonly bytesPerSecond: number,
  ) {}

  async run(durationMs: number): Promise<void> {
    const startMs = performance.now();
    for (;;) {
      const elapsedMs = performance.now() - startMs;
      if (elapsedMs >= durationMs) break;
      const due = Math.floor((elapsedMs / 1000) * (this.bytesPerSecond / this.#batch.bytes.length));
      while (this.#sent < due && this.inFlight < IN_FLIGHT_APPENDS_MAX) await this.#appendOne();
      if (this.#sent < due) this.heldBackTicks++;
      await Bun.sleep(TICK_MS);
    }
    while (this.inFlight > 0) await Bun.sleep(TICK_MS);
  }

  async #appendOne(): Promise<void> {
    const partition = this.#sent++ % PARTITIONS;
    this.inFlight++;
    try {
      const { committed } = await this.engine.appendBatches(TOPIC, partition, this.#batch.bytes.slice());
      this.producedBytes += this.#batch.bytes.length;
      committed.then(
        () => this.inFlight--,
        () => {
          this.inFlight--;
          this.failures++;
        },
      );
    } catch (error) {
      this.inFlight--;
      throw error;
    }
  }
}

/** The collector's option, passed only when asked for: on a build without it, nothing changes. */
function walGcOptions(settings: Settings): Partial<EngineOptions> {
  return settings.walGcIntervalMs === undefined ? {} : ({ walGcIntervalMs: settings.walGcIntervalMs } as Partial<EngineOptions>);
}

async function openTier(settings: Settings, directory: string): Promise<ObjectStore> {
  return settings.tierOnDisk ? FileStore.open(join(directory, 'tier'), { fsync: false }) : new MemoryStore({ latency: 's3-standard', seed: 2 });
}

const mb = (bytes: number): string => formatNumber(bytes / 1e6, 1);

function seriesRows(samples: readonly Sample[]): string[][] {
  return samples.map((sample) => [
    formatNumber(sample.atMs / 1000),
    mb(sample.producedBytes),
    mb(sample.wal.bytes),
    formatNumber(sample.wal.objects),
    mb(sample.tier.bytes),
    formatNumber(sample.tier.objects),
    mb(sample.localBytes),
    formatNumber(sample.walDeletes),
  ]);
}

/** Least-squares slope of WAL bytes over time in the samples, in bytes per second. */
function growthPerSecond(samples: readonly Sample[]): number {
  if (samples.length < 2) return 0;
  const meanT = samples.reduce((sum, s) => sum + s.atMs, 0) / samples.length;
  const meanB = samples.reduce((sum, s) => sum + s.wal.bytes, 0) / samples.length;
  let covariance = 0;
  let variance = 0;
  for (const sample of samples) {
    covariance += (sample.atMs - meanT) * (sample.wal.bytes - meanB);
    variance += (sample.atMs - meanT) ** 2;
  }
  return variance === 0 ? 0 : (covariance / variance) * 1000;
}

async function main(): Promise<void> {
  const settings = parseArgs(process.argv.slice(2));
  const directory = makeTempDir('wal-bytes');
  const walStore = new MemoryStore({ latency: 's3-express', seed: 1 });
  // The tier records in a store of their own (a cluster's --cluster-store): the WAL store's bill is then the WAL's alone.
  const controlStore = new MemoryStore({ latency: 's3-express', seed: 3 });
  const tierStore = await openTier(settings, directory);
  const engineDirectory = join(directory, 'engine');
  const engine = await Engine.open({
    directory: engineDirectory,
    log: { flush: { kind: 'none' } },
    wal: { store: walStore, writerId: 'bench' },
    tier: { store: tierStore, control: new ControlStore(controlStore, '') },
    ...walGcOptions(settings),
  });
  engine.createTopic(TOPIC, { partitions: PARTITIONS, config: { segmentBytes: settings.segmentBytes } });
  const walCensus = new StoreCensus(walStore, WAL_ROOT);
  const tierCensus = new StoreCensus(tierStore, '');
  const producer = new OpenLoopProducer(engine, settings.bytesPerSecond);
  const samples: Sample[] = [];
  const startMs = performance.now();
  const sample = async (): Promise<void> => {
    const [wal, tier] = await Promise.all([walCensus.holdings(), tierCensus.holdings()]);
    samples.push({ atMs: performance.now() - startMs, producedBytes: producer.producedBytes, wal, tier, localBytes: directoryBytes(engineDirectory), walDeletes: walStore.stats().requests.delete });
    const last = samples.at(-1)!;
    console.error(
      `  ${formatNumber(last.atMs / 1000)} s: produced ${mb(last.producedBytes)} MB, WAL ${mb(last.wal.bytes)} MB in ${last.wal.objects} objects, tier ${mb(last.tier.bytes)} MB, local ${mb(last.localBytes)} MB, ${producer.inFlight} in flight`,
    );
  };
  console.error(
    `wal-bytes: ${settings.bytesPerSecond / 1e6} MB/s for ${settings.durationMs / 1000} s over ${PARTITIONS} partitions, ${formatBytes(settings.segmentBytes)} segments, tier ${settings.tierOnDisk ? 'on disk' : 'in memory'}`,
  );
  const sampler = setInterval(() => void sample(), settings.sampleIntervalMs);
  try {
    await producer.run(settings.durationMs);
  } finally {
    clearInterval(sampler);
  }
  // A last sample at the end, unless the interval just took one.
  if (samples.length === 0 || performance.now() - startMs - samples.at(-1)!.atMs > settings.sampleIntervalMs / 2) await sample();
  const walStats = walCensus.statsWithoutCensus();
  const tierStats = tierCensus.statsWithoutCensus();
  await engine.close();
  await tierStore.close();
  await walStore.close();
  await controlStore.close();
  removeTempDir(directory);
  report(settings, samples, producer, walStats, tierStats);
}

function report(settings: Settings, samples: readonly Sample[], producer: OpenLoopProducer, walStats: StoreStats, tierStats: StoreStats): void {
  const last = samples.at(-1)!;
  const elapsedSeconds = last.atMs / 1000;
  const achievedBytesPerSecond = last.producedBytes / elapsedSeconds;
  printTable(
    `WAL store, tier and local disk over time (${settings.bytesPerSecond / 1e6} MB/s offered over ${PARTITIONS} partitions, ${formatBytes(settings.segmentBytes)} segments; MB = 10^6 B)`,
    [{ title: 's' }, { title: 'produced MB' }, { title: 'WAL MB' }, { title: 'WAL objects' }, { title: 'tier MB' }, { title: 'tier objects' }, { title: 'local MB' }, { title: 'WAL deletes' }],
    seriesRows(samples),
  );

  const secondHalf = samples.filter((s) => s.atMs >= last.atMs / 2);
  const steadyBytes = Math.max(...secondHalf.map((s) => s.wal.bytes));
  const walBytesPerProducedByte = Math.max(1, walStats.bytesIn / Math.max(1, last.producedBytes));
  const bound = walBound({
    partitions: PARTITIONS,
    segmentBytes: settings.segmentBytes,
    rolledSegmentsWaiting: 1,
    produceBytesPerSecond: achievedBytesPerSecond,
    tierIntervalMs: TIER_INTERVAL_MS,
    gcIntervalMs: settings.walGcIntervalMs ?? GC_INTERVAL_MS_ASSUMED,
    maxInFlight: DEFAULT_WAL_WRITER_CONFIG.maxInFlight,
    uploadBytes: DEFAULT_WAL_WRITER_CONFIG.uploadBytes,
    walBytesPerProducedByte,
  });
  const growth = growthPerSecond(secondHalf);
  const collecting = last.walDeletes > 0;
  printTable(
    'Steady-state WAL bytes (the most held in the second half of the run) vs the bound from the configuration',
    [{ title: 'quantity', align: 'left' }, { title: 'MB' }, { title: 'how it is computed', align: 'left' }],
    [
      ['WAL held, steady (max, 2nd half)', mb(steadyBytes), `${secondHalf.length} samples; growth over them ${formatNumber((growth * 60) / 1e6, 1)} MB/min`],
      ['bound', mb(bound.totalBytes), 'the three lines below'],
      ['  segments', mb(bound.segmentsBytes), `${PARTITIONS} partitions x (active + 1 rolled waiting) x ${formatBytes(settings.segmentBytes)} x ${formatSignificant(walBytesPerProducedByte)} WAL B/B`],
      [
        '  tierer + GC rounds',
        mb(bound.waitingRoundsBytes),
        `${mb(achievedBytesPerSecond)} MB/s x (${TIER_INTERVAL_MS} ms tier interval + ${settings.walGcIntervalMs ?? `${GC_INTERVAL_MS_ASSUMED} (assumed)`} ms GC interval)`,
      ],
      ['  in flight', mb(bound.inFlightBytes), `${DEFAULT_WAL_WRITER_CONFIG.maxInFlight} uploads x ${formatBytes(DEFAULT_WAL_WRITER_CONFIG.uploadBytes)}`],
    ],
  );
  const verdict = steadyBytes <= bound.totalBytes ? 'within the bound' : `OVER the bound by ${formatNumber(steadyBytes / bound.totalBytes, 1)}x`;
  console.log(
    `\nWAL: ${verdict}; ${collecting ? `GC deleted ${formatNumber(last.walDeletes)} WAL objects` : 'no WAL object was ever deleted: WAL garbage collection is not running on this build, so the WAL holds everything produced'}.`,
  );
  if (producer.heldBackTicks > 0 || producer.failures > 0)
    console.log(`producer: held back at ${producer.heldBackTicks} ticks by ${IN_FLIGHT_APPENDS_MAX} appends in flight, ${producer.failures} failed; achieved ${mb(achievedBytesPerSecond)} MB/s`);

  const tieredBytes = tierStats.bytesIn;
  const tierRows: string[][] = [];
  if (tieredBytes > 0) {
    const bill = tierUploadBill(tierStats, tieredBytes);
    tierRows.push(['tier (S3 Standard)', mb(tieredBytes), formatNumber(bill.putsPerGb), formatSignificant(bill.usdPerGb)]);
  }
  const wal = walBill(walStats, last.producedBytes);
  tierRows.push(['WAL (S3 Express), per GB produced', mb(walStats.bytesIn), formatNumber(wal.putsPerGb), formatSignificant(wal.totalUsdPerGb)]);
  printTable(
    `Upload bills: PUT-class requests (puts, multipart create/parts/complete, the engine's LISTs; the census's own LISTs left out) and upload fees per GB (2^30 B) uploaded; a tiered segment is one object (multipart in ${formatBytes(STREAMING_PART_BYTES_DEFAULT)} parts when larger), so the tier's PUTs/GB falls with --segment-bytes (${formatBytes(settings.segmentBytes)} here)`,
    [{ title: 'store', align: 'left' }, { title: 'MB uploaded' }, { title: 'PUTs/GB' }, { title: '$/GB' }],
    tierRows,
  );

  const retainedBytes = achievedBytesPerSecond * (RETENTION_MS / 1000);
  const localPerProduced = last.localBytes / Math.max(1, last.producedBytes);
  const history = {
    retainedBytes,
    kip405HotBytes: achievedBytesPerSecond * (KIP405_LOCAL_RETENTION_MS / 1000),
    ferryWalBytes: collecting ? steadyBytes : bound.totalBytes,
    ferryLocalBytes: retainedBytes * Math.min(1, localPerProduced),
  };
  const bills = storageBills(history);
  if (!collecting) {
    // What this build costs: nothing leaves the WAL store, so it holds the whole history too.
    const uncollected = storageBills({ ...history, ferryWalBytes: retainedBytes })[0]!;
    bills.splice(1, 0, { name: 'Ferry, WAL uncollected', how: 'this build: the WAL (S3 Express) keeps the whole history too', usdPerGbMonth: uncollected.usdPerGbMonth });
  }
  printTable(
    `Storage, $ per GB-month of history (${formatNumber(retainedBytes / BYTES_PER_GB)} GiB kept: ${mb(achievedBytesPerSecond)} MB/s x ${RETENTION_MS / 86_400_000} days retention; KIP-405 local.retention ${KIP405_LOCAL_RETENTION_MS / 3_600_000} h; Ferry's WAL at ${collecting ? 'its measured steady bytes' : 'the bound (not collected on this build: measured, it grows with the history)'}; its local disk at the measured ${formatNumber(100 * Math.min(1, localPerProduced))}% of what was produced)`,
    [{ title: 'system', align: 'left' }, { title: '$/GB-month' }, { title: 'vs classic' }, { title: 'what is kept where', align: 'left' }],
    bills.map((bill) => [bill.name, formatSignificant(bill.usdPerGbMonth), formatSignificant(bill.usdPerGbMonth / bills.find((b) => b.name === 'classic Kafka')!.usdPerGbMonth), bill.how]),
  );
}

await main();
