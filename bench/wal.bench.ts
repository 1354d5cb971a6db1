/**
 * Produce-to-durable latency of the WAL writer on the memory store's `s3-express` profile, and
 * what it costs in S3 Express requests, beside the floor measured in the same run.
 *
 * An open-loop producer offers a fixed rate (MB/s) over N partitions: every TICK_MS it sends the
 * batches due by then (16 KiB batches of 1 KiB records), each through the engine's path
 * (src/partition/partition.ts): `reserve` (backpressure), `PartitionLog.append` (offsets assigned,
 * flush policy none), `WalWriter.append` of the same bytes and its durability promise. Latency runs from
 * the moment a batch was DUE, not when it was sent, so a producer that falls behind (CPU,
 * backpressure) shows as queueing instead of silently lowering the rate.
 *
 * The floor (bench/lib/wal-model.ts): per batch, its ideal batching wait on the same schedule
 * (its object closes at `uploadBytes` or `uploadIntervalMs` after its first frame) plus one PUT
 * of the mean object size timed directly on a fresh store with the same profile and seed. The
 * in-order model adds the protocol's own costs (maxInFlight slots, durability in sequence
 * order) with no CPU cost, so engine/model is what the implementation adds.
 *
 * Then a sweep of uploadBytes x uploadIntervalMs at 10 and 100 MB/s over 64 partitions: the
 * latency/cost curve the defaults are chosen from, by the rule printed with the choice (see
 * `choose`). Beside it, the CPU each stage of the path costs alone, to tell a saturated thread
 * from a slow writer.
 *
 * Reading it: a row marked `!` was CPU-bound (the producer could not send on schedule): its
 * latency is queueing on this machine, and the in-order model is the better guide to the knob.
 * What one full run on the shared 2-core VM showed (Bun 1.4.5): at 1 and 10 MB/s the engine sits
 * at 1.1-1.3x the floor at p50 (about +1 ms) and 1.1-1.8x at p99; 100 MB/s is beyond one JS
 * thread here (the stages alone cost ~1.3 core-seconds per second at that rate, half of it fresh
 * memory copies: the producer's, the writer's object body, the memory store's), so its rows are
 * queueing and vary from run to run. The rule chose 1 MiB / 5 ms: at 10 MB/s and below the
 * interval closes objects and it is the 256 KiB default exactly; at 100 MB/s it halves request
 * fees (~2,100 instead of ~4,060 PUTs/GB: $0.0024 instead of $0.0046 per GB, under the $0.0032
 * upload fee) for ~3 ms more p50 in the model (a ~500 KB object's transfer).
 */
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { PartitionLog } from '../src/log/partition-log.ts';
import { LATENCY_PROFILES } from '../src/store/latency.ts';
import { MemoryStore } from '../src/store/memory.ts';
import { systemClock } from '../src/util/clock.ts';
import { SeededRandom } from '../src/util/random.ts';
import { randomUuid } from '../src/util/uuid.ts';
import { WalObjectBuilder } from '../src/wal/format.ts';
import { DEFAULT_WAL_WRITER_CONFIG, WalWriter, type WalWriterConfig } from '../src/wal/writer.ts';
import { parseBenchArgs } from './lib/args.ts';
import { type BenchBatch, buildFullBatch } from './lib/batches.ts';
import { LatencyRecorder } from './lib/latency.ts';
import { NullStore } from './lib/null-store.ts';
import { maxOf, median, minOf } from './lib/stats.ts';
import { printTable } from './lib/table.ts';
import { makeTempDir, removeTempDir } from './lib/temp-dir.ts';
import { formatBytes, formatNumber, formatSignificant, KIB_BYTES, MIB_BYTES } from './lib/units.ts';
import { BYTES_PER_GB, CROSS_AZ_USD_PER_GB_EACH_WAY, PRICES, requestUsdPerMonth, SECONDS_PER_MONTH, walBill } from './lib/s3-prices.ts';
import { cdfOf, writeBenchResults } from './lib/results.ts';
import { logIndexesTerm, walWriterTerm } from './lib/rss-bounds.ts';
import { OwnRssRun } from './lib/rss-report.ts';
import { printTargets } from './lib/targets.ts';
import type { WalResults } from './report/results.ts';
import type { StoreStats } from '../src/store/stats.ts';
import { type BatchingShape, idealObjects, modelWal, type ModelResult } from './lib/wal-model.ts';

const PROFILE = 's3-express' as const;
/** The generator wakes this often and sends every batch due by then. */
const TICK_MS = 1;
/** Record value size (kafka-producer-perf-test --record-size); batches fill up to 16 KiB. */
const RECORD_VALUE_BYTES = KIB_BYTES;
const RATES_MB_PER_SECOND = [1, 10, 100] as const;
const PARTITION_COUNTS = [1, 64] as const;
const SWEEP_RATES_MB_PER_SECOND = [10, 100] as const;
const SWEEP_PARTITIONS = 64;
const SWEEP_UPLOAD_BYTES = [64 * KIB_BYTES, 256 * KIB_BYTES, MIB_BYTES, 4 * MIB_BYTES] as const;
const SWEEP_INTERVALS_MS = [1, 5, 20] as const;
const QUICK_SWEEP_UPLOAD_BYTES = [256 * KIB_BYTES, MIB_BYTES] as const;
const QUICK_SWEEP_INTERVALS_MS = [1, 5] as const;
/** Measured window per case; a low-rate case runs longer (up to the cap) to gather MIN_SAMPLES. */
const CASE_MS = 3000;
/** Sweep cases: 2 s keeps the whole run near 3 minutes (12,800 samples per case at 100 MB/s). */
const SWEEP_CASE_MS = 2000;
const QUICK_CASE_MS = 1000;
const CASE_MS_MAX = 8000;
const MIN_SAMPLES = 1000;
/** Sent but not measured before each case's window: the writer reaches its steady state. */
const WARMUP_MS = 500;
const QUICK_WARMUP_MS = 250;
/** A case whose achieved rate is below this fraction of its target is flagged. */
const ACHIEVED_FRACTION_MIN = 0.97;
/** Sub-windows over which p99 is also taken, to show how much it moves within one case. */
const SUB_WINDOW_MS = 1000;
/**
 * Floor PUTs run at most the writer's maxInFlight at once and at most this many bytes in flight,
 * so that the floor's own copying (the memory store copies every body) does not load the CPU
 * more than the engine's run did; as many as fit FLOOR_MS, within [min, max].
 */
const FLOOR_IN_FLIGHT_BYTES = 512 * KIB_BYTES;
const FLOOR_MS = 400;
const QUICK_FLOOR_MS = 200;
/** ...but never more than this long: a 4 MiB PUT takes ~32 ms, one at a time. */
const FLOOR_MS_CAP = 1500;
const FLOOR_PUTS_MIN = 100;
const FLOOR_PUTS_MAX = 1000;
/** The in-order model times its own PUTs when its ideal objects differ from the engine's by more. */
const MODEL_SIZE_TOLERANCE = 0.1;
/** A case whose producer sent a batch this late (p99) was CPU-bound: its latency is queueing. */
const LAG_SATURATED_MS = 10;
/** The CPU table: data pushed through each stage alone, per round, and rounds (median). */
const CPU_STAGE_BYTES = 100 * 1_000_000;
const QUICK_CPU_STAGE_BYTES = 25 * 1_000_000;
const CPU_STAGE_ROUNDS = 3;
const CPU_STAGE_PARTITIONS = 64;
/** The engine's store and the floor's fresh store draw latencies from the same seed. */
const STORE_SEED = 1176;
const WRITER_SEED = 0xfe77;
const TOPIC = 'bench';
const TOPIC_ID = randomUuid(new SeededRandom(1));
const WRITER_ID = 'bench-writer';
const LEADER_EPOCH = 0;
const NOW_MS = 1_700_000_000_000;
/** Request cost the chosen defaults may spend at 100 MB/s: no more than the per-GB upload fee itself. */
const REQUEST_BUDGET_USD_PER_GB = PRICES.uploadUsdPerGb;
const PERCENT_P999 = 99.9;

const USAGE = `
bun bench/wal.bench.ts [--quick]

Produce-to-durable latency (p50/p99/p999) of PartitionLog + WalWriter on the memory store's
${PROFILE} profile, open-loop at 1, 10 and 100 MB/s over 1 and 64 partitions with
DEFAULT_WAL_WRITER_CONFIG, with objects/s, PUTs/GB and $/GB at S3 Express prices, beside the
floor (one PUT of the mean object size + the batching wait) measured in the same run; then a
sweep of uploadBytes x uploadIntervalMs at 10 and 100 MB/s, 64 partitions. ~3 minutes.
  --quick   1 s windows and a trimmed sweep (a smoke run, ~40 s; tails are noisier)
  --help    this text`;

interface WriterKnobs {
  readonly uploadBytes: number;
  readonly uploadIntervalMs: number;
}

interface CaseSpec {
  readonly rateMbPerSecond: number;
  readonly partitions: number;
  readonly knobs: WriterKnobs;
}

interface Durations {
  readonly warmupMs: number;
  readonly caseMs: number;
  /** Time budget for the floor's PUTs after the case. */
  readonly floorMs: number;
}

interface EngineRun {
  readonly spec: CaseSpec;
  readonly windowMs: number;
  readonly achievedMbPerSecond: number;
  readonly samples: number;
  /** Window batches due but never sent by the window's end. */
  readonly backlogBatches: number;
  readonly total: LatencyRecorder;
  readonly subWindowP99Ms: number[];
  /** Due to sent (generator lag and backpressure), sent to object close, close to durable. */
  readonly lag: LatencyRecorder;
  readonly batching: LatencyRecorder;
  readonly upload: LatencyRecorder;
  /** The writer's own upload latency (first PUT attempt to success), from its observer. */
  readonly writerUpload: LatencyRecorder;
  readonly objectsPerSecond: number;
  readonly meanObjectBytes: number;
  /** The store's counts over the whole run (warm-up and final flush included), for the bill. */
  readonly storeStats: StoreStats;
  readonly producedBytes: number;
  /** What the store would have counted for the ideal objects of the same schedule (the model's). */
  readonly idealStoreStats: StoreStats;
  readonly model: ModelResult;
  readonly putFloor: LatencyRecorder;
  /** Process CPU time (user + system, all threads) over the window, in % of one core. */
  readonly cpuPercent: number;
  /** Objects closed but waiting for an upload slot, and bytes held, sampled every tick. */
  readonly queuedMean: number;
  readonly queuedMax: number;
  readonly bufferedMaxBytes: number;
}

interface BatchInFlight {
  readonly index: number;
  readonly dueMs: number;
  sentMs: number;
  closeMs: number;
}

function writerConfig(knobs: WriterKnobs): WalWriterConfig {
  return { ...DEFAULT_WAL_WRITER_CONFIG, ...knobs, prefix: 'bench', stream: { writerId: WRITER_ID, epoch: 0 } };
}

/** Object and frame sizes as the writer builds them, for the model's size trigger. */
function batchingShape(template: BenchBatch, config: WalWriterConfig): BatchingShape {
  const builder = new WalObjectBuilder({ kind: 'data', writerId: WRITER_ID, epoch: 0, sequence: 0, createdMs: NOW_MS });
  const emptyObjectBytes = builder.sizeBytes;
  builder.addFrame({ topic: TOPIC, topicId: TOPIC_ID, partition: 0, leaderEpoch: LEADER_EPOCH, baseOffset: 0, lastOffset: template.recordCount - 1, data: template.bytes });
  return { emptyObjectBytes, frameBytes: builder.sizeBytes - emptyObjectBytes, uploadBytes: config.uploadBytes, uploadIntervalMs: config.uploadIntervalMs, maxInFlight: config.maxInFlight };
}

function caseDurations(rateMbPerSecond: number, template: BenchBatch, base: Durations, quick: boolean): Durations {
  if (quick) return base;
  const batchIntervalMs = template.bytes.length / (rateMbPerSecond * 1000);
  return { ...base, caseMs: Math.min(CASE_MS_MAX, Math.max(base.caseMs, Math.ceil(MIN_SAMPLES * batchIntervalMs))) };
}

/** Store counts of `puts` plain PUTs carrying `bytes` (objects below the multipart threshold). */
function putOnlyStats(puts: number, bytes: number): StoreStats {
  const requests = { put: puts, get: 0, head: 0, list: 0, delete: 0, multipartCreate: 0, uploadPart: 0, multipartComplete: 0, multipartAbort: 0 };
  return { requests, bytesIn: bytes, bytesOut: 0, errors: {} };
}

/** Directly timed PUTs of `sizeBytes` on a fresh store: the floor's PUT term. */
async function measurePutFloor(sizeBytes: number, floorMs: number): Promise<number[]> {
  const store = new MemoryStore({ latency: PROFILE, seed: STORE_SEED });
  const body = new Uint8Array(sizeBytes).fill(0x5a); // contents do not affect the drawn latency
  const profile = LATENCY_PROFILES[PROFILE];
  const inFlight = Math.min(DEFAULT_WAL_WRITER_CONFIG.maxInFlight, Math.max(1, Math.floor(FLOOR_IN_FLIGHT_BYTES / sizeBytes)));
  const expectedMs = profile.write.p50Ms + sizeBytes / profile.bytesPerMs;
  const count = Math.min(FLOOR_PUTS_MAX, Math.round((FLOOR_MS_CAP * inFlight) / expectedMs), Math.max(FLOOR_PUTS_MIN, Math.round((floorMs * inFlight) / expectedMs)));
  const samples = new Array<number>(count);
  let next = 0;
  const worker = async (slot: number): Promise<void> => {
    while (next < count) {
      const index = next++;
      const startMs = performance.now();
      await store.put(`floor/${slot}`, body);
      samples[index] = performance.now() - startMs;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, (_, slot) => worker(slot)));
  await store.close();
  return samples;
}

/**
 * The partition logs every case appends to (cases use the first N), opened once: opening 64
 * logs, their first append at an epoch (the leader-epoch checkpoint, written with fsync: 8-30 ms
 * each here) and closing them (an fdatasync of all that flush policy none left to the OS) would
 * cost seconds per case and are no part of a produce. A live broker's partitions did all that
 * long ago. No log rolls within a run (1 GiB segments; no partition gets near that).
 */
class SharedLogs {
  readonly logs: PartitionLog[];
  readonly #directory: string;

  constructor(template: BenchBatch, partitions: number) {
    this.#directory = makeTempDir('wal');
    this.logs = Array.from({ length: partitions }, (_, p) => PartitionLog.open(join(this.#directory, `${TOPIC}-${p}`), { config: { flush: { kind: 'none' } } }));
    for (const log of this.logs) log.append(template.bytes.slice(), LEADER_EPOCH);
  }

  async close(): Promise<void> {
    try {
      for (const log of this.logs) await log.close();
    } finally {
      removeTempDir(this.#directory);
    }
  }
}

async function runCase(spec: CaseSpec, template: BenchBatch, durations: Durations, shared: SharedLogs): Promise<EngineRun> {
  const config = writerConfig(spec.knobs);
  const store = new MemoryStore({ latency: PROFILE, seed: STORE_SEED });
  const logs = shared.logs.slice(0, spec.partitions);
  const batchBytes = template.bytes.length;
  const batchIntervalMs = batchBytes / (spec.rateMbPerSecond * 1000);
  const windowFrom = Math.ceil(durations.warmupMs / batchIntervalMs);
  const windowTo = Math.ceil((durations.warmupMs + durations.caseMs) / batchIntervalMs);
  const subWindows = Math.max(1, Math.round(durations.caseMs / SUB_WINDOW_MS));

  const total = new LatencyRecorder();
  const subWindowRecorders = Array.from({ length: subWindows }, () => new LatencyRecorder());
  const lag = new LatencyRecorder();
  const batching = new LatencyRecorder();
  const upload = new LatencyRecorder();
  const writerUpload = new LatencyRecorder();
  let open: BatchInFlight[] = [];
  let measuring = false;
  const writer = new WalWriter(store, config, {
    clock: systemClock,
    random: new SeededRandom(WRITER_SEED),
    observer: {
      objectBytes: () => {
        const nowMs = performance.now();
        for (const batch of open) batch.closeMs = nowMs;
        open = [];
      },
      uploadLatencyMs: (ms) => {
        if (measuring) writerUpload.recordMs(ms);
      },
    },
  });

  let outstanding = 0;
  let failure: unknown = null;
  let settled: (() => void) | null = null;
  const onDurable = (batch: BatchInFlight, startMs: number): void => {
    outstanding--;
    const nowMs = performance.now();
    if (batch.index >= windowFrom && batch.index < windowTo) {
      const latencyMs = nowMs - batch.dueMs;
      total.recordMs(latencyMs);
      const sub = Math.min(subWindows - 1, Math.floor((batch.dueMs - startMs - durations.warmupMs) / SUB_WINDOW_MS));
      subWindowRecorders[sub]!.recordMs(latencyMs);
      lag.recordMs(batch.sentMs - batch.dueMs);
      batching.recordMs(batch.closeMs - batch.sentMs);
      upload.recordMs(nowMs - batch.closeMs);
    }
    if (outstanding === 0) settled?.();
  };

  const phases = { drainMs: 0, floorMs: 0 };
  const startMs = performance.now();
  const windowStartMs = startMs + durations.warmupMs;
  const windowEndMs = windowStartMs + durations.caseMs;
  let sentBytes = 0;
  let next = 0;
  let before = { objects: 0, sentBytes: 0, atMs: windowStartMs, cpu: process.cpuUsage() };
  let queuedSum = 0;
  let queuedMax = 0;
  let ticks = 0;
  let bufferedMaxBytes = 0;
  try {
    // The producer's own cost: each send copies the template (offsets are rewritten in place
    // and the writer keeps a view until upload), as a produce request arrives in a fresh buffer.
    for (;;) {
      const tickMs = performance.now();
      if (tickMs >= windowEndMs) break;
      if (!measuring && tickMs >= windowStartMs) {
        measuring = true;
        before = { objects: writer.stats().objectsClosed, sentBytes, atMs: tickMs, cpu: process.cpuUsage() };
      }
      if (measuring) {
        const { queuedObjects, bufferedBytes } = writer.stats();
        queuedSum += queuedObjects;
        queuedMax = Math.max(queuedMax, queuedObjects);
        bufferedMaxBytes = Math.max(bufferedMaxBytes, bufferedBytes);
        ticks++;
      }
      const dueLimit = Math.min(windowTo, Math.floor((tickMs - startMs) / batchIntervalMs) + 1);
      while (next < dueLimit && failure === null) {
        const index = next++;
        const partition = index % spec.partitions;
        const batch: BatchInFlight = { index, dueMs: startMs + index * batchIntervalMs, sentMs: 0, closeMs: 0 };
        await writer.reserve(batchBytes);
        batch.sentMs = performance.now();
        const bytes = template.bytes.slice();
        const { baseOffset, lastOffset } = logs[partition]!.append(bytes, LEADER_EPOCH);
        open.push(batch);
        outstanding++;
        writer.append({ topic: TOPIC, topicId: TOPIC_ID, partition, leaderEpoch: LEADER_EPOCH, baseOffset, lastOffset, data: bytes }).then(
          () => onDurable(batch, startMs),
          (error: unknown) => {
            failure ??= error;
            outstanding--;
            if (outstanding === 0) settled?.();
          },
        );
        sentBytes += batchBytes;
      }
      if (failure !== null) break;
      await Bun.sleep(TICK_MS);
    }
    const endMs = performance.now();
    const after = { objects: writer.stats().objectsClosed, sentBytes, cpu: process.cpuUsage(before.cpu) };
    measuring = false;
    await writer.flush();
    if (outstanding > 0) await new Promise<void>((resolve) => (settled = resolve));
    if (failure !== null) throw failure;
    phases.drainMs = performance.now() - endMs;

    const windowMs = endMs - before.atMs;
    // Costs over the whole run, warm-up and final flush included: every byte sent is then in an
    // uploaded object, so PUTs per GB are exact even when uploads lagged behind the window.
    const storeStats = store.stats();
    const producedBytes = sentBytes;
    const { objectsDurable, bytesDurable } = writer.stats();
    const meanObjectBytes = objectsDurable === 0 ? 0 : bytesDurable / objectsDurable;
    const putSamples = await measurePutFloor(Math.max(1, Math.round(meanObjectBytes)), durations.floorMs);
    const putFloor = new LatencyRecorder();
    for (const sample of putSamples) putFloor.recordMs(sample);
    const shape = batchingShape(template, config);
    const schedule = { batchIntervalMs, batchCount: next, windowFrom, windowTo: Math.min(windowTo, next) };
    const objects = idealObjects(shape, schedule);
    const sameSize = Math.abs(objects.meanObjectBytes / meanObjectBytes - 1) <= MODEL_SIZE_TOLERANCE;
    const modelSamples = sameSize ? putSamples : await measurePutFloor(Math.max(1, Math.round(objects.meanObjectBytes)), durations.floorMs);
    const model = modelWal(shape, schedule, objects, putSamples, modelSamples);
    const idealStoreStats = putOnlyStats(objects.closeMs.length, objects.closeMs.length * shape.emptyObjectBytes + next * shape.frameBytes);
    phases.floorMs = performance.now() - endMs - phases.drainMs;
    return {
      spec,
      windowMs,
      achievedMbPerSecond: (after.sentBytes - before.sentBytes) / 1000 / windowMs,
      samples: total.count,
      backlogBatches: windowTo - next,
      total,
      subWindowP99Ms: subWindowRecorders.filter((r) => r.count > 0).map((r) => r.percentileMs(99)),
      lag,
      batching,
      upload,
      writerUpload,
      objectsPerSecond: ((after.objects - before.objects) * 1000) / windowMs,
      meanObjectBytes,
      storeStats,
      producedBytes,
      idealStoreStats,
      model,
      putFloor,
      cpuPercent: ((after.cpu.user + after.cpu.system) / 1000 / windowMs) * 100,
      queuedMean: ticks === 0 ? 0 : queuedSum / ticks,
      queuedMax,
      bufferedMaxBytes,
    };
  } finally {
    await store.close();
    const seconds = (value: number): string => formatNumber(value / 1000, 1);
    console.error(`    phases: run ${seconds(durations.warmupMs + durations.caseMs)} s, drain ${seconds(phases.drainMs)} s, floor ${seconds(phases.floorMs)} s`);
  }
}

interface CpuStage {
  readonly name: string;
  readonly what: string;
  /** Pushes `batchCount` batches' worth of data through the stage; returns elapsed ms. */
  readonly run: (batchCount: number) => Promise<number>;
}

/**
 * The CPU each stage of the path costs alone, with no store latency and no timers: where the
 * thread goes at a given rate. Each stage is timed over the same data, rounds rotate, median.
 */
function cpuStages(template: BenchBatch, shared: SharedLogs): CpuStage[] {
  const config = writerConfig({ uploadBytes: DEFAULT_WAL_WRITER_CONFIG.uploadBytes, uploadIntervalMs: DEFAULT_WAL_WRITER_CONFIG.uploadIntervalMs });
  const shape = batchingShape(template, config);
  const objectBytes = shape.emptyObjectBytes + Math.ceil((config.uploadBytes - shape.emptyObjectBytes) / shape.frameBytes) * shape.frameBytes;
  const frame = (partition: number, baseOffset: number) => ({
    topic: TOPIC,
    topicId: TOPIC_ID,
    partition,
    leaderEpoch: LEADER_EPOCH,
    baseOffset,
    lastOffset: baseOffset + template.recordCount - 1,
    data: template.bytes,
  });
  return [
    {
      name: 'producer copy',
      what: "template.slice() per batch (the bench's producer)",
      run: async (batchCount) => {
        const keep: Uint8Array[] = new Array(CPU_STAGE_PARTITIONS);
        const startMs = performance.now();
        for (let i = 0; i < batchCount; i++) keep[i % CPU_STAGE_PARTITIONS] = template.bytes.slice();
        return performance.now() - startMs;
      },
    },
    {
      name: 'PartitionLog.append',
      what: `flush none, ${CPU_STAGE_PARTITIONS} partitions, writev to the page cache`,
      run: async (batchCount) => {
        const logs = shared.logs.slice(0, CPU_STAGE_PARTITIONS);
        const buffers = logs.map(() => template.bytes.slice());
        const startMs = performance.now();
        for (let i = 0; i < batchCount; i++) logs[i % CPU_STAGE_PARTITIONS]!.append(buffers[i % CPU_STAGE_PARTITIONS]!, LEADER_EPOCH);
        return performance.now() - startMs;
      },
    },
    {
      name: 'WalWriter',
      what: `reserve + append until durable, ${knobsLabel(config)}, a store that swallows puts`,
      run: async (batchCount) => {
        const writer = new WalWriter(new NullStore(), config, { clock: systemClock, random: new SeededRandom(WRITER_SEED) });
        const offsets = new Array<number>(CPU_STAGE_PARTITIONS).fill(0);
        let durable = 0;
        const startMs = performance.now();
        for (let i = 0; i < batchCount; i++) {
          const partition = i % CPU_STAGE_PARTITIONS;
          await writer.reserve(template.bytes.length);
          const input = frame(partition, offsets[partition]!);
          offsets[partition]! += template.recordCount;
          void writer.append(input).then(() => void durable++);
        }
        await writer.flush();
        const elapsedMs = performance.now() - startMs;
        if (durable !== batchCount) throw new Error(`WalWriter stage: ${durable} of ${batchCount} batches durable after flush`);
        return elapsedMs;
      },
    },
    {
      name: 'MemoryStore.put',
      what: `zero latency, ${objectSize(objectBytes)} objects (the default's size), put-if-absent`,
      run: async (batchCount) => {
        const store = new MemoryStore({ latency: 'zero' });
        const body = new Uint8Array(objectBytes).fill(0x5a);
        const puts = Math.max(1, Math.round((batchCount * template.bytes.length) / objectBytes));
        const startMs = performance.now();
        for (let i = 0; i < puts; i++) await store.put(`cpu/${i}`, body, { ifNoneMatch: '*' });
        const elapsedMs = performance.now() - startMs;
        await store.close();
        return elapsedMs;
      },
    },
  ];
}

async function measureCpuStages(template: BenchBatch, dataBytes: number, shared: SharedLogs): Promise<string[][]> {
  const stages = cpuStages(template, shared);
  const batchCount = Math.ceil(dataBytes / template.bytes.length);
  const elapsed: number[][] = stages.map(() => []);
  for (let round = 0; round < CPU_STAGE_ROUNDS; round++) {
    for (let index = 0; index < stages.length; index++) {
      const stage = (round + index) % stages.length;
      Bun.gc(true);
      elapsed[stage]!.push(await stages[stage]!.run(batchCount));
    }
  }
  const producedMb = (batchCount * template.bytes.length) / 1_000_000;
  const perHundredMb = elapsed.map((rounds) => (median(rounds) / producedMb) * 100);
  const total = perHundredMb.reduce((sum, value) => sum + value, 0);
  const rows = stages.map((stage, index) => [
    stage.name,
    stage.what,
    formatSignificant(perHundredMb[index]!),
    formatNumber((100 * 1000) / perHundredMb[index]!),
    `${formatNumber((perHundredMb[index]! / 1000) * 100)}%`,
  ]);
  rows.push([
    'all four',
    'the path of one batch, end to end, minus timers and promises across turns',
    formatSignificant(total),
    formatNumber((100 * 1000) / total),
    `${formatNumber((total / 1000) * 100)}%`,
  ]);
  return rows;
}

const CPU_COLUMNS = [{ title: 'stage', align: 'left' }, { title: 'what', align: 'left' }, { title: 'ms per 100 MB' }, { title: 'MB/s alone' }, { title: 'of one core at 100 MB/s' }] as const;

const ms = (value: number): string => formatSignificant(value);
const usd = (value: number): string => `$${value < 0.001 ? value.toFixed(5) : value.toFixed(4)}`;
const ratio = (value: number): string => `${formatSignificant(value)}x`;

function objectSize(bytes: number): string {
  return bytes >= MIB_BYTES ? `${formatNumber(bytes / MIB_BYTES, 2)} MiB` : `${formatNumber(bytes / KIB_BYTES, 1)} KiB`;
}

function knobsLabel(knobs: WriterKnobs): string {
  return `${formatBytes(knobs.uploadBytes)} / ${knobs.uploadIntervalMs} ms`;
}

/** Below the target rate, or the producer could not send on schedule: the thread was saturated. */
function saturated(run: EngineRun): boolean {
  return run.achievedMbPerSecond < ACHIEVED_FRACTION_MIN * run.spec.rateMbPerSecond || run.lag.percentileMs(99) > LAG_SATURATED_MS;
}

function achieved(run: EngineRun): string {
  return `${formatNumber(run.achievedMbPerSecond, run.achievedMbPerSecond < 10 ? 2 : 1)}${saturated(run) ? ' !' : ''}`;
}

function p999(run: EngineRun): string {
  return `${ms(run.total.percentileMs(PERCENT_P999))}${run.samples < MIN_SAMPLES ? '*' : ''}`;
}

function mainRow(run: EngineRun): string[] {
  const bill = walBill(run.storeStats, run.producedBytes);
  const p50 = run.total.percentileMs(50);
  const p99 = run.total.percentileMs(99);
  const floor50 = run.model.floor.percentileMs(50);
  const floor99 = run.model.floor.percentileMs(99);
  return [
    String(run.spec.rateMbPerSecond),
    String(run.spec.partitions),
    achieved(run),
    ms(run.lag.percentileMs(99)),
    formatNumber(run.cpuPercent),
    formatNumber(run.samples),
    ms(p50),
    ms(p99),
    p999(run),
    ms(floor50),
    ms(floor99),
    ratio(p50 / floor50),
    ratio(p99 / floor99),
    formatNumber(run.objectsPerSecond),
    objectSize(run.meanObjectBytes),
    formatNumber(bill.putsPerGb),
    usd(bill.requestUsdPerGb),
    usd(bill.totalUsdPerGb),
  ];
}

const MAIN_COLUMNS = [
  { title: 'MB/s' },
  { title: 'parts' },
  { title: 'achieved' },
  { title: 'lag p99' },
  { title: 'cpu %' },
  { title: 'n' },
  { title: 'p50 ms' },
  { title: 'p99 ms' },
  { title: 'p999 ms' },
  { title: 'floor p50' },
  { title: 'floor p99' },
  { title: 'p50/floor' },
  { title: 'p99/floor' },
  { title: 'objects/s' },
  { title: 'mean object' },
  { title: 'PUTs/GB' },
  { title: 'req $/GB' },
  { title: 'total $/GB' },
] as const;

function caseLabel(run: EngineRun, sweep: boolean): string {
  return sweep ? `${run.spec.rateMbPerSecond} MB/s ${knobsLabel(run.spec.knobs)}` : `${run.spec.rateMbPerSecond} MB/s x ${run.spec.partitions}`;
}

function diagnosticRow(label: string, run: EngineRun): string[] {
  const pair = (recorder: LatencyRecorder): string => `${ms(recorder.percentileMs(50))} / ${ms(recorder.percentileMs(99))}`;
  return [
    label,
    run.backlogBatches > 0 ? formatNumber(run.backlogBatches) : '0',
    `${formatNumber(run.queuedMean, 1)} / ${run.queuedMax}`,
    formatNumber(run.bufferedMaxBytes / MIB_BYTES, 1),
    pair(run.batching),
    pair(run.model.batchingWait),
    pair(run.upload),
    pair(run.writerUpload),
    pair(run.putFloor),
    `${pair(run.model.inOrder)} / ${ms(run.model.inOrder.percentileMs(PERCENT_P999))}`,
    ratio(run.total.percentileMs(99) / run.model.inOrder.percentileMs(99)),
    `${ms(minOf(run.subWindowP99Ms))}-${ms(maxOf(run.subWindowP99Ms))}`,
  ];
}

const DIAGNOSTIC_COLUMNS = [
  { title: 'case', align: 'left' },
  { title: 'backlog' },
  { title: 'queued objs' },
  { title: 'held MiB' },
  { title: 'sent->close' },
  { title: 'ideal wait' },
  { title: 'close->durable' },
  { title: 'writer PUT' },
  { title: 'floor PUT' },
  { title: 'in-order model p50/p99/p999' },
  { title: 'p99/model' },
  { title: 'p99 per 1 s' },
] as const;

function sweepRow(run: EngineRun, isDefault: boolean, isChosen: boolean): string[] {
  const bill = walBill(run.storeStats, run.producedBytes);
  const ideal = walBill(run.idealStoreStats, run.producedBytes);
  const mark = `${isDefault ? ' (default)' : ''}${isChosen ? ' <- chosen' : ''}`;
  return [
    String(run.spec.rateMbPerSecond),
    `${knobsLabel(run.spec.knobs)}${mark}`,
    achieved(run),
    ms(run.lag.percentileMs(99)),
    ms(run.total.percentileMs(50)),
    ms(run.total.percentileMs(99)),
    p999(run),
    `${ms(run.model.floor.percentileMs(50))} / ${ms(run.model.floor.percentileMs(99))}`,
    `${ms(run.model.inOrder.percentileMs(50))} / ${ms(run.model.inOrder.percentileMs(99))}`,
    formatNumber(run.objectsPerSecond),
    objectSize(run.meanObjectBytes),
    formatNumber(bill.putsPerGb),
    formatNumber(ideal.putsPerGb),
    usd(bill.requestUsdPerGb),
    usd(ideal.requestUsdPerGb),
    usd(ideal.totalUsdPerGb),
    `$${formatNumber(requestUsdPerMonth((ideal.putsPerGb * run.spec.rateMbPerSecond * 1_000_000) / BYTES_PER_GB))}`,
  ];
}

const SWEEP_COLUMNS = [
  { title: 'MB/s' },
  { title: 'uploadBytes / interval', align: 'left' },
  { title: 'achieved' },
  { title: 'lag p99' },
  { title: 'p50 ms' },
  { title: 'p99 ms' },
  { title: 'p999 ms' },
  { title: 'floor p50/p99' },
  { title: 'model p50/p99' },
  { title: 'objects/s' },
  { title: 'mean object' },
  { title: 'PUTs/GB' },
  { title: 'ideal PUTs/GB' },
  { title: 'req $/GB' },
  { title: 'ideal req $/GB' },
  { title: 'ideal total $/GB' },
  { title: 'ideal req $/month' },
] as const;

const sameKnobs = (a: WriterKnobs, b: WriterKnobs): boolean => a.uploadBytes === b.uploadBytes && a.uploadIntervalMs === b.uploadIntervalMs;

interface Choice {
  readonly knobs: WriterKnobs;
  readonly reason: string;
}

/**
 * The rule the defaults come from, printed with the choice:
 * 1. cost: at the top swept rate, the ideal objects' request fees (the model's objects for the
 *    same schedule: what a writer that keeps up pays; a CPU-bound run's objects grow, and would
 *    flatter it) may be at most the per-GB upload fee, so PUTs at most double the WAL's bill;
 * 2. latency: among those, the lowest p99 summed over the swept rates. At a rate where most
 *    candidates ran CPU-bound on this machine, every candidate's in-order model p99 stands in
 *    (measured PUTs, no CPU cost): a saturated thread measures the machine, not the knob.
 *    Otherwise the measured p99, as the median of its 1 s windows (one noisy second of a
 *    neighbour's load does not decide it);
 * 3. within CHOICE_NOISE_FRACTION of the best, the lowest request bill, then the smaller uploadBytes.
 */
const CHOICE_NOISE_FRACTION = 0.1;
const CHOICE_COST_TIE_FRACTION = 0.05;

function choose(sweep: readonly EngineRun[]): Choice | null {
  const rates = [...new Set(sweep.map((run) => run.spec.rateMbPerSecond))].sort((a, b) => a - b);
  const topRate = rates.at(-1)!;
  const runOf = (knobs: WriterKnobs, rate: number): EngineRun | undefined => sweep.find((run) => run.spec.rateMbPerSecond === rate && sameKnobs(run.spec.knobs, knobs));
  const idealRequestUsd = (run: EngineRun): number => walBill(run.idealStoreStats, run.producedBytes).requestUsdPerGb;
  const knobsList = sweep.filter((run) => run.spec.rateMbPerSecond === topRate).map((run) => run.spec.knobs);
  const affordable = knobsList.filter((knobs) => rates.every((rate) => runOf(knobs, rate) !== undefined) && idealRequestUsd(runOf(knobs, topRate)!) <= REQUEST_BUDGET_USD_PER_GB);
  if (affordable.length === 0) return null;
  const modelled = rates.filter((rate) => {
    const runs = knobsList.map((knobs) => runOf(knobs, rate)).filter((run) => run !== undefined);
    return runs.filter(saturated).length * 2 > runs.length;
  });
  const p99Of = (run: EngineRun): number => (modelled.includes(run.spec.rateMbPerSecond) ? run.model.inOrder.percentileMs(99) : median(run.subWindowP99Ms));
  const scored = affordable.map((knobs) => ({
    knobs,
    p99: rates.reduce((sum, rate) => sum + p99Of(runOf(knobs, rate)!), 0),
    cost: rates.reduce((sum, rate) => sum + idealRequestUsd(runOf(knobs, rate)!), 0),
  }));
  const bestP99 = Math.min(...scored.map((entry) => entry.p99));
  const near = scored.filter((entry) => entry.p99 <= bestP99 * (1 + CHOICE_NOISE_FRACTION));
  near.sort((a, b) => (Math.abs(a.cost - b.cost) <= CHOICE_COST_TIE_FRACTION * Math.min(a.cost, b.cost) ? a.knobs.uploadBytes - b.knobs.uploadBytes : a.cost - b.cost));
  const chosen = near[0]!;
  const basis = rates.map((rate) => `${rate} MB/s ${modelled.includes(rate) ? 'in-order model (most cases CPU-bound here)' : 'measured (median of 1 s windows)'}`).join(', ');
  const list = scored.map((entry) => `${knobsLabel(entry.knobs)}: ${ms(entry.p99)} ms`).join('; ');
  return {
    knobs: chosen.knobs,
    reason: `ideal request fee at ${topRate} MB/s <= the upload fee (${usd(REQUEST_BUDGET_USD_PER_GB)}/GB) leaves ${affordable.length} of ${knobsList.length}; p99 summed over rates (${basis}): ${list}; within ${CHOICE_NOISE_FRACTION * 100}% of the best, the lowest request bill, then the smaller uploadBytes`,
  };
}

/** The report's view of the run (bench/report/results.ts): the same numbers the tables print. */
function walResults(mainRuns: readonly EngineRun[], sweepRuns: readonly EngineRun[], defaults: WriterKnobs, choice: Choice | null): WalResults {
  const profile = LATENCY_PROFILES[PROFILE];
  return {
    profile: PROFILE,
    storePutP50Ms: profile.write.p50Ms,
    storePutP99Ms: profile.write.p99Ms,
    rates: mainRuns.map((run) => ({
      rateMbPerSecond: run.spec.rateMbPerSecond,
      partitions: run.spec.partitions,
      saturated: saturated(run),
      p50Ms: run.total.percentileMs(50),
      p99Ms: run.total.percentileMs(99),
      p999Ms: run.total.percentileMs(PERCENT_P999),
      floorP50Ms: run.model.floor.percentileMs(50),
      floorP99Ms: run.model.floor.percentileMs(99),
      cdf: cdfOf(run.total),
      floorCdf: cdfOf(run.model.floor),
    })),
    sweep: sweepRuns.map((run) => {
      const bill = walBill(run.storeStats, run.producedBytes);
      return {
        rateMbPerSecond: run.spec.rateMbPerSecond,
        uploadBytes: run.spec.knobs.uploadBytes,
        uploadIntervalMs: run.spec.knobs.uploadIntervalMs,
        saturated: saturated(run),
        p50Ms: run.total.percentileMs(50),
        p99Ms: run.total.percentileMs(99),
        modelP99Ms: run.model.inOrder.percentileMs(99),
        putsPerGb: bill.putsPerGb,
        totalUsdPerGb: bill.totalUsdPerGb,
        usdPerMonth: (bill.totalUsdPerGb * run.spec.rateMbPerSecond * 1_000_000 * SECONDS_PER_MONTH) / BYTES_PER_GB,
        isDefault: sameKnobs(run.spec.knobs, defaults),
        isChosen: choice !== null && sameKnobs(run.spec.knobs, choice.knobs),
      };
    }),
  };
}

function topSweepRate(sweep: readonly EngineRun[]): number {
  return Math.max(...sweep.map((run) => run.spec.rateMbPerSecond));
}

function describeRun(template: BenchBatch, base: Durations, quick: boolean): void {
  const profile = LATENCY_PROFILES[PROFILE];
  const d = DEFAULT_WAL_WRITER_CONFIG;
  console.log(
    `wal bench: Bun ${Bun.version}, ${cpus().length} cpus, load average ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}${quick ? ' (--quick)' : ''}`,
  );
  console.log(`  store: MemoryStore '${PROFILE}' (assumed: PUT p50 ${profile.write.p50Ms} ms / p99 ${profile.write.p99Ms} ms + transfer at ${profile.bytesPerMs / 1000} MB/s), seed ${STORE_SEED}`);
  console.log(
    `  producer: open loop, tick ${TICK_MS} ms, ${template.recordCount} x ${formatBytes(template.valueBytes)} records = ${template.bytes.length} B per batch, partitions round-robin, a copy of the batch per send`,
  );
  console.log(`  path per batch: reserve -> PartitionLog.append (flush none) -> WalWriter.append -> durable; latency from the batch's due time`);
  console.log(
    `  windows: ${base.caseMs / 1000} s${quick ? '' : ` (sweep ${SWEEP_CASE_MS / 1000} s)`} after ${base.warmupMs / 1000} s warm-up${quick ? '' : `; low rates run up to ${CASE_MS_MAX / 1000} s for ${MIN_SAMPLES} samples`} (* = p999 from fewer than ${MIN_SAMPLES} samples: about the max)`,
  );
  console.log(`  ${Math.max(...PARTITION_COUNTS, SWEEP_PARTITIONS)} partition logs opened once and primed (first append at the epoch), shared by every case; floor PUTs timed after each case`);
  console.log(
    `  DEFAULT_WAL_WRITER_CONFIG: uploadBytes ${formatBytes(d.uploadBytes)}, uploadIntervalMs ${d.uploadIntervalMs}, maxInFlight ${d.maxInFlight}, maxBufferedBytes ${formatBytes(d.maxBufferedBytes)}`,
  );
  console.log(`  prices (${PRICES.name}, src/store/pricing.ts; GB = 2^30 B): PUT-class $${PRICES.putClassUsdPer1000}/1k requests, upload $${PRICES.uploadUsdPerGb}/GB on every byte;`);
  console.log(
    `    $/GB = those two per GB of records produced; not storage, follower GETs/retrieval, or GC deletes. Cross-AZ for comparison: $${CROSS_AZ_USD_PER_GB_EACH_WAY * 2}/GB per replica hop.`,
  );
}

async function main(): Promise<void> {
  const { quick } = parseBenchArgs(process.argv.slice(2), USAGE);
  const base: Durations = quick ? { warmupMs: QUICK_WARMUP_MS, caseMs: QUICK_CASE_MS, floorMs: QUICK_FLOOR_MS } : { warmupMs: WARMUP_MS, caseMs: CASE_MS, floorMs: FLOOR_MS };
  const template = buildFullBatch(RECORD_VALUE_BYTES);
  describeRun(template, base, quick);
  const defaults: WriterKnobs = { uploadBytes: DEFAULT_WAL_WRITER_CONFIG.uploadBytes, uploadIntervalMs: DEFAULT_WAL_WRITER_CONFIG.uploadIntervalMs };
  const startMs = performance.now();
  const progress = (label: string): void => console.error(`  done: ${label} (${formatNumber((performance.now() - startMs) / 1000, 1)} s)`);
  const shared = new SharedLogs(template, Math.max(...PARTITION_COUNTS, SWEEP_PARTITIONS, CPU_STAGE_PARTITIONS));
  try {
    await measureAll(template, base, quick, defaults, shared, progress);
  } finally {
    await shared.close();
  }
  console.log(
    `Total ${formatNumber((performance.now() - startMs) / 1000, 1)} s; load average at the end ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')} (2 cores shared with other work: compare ratios within this run).`,
  );
}

async function measureAll(template: BenchBatch, base: Durations, quick: boolean, defaults: WriterKnobs, shared: SharedLogs, progress: (label: string) => void): Promise<void> {
  const rss = new OwnRssRun('wal');
  // JIT and allocator warm-up: one short untimed case at the top rate.
  await runCase({ rateMbPerSecond: 100, partitions: 64, knobs: defaults }, template, { ...base, warmupMs: 0, caseMs: base.warmupMs }, shared);
  progress('warm-up');

  const mainRuns: EngineRun[] = [];
  for (const rateMbPerSecond of RATES_MB_PER_SECOND) {
    for (const partitions of PARTITION_COUNTS) {
      Bun.gc(true);
      const spec: CaseSpec = { rateMbPerSecond, partitions, knobs: defaults };
      mainRuns.push(await runCase(spec, template, caseDurations(rateMbPerSecond, template, base, quick), shared));
      progress(`${rateMbPerSecond} MB/s x ${partitions}`);
    }
  }

  Bun.gc(true);
  const cpuRows = await measureCpuStages(template, quick ? QUICK_CPU_STAGE_BYTES : CPU_STAGE_BYTES, shared);
  progress('cpu stages');

  const sweepRuns: EngineRun[] = [];
  const sweepBase: Durations = quick ? base : { ...base, caseMs: SWEEP_CASE_MS };
  const uploadBytesGrid = quick ? QUICK_SWEEP_UPLOAD_BYTES : SWEEP_UPLOAD_BYTES;
  const intervalGrid = quick ? QUICK_SWEEP_INTERVALS_MS : SWEEP_INTERVALS_MS;
  for (const rateMbPerSecond of SWEEP_RATES_MB_PER_SECOND) {
    for (const uploadBytes of uploadBytesGrid) {
      for (const uploadIntervalMs of intervalGrid) {
        Bun.gc(true);
        const spec: CaseSpec = { rateMbPerSecond, partitions: SWEEP_PARTITIONS, knobs: { uploadBytes, uploadIntervalMs } };
        sweepRuns.push(await runCase(spec, template, caseDurations(rateMbPerSecond, template, sweepBase, quick), shared));
        progress(`sweep ${rateMbPerSecond} MB/s ${knobsLabel(spec.knobs)}`);
      }
    }
  }

  printTable(
    `Produce-to-durable, DEFAULT_WAL_WRITER_CONFIG (${knobsLabel(defaults)}), ${PROFILE}; floor = ideal batching wait + one PUT of the mean object, per batch; lag = due -> sent; ! = CPU-bound (achieved < ${ACHIEVED_FRACTION_MIN * 100}% of target or lag p99 > ${LAG_SATURATED_MS} ms): its latency is queueing`,
    MAIN_COLUMNS,
    mainRuns.map(mainRow),
  );
  printTable(
    "Where the time goes (p50 / p99 ms). backlog = window batches never sent; queued objs = closed objects waiting for an upload slot (mean / max per tick); held = bytes the writer held (max); sent->close in the engine vs the ideal batching wait; close->durable vs the writer's own PUT timing vs a PUT on a fresh store; the in-order model adds maxInFlight and in-order durability to the floor, at no CPU cost",
    DIAGNOSTIC_COLUMNS,
    [...mainRuns.map((run) => diagnosticRow(caseLabel(run, false), run)), ...sweepRuns.map((run) => diagnosticRow(`sweep ${caseLabel(run, true)}`, run))],
  );
  printTable(`CPU per stage on this machine, each alone, no store latency (median of ${CPU_STAGE_ROUNDS} rounds; one core = 1000 ms per s)`, CPU_COLUMNS, cpuRows);
  const choice = choose(sweepRuns);
  printTable(
    `Sweep: ${SWEEP_PARTITIONS} partitions, uploadBytes x uploadIntervalMs. Measured: latency, objects, PUTs/GB, req $/GB. Ideal = the model's objects for the same schedule (what a writer that keeps up pays; a CPU-bound run's objects grow); req $/month = one writer's PUT bill at that rate`,
    SWEEP_COLUMNS,
    sweepRuns.map((run) => sweepRow(run, sameKnobs(run.spec.knobs, defaults), choice !== null && sameKnobs(run.spec.knobs, choice.knobs))),
  );
  const cpuStageBytes = quick ? QUICK_CPU_STAGE_BYTES : CPU_STAGE_BYTES;
  const runs = [...mainRuns, ...sweepRuns];
  // Live at once: one case's memory store (each case's own, closed after it; or the CPU stage's),
  // one writer, and the indexes of the shared logs, which take every case's batches, the CPU
  // stage's appends, and the warm-up (less than one CPU stage round).
  const { target: rssTarget } = rss.finish([
    { name: 'memory store', bytes: Math.max(cpuStageBytes, ...runs.map((run) => run.storeStats.bytesIn)) },
    walWriterTerm(template.bytes.length),
    logIndexesTerm(runs.reduce((sum, run) => sum + run.producedBytes, 0) + (CPU_STAGE_ROUNDS + 1) * cpuStageBytes),
  ]);
  printTargets('Target: this process stays within the RSS bound (bench/lib/rss-bounds.ts)', [rssTarget]);
  writeBenchResults('wal', { ...walResults(mainRuns, sweepRuns, defaults, choice), targets: [rssTarget] });
  if (choice === null) {
    console.log(`\nNo swept knobs kept request fees at ${topSweepRate(sweepRuns)} MB/s within the upload fee.`);
  } else {
    console.log(`\nChosen by rule: ${knobsLabel(choice.knobs)}; DEFAULT_WAL_WRITER_CONFIG is ${knobsLabel(defaults)}${sameKnobs(choice.knobs, defaults) ? ' (the same)' : ''}.\n  ${choice.reason}.`);
  }
}

await main();
