/**
 * Read throughput of PartitionLog from a warm page cache: sequential read(offset, 1 MiB) over
 * the whole log beside raw readSync of the same segment files in 1 MiB chunks, rounds
 * alternating (ABBA), medians printed; then a mitata micro-bench of read(random offset, 64 KiB)
 * beside a raw 64 KiB readSync at a random position.
 *
 * Two logs: producer-sized batches (16 KiB of 1 KiB records, the common case) and one-record
 * batches of 100 B (a producer with linger.ms=0 under light load), whose batches are far
 * smaller than the offset index interval, so a read must skip headers to find its batch.
 */
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { bench, do_not_optimize, group, run } from 'mitata';
import { PartitionLog } from '../src/log/partition-log.ts';
import { parseBenchArgs } from './lib/args.ts';
import { type BenchBatch, buildBenchBatch, buildFullBatch } from './lib/batches.ts';
import { SeededRandom } from './lib/random.ts';
import { maxOf, median, minOf, pairedRatios } from './lib/stats.ts';
import { printTable } from './lib/table.ts';
import { makeTempDir, removeTempDir } from './lib/temp-dir.ts';
import { formatBytes, formatNumber, formatSignificant, KIB_BYTES, mbPerSecond, MIB_BYTES } from './lib/units.ts';

/** A consumer's fetch.max.bytes-sized sequential read. */
const SEQUENTIAL_READ_BYTES = MIB_BYTES;
/** A random read: one partition's share of a fetch (max.partition.fetch.bytes is 1 MiB; most are smaller). */
const RANDOM_READ_BYTES = 64 * KIB_BYTES;
/** Segments of 64 MiB, so a sequential read crosses segment boundaries as a consumer does. */
const SEGMENT_BYTES = 64 * MIB_BYTES;
const ROUND_COUNT = 7;
const QUICK_ROUND_COUNT = 3;
const QUICK_DATA_DIVISOR = 8;
/** Random offsets cycled through by the micro-bench; a power of two for a cheap wrap. */
const RANDOM_OFFSET_COUNT = 4096;
const RANDOM_SEED = 0x5eed;
const LEADER_EPOCH = 0;

interface LogCase {
  readonly name: string;
  readonly dataBytes: number;
  readonly batch: () => BenchBatch;
}

const LOG_CASES: readonly LogCase[] = [
  { name: '16 KiB batches of 1 KiB', dataBytes: 256 * MIB_BYTES, batch: () => buildFullBatch(KIB_BYTES) },
  // Smaller: each ~170 B append costs a syscall, and building 256 MiB of them would take minutes.
  { name: '1-record batches of 100 B', dataBytes: 32 * MIB_BYTES, batch: () => buildBenchBatch(100, 1) },
];

const USAGE = `
bun bench/read.bench.ts [--quick]

Read throughput (MB/s) of sequential PartitionLog.read(offset, ${formatBytes(SEQUENTIAL_READ_BYTES)}) over a warm log,
beside raw readSync of the same bytes in ${formatBytes(SEQUENTIAL_READ_BYTES)} chunks (median of rounds); then a mitata
micro-bench of read(random offset, ${formatBytes(RANDOM_READ_BYTES)}) beside a raw readSync of as many bytes.
  --quick   an eighth of the data and 3 rounds (a smoke run)
  --help    this text`;

interface BuiltLog {
  readonly log: PartitionLog;
  readonly segmentPaths: string[];
  readonly sizeBytes: number;
}

/** Fills a log with copies of one batch (flush policy none: this is setup, not measurement), then reopens it. */
async function buildLog(directory: string, logCase: LogCase, dataBytes: number): Promise<BuiltLog> {
  const batch = logCase.batch();
  const config = { segmentBytes: SEGMENT_BYTES, flush: { kind: 'none' } } as const;
  const writer = PartitionLog.open(directory, { config });
  for (let written = 0; written < dataBytes; written += batch.bytes.length) writer.append(batch.bytes, LEADER_EPOCH);
  await writer.close();
  const log = PartitionLog.open(directory, { config });
  const segmentPaths = readdirSync(directory)
    .filter((name) => name.endsWith('.log'))
    .sort()
    .map((name) => join(directory, name));
  return { log, segmentPaths, sizeBytes: log.sizeBytes };
}

/** Reads the whole log front to back; returns the bytes of the batches returned. */
function engineSequential(log: PartitionLog): number {
  let offset = log.logStartOffset;
  let bytes = 0;
  while (offset < log.logEndOffset) {
    const { batches } = log.read(offset, SEQUENTIAL_READ_BYTES);
    for (const batch of batches) bytes += batch.sizeInBytes;
    offset = batches.at(-1)!.nextOffset;
  }
  return bytes;
}

/**
 * The same files in the same chunk size. `freshBuffers` allocates each chunk as read() does (its
 * batches are views the caller keeps); otherwise one buffer is reused, the floor for any reader.
 */
function rawSequential(segmentPaths: readonly string[], freshBuffers: boolean): number {
  let bytes = 0;
  let reused = new Uint8Array(SEQUENTIAL_READ_BYTES);
  for (const path of segmentPaths) {
    const fd = openSync(path, 'r');
    try {
      for (let position = 0; ; ) {
        if (freshBuffers) reused = new Uint8Array(SEQUENTIAL_READ_BYTES);
        const count = readSync(fd, reused, 0, SEQUENTIAL_READ_BYTES, position);
        if (count === 0) break;
        position += count;
        bytes += count;
      }
    } finally {
      closeSync(fd);
    }
  }
  return bytes;
}

/** MB/s of one timed call of `read`, which must return the bytes it read. */
function timed(read: () => number): number {
  Bun.gc(true);
  const startMs = performance.now();
  const bytes = read();
  return mbPerSecond(bytes, performance.now() - startMs);
}

function sequentialRow(name: string, built: BuiltLog, roundCount: number): string[] {
  const engine: number[] = [];
  const raw: number[] = [];
  const rawReused: number[] = [];
  const engineSide = (): number => timed(() => engineSequential(built.log));
  const rawSide = (): number => timed(() => rawSequential(built.segmentPaths, true));
  for (let round = 0; round < roundCount; round++) {
    // ABBA: engine first in even rounds, raw first in odd ones.
    if (round % 2 === 0) {
      engine.push(engineSide());
      raw.push(rawSide());
    } else {
      raw.push(rawSide());
      engine.push(engineSide());
    }
    rawReused.push(timed(() => rawSequential(built.segmentPaths, false)));
  }
  const ratios = pairedRatios(engine, raw);
  return [
    name,
    formatBytes(built.sizeBytes),
    formatNumber(median(engine), 0),
    formatNumber(median(raw), 0),
    formatSignificant(median(ratios)),
    `${formatSignificant(minOf(ratios))}-${formatSignificant(maxOf(ratios))}`,
    formatNumber(median(rawReused), 0),
  ];
}

const SEQUENTIAL_COLUMNS = [
  { title: 'log', align: 'left' },
  { title: 'size', align: 'left' },
  { title: 'engine MB/s' },
  { title: 'raw MB/s' },
  { title: 'engine/raw' },
  { title: '(range)' },
  { title: 'raw, reused buffer MB/s' },
] as const;

/** mitata cases for random reads on one log: the engine, and raw readSync of as many bytes. */
function registerRandomReads(name: string, built: BuiltLog): number {
  const random = new SeededRandom(RANDOM_SEED);
  const { log } = built;
  const span = log.logEndOffset - log.logStartOffset;
  const offsets = Array.from({ length: RANDOM_OFFSET_COUNT }, () => log.logStartOffset + random.nextBelow(span));
  const segmentSizeBytes = Math.min(SEGMENT_BYTES, built.sizeBytes);
  const positions = Array.from({ length: RANDOM_OFFSET_COUNT }, () => random.nextBelow(segmentSizeBytes - RANDOM_READ_BYTES));
  const fd = openSync(built.segmentPaths[0]!, 'r');
  let next = 0;
  group(`random reads, ${name}`, () => {
    bench(`engine read(random offset, ${formatBytes(RANDOM_READ_BYTES)})`, () => {
      do_not_optimize(log.read(offsets[next++ & (RANDOM_OFFSET_COUNT - 1)]!, RANDOM_READ_BYTES));
    });
    bench(`raw readSync(random position, ${formatBytes(RANDOM_READ_BYTES)})`, () => {
      const buffer = new Uint8Array(RANDOM_READ_BYTES);
      do_not_optimize(readSync(fd, buffer, 0, RANDOM_READ_BYTES, positions[next++ & (RANDOM_OFFSET_COUNT - 1)]!));
    });
  });
  return fd;
}

async function main(): Promise<void> {
  const { quick } = parseBenchArgs(process.argv.slice(2), USAGE);
  const roundCount = quick ? QUICK_ROUND_COUNT : ROUND_COUNT;
  console.log(`read bench: Bun ${Bun.version}, ${cpus().length} cpus, ${roundCount} rounds per side${quick ? ' (--quick)' : ''}, warm page cache`);
  const directory = makeTempDir('read');
  const rows: string[][] = [];
  const logs: BuiltLog[] = [];
  const rawFds: number[] = [];
  try {
    for (const [index, logCase] of LOG_CASES.entries()) {
      const built = await buildLog(join(directory, `log-${index}`), logCase, quick ? logCase.dataBytes / QUICK_DATA_DIVISOR : logCase.dataBytes);
      logs.push(built);
      engineSequential(built.log); // warm the page cache and the JIT
      rawSequential(built.segmentPaths, true);
      rows.push(sequentialRow(logCase.name, built, roundCount));
      rawFds.push(registerRandomReads(logCase.name, built));
    }
    printTable(`Sequential read(offset, ${formatBytes(SEQUENTIAL_READ_BYTES)}), medians over rounds (MB = 10^6 B)`, SEQUENTIAL_COLUMNS, rows);
    console.log('');
    await run({ colors: false });
  } finally {
    for (const fd of rawFds) closeSync(fd);
    for (const built of logs) await built.log.close();
    removeTempDir(directory);
  }
}

await main();
