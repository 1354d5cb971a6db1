import { FerryError } from '../errors.ts';
import type { MetricsRegistry } from '../metrics/index.ts';
import { componentLogger, type Logger, type LoggerOption } from '../observability/logger.ts';
import type { ObjectStore } from '../store/object-store.ts';
import type { Clock, Timer } from '../util/clock.ts';
import type { Disk } from '../util/disk.ts';
import { SeededRandom } from '../util/random.ts';
import { registerWalQueueGauges, WalMetrics } from '../wal/metrics.ts';
import { listEpochs, sealEarlierEpochs } from '../wal/seal.ts';
import { storeHealthProbeKey, WalStoreHealth } from '../wal/store-health.ts';
import { DEFAULT_WAL_WRITER_CONFIG, WalWriter, type WalWriterConfig, type WalWriterObserver } from '../wal/writer.ts';
import { nextWriterEpoch } from './writer-epoch.ts';

/**
 * How long a close waits for the WAL to ship what it holds. Uploads retry a store outage without
 * a bound, so without this a close (a broker's SIGTERM) during one never ends. The cost of giving
 * up: appends not yet shipped fail their acks=all waiters and are shipped again by the next start
 * from the local log (a cluster broker's successor never had them: none was acknowledged).
 */
const CLOSE_WAL_FLUSH_WAIT_MS = 30_000;

/** Where and how an engine ships its appends (KIP-1176): the WAL store and its writer. */
export interface WalOptions {
  /** The object store WAL objects go to (S3 Express One Zone in production). */
  readonly store: ObjectStore;
  /** This engine's name in WAL keys; each open gets a new epoch, so streams never collide. */
  readonly writerId: string;
  /** Key prefix in it; default none (keys start with `wal/`). */
  readonly prefix?: string;
  /** Upload thresholds and limits (uploadBytes, uploadIntervalMs, ...); the defaults otherwise. */
  readonly config?: Partial<Omit<WalWriterConfig, 'prefix' | 'stream'>>;
  /** Told of each object's upload and durability (tests and benchmarks). */
  readonly observer?: WalWriterObserver;
  /** Seed for retry jitter (tests replay runs with a fixed one). */
  readonly seed?: number;
}

export interface WalWriterLifecycleDeps {
  readonly clock: Clock;
  readonly disk: Disk;
  readonly metrics?: MetricsRegistry | undefined;
  /** Where an operator hears that uploads fail and recover, that earlier epochs were sealed, that this writer was fenced. */
  readonly report?: LoggerOption | undefined;
  /** Each partition of each object that became durable (the engine hints its in-process replicas). */
  readonly durable: () => void;
}

/**
 * An engine's WAL writer through its epochs: the first at open, a new one after a fence
 * (startNewWalEpoch), each in an epoch past every earlier one of its writer id, here and in the
 * store; and the last one's flush at close.
 */
export class WalWriterLifecycle {
  readonly #directory: string;
  readonly #options: WalOptions;
  readonly #deps: WalWriterLifecycleDeps;
  /** The writer `retire` fenced last: a retry of a failed `renew` retires it again without a word. */
  #retired: WalWriter | null = null;
  /** WAL uploads are meeting retriable faults: logged once when it starts and once when it ends, across writers. */
  #outage = false;
  #writer: WalWriter;
  /** Whether the store takes this engine's writes, across its writers ([C1] storageFailing). */
  readonly health: WalStoreHealth;
  /** Stops the queue gauges reading this lifecycle's writer (at close). */
  readonly #stopGauges: () => void;
  readonly #log: Logger;

  constructor(directory: string, options: WalOptions, epochFloor: number, deps: WalWriterLifecycleDeps) {
    this.#directory = directory;
    this.#options = options;
    this.#deps = deps;
    this.#log = componentLogger(deps.report, 'wal');
    this.health = new WalStoreHealth(options.store, storeHealthProbeKey(options.prefix ?? '', options.writerId), deps.clock);
    this.#writer = this.#create(epochFloor);
    this.#stopGauges = deps.metrics === undefined ? () => {} : registerWalQueueGauges(deps.metrics, () => this.#writer.stats());
  }

  get writer(): WalWriter {
    return this.#writer;
  }

  /** Seals the earlier epochs of this writer id (docs/wal-protocol.md [F]); `storedEpochs` are those the store holds. */
  async sealEarlierEpochs(storedEpochs: readonly number[]): Promise<void> {
    const { prefix, stream } = this.#writer.config;
    await sealEarlierEpochs(this.#options.store, prefix, stream.writerId, stream.epoch, this.#deps.clock.nowMs(), storedEpochs);
    const sealed = storedEpochs.filter((epoch) => epoch < stream.epoch);
    if (sealed.length > 0)
      this.#log.info(
        { writerId: stream.writerId, epoch: stream.epoch, sealedEpochs: sealed },
        `sealed the earlier WAL epochs ${sealed.join(', ')} of ${stream.writerId}; writing epoch ${stream.epoch}`,
      );
  }

  /**
   * Fences the current writer at once (its waiters are rejected, never resolved); it stays current
   * until `renew`. A retry after a failed `renew` finds it fenced already and says nothing again.
   */
  retire(reason: string): void {
    const old = this.#writer;
    if (this.#retired === old) return;
    this.#retired = old;
    old.fence(reason);
    this.#log.warn({ writerId: old.config.stream.writerId, epoch: old.config.stream.epoch, reason }, `WAL writer ${old.config.stream.writerId} epoch ${old.config.stream.epoch} fenced: ${reason}`);
  }

  /**
   * A new writer becomes current, in an epoch past the current one's and past every epoch of this
   * writer id in the store: another process under this writer id (a replacement started while
   * this one was paused) may have written epochs this directory never heard of. Throws Storage,
   * the current writer left as it is, when the store cannot tell which those are (a retry may).
   * `stillWanted` runs after the listing, before anything is written: it throws when the writer is
   * no longer wanted (the engine closed meanwhile), and nothing changes then.
   */
  async renew(stillWanted: () => void = () => {}): Promise<WalWriter> {
    const current = this.#writer.config.stream;
    const stored = await storedEpochFloor(this.#options);
    stillWanted();
    this.#writer = this.#create(Math.max(current.epoch + 1, stored));
    return this.#writer;
  }

  /** Ships what the WAL holds, waiting CLOSE_WAL_FLUSH_WAIT_MS at most; then stops its uploads ([W6]). */
  async flushForClose(): Promise<void> {
    this.#stopGauges();
    const wal = this.#writer;
    if (wal.failure !== null) return;
    let timer: Timer | undefined;
    const gaveUp = new Promise<void>((resolve) => (timer = this.#deps.clock.setTimer(CLOSE_WAL_FLUSH_WAIT_MS, resolve)));
    let settled = false;
    await Promise.race([
      wal
        .flush()
        .catch(() => {})
        .finally(() => (settled = true)),
      gaveUp,
    ]);
    timer?.cancel();
    if (!settled) wal.fence(`the engine closed after waiting ${CLOSE_WAL_FLUSH_WAIT_MS} ms for the object store`);
  }

  /** A writer in the next epoch of this directory, at least `epochFloor` (one past every epoch of this writer id in the store). */
  #create(epochFloor: number): WalWriter {
    const options = this.#options;
    const epoch = nextWriterEpoch(this.#directory, epochFloor, this.#deps.disk);
    const config = { ...DEFAULT_WAL_WRITER_CONFIG, ...options.config, prefix: options.prefix ?? '', stream: { writerId: options.writerId, epoch } };
    const observer: WalWriterObserver = options.observer ?? (this.#deps.metrics === undefined ? {} : new WalMetrics(this.#deps.metrics));
    return new WalWriter(options.store, config, { clock: this.#deps.clock, random: new SeededRandom(options.seed ?? epoch), observer: this.#reporting(observer) });
  }

  /** `observer`, plus the outage reports and the durability hint. */
  #reporting(observer: WalWriterObserver): WalWriterObserver {
    // Delegating method by method: a class instance's methods live on its prototype, not in a spread.
    return {
      uploadLatencyMs: (ms) => observer.uploadLatencyMs?.(ms),
      objectBytes: (bytes) => observer.objectBytes?.(bytes),
      produceToDurableMs: (ms) => observer.produceToDurableMs?.(ms),
      uploadRetry: (key, attempt, error) => {
        observer.uploadRetry?.(key, attempt, error);
        if (!this.#outage) this.#log.error({ key, attempt, err: error }, `WAL uploads failing, retrying until they succeed (acks=all waits): ${error.message}`);
        this.#outage = true;
      },
      uploadRecovered: () => {
        observer.uploadRecovered?.();
        if (this.#outage) this.#log.info({}, 'WAL uploads succeed again');
        this.#outage = false;
      },
      uploadFailed: (startedMs) => {
        observer.uploadFailed?.(startedMs);
        this.health.writeFailed(startedMs);
      },
      uploadLanded: (startedMs) => {
        observer.uploadLanded?.(startedMs);
        this.health.writeLanded(startedMs);
      },
      durable: (key, endOffset) => {
        observer.durable?.(key, endOffset);
        this.#deps.durable();
      },
    };
  }
}

/**
 * One past the last epoch of `options.writerId` that has objects in the store (0 when none): the
 * local epoch file alone is lost with the directory, and a reused stream id would be taken for a
 * fresh stream by a takeover (docs/cluster-protocol.md L7). Costs one LIST of the writer's keys.
 * A failed LIST is a Storage error, never 0: a guessed epoch may be one another process wrote.
 */
async function storedEpochFloor(options: WalOptions): Promise<number> {
  try {
    return ((await listEpochs(options.store, options.prefix ?? '', options.writerId)).at(-1) ?? -1) + 1;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new FerryError('Storage', `could not list the WAL epochs of writer ${options.writerId} in the store, so its next epoch is unknown: ${reason}`, { cause: error });
  }
}
