/**
 * Where a broker's time goes along the produce path, for benches (issue 27): the main thread's
 * CPU time split into stages by `enter`/`exit` pairs around synchronous work (self time: a stage
 * entered inside another is taken out of the outer one's), and the byte copies and buffer
 * allocations the hot path makes, counted by site. Off unless FERRY_STAGE_TIMERS=1 is in the
 * environment at start: then every call is one branch on a constant. It observes and never
 * changes what the broker does, so it reads the thread's CPU clock and the environment directly
 * rather than through the injected clock: a diagnostic, like a CPU profile, not behaviour.
 *
 * CPU time, not wall time: on a busy machine a stage's wall time counts the moments the thread
 * was descheduled, which made one stage look ten times its cost (measured under a loaded 2-core
 * run). `process.threadCpuUsage()` (microseconds, ~0.2 us a call) costs a few microseconds per
 * request of ~1 MB.
 */
import type { MetricsRegistry } from './registry.ts';

/** The bench-only switch: `FERRY_STAGE_TIMERS=1 ferry broker ...`. */
export const STAGE_TIMERS_ENV = 'FERRY_STAGE_TIMERS';
const MICROSECONDS_PER_SECOND = 1e6;

/** The calling thread's CPU time so far, in microseconds (user + system). */
function threadCpuMicroseconds(): number {
  const usage = process.threadCpuUsage();
  return usage.user + usage.system;
}
/** Stages nest this deep at most (receive > handle > append > validate): deeper is a missing exit. */
const STAGE_DEPTH_MAX = 16;

/** The produce path's synchronous stages, in the order a request meets them. */
export type Stage =
  | 'receive' // socket data to whole frames: size prefixes, the frame's assembly copy
  | 'decode' // the request's fields (records stay a view)
  | 'handle' // the handler's own work around the append (checks, promises, timers)
  | 'validate' // batch headers, CRC32C, timestamps
  | 'producer-state' // idempotent sequence checks and updates
  | 'append' // offsets stamped, the local segment write, indexes
  | 'wal-frame' // the WAL frame's header and checksum, the object's chunk list
  | 'wal-upload' // closing a WAL object: its body, the PUT call's own CPU
  | 'ack' // an object durable: offsets advanced, waiters woken, high watermark
  | 'encode' // the response
  | 'write' // the response to the socket
  | 'tier'; // tiering: reading the log, building and uploading a tiered piece

/** Places the hot path copies or allocates buffers; what the bench prints per request. */
export type CopySite = 'frame-assembly' | 'wal-object-body' | 'streaming-part' | 'response-body';

const STAGE_SECONDS_HELP = 'Bench only (FERRY_STAGE_TIMERS=1): main-thread CPU self time spent in each produce-path stage';
const MAIN_THREAD_SECONDS_HELP = 'Bench only (FERRY_STAGE_TIMERS=1): CPU time of the main thread (the one /metrics is served on), staged or not';
const STAGE_ENTRIES_HELP = 'Bench only (FERRY_STAGE_TIMERS=1): times each produce-path stage was entered';
const STAGE_COPIES_HELP = 'Bench only (FERRY_STAGE_TIMERS=1): byte copies (each into a buffer allocated for it) on the hot path, by site';
const STAGE_COPIED_BYTES_HELP = 'Bench only (FERRY_STAGE_TIMERS=1): bytes copied on the hot path, by site';

export class StageTimers {
  readonly enabled: boolean;
  readonly #microseconds = new Map<Stage, number>();
  readonly #entries = new Map<Stage, number>();
  readonly #copies = new Map<CopySite, { count: number; bytes: number }>();
  readonly #stack: Stage[] = [];
  /** When the innermost open stage was last charged (thread CPU microseconds). */
  #sinceMicroseconds = 0;

  constructor(enabled: boolean) {
    this.enabled = enabled;
  }

  /** Starts `stage` inside whatever stage is open; the open one stops being charged until `exit`. */
  enter(stage: Stage): void {
    if (!this.enabled) return;
    const now = threadCpuMicroseconds();
    this.#chargeOpen(now);
    if (this.#stack.length >= STAGE_DEPTH_MAX) this.#stack.length = 0; // an exit was missed (a throw): start over rather than grow
    this.#stack.push(stage);
    this.#entries.set(stage, (this.#entries.get(stage) ?? 0) + 1);
  }

  /** Ends the innermost stage (call it in a `finally`, so that a throw does not leave it open). */
  exit(): void {
    if (!this.enabled) return;
    this.#chargeOpen(threadCpuMicroseconds());
    this.#stack.pop();
  }

  /** Runs `work` as `stage`. */
  time<T>(stage: Stage, work: () => T): T {
    if (!this.enabled) return work();
    this.enter(stage);
    try {
      return work();
    } finally {
      this.exit();
    }
  }

  /** A copy (or an allocation filled by one) of `bytes` at `site`. */
  copied(site: CopySite, bytes: number): void {
    if (!this.enabled) return;
    const counts = this.#copies.get(site) ?? { count: 0, bytes: 0 };
    counts.count++;
    counts.bytes += bytes;
    this.#copies.set(site, counts);
  }

  /** Exposes the counts as ferry_stage_* counters (docs/metrics.md); nothing when off. */
  register(metrics: MetricsRegistry): void {
    if (!this.enabled) return;
    const exposed = new Map<string, number>();
    /** Adds to the series what it gained since the last scrape (the registry's counters only go up). */
    const expose = (name: string, help: string, labels: Record<string, string>, value: number): void => {
      const key = `${name}${JSON.stringify(labels)}`;
      metrics.counter(name, help, { labels }).add(value - (exposed.get(key) ?? 0));
      exposed.set(key, value);
    };
    metrics.onCollect(() => {
      for (const [stage, microseconds] of this.#microseconds) expose('ferry_stage_seconds', STAGE_SECONDS_HELP, { stage }, microseconds / MICROSECONDS_PER_SECOND);
      // The whole main thread, staged or not (collected on it): the rest of the process's CPU ran on other threads.
      expose('ferry_stage_main_thread_seconds', MAIN_THREAD_SECONDS_HELP, {}, threadCpuMicroseconds() / MICROSECONDS_PER_SECOND);
      for (const [stage, count] of this.#entries) expose('ferry_stage_entries', STAGE_ENTRIES_HELP, { stage }, count);
      for (const [site, counts] of this.#copies) {
        expose('ferry_stage_copies', STAGE_COPIES_HELP, { site }, counts.count);
        expose('ferry_stage_copied_bytes', STAGE_COPIED_BYTES_HELP, { site }, counts.bytes);
      }
    });
  }

  #chargeOpen(now: number): void {
    const open = this.#stack.at(-1);
    if (open !== undefined) this.#microseconds.set(open, (this.#microseconds.get(open) ?? 0) + (now - this.#sinceMicroseconds));
    this.#sinceMicroseconds = now;
  }
}

/**
 * The process's one set of stage timers: a diagnostic read by benches through the metrics
 * endpoint, switched on by the environment at start (module state on purpose: threading it
 * through every layer of the hot path would make each signature carry a bench's concern).
 */
export const stageTimers = new StageTimers(typeof Bun !== 'undefined' && process.env[STAGE_TIMERS_ENV] === '1');
