/**
 * The most RSS a bench's process may reach, from the engine's own limits: each bench prints its
 * measured peak beside a bound made of the terms below and judges it with targets.ts `atMost`.
 *
 *   bound = RSS at start (measured) + RUNTIME_WARM_BYTES
 *         + COLLECTOR_GROWTH x (the data the bench holds on purpose + the engine's budgets)
 *
 * - RSS at start: the process before its load: a broker right after its start line, an
 *   in-process bench before its first case. Bun, JavaScriptCore and the code loaded so far.
 * - RUNTIME_WARM_BYTES: what running the code adds without holding anything: compiled (JIT)
 *   code, the collector's and compilers' threads, allocator arenas. Measured with Bun 1.4.5:
 *   append.bench.ts went from 30 to 66-70 MiB of RSS with a JS heap of 4 MiB and 2 MiB of
 *   buffers outside it; 64 MiB leaves room for the larger code of a broker.
 * - The engine's budgets: the limits that hold bytes under a produce load, each a named constant
 *   of the engine (functions below); the bench adds what it holds itself (a memory store's
 *   objects, its producers' batches).
 * - COLLECTOR_GROWTH: JavaScriptCore collects when the heap (buffers outside it included, as
 *   reported extra memory) has grown to a multiple of its size after the last collection. Bun
 *   sets heapGrowthMaxIncrease 2 and heapGrowthSteepnessFactor 1, so on a machine with 16 GiB of
 *   RAM or more the multiple is 2 e^(-heap/RAM) + 1, about 3 for a heap far below RAM (below
 *   16 GiB, JSC's smallHeapGrowthFactor: 2). Garbage not yet collected is what lifts RSS above
 *   the live bytes; a process that keeps the live bytes within the budgets stays within 3x them.
 *
 * Page cache (local log segments written with write(2)) is not RSS: the log's bytes on disk do
 * not count. Tier reads (a consumer behind the local log: TIER_CACHE_BYTES of chunks) are no
 * part of a produce load and no term here.
 */
import { totalmem } from 'node:os';
import { CONNECTION_REQUEST_BYTES_MAX, QUEUED_REQUEST_BYTES_MAX_DEFAULT } from '../../src/broker/connection.ts';
import { DIRECT_APPEND_STAGING_BYTES, DIRECT_WRITE_BYTES_MAX, STAGING_KEPT_PER_CLASS } from '../../src/store/direct-write.ts';
import { STREAMING_CONCURRENCY_DEFAULT, STREAMING_PART_BYTES_DEFAULT } from '../../src/store/streaming-upload.ts';
import { TIER_PARTITIONS_IN_FLIGHT, TIER_SMALL_RANGE_BYTES, TIER_UPLOADS_IN_FLIGHT } from '../../src/tier/tierer.ts';
import { DEFAULT_LOG_CONFIG } from '../../src/log/config.ts';
import { DEFAULT_WAL_WRITER_CONFIG } from '../../src/wal/writer.ts';
import { formatNumber, MIB_BYTES } from './units.ts';

/** See the file comment: code, threads and arenas a Bun process adds once its code has run. */
export const RUNTIME_WARM_BYTES = 64 * MIB_BYTES;
/** JSC's heapGrowthFunctionThresholdInMB: at or above this much RAM, Bun's growth function applies. */
const GROWTH_FUNCTION_RAM_BYTES = 16 * 1024 * MIB_BYTES;
/** Bun's heapGrowthMaxIncrease (the multiple is this x e^(-heap/RAM) + 1) and JSC's smallHeapGrowthFactor below the threshold. */
const HEAP_GROWTH_MAX_INCREASE = 2;
const SMALL_HEAP_GROWTH_FACTOR = 2;
/** How much larger than its live bytes the heap may grow before JavaScriptCore collects, on this machine. */
export const COLLECTOR_GROWTH = totalmem() >= GROWTH_FUNCTION_RAM_BYTES ? HEAP_GROWTH_MAX_INCREASE + 1 : SMALL_HEAP_GROWTH_FACTOR;
/**
 * src/wal/writer.ts's DEFERRED_GROWTH_FACTOR (not exported): while every upload slot is busy an
 * object grows up to this x uploadBytes (or to multipartPartBytes, the smaller) before it closes.
 */
const WAL_DEFERRED_GROWTH_FACTOR = 4;
/** src/util/buffer-pool.ts: buffers come in power-of-two classes; the pool keeps maxInFlight + 1 free per class. */
const POOL_CLASSES_SUM_FACTOR = 2;
/**
 * What a partition log keeps in memory per index entry (one per indexIntervalBytes): an offset
 * index entry (2 x Int32) and a time index entry (Float64 + Int32), in arrays grown by doubling.
 */
const INDEX_BYTES_PER_ENTRY = 2 * (8 + 12);

/** One named term of a bound, in bytes. */
export interface RssTerm {
  readonly name: string;
  readonly bytes: number;
}

export interface RssBound {
  /** RSS at start + the runtime's warm-up: what the process holds with nothing of the load live. */
  readonly baseBytes: number;
  /** What the bench and the engine may hold live under the load, by their limits. */
  readonly liveTerms: readonly RssTerm[];
  readonly liveBytes: number;
  /** base + live: the most RSS with no garbage waiting for the collector. */
  readonly budgetBytes: number;
  /** base + COLLECTOR_GROWTH x live: the bound the peak is judged against. */
  readonly boundBytes: number;
}

export function rssBound(startRssBytes: number, liveTerms: readonly RssTerm[]): RssBound {
  const baseBytes = startRssBytes + RUNTIME_WARM_BYTES;
  const liveBytes = liveTerms.reduce((sum, term) => sum + term.bytes, 0);
  return { baseBytes, liveTerms, liveBytes, budgetBytes: baseBytes + liveBytes, boundBytes: baseBytes + COLLECTOR_GROWTH * liveBytes };
}

/** Whole MiB, and a tenth below 10 MiB so that small terms do not print as 0. */
const mibText = (bytes: number): string => formatNumber(bytes / MIB_BYTES, bytes < 10 * MIB_BYTES ? 1 : 0);

/** "start 70 + runtime 64 + 3 x (requests 33 + WAL writer 272) = 1,049 MiB" */
export function describeRssBound(bound: RssBound, startRssBytes: number): string {
  const live = bound.liveTerms.map((term) => `${term.name} ${mibText(term.bytes)}`).join(' + ');
  return `start ${mibText(startRssBytes)} + runtime ${mibText(RUNTIME_WARM_BYTES)} + ${COLLECTOR_GROWTH} x (${live}) = ${mibText(bound.boundBytes)} MiB (without garbage: ${mibText(bound.budgetBytes)} MiB)`;
}

/**
 * Requests a broker holds: Kafka's queued.max.request.bytes across connections, each connection
 * at most CONNECTION_REQUEST_BYTES_MAX of it, plus per connection one frame that arrived in
 * pieces copied once into one buffer (the client's largest request).
 */
export function requestsTerm(connections: number, largestRequestBytes: number): RssTerm {
  const held = Math.min(QUEUED_REQUEST_BYTES_MAX_DEFAULT, connections * CONNECTION_REQUEST_BYTES_MAX);
  return { name: 'requests', bytes: held + connections * largestRequestBytes };
}

/**
 * One WAL writer (one stream): maxBufferedBytes of frames and closed objects not yet durable;
 * one body copy per PUT in flight (maxInFlight x the largest object: an object grows to
 * DEFERRED_GROWTH_FACTOR x uploadBytes while slots are busy, plus the frame that crossed it); the
 * body pool's free buffers, maxInFlight + 1 per power-of-two class, the classes up to the largest
 * summing to less than twice it.
 */
export function walWriterTerm(largestFrameBytes: number, config = DEFAULT_WAL_WRITER_CONFIG): RssTerm {
  const largestObjectBytes = Math.min(config.multipartPartBytes, WAL_DEFERRED_GROWTH_FACTOR * config.uploadBytes) + largestFrameBytes;
  const largestClassBytes = 2 ** Math.ceil(Math.log2(largestObjectBytes));
  const inFlightBytes = config.maxInFlight * largestObjectBytes;
  const poolBytes = (config.maxInFlight + 1) * POOL_CLASSES_SUM_FACTOR * largestClassBytes;
  return { name: 'WAL writer', bytes: config.maxBufferedBytes + inFlightBytes + poolBytes };
}

/** The tierer's uploads: TIER_UPLOADS_IN_FLIGHT large streaming uploads, each (concurrency + 1) parts, and a small range per partition in flight. */
export function tierUploadsTerm(): RssTerm {
  const largeBytes = TIER_UPLOADS_IN_FLIGHT * (STREAMING_CONCURRENCY_DEFAULT + 1) * STREAMING_PART_BYTES_DEFAULT;
  return { name: 'tier uploads', bytes: largeBytes + TIER_PARTITIONS_IN_FLIGHT * TIER_SMALL_RANGE_BYTES };
}

/**
 * The file store's direct writes (src/store/direct-write.ts): a staging buffer per WAL put in
 * flight, of the power-of-two class of the largest object (puts past DIRECT_WRITE_BYTES_MAX are
 * buffered), and per tier upload in flight a sequential write's staging; the pool keeps
 * STAGING_KEPT_PER_CLASS per class after, the classes up to the largest summing to less than twice it.
 */
export function fileStoreDirectTerm(largestFrameBytes: number, config = DEFAULT_WAL_WRITER_CONFIG): RssTerm {
  const largestObjectBytes = Math.min(DIRECT_WRITE_BYTES_MAX, Math.min(config.multipartPartBytes, WAL_DEFERRED_GROWTH_FACTOR * config.uploadBytes) + largestFrameBytes);
  const largestClassBytes = 2 ** Math.ceil(Math.log2(largestObjectBytes));
  const inFlightBytes = config.maxInFlight * largestClassBytes + TIER_PARTITIONS_IN_FLIGHT * DIRECT_APPEND_STAGING_BYTES;
  const keptBytes = STAGING_KEPT_PER_CLASS * POOL_CLASSES_SUM_FACTOR * largestClassBytes;
  return { name: 'direct writes', bytes: inFlightBytes + keptBytes };
}

/**
 * The file store's direct writes when it holds the tier only (a memory:// WAL beside it): the
 * tier uploads' sequential-write staging, in flight and kept by the pool afterwards.
 */
export function fileStoreTierTerm(): RssTerm {
  return { name: 'direct writes (tier)', bytes: (TIER_PARTITIONS_IN_FLIGHT + STAGING_KEPT_PER_CLASS) * DIRECT_APPEND_STAGING_BYTES };
}

/** The in-memory indexes of partition logs holding `logBytes` in all (LogConfig.indexIntervalBytes). */
export function logIndexesTerm(logBytes: number, indexIntervalBytes = DEFAULT_LOG_CONFIG.indexIntervalBytes): RssTerm {
  return { name: 'log indexes', bytes: (logBytes / indexIntervalBytes) * INDEX_BYTES_PER_ENTRY };
}

/** A broker under a produce load from `connections` clients: requests, its WAL writer, its tier uploads. */
export function brokerProduceTerms(connections: number, largestRequestBytes: number): RssTerm[] {
  return [requestsTerm(connections, largestRequestBytes), walWriterTerm(largestRequestBytes), tierUploadsTerm()];
}
