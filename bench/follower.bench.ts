/**
 * Replication through object storage, as a follower sees it (KIP-1176), on the memory store's
 * s3-express latency profile.
 *
 * 1. Live: a leader engine (WAL, DEFAULT_WAL_WRITER_CONFIG) and a follower engine (`follow`)
 *    linked with attachReplica, so the follower is hinted whenever a WAL object is durable. An
 *    open-loop producer offers 10 and 100 MB/s over PARTITIONS partitions, one ~16 KiB batch
 *    (15 x 1 KiB records) per produce call with acks 1, so acknowledgements never throttle it.
 *    Latency runs from the moment a produce call was DUE (not sent: a producer that falls
 *    behind shows as queueing) to the moment the follower makes its last offset visible to
 *    consumers (its high watermark passes it), timed event-driven by bench/lib/visibility.ts.
 *    Beside it: the follower's GETs per GB and the read bill at S3 Express prices.
 * 2. Catch-up: a leader writes CATCH_UP_BYTES of record batches as 4 MiB WAL objects into one
 *    s3-express store, with the store's latencies skipped while filling (bench/lib/
 *    skippable-clock.ts; one copy of the data in memory). Then, rounds alternating in rotated
 *    order: a fresh follower engine applies everything; a bare WalReader reads everything the
 *    same way without applying; raw whole-object GETs of every object at the follower's
 *    prefetch window (DEFAULT_FOLLOWER_CONFIG.prefetchObjectsMax) and at 1. MB/s are WAL-object
 *    bytes over wall time for every row, so follower/raw compares like with like. The follower's
 *    time runs from Engine.open to its last object applied (seen by a 1 ms poll of its stats).
 *    "I/O ceiling" is what the latency model alone allows with free CPU: the rows' in-flight
 *    objects, each its GETs one after another at the mean first-byte latency plus its bytes at
 *    one connection's bandwidth. A row far below its ceiling is bound by CPU, not by the store.
 *
 * GETs per GB count every GET the follower sent, 404 probes for objects not written yet included
 * (AWS bills those), per GB (2^30 B) of record bytes applied.
 *
 * Everything runs on one JS thread (leader, follower, producer, watcher): the follower's apply
 * competes with the leader for the same core, as it would not across machines.
 */
import { cpus, loadavg } from 'node:os';
import { Engine } from '../src/engine/index.ts';
import type { ProducerRecord } from '../src/format/index.ts';
import { DEFAULT_FOLLOWER_CONFIG } from '../src/partition/follower.ts';
import { LATENCY_PROFILES } from '../src/store/latency.ts';
import { MemoryStore } from '../src/store/memory.ts';
import { BYTES_PER_GB, S3_EXPRESS_ONE_ZONE_PRICES } from '../src/store/pricing.ts';
import type { StoreStats } from '../src/store/stats.ts';
import { systemClock } from '../src/util/clock.ts';
import { SeededRandom as StoreRandom } from '../src/util/random.ts';
import { DEFAULT_WAL_READER_CONFIG, type ObjectRead, WalReader } from '../src/wal/reader.ts';
import { DEFAULT_WAL_WRITER_CONFIG } from '../src/wal/writer.ts';
import { parseBenchArgs } from './lib/args.ts';
import { buildFullBatch } from './lib/batches.ts';
import { LatencyRecorder } from './lib/latency.ts';
import { LoopStallMeter } from './lib/loop-stall.ts';
import { SeededRandom } from './lib/random.ts';
import { SkippableClock } from './lib/skippable-clock.ts';
import { maxOf, median, minOf, pairedRatios } from './lib/stats.ts';
import { writeBenchResults } from './lib/results.ts';
import { logIndexesTerm, type RssTerm, walWriterTerm } from './lib/rss-bounds.ts';
import { OwnRssRun } from './lib/rss-report.ts';
import { printTargets } from './lib/targets.ts';
import type { FollowerResults } from './report/results.ts';
import { printTable } from './lib/table.ts';
import { makeTempDir, removeTempDir } from './lib/temp-dir.ts';
import { formatBytes, formatNumber, formatSignificant, KIB_BYTES, mbPerSecond, MIB_BYTES } from './lib/units.ts';
import { VisibilityWatcher } from './lib/visibility.ts';

const PROFILE = 's3-express' as const;
const TOPIC = 'bench';
const WRITER_ID = 'bench-leader';
const REPLICA_ID = 'bench-replica';
const PARTITIONS = 8;
/** kafka-producer-perf-test --record-size; a produce call carries one batch filled up to 16 KiB. */
const RECORD_VALUE_BYTES = KIB_BYTES;
const LIVE_RATES_MB_PER_SECOND = [10, 100] as const;
/** The producer wakes this often and sends every call due by then (Bun timers fire after >= ~1 ms). */
const TICK_MS = 1;
const LIVE_ROUNDS = 3;
const QUICK_LIVE_ROUNDS = 1;
const LIVE_WINDOW_MS = 3000;
const QUICK_LIVE_WINDOW_MS = 1000;
/** Sent, not measured: the writer, the follower's prefetch window and the JIT reach steady state. */
const LIVE_WARMUP_MS = 500;
/** The warm-up lasts until the follower knows every partition, but no longer than this. */
const WARMUP_MS_MAX = 10_000;
const QUICK_LIVE_WARMUP_MS = 250;
/** After the window, how long offsets may take to become visible before they count as lost. */
const DRAIN_TIMEOUT_MS = 3000;
/** A case whose achieved rate is below this fraction of its target is flagged. */
const ACHIEVED_FRACTION_MIN = 0.97;
/** Local logs: no fdatasync (the WAL is the durability), on leader and follower alike. */
const LOCAL_LOG = { flush: { kind: 'none' } } as const;
/** Catch-up data set: record batch bytes the leader produces before the follower starts. */
const CATCH_UP_BYTES = 1024 * MIB_BYTES;
const QUICK_CATCH_UP_BYTES = 128 * MIB_BYTES;
/** Large objects, as a leader under load or a tuned cost-first writer uploads them. */
const CATCH_UP_UPLOAD_BYTES = 4 * MIB_BYTES;
/** Long enough that objects close on size, not time. */
const CATCH_UP_UPLOAD_INTERVAL_MS = 1000;
const CATCH_UP_ROUNDS = 2;
const QUICK_CATCH_UP_ROUNDS = 2;
/** Produce calls in flight while filling (one per partition). */
const FILL_PRODUCERS = PARTITIONS;
const STORE_SEED = 1176;
const PERCENT_P999 = 99.9;

const USAGE = `
bun bench/follower.bench.ts [--quick]

Leader-append-to-follower-visible latency (p50/p99/p999) of a follower engine linked to a WAL
leader (attachReplica) on the memory store's ${PROFILE} profile, open-loop at ${LIVE_RATES_MB_PER_SECOND.join(' and ')} MB/s over
${PARTITIONS} partitions, with the follower's GETs per GB and $/GB read at S3 Express prices; then catch-up
MB/s of a fresh follower ${formatBytes(CATCH_UP_BYTES)} behind (4 MiB WAL objects) beside a bare WalReader and raw GET
throughput of the same store (${DEFAULT_FOLLOWER_CONFIG.prefetchObjectsMax} GETs in flight, and 1), alternating rounds.
~2 minutes (~3 on a busy 2-core machine).
  --quick   1 s windows, 1 live round, ${formatBytes(QUICK_CATCH_UP_BYTES)} and 2 catch-up rounds (a smoke run, ~30 s)
  --help    this text`;

interface Settings {
  readonly quick: boolean;
  readonly liveRounds: number;
  readonly windowMs: number;
  readonly warmupMs: number;
  readonly catchUpBytes: number;
  readonly catchUpRounds: number;
}

// ---------------------------------------------------------------------------------------------
// Shared helpers

function produceRecords(recordCount: number): ProducerRecord[] {
  const random = new SeededRandom(0xfe77);
  return Array.from({ length: recordCount }, () => ({ value: random.fill(new Uint8Array(RECORD_VALUE_BYTES)) }));
}

/** What a store served between two snapshots: GETs (404s among them) and bytes sent back. */
function statsDelta(after: StoreStats, before: StoreStats): { gets: number; notFound: number; bytesOut: number } {
  return {
    gets: after.requests.get - before.requests.get,
    notFound: (after.errors.NotFound ?? 0) - (before.errors.NotFound ?? 0),
    bytesOut: after.bytesOut - before.bytesOut,
  };
}

interface ReadBill {
  readonly getsPerGb: number;
  readonly getUsdPerGb: number;
  readonly retrievalUsdPerGb: number;
  readonly totalUsdPerGb: number;
}

/** The follower's read bill per GB (2^30 B) of record bytes applied: GET requests plus retrieval. */
function readBill(gets: number, bytesRead: number, bytesApplied: number): ReadBill {
  const appliedGb = bytesApplied / BYTES_PER_GB;
  const getsPerGb = gets / appliedGb;
  const getUsdPerGb = (getsPerGb * S3_EXPRESS_ONE_ZONE_PRICES.getClassUsdPer1000) / 1000;
  const retrievalUsdPerGb = ((bytesRead / BYTES_PER_GB) * S3_EXPRESS_ONE_ZONE_PRICES.retrievalUsdPerGb) / appliedGb;
  return { getsPerGb, getUsdPerGb, retrievalUsdPerGb, totalUsdPerGb: getUsdPerGb + retrievalUsdPerGb };
}

function usd(value: number): string {
  return `$${value.toPrecision(2)}`;
}

/** User + system CPU time of this process over wall time, in percent (GC threads included). */
function cpuMeter(): () => number {
  const cpu = process.cpuUsage();
  const startMs = performance.now();
  return () => {
    const used = process.cpuUsage(cpu);
    return ((used.user + used.system) / 1000 / (performance.now() - startMs)) * 100;
  };
}

async function until(condition: () => boolean, what: string, timeoutMs: number, tickMs = 1): Promise<void> {
  const deadlineMs = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadlineMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(tickMs);
  }
}

function range(values: readonly number[], digits = 1): string {
  return values.length < 2 ? '-' : `${formatNumber(minOf(values), digits)}-${formatNumber(maxOf(values), digits)}`;
}

function ratioRange(values: readonly number[]): string {
  return values.length < 2 ? '-' : `${formatSignificant(minOf(values))}-${formatSignificant(maxOf(values))}`;
}

// ---------------------------------------------------------------------------------------------
// 1. Live: leader append to follower visible

interface LiveRound {
  readonly windowMs: number;
  readonly dueCalls: number;
  readonly sentBytes: number;
  /** Produce calls acknowledged (acks 1: in the leader's local log) inside the window. */
  readonly ackedBytes: number;
  readonly appliedBytes: number;
  readonly objectsDurable: number;
  readonly objectsApplied: number;
  readonly gets: number;
  readonly notFound: number;
  readonly bytesRead: number;
  readonly followerPolls: number;
  readonly invisible: number;
  readonly wakeUps: number;
  readonly cpuPercent: number;
  readonly latency: LatencyRecorder;
}

interface LiveCase {
  readonly rateMbPerSecond: number;
  readonly rounds: LiveRound[];
  /** Every round's samples together: the percentiles printed. */
  readonly latency: LatencyRecorder;
  /** How late each call was sent after it was due (the producer's own lag). */
  readonly sendLag: LatencyRecorder;
  /** How late the producer's 1 ms timer fired: the event loop busy (or the CPU taken by others). */
  readonly loopStall: LatencyRecorder;
}

async function liveRound(rateMbPerSecond: number, round: number, settings: Settings, records: ProducerRecord[], batchBytes: number, into: LiveCase): Promise<void> {
  const leaderDirectory = makeTempDir('follower-leader');
  const followerDirectory = makeTempDir('follower-replica');
  const store = new MemoryStore({ latency: PROFILE, seed: STORE_SEED + round });
  const leader = await Engine.open({ directory: leaderDirectory, log: LOCAL_LOG, wal: { store, writerId: WRITER_ID } });
  const replica = await Engine.open({ directory: followerDirectory, log: LOCAL_LOG, follow: { store, writerId: WRITER_ID } });
  let watcher: VisibilityWatcher | null = null;
  try {
    leader.createTopic(TOPIC, { partitions: PARTITIONS });
    leader.attachReplica(replica, REPLICA_ID);
    const follower = replica.follower!;
    const intervalMs = (batchBytes / (rateMbPerSecond * 1_000_000)) * 1000;
    const startMs = performance.now();
    let windowStartMs = startMs + settings.warmupMs;
    let windowEndMs = windowStartMs + settings.windowMs;
    let failure: unknown = null;
    let windowSnapshot: { store: StoreStats; applied: number; objectsApplied: number; objectsDurable: number; polls: number } | null = null;
    let meter: (() => number) | null = null;
    let sentBytes = 0;
    let ackedBytes = 0;
    let dueCalls = 0;
    let outstanding = 0;
    for (let call = 0; ; ) {
      const nowMs = performance.now();
      if (nowMs >= windowEndMs || failure !== null) break;
      if (windowSnapshot === null && nowMs >= windowStartMs) {
        // The follower must know every partition before consumers can wait on them: until it
        // does (a cold JIT on a loaded machine), the warm-up goes on and the window moves later.
        if (replica.topics().find((topic) => topic.name === TOPIC)?.partitions !== PARTITIONS) {
          if (nowMs - startMs > WARMUP_MS_MAX)
            throw new Error(`the follower has not learnt all ${PARTITIONS} partitions after ${WARMUP_MS_MAX} ms: ${JSON.stringify(follower.stats())}, leader ${JSON.stringify(leader.wal!.stats())}`);
          windowStartMs = nowMs + TICK_MS;
          windowEndMs = windowStartMs + settings.windowMs;
        } else {
          watcher = new VisibilityWatcher(replica, TOPIC, PARTITIONS, [into.latency]);
          const fs = follower.stats();
          windowSnapshot = { store: store.stats(), applied: fs.bytesApplied, objectsApplied: fs.objectsApplied, objectsDurable: leader.wal!.stats().objectsDurable, polls: fs.polls };
          meter = cpuMeter();
        }
      }
      for (let dueMs = startMs + call * intervalMs; dueMs <= nowMs && dueMs < windowEndMs; dueMs = startMs + ++call * intervalMs) {
        const partition = call % PARTITIONS;
        const target = watcher;
        const measured = dueMs >= windowStartMs && target !== null;
        if (target !== null) sentBytes += batchBytes; // sent inside the window, whenever due
        if (measured) {
          into.sendLag.recordMs(nowMs - dueMs);
          dueCalls++;
        }
        outstanding++;
        leader.produce(TOPIC, records, { partition, acks: 1 }).then(
          (produced) => {
            outstanding--;
            if (target !== null && performance.now() < windowEndMs) ackedBytes += batchBytes;
            if (measured) target.expect(partition, produced.at(-1)!.offset, dueMs);
          },
          (error: unknown) => {
            outstanding--;
            failure ??= error;
          },
        );
      }
      const sleptFromMs = performance.now();
      await Bun.sleep(TICK_MS);
      if (watcher !== null) into.loopStall.recordMs(Math.max(0, performance.now() - sleptFromMs - TICK_MS));
    }
    if (failure !== null) throw failure;
    if (watcher === null || windowSnapshot === null || meter === null) {
      // The producer loop never got a turn inside the window: this machine cannot drive the rate.
      console.log(`  ${rateMbPerSecond} MB/s round ${round + 1}: not measured (the producer loop was starved of CPU before the window opened)`);
      return;
    }
    const windowMs = performance.now() - windowStartMs;
    const cpuPercent = meter();
    const fs = follower.stats();
    const delta = statsDelta(store.stats(), windowSnapshot.store);
    const objectsDurable = leader.wal!.stats().objectsDurable - windowSnapshot.objectsDurable;
    const activeWatcher: VisibilityWatcher = watcher;
    // Drain: every measured call acknowledged by the leader, then visible on the follower, within
    // the timeout; whatever is not by then counts as not visible (an overloaded case).
    const drainDeadlineMs = performance.now() + DRAIN_TIMEOUT_MS;
    while (outstanding > 0 && failure === null && performance.now() < drainDeadlineMs) await Bun.sleep(TICK_MS);
    if (failure !== null) throw failure;
    await activeWatcher.drained(Math.max(0, drainDeadlineMs - performance.now()));
    if (activeWatcher.failure !== null) throw activeWatcher.failure;
    if (follower.failure !== null) throw follower.failure;
    const invisible = dueCalls - activeWatcher.latency.count;
    into.rounds.push({
      windowMs,
      dueCalls,
      sentBytes,
      ackedBytes,
      appliedBytes: fs.bytesApplied - windowSnapshot.applied,
      objectsDurable,
      objectsApplied: fs.objectsApplied - windowSnapshot.objectsApplied,
      gets: delta.gets,
      notFound: delta.notFound,
      bytesRead: delta.bytesOut,
      followerPolls: fs.polls - windowSnapshot.polls,
      invisible,
      wakeUps: activeWatcher.wakeUps,
      cpuPercent,
      latency: activeWatcher.latency,
    });
  } finally {
    await watcher?.stop();
    await replica.close();
    await leader.close();
    await store.close();
    removeTempDir(followerDirectory);
    removeTempDir(leaderDirectory);
  }
}

async function runLive(settings: Settings, records: ProducerRecord[], batchBytes: number): Promise<LiveCase[]> {
  const cases: LiveCase[] = LIVE_RATES_MB_PER_SECOND.map((rateMbPerSecond) => ({
    rateMbPerSecond,
    rounds: [],
    latency: new LatencyRecorder(),
    sendLag: new LatencyRecorder(),
    loopStall: new LatencyRecorder(),
  }));
  for (let round = 0; round < settings.liveRounds; round++) {
    // Rates alternate within a round, in rotated order, so drift in the machine favours none.
    for (let index = 0; index < cases.length; index++) {
      const liveCase = cases[(round + index) % cases.length]!;
      Bun.gc(true);
      const startMs = performance.now();
      await liveRound(liveCase.rateMbPerSecond, round, settings, records, batchBytes, liveCase);
      console.error(`  live round ${round + 1}/${settings.liveRounds}: ${liveCase.rateMbPerSecond} MB/s done (${formatNumber((performance.now() - startMs) / 1000, 1)} s)`);
    }
  }
  return cases;
}

function liveRows(cases: readonly LiveCase[]): { latency: string[][]; reads: string[][] } {
  const latency: string[][] = [];
  const reads: string[][] = [];
  for (const liveCase of cases) {
    const rounds = liveCase.rounds;
    const sum = (pick: (round: LiveRound) => number): number => rounds.reduce((total, round) => total + pick(round), 0);
    const windowMs = sum((r) => r.windowMs);
    const achieved = mbPerSecond(
      sum((r) => r.sentBytes),
      windowMs,
    );
    const acked = mbPerSecond(
      sum((r) => r.ackedBytes),
      windowMs,
    );
    const applied = mbPerSecond(
      sum((r) => r.appliedBytes),
      windowMs,
    );
    const percentile = (p: number): number => liveCase.latency.percentileMs(p);
    const samples = sum((r) => r.latency.count);
    const flag = Math.min(achieved, acked, applied) < liveCase.rateMbPerSecond * ACHIEVED_FRACTION_MIN ? ' (!)' : '';
    const samplesOr = (text: string): string => (samples === 0 ? '-' : text);
    latency.push([
      `${liveCase.rateMbPerSecond}${flag}`,
      formatNumber(achieved, 1),
      formatNumber(acked, 1),
      formatNumber(applied, 1),
      formatNumber(samples),
      samplesOr(formatSignificant(percentile(50))),
      samplesOr(formatSignificant(percentile(99))),
      samplesOr(formatSignificant(percentile(PERCENT_P999))),
      samplesOr(formatSignificant(percentile(100))),
      range(rounds.filter((r) => r.latency.count > 0).map((r) => r.latency.percentileMs(99))),
      formatSignificant(liveCase.sendLag.percentileMs(99)),
      formatSignificant(liveCase.loopStall.percentileMs(99)),
      formatNumber(sum((r) => r.invisible)),
      formatNumber(median(rounds.map((r) => r.cpuPercent))),
      formatNumber(sum((r) => r.wakeUps) / (windowMs / 1000)),
    ]);
    const gets = sum((r) => r.gets);
    const objects = sum((r) => r.objectsApplied);
    const bill = readBill(
      gets,
      sum((r) => r.bytesRead),
      sum((r) => r.appliedBytes),
    );
    const appliedOr = (text: string): string => (objects === 0 ? '-' : text);
    reads.push([
      `${liveCase.rateMbPerSecond}`,
      formatNumber(sum((r) => r.objectsDurable) / (windowMs / 1000)),
      formatNumber(objects / (windowMs / 1000)),
      formatNumber(gets / (windowMs / 1000)),
      appliedOr(formatSignificant(gets / objects)),
      gets === 0 ? '-' : `${formatNumber((sum((r) => r.notFound) / gets) * 100, 1)}%`,
      formatNumber(sum((r) => r.followerPolls) / (windowMs / 1000)),
      appliedOr(formatNumber(bill.getsPerGb)),
      appliedOr(formatSignificant(sum((r) => r.bytesRead) / sum((r) => r.appliedBytes))),
      appliedOr(usd(bill.getUsdPerGb)),
      appliedOr(usd(bill.retrievalUsdPerGb)),
      appliedOr(usd(bill.totalUsdPerGb)),
    ]);
  }
  return { latency, reads };
}

// ---------------------------------------------------------------------------------------------
// 2. Catch-up from far behind

interface Filled {
  readonly store: MemoryStore;
  readonly clock: SkippableClock;
  readonly keys: string[];
  readonly objectBytes: number;
  readonly recordBytes: number;
  readonly fillMs: number;
}

/** A leader produces `bytes` of batches as 4 MiB WAL objects; the store's latencies are skipped meanwhile. */
async function fill(bytes: number, records: ProducerRecord[], batchBytes: number): Promise<Filled> {
  const clock = new SkippableClock();
  clock.skipping = true;
  const store = new MemoryStore({ latency: PROFILE, seed: STORE_SEED, clock });
  const directory = makeTempDir('follower-fill');
  const startMs = performance.now();
  const calls = Math.ceil(bytes / batchBytes);
  try {
    const leader = await Engine.open({
      directory,
      log: LOCAL_LOG,
      wal: { store, writerId: WRITER_ID, config: { uploadBytes: CATCH_UP_UPLOAD_BYTES, uploadIntervalMs: CATCH_UP_UPLOAD_INTERVAL_MS } },
    });
    try {
      leader.createTopic(TOPIC, { partitions: PARTITIONS });
      let next = 0;
      await Promise.all(
        Array.from({ length: FILL_PRODUCERS }, async () => {
          while (next < calls) {
            const call = next++;
            await leader.produce(TOPIC, records, { partition: call % PARTITIONS, acks: 1 });
          }
        }),
      );
      await leader.wal!.flush();
    } finally {
      await leader.close();
    }
  } finally {
    removeTempDir(directory);
  }
  const fillMs = performance.now() - startMs;
  const keys: string[] = [];
  let objectBytes = 0;
  for (let token: string | undefined; ; ) {
    const page = await store.list('wal/', token === undefined ? {} : { token });
    for (const object of page.objects) {
      keys.push(object.key);
      objectBytes += object.size;
    }
    token = page.nextToken;
    if (token === undefined) break;
  }
  keys.sort();
  clock.skipping = false;
  return { store, clock, keys, objectBytes, recordBytes: calls * batchBytes, fillMs };
}

interface CatchUpRound {
  readonly elapsedMs: number;
  readonly loopStall: LatencyRecorder;
  readonly cpuPercent: number;
  readonly gets: number;
  /** GETs answered NotFound: probes past the stream's end. */
  readonly notFound: number;
  readonly bytesRead: number;
  readonly bytesApplied: number;
}

type CatchUpSide = 'follower' | 'reader' | 'raw-window' | 'raw-1';

/** A fresh follower engine, from nothing to every object applied. */
async function followerCatchUp(filled: Filled): Promise<CatchUpRound> {
  const directory = makeTempDir('follower-catchup');
  const before = filled.store.stats();
  let replica: Engine | null = null;
  try {
    const meter = cpuMeter();
    const stall = new LoopStallMeter();
    const startMs = performance.now();
    replica = await Engine.open({ directory, log: LOCAL_LOG, follow: { store: filled.store, writerId: WRITER_ID } });
    const follower = replica.follower!;
    await until(() => follower.stats().objectsApplied >= filled.keys.length || follower.failure !== null, 'the follower to catch up', 600_000);
    const elapsedMs = performance.now() - startMs;
    const cpuPercent = meter();
    const loopStall = await stall.stop();
    if (follower.failure !== null) throw follower.failure;
    const delta = statsDelta(filled.store.stats(), before);
    return { elapsedMs, loopStall, cpuPercent, gets: delta.gets, notFound: delta.notFound, bytesRead: delta.bytesOut, bytesApplied: follower.stats().bytesApplied };
  } finally {
    await replica?.close(); // untimed: under flush 'none' it syncs the whole log once
    removeTempDir(directory);
  }
}

/** The follower's read path alone: WalReader.read of every object, in order, the same window ahead, nothing applied. */
async function readerCatchUp(filled: Filled, stream: { writerId: string; epoch: number }): Promise<CatchUpRound> {
  const reader = new WalReader(filled.store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants: () => true }, { clock: systemClock, random: new StoreRandom(1) });
  const window = DEFAULT_FOLLOWER_CONFIG.prefetchObjectsMax;
  const before = filled.store.stats();
  const meter = cpuMeter();
  const stall = new LoopStallMeter();
  const startMs = performance.now();
  const inFlight = new Map<number, Promise<ObjectRead>>();
  let bytesApplied = 0;
  for (let sequence = 0; sequence < filled.keys.length; sequence++) {
    for (let ahead = sequence; ahead < Math.min(filled.keys.length, sequence + window); ahead++) {
      if (!inFlight.has(ahead)) inFlight.set(ahead, reader.read(stream, ahead));
    }
    const read = await inFlight.get(sequence)!;
    inFlight.delete(sequence);
    if (read.kind !== 'data') throw new Error(`WAL object ${sequence} read as ${read.kind}`);
    for (const frame of read.frames) bytesApplied += frame.data.length;
  }
  const elapsedMs = performance.now() - startMs;
  const cpuPercent = meter();
  const loopStall = await stall.stop();
  const delta = statsDelta(filled.store.stats(), before);
  return { elapsedMs, loopStall, cpuPercent, gets: delta.gets, notFound: delta.notFound, bytesRead: delta.bytesOut, bytesApplied };
}

/** Whole-object GETs of every object, `concurrency` at a time. */
async function rawCatchUp(filled: Filled, concurrency: number): Promise<CatchUpRound> {
  const before = filled.store.stats();
  const meter = cpuMeter();
  const stall = new LoopStallMeter();
  const startMs = performance.now();
  let next = 0;
  let bytes = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < filled.keys.length) {
        const { body } = await filled.store.get(filled.keys[next++]!);
        bytes += body.length;
      }
    }),
  );
  const elapsedMs = performance.now() - startMs;
  const cpuPercent = meter();
  const loopStall = await stall.stop();
  const delta = statsDelta(filled.store.stats(), before);
  return { elapsedMs, loopStall, cpuPercent, gets: delta.gets, notFound: delta.notFound, bytesRead: delta.bytesOut, bytesApplied: bytes };
}

async function runCatchUp(settings: Settings, filled: Filled): Promise<Map<CatchUpSide, CatchUpRound[]>> {
  const epoch = Number(filled.keys[0]!.split('/')[2]);
  const stream = { writerId: WRITER_ID, epoch };
  const window = DEFAULT_FOLLOWER_CONFIG.prefetchObjectsMax;
  const results = new Map<CatchUpSide, CatchUpRound[]>([
    ['follower', []],
    ['reader', []],
    ['raw-window', []],
    ['raw-1', []],
  ]);
  const sides: [CatchUpSide, () => Promise<CatchUpRound>][] = [
    ['follower', () => followerCatchUp(filled)],
    ['reader', () => readerCatchUp(filled, stream)],
    ['raw-window', () => rawCatchUp(filled, window)],
    ['raw-1', () => rawCatchUp(filled, 1)],
  ];
  for (let round = 0; round < settings.catchUpRounds; round++) {
    for (let index = 0; index < sides.length; index++) {
      const [side, run] = sides[(round + index) % sides.length]!;
      Bun.gc(true);
      const startMs = performance.now();
      results.get(side)!.push(await run());
      console.error(`  catch-up round ${round + 1}/${settings.catchUpRounds}: ${side} done (${formatNumber((performance.now() - startMs) / 1000, 1)} s)`);
    }
  }
  return results;
}

/** The standard normal quantile of 0.99, as the memory store's lognormal latency model uses it. */
const Z_99 = 2.3263478740408408;

/**
 * MB/s the latency model alone allows, with no CPU cost at all: \`inFlight\` objects at a time,
 * each taking \`getsPerObject\` GETs one after another (their mean first-byte latency each) plus
 * its bytes at one connection's bandwidth. What the store could give if copying were free.
 */
function ioCeilingMbPerSecond(inFlight: number, objectBytes: number, getsPerObject: number, bytesPerObject: number): number {
  const profile = LATENCY_PROFILES[PROFILE];
  const sigma = Math.log(profile.read.p99Ms / profile.read.p50Ms) / Z_99;
  const meanFirstByteMs = profile.read.p50Ms * Math.exp((sigma * sigma) / 2);
  const objectMs = getsPerObject * meanFirstByteMs + bytesPerObject / profile.bytesPerMs;
  return mbPerSecond(inFlight * objectBytes, objectMs);
}

const CATCH_UP_WINDOW = DEFAULT_FOLLOWER_CONFIG.prefetchObjectsMax;
const CATCH_UP_LABELS: Record<CatchUpSide, string> = {
  follower: `follower engine (prefetch ${CATCH_UP_WINDOW})`,
  reader: `WalReader only, ${CATCH_UP_WINDOW} ahead, no apply`,
  'raw-window': `raw GET, ${CATCH_UP_WINDOW} in flight`,
  'raw-1': 'raw GET, 1 in flight',
};

/** The I/O ceiling of one side's rounds: its GETs per object one after another, its objects in flight. */
function catchUpCeiling(filled: Filled, side: CatchUpSide, rounds: readonly CatchUpRound[]): number {
  const objectCount = filled.keys.length;
  const gets = median(rounds.map((r) => r.gets));
  const bytesRead = median(rounds.map((r) => r.bytesRead));
  // GETs one after another per object: the probes past the stream's end (404s) run beside them.
  const getsPerObject = (gets - median(rounds.map((r) => r.notFound))) / objectCount;
  return ioCeilingMbPerSecond(side === 'raw-1' ? 1 : CATCH_UP_WINDOW, filled.objectBytes / objectCount, getsPerObject, bytesRead / objectCount);
}

/** The report's view of the catch-up table (bench/report/results.ts). */
function followerResults(filled: Filled, results: Map<CatchUpSide, CatchUpRound[]>): FollowerResults {
  const catchUp = [...results].map(([side, rounds]) => {
    const mbs = rounds.map((r) => mbPerSecond(filled.objectBytes, r.elapsedMs));
    return {
      reader: CATCH_UP_LABELS[side],
      isRawGet: side.startsWith('raw'),
      mbPerSecond: median(mbs),
      minMbPerSecond: minOf(mbs),
      maxMbPerSecond: maxOf(mbs),
      ioCeilingMbPerSecond: catchUpCeiling(filled, side, rounds),
    };
  });
  return { catchUpBytes: filled.recordBytes, catchUp };
}

function catchUpRows(filled: Filled, results: Map<CatchUpSide, CatchUpRound[]>): string[][] {
  const labels = CATCH_UP_LABELS;
  const rows: string[][] = [];
  for (const [side, rounds] of results) {
    const mbs = rounds.map((r) => mbPerSecond(filled.objectBytes, r.elapsedMs));
    const gets = median(rounds.map((r) => r.gets));
    const bytesRead = median(rounds.map((r) => r.bytesRead));
    const bytesApplied = side.startsWith('raw') ? filled.recordBytes : median(rounds.map((r) => r.bytesApplied));
    const bill = readBill(gets, bytesRead, bytesApplied);
    const ceiling = catchUpCeiling(filled, side, rounds);
    rows.push([
      labels[side],
      formatNumber(median(mbs), 1),
      range(mbs),
      formatNumber(ceiling),
      formatNumber(median(rounds.map((r) => r.elapsedMs)) / 1000, 2),
      formatNumber(median(rounds.map((r) => r.cpuPercent))),
      formatSignificant(median(rounds.map((r) => r.loopStall.percentileMs(99)))),
      formatSignificant(maxOf(rounds.map((r) => r.loopStall.percentileMs(100)))),
      formatNumber(gets),
      formatSignificant(gets / filled.keys.length),
      formatNumber(bill.getsPerGb),
      side.startsWith('raw') ? '-' : formatSignificant(bytesRead / bytesApplied),
      usd(bill.totalUsdPerGb),
    ]);
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------

function describeRun(settings: Settings, batchBytes: number, recordCount: number): void {
  const writer = DEFAULT_WAL_WRITER_CONFIG;
  console.log(
    `follower bench: Bun ${Bun.version}, ${cpus().length} cpus (load average ${loadavg()
      .map((load) => load.toFixed(1))
      .join(' ')}), store: MemoryStore '${PROFILE}'${settings.quick ? ' (--quick)' : ''}`,
  );
  console.log(`  produce call: ${recordCount} x ${formatBytes(RECORD_VALUE_BYTES)} records, one ${formatNumber(batchBytes)} B batch, acks 1, partitions round-robin over ${PARTITIONS}`);
  console.log(
    `  live: ${settings.liveRounds} round(s) per rate, ${settings.warmupMs} ms warm-up + ${settings.windowMs} ms measured; leader WAL writer defaults (uploadBytes ${formatBytes(writer.uploadBytes)}, ${writer.uploadIntervalMs} ms, ${writer.maxInFlight} in flight); follower defaults (poll ${DEFAULT_FOLLOWER_CONFIG.pollIntervalMs} ms, prefetch <= ${DEFAULT_FOLLOWER_CONFIG.prefetchObjectsMax}), hinted by attachReplica`,
  );
  console.log(`  catch-up: ${formatBytes(settings.catchUpBytes)} of batches in ${formatBytes(CATCH_UP_UPLOAD_BYTES)} WAL objects; ${settings.catchUpRounds} rounds per side, sides in rotated order`);
  console.log('  local logs: flush none (leader and follower); MB = 10^6 B; GB in $/GB = 2^30 B of record bytes applied');
}

/**
 * What the run may hold live at once, by its own sizes and the engine's limits: the larger
 * memory store (a live round's objects, or the catch-up's), the larger leader writer (the live
 * one's default knobs or the fill's 4 MiB objects), the GETs a reader has in flight (the
 * follower's prefetch window, or as many raw GETs), and the indexes of a leader's and a
 * follower's logs. A live round's store takes what the top rate offers in its warm-up, window
 * and drain (a warm-up stretched by a slow follower adds to it).
 */
function liveTerms(settings: Settings, filled: Filled, batchBytes: number): RssTerm[] {
  const liveRoundBytes = Math.max(...LIVE_RATES_MB_PER_SECOND) * 1_000_000 * ((settings.warmupMs + settings.windowMs + DRAIN_TIMEOUT_MS) / 1000);
  const fillWriter = walWriterTerm(batchBytes, { ...DEFAULT_WAL_WRITER_CONFIG, uploadBytes: CATCH_UP_UPLOAD_BYTES, uploadIntervalMs: CATCH_UP_UPLOAD_INTERVAL_MS });
  const liveWriter = walWriterTerm(batchBytes);
  return [
    { name: 'memory store', bytes: Math.max(filled.objectBytes, liveRoundBytes) },
    fillWriter.bytes > liveWriter.bytes ? fillWriter : liveWriter,
    // A WAL object grows past uploadBytes only while upload slots are busy, and to multipartPartBytes at most.
    { name: 'GETs in flight', bytes: DEFAULT_FOLLOWER_CONFIG.prefetchObjectsMax * DEFAULT_WAL_WRITER_CONFIG.multipartPartBytes },
    logIndexesTerm(2 * Math.max(filled.recordBytes, liveRoundBytes)),
  ];
}

async function main(): Promise<void> {
  const { quick } = parseBenchArgs(process.argv.slice(2), USAGE);
  const settings: Settings = {
    quick,
    liveRounds: quick ? QUICK_LIVE_ROUNDS : LIVE_ROUNDS,
    windowMs: quick ? QUICK_LIVE_WINDOW_MS : LIVE_WINDOW_MS,
    warmupMs: quick ? QUICK_LIVE_WARMUP_MS : LIVE_WARMUP_MS,
    catchUpBytes: quick ? QUICK_CATCH_UP_BYTES : CATCH_UP_BYTES,
    catchUpRounds: quick ? QUICK_CATCH_UP_ROUNDS : CATCH_UP_ROUNDS,
  };
  const shape = buildFullBatch(RECORD_VALUE_BYTES);
  const records = produceRecords(shape.recordCount);
  const batchBytes = shape.bytes.length;
  describeRun(settings, batchBytes, shape.recordCount);
  const rss = new OwnRssRun('follower');
  const startMs = performance.now();

  const live = await runLive(settings, records, batchBytes);
  console.error(`  live done (${formatNumber((performance.now() - startMs) / 1000, 1)} s)`);
  const { latency, reads } = liveRows(live.filter((liveCase) => liveCase.rounds.length > 0));
  printTable(
    `Leader append -> follower visible, ${PROFILE}, open loop, ${PARTITIONS} partitions; latency from the produce call's due time, all rounds (ms)`,
    [
      { title: 'target MB/s' },
      { title: 'sent MB/s' },
      { title: 'acked MB/s' },
      { title: 'applied MB/s' },
      { title: 'samples' },
      { title: 'p50' },
      { title: 'p99' },
      { title: 'p999' },
      { title: 'max' },
      { title: 'p99 range' },
      { title: 'send lag p99' },
      { title: 'loop stall p99' },
      { title: 'not visible' },
      { title: 'CPU %' },
      { title: 'wake-ups/s' },
    ],
    latency,
  );
  console.log('  sent: offered inside the window; acked: produce calls the leader took (acks 1) in it; applied: by the follower in it.');
  console.log('  send lag: how late the producer sent calls after they were due; loop stall: how late its 1 ms timer fired (busy thread).');
  console.log('  not visible: measured calls still invisible on the follower 3 s after the window; (!) marks a rate not reached.');
  printTable(
    `Follower reads at the tail (same windows); $ per GB of records applied at S3 Express prices (GET $${S3_EXPRESS_ONE_ZONE_PRICES.getClassUsdPer1000}/1k, retrieval $${S3_EXPRESS_ONE_ZONE_PRICES.retrievalUsdPerGb}/GB)`,
    [
      { title: 'target MB/s' },
      { title: 'objects/s' },
      { title: 'applied/s' },
      { title: 'GETs/s' },
      { title: 'GETs/object' },
      { title: '404s' },
      { title: 'idle polls/s' },
      { title: 'GETs/GB' },
      { title: 'read/applied' },
      { title: '$/GB GET' },
      { title: '$/GB retrieval' },
      { title: '$/GB read' },
    ],
    reads,
  );
  console.log('  404s: share of GETs for objects not written yet (prefetch past the tail); idle polls: reads that found nothing.');

  const filled = await fill(settings.catchUpBytes, records, batchBytes);
  console.error(`  filled: ${filled.keys.length} objects, ${formatBytes(filled.objectBytes)} in ${formatNumber(filled.fillMs / 1000, 1)} s`);
  try {
    const results = await runCatchUp(settings, filled);
    printTable(
      `Catch-up from ${formatBytes(filled.recordBytes)} behind: ${filled.keys.length} WAL objects, ${formatBytes(filled.objectBytes)}, ${PROFILE}; MB/s = object bytes / wall time, medians over rounds`,
      [
        { title: 'reader', align: 'left' },
        { title: 'MB/s' },
        { title: '(range)' },
        { title: 'I/O ceiling' },
        { title: 's' },
        { title: 'CPU %' },
        { title: 'stall p99 ms' },
        { title: 'stall max' },
        { title: 'GETs' },
        { title: 'GETs/object' },
        { title: 'GETs/GB' },
        { title: 'read/applied' },
        { title: '$/GB read' },
      ],
      catchUpRows(filled, results),
    );
    const mbs = (side: CatchUpSide): number[] => results.get(side)!.map((r) => mbPerSecond(filled.objectBytes, r.elapsedMs));
    const ratioLine = (name: string, over: CatchUpSide, under: CatchUpSide): string => {
      const ratios = pairedRatios(mbs(over), mbs(under));
      return `  ${name}: ${formatSignificant(median(ratios))} (rounds ${ratioRange(ratios)})`;
    };
    console.log(ratioLine(`follower / raw GET ${DEFAULT_FOLLOWER_CONFIG.prefetchObjectsMax} in flight`, 'follower', 'raw-window'));
    console.log(ratioLine('follower / raw GET 1 in flight', 'follower', 'raw-1'));
    console.log(ratioLine('follower / WalReader only', 'follower', 'reader'));
    console.log('  stall: how late a 1 ms timer fired during the row (work that did not yield to the event loop).');
    const { target: rssTarget } = rss.finish(liveTerms(settings, filled, batchBytes));
    printTargets('Target: this process stays within the RSS bound (bench/lib/rss-bounds.ts)', [rssTarget]);
    writeBenchResults('follower', { ...followerResults(filled, results), targets: [rssTarget] });
  } finally {
    await filled.store.close();
  }
  console.error(`  total ${formatNumber((performance.now() - startMs) / 1000, 1)} s`);
}

await main();
