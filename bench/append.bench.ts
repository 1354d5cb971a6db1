/**
 * Append throughput of PartitionLog beside a raw file append of the same bytes with the same
 * sync discipline, in the same run: rounds alternate engine/raw (ABBA order) so that machine
 * noise hits both sides, and every number printed is a median over rounds.
 *
 * What a producer sees: PRODUCERS_IN_FLIGHT async producers each append one batch, await
 * waitForFlush for its last offset, then send the next; append-to-durable latency goes into an
 * HDR histogram. Batches are built once, before timing (building is the producer's cost).
 */
import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { FlushPolicy } from '../src/log/config.ts';
import { PartitionLog } from '../src/log/partition-log.ts';
import { parseBenchArgs } from './lib/args.ts';
import { type BenchBatch, buildFullBatch, PRODUCER_BATCH_BYTES_MAX } from './lib/batches.ts';
import { LatencyRecorder } from './lib/latency.ts';
import { writeBenchResults } from './lib/results.ts';
import { logIndexesTerm } from './lib/rss-bounds.ts';
import { OwnRssRun } from './lib/rss-report.ts';
import { printTargets } from './lib/targets.ts';
import { maxOf, median, minOf, pairedRatios } from './lib/stats.ts';
import { printTable } from './lib/table.ts';
import { withTempDir } from './lib/temp-dir.ts';
import { formatBytes, formatNumber, formatSignificant, mbPerSecond, MIB_BYTES, perSecond } from './lib/units.ts';

/** Record value sizes measured (kafka-producer-perf-test's --record-size). */
const RECORD_VALUE_SIZES_BYTES = [100, 1024] as const;
/** Producers with one batch each in flight: what group commit can batch into one fdatasync. */
const PRODUCERS_IN_FLIGHT = 8;
const ROUND_COUNT = 5;
const QUICK_ROUND_COUNT = 3;
/** --quick writes this fraction of each case's data. */
const QUICK_DATA_DIVISOR = 8;
/** Untimed appends before a case's rounds (JIT, page allocator, file system warm-up). */
const WARMUP_DATA_BYTES = 2 * MIB_BYTES;
/** Kafka's default segment.bytes: no roll happens inside a round, as in a steady-state log. */
const SEGMENT_BYTES = 1024 * MIB_BYTES;
/** Group commit's size trigger, and the raw baseline's sync interval for the group policies. */
const GROUP_FLUSH_BYTES = MIB_BYTES;
const GROUP_FLUSH_MS = 5;
const LEADER_EPOCH = 0;
/**
 * Data written per round per side. Policies bound by fdatasync latency (one per batch, or one
 * per 5 ms) get less, so the bench stays well under two minutes; at 16 KiB batches even these
 * make ~2000 appends per round, 10,000 latency samples per case.
 */
const FAST_CASE_DATA_BYTES = 64 * MIB_BYTES;
const SYNC_BOUND_CASE_DATA_BYTES = 32 * MIB_BYTES;

const USAGE = `
bun bench/append.bench.ts [--quick]

Append throughput (MB/s, records/s) of PartitionLog for 100 B and 1 KiB records under each flush
policy, beside a raw file append of the same bytes with the same sync discipline, alternating
rounds; p50/p99 append-to-durable latency as ${PRODUCERS_IN_FLIGHT} concurrent producers see it.
  --quick   an eighth of the data and 3 rounds (a smoke run; numbers are noisier)
  --help    this text`;

type RawDiscipline = { readonly kind: 'sync-each' } | { readonly kind: 'sync-every'; readonly bytes: number } | { readonly kind: 'no-sync' };

interface PolicyCase {
  readonly name: string;
  readonly flush: FlushPolicy;
  readonly raw: RawDiscipline;
  readonly dataBytes: number;
}

const POLICY_CASES: readonly PolicyCase[] = [
  { name: 'per-append', flush: { kind: 'per-append' }, raw: { kind: 'sync-each' }, dataBytes: SYNC_BOUND_CASE_DATA_BYTES },
  {
    name: `group ${formatBytes(GROUP_FLUSH_BYTES)}/0 ms`,
    flush: { kind: 'group', bytes: GROUP_FLUSH_BYTES, ms: 0 },
    raw: { kind: 'sync-every', bytes: GROUP_FLUSH_BYTES },
    dataBytes: FAST_CASE_DATA_BYTES,
  },
  {
    name: `group ${formatBytes(GROUP_FLUSH_BYTES)}/${GROUP_FLUSH_MS} ms`,
    flush: { kind: 'group', bytes: GROUP_FLUSH_BYTES, ms: GROUP_FLUSH_MS },
    raw: { kind: 'sync-every', bytes: GROUP_FLUSH_BYTES },
    dataBytes: SYNC_BOUND_CASE_DATA_BYTES,
  },
  { name: 'none', flush: { kind: 'none' }, raw: { kind: 'no-sync' }, dataBytes: FAST_CASE_DATA_BYTES },
];

interface Round {
  readonly elapsedMs: number;
  readonly bytes: number;
  readonly records: number;
}

interface CaseResult {
  readonly engine: Round[];
  readonly raw: Round[];
  /** Group policies only: raw with one fdatasync per PRODUCERS_IN_FLIGHT batches, all the engine can batch. */
  readonly rawWindow: Round[];
  readonly latency: LatencyRecorder;
}

/** PRODUCERS_IN_FLIGHT producers share `appendCount` appends; each waits for durability before its next. */
async function produce(log: PartitionLog, batch: BenchBatch, appendCount: number, latency: LatencyRecorder | null): Promise<void> {
  let remaining = appendCount;
  const producer = async (bytes: Uint8Array): Promise<void> => {
    while (remaining > 0) {
      remaining--;
      const startMs = performance.now();
      const { lastOffset } = log.append(bytes, LEADER_EPOCH);
      await log.waitForFlush(lastOffset);
      latency?.recordMs(performance.now() - startMs);
    }
  };
  // Each producer owns its buffer, as separate produce requests would.
  await Promise.all(Array.from({ length: PRODUCERS_IN_FLIGHT }, () => producer(batch.bytes.slice())));
}

async function engineRound(directory: string, policy: PolicyCase, batch: BenchBatch, dataBytes: number, latency: LatencyRecorder | null): Promise<Round> {
  const appendCount = Math.ceil(dataBytes / batch.bytes.length);
  const log = PartitionLog.open(directory, { config: { segmentBytes: SEGMENT_BYTES, flush: policy.flush } });
  try {
    const startMs = performance.now();
    await produce(log, batch, appendCount, latency);
    const elapsedMs = performance.now() - startMs;
    return { elapsedMs, bytes: appendCount * batch.bytes.length, records: appendCount * batch.recordCount };
  } finally {
    await log.close(); // untimed: under `none` it syncs everything once
  }
}

/** The same bytes, written with positional writes to one file, synced as `discipline` says. */
function rawRound(directory: string, discipline: RawDiscipline, batch: BenchBatch, dataBytes: number): Round {
  const appendCount = Math.ceil(dataBytes / batch.bytes.length);
  const bytes = batch.bytes;
  const fd = openSync(join(directory, 'raw.log'), 'wx');
  try {
    const startMs = performance.now();
    let position = 0;
    let unsyncedBytes = 0;
    for (let index = 0; index < appendCount; index++) {
      const written = writeSync(fd, bytes, 0, bytes.length, position);
      if (written !== bytes.length) throw new Error(`short write: ${written} of ${bytes.length} bytes`);
      position += written;
      unsyncedBytes += written;
      if (discipline.kind === 'sync-each' || (discipline.kind === 'sync-every' && unsyncedBytes >= discipline.bytes)) {
        fdatasyncSync(fd);
        unsyncedBytes = 0;
      }
    }
    if (discipline.kind !== 'no-sync' && unsyncedBytes > 0) fdatasyncSync(fd); // every byte durable, as the engine's producers waited for
    const elapsedMs = performance.now() - startMs;
    return { elapsedMs, bytes: position, records: appendCount * batch.recordCount };
  } finally {
    closeSync(fd);
  }
}

/** Runs one side of one round in a directory of its own, removed afterwards, after a full GC. */
function isolated<T>(label: string, body: (directory: string) => Promise<T> | T): Promise<T> {
  Bun.gc(true);
  return withTempDir(`append-${label}`, body);
}

/** The raw baseline an ideal group commit reaches with PRODUCERS_IN_FLIGHT batches in flight. */
function windowDiscipline(batch: BenchBatch): RawDiscipline {
  return { kind: 'sync-every', bytes: PRODUCERS_IN_FLIGHT * batch.bytes.length };
}

async function runCase(policy: PolicyCase, batch: BenchBatch, dataBytes: number, roundCount: number): Promise<CaseResult> {
  await isolated('warmup', (directory) => engineRound(directory, policy, batch, WARMUP_DATA_BYTES, null));
  await isolated('warmup', (directory) => rawRound(directory, policy.raw, batch, WARMUP_DATA_BYTES));
  const result: CaseResult = { engine: [], raw: [], rawWindow: [], latency: new LatencyRecorder() };
  const sides: (() => Promise<void>)[] = [
    async () => void result.engine.push(await isolated('engine', (directory) => engineRound(directory, policy, batch, dataBytes, result.latency))),
    async () => void result.raw.push(await isolated('raw', (directory) => rawRound(directory, policy.raw, batch, dataBytes))),
  ];
  if (policy.flush.kind === 'group') {
    sides.push(async () => void result.rawWindow.push(await isolated('raw', (directory) => rawRound(directory, windowDiscipline(batch), batch, dataBytes))));
  }
  for (let round = 0; round < roundCount; round++) {
    // The order rotates every round (AB, BA, ...), so drift in the machine favours no side.
    for (let index = 0; index < sides.length; index++) await sides[(round + index) % sides.length]!();
  }
  return result;
}

function rowOf(policy: PolicyCase, batch: BenchBatch, result: CaseResult): string[] {
  const engineMbPerSecond = result.engine.map((round) => mbPerSecond(round.bytes, round.elapsedMs));
  const rawMbPerSecond = result.raw.map((round) => mbPerSecond(round.bytes, round.elapsedMs));
  const ratios = pairedRatios(engineMbPerSecond, rawMbPerSecond);
  const windowMbPerSecond = result.rawWindow.map((round) => mbPerSecond(round.bytes, round.elapsedMs));
  const hasWindow = windowMbPerSecond.length > 0;
  const recordsPerSecond = median(result.engine.map((round) => perSecond(round.records, round.elapsedMs)));
  return [
    policy.name,
    formatBytes(batch.valueBytes),
    formatNumber(median(engineMbPerSecond), 1),
    formatNumber(median(rawMbPerSecond), 1),
    formatSignificant(median(ratios)),
    `${formatSignificant(minOf(ratios))}-${formatSignificant(maxOf(ratios))}`,
    hasWindow ? formatNumber(median(windowMbPerSecond), 1) : '-',
    hasWindow ? formatSignificant(median(pairedRatios(engineMbPerSecond, windowMbPerSecond))) : '-',
    formatNumber(recordsPerSecond),
    formatSignificant(result.latency.percentileMs(50)),
    formatSignificant(result.latency.percentileMs(99)),
  ];
}

const COLUMNS = [
  { title: 'policy', align: 'left' },
  { title: 'record', align: 'left' },
  { title: 'engine MB/s' },
  { title: 'raw MB/s' },
  { title: 'engine/raw' },
  { title: '(range)' },
  { title: 'raw@window MB/s' },
  { title: 'engine/window' },
  { title: 'records/s' },
  { title: 'p50 ms' },
  { title: 'p99 ms' },
] as const;

function describeRun(batches: readonly BenchBatch[], roundCount: number, quick: boolean): void {
  console.log(`append bench: Bun ${Bun.version}, ${cpus().length} cpus, ${roundCount} rounds per side${quick ? ' (--quick)' : ''}, ${PRODUCERS_IN_FLIGHT} producers in flight`);
  for (const batch of batches) {
    console.log(`  ${formatBytes(batch.valueBytes)} records: ${batch.recordCount} records/batch, ${batch.bytes.length} B/batch (batch.size ${formatBytes(PRODUCER_BATCH_BYTES_MAX)})`);
  }
  const divisor = quick ? QUICK_DATA_DIVISOR : 1;
  for (const policy of POLICY_CASES) {
    const raw = policy.raw.kind === 'sync-each' ? 'write + fdatasync each batch' : policy.raw.kind === 'sync-every' ? `write, fdatasync every ${formatBytes(policy.raw.bytes)}` : 'write, no sync';
    console.log(`  ${policy.name}: ${formatBytes(policy.dataBytes / divisor)} per round per side; raw: ${raw}`);
  }
  console.log(`  raw@window (group policies): write, fdatasync every ${PRODUCERS_IN_FLIGHT} batches, the most one group commit can cover`);
}

async function main(): Promise<void> {
  const { quick } = parseBenchArgs(process.argv.slice(2), USAGE);
  const roundCount = quick ? QUICK_ROUND_COUNT : ROUND_COUNT;
  const batches = RECORD_VALUE_SIZES_BYTES.map((valueBytes) => buildFullBatch(valueBytes));
  describeRun(batches, roundCount, quick);
  const rss = new OwnRssRun('append');
  const rows: string[][] = [];
  const startMs = performance.now();
  for (const policy of POLICY_CASES) {
    for (const batch of batches) {
      const dataBytes = quick ? policy.dataBytes / QUICK_DATA_DIVISOR : policy.dataBytes;
      const result = await runCase(policy, batch, dataBytes, roundCount);
      rows.push(rowOf(policy, batch, result));
      console.error(`  done: ${policy.name}, ${formatBytes(batch.valueBytes)} (${formatNumber((performance.now() - startMs) / 1000, 1)} s)`);
    }
  }
  printTable('Append throughput, medians over rounds (MB = 10^6 B; latency = append to durable, all rounds)', COLUMNS, rows);
  // Live at once: one round's log (closed after it) with its indexes, and every producer's own copy of a batch.
  const largestBatchBytes = Math.max(...batches.map((batch) => batch.bytes.length));
  const largestRoundBytes = Math.max(...POLICY_CASES.map((policy) => policy.dataBytes));
  const { target } = rss.finish([{ name: 'producer batches', bytes: (PRODUCERS_IN_FLIGHT + batches.length) * largestBatchBytes }, logIndexesTerm(largestRoundBytes)]);
  printTargets('Target: this process stays within the RSS bound (bench/lib/rss-bounds.ts)', [target]);
  writeBenchResults('append', { targets: [target] });
}

await main();
