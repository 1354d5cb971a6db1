import type { StorageObserver } from '../log/storage-health.ts';
import type { MetricsRegistry } from '../metrics/index.ts';
import type { ObjectStore } from '../store/object-store.ts';
import type { Clock, Timer } from '../util/clock.ts';
import { isOsError } from '../util/os-error.ts';
import type { Disk } from '../util/disk.ts';
import type { Random } from '../util/random.ts';
import type { StreamId } from '../wal/keys.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../wal/reader.ts';
import { readShippedCheckpoint, shippedEnds, writeShippedCheckpoint } from '../wal/shipped.ts';
import type { WalWriter } from '../wal/writer.ts';

/** How often a leader saves what its WAL streams hold, so a restart reads only what came after. */
const SHIPPED_CHECKPOINT_INTERVAL_MS = 1000;

/**
 * What the earlier streams of `stream`'s writer hold per partition, by partitionKey: the shipped
 * checkpoint in `directory` plus the objects written after it (their footers).
 */
export async function earlierStreamEnds(store: ObjectStore, prefix: string, stream: StreamId, directory: string, clock: Clock, disk: Disk, random: Random): Promise<Map<string, number>> {
  const reader = new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix, wants: () => false }, { clock, random });
  return shippedEnds(reader, stream.writerId, stream.epoch, readShippedCheckpoint(directory, disk));
}

export interface ShippedCheckpointerDeps {
  readonly clock: Clock;
  readonly storage: StorageObserver;
  readonly disk: Disk;
  readonly metrics?: MetricsRegistry | undefined;
}

/**
 * A leader's periodic save of what its WAL streams hold per partition (see ShippedCheckpoint):
 * `base`, each partition's end in the earlier streams, plus what the current writer made durable.
 */
export class ShippedCheckpointer {
  readonly #directory: string;
  readonly #base: ReadonlyMap<string, number>;
  /** The engine's current writer (a getter: the engine owns its lifecycle). */
  readonly #wal: () => WalWriter | null;
  readonly #deps: ShippedCheckpointerDeps;
  #timer: Timer | null = null;
  #stopped = false;

  constructor(directory: string, base: ReadonlyMap<string, number>, wal: () => WalWriter | null, deps: ShippedCheckpointerDeps) {
    this.#directory = directory;
    this.#base = base;
    this.#wal = wal;
    this.#deps = deps;
  }

  /** Saves every SHIPPED_CHECKPOINT_INTERVAL_MS until stop. */
  start(): void {
    this.#timer = this.#deps.clock.setTimer(SHIPPED_CHECKPOINT_INTERVAL_MS, () => this.#tick(), true);
  }

  /** Ends the periodic saves; `checkpoint` still saves once (a close's last one). */
  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
  }

  /** Saves what the streams hold so far. */
  checkpoint(): void {
    const wal = this.#wal();
    if (wal === null) return;
    const ends = new Map(this.#base);
    for (const [key, end] of wal.durableEnds()) ends.set(key, Math.max(ends.get(key) ?? 0, end));
    const entries = [...ends].map(([key, end]) => {
      const [topicId, partition] = key.split('\u0000');
      return [topicId!, Number(partition), end] as const;
    });
    try {
      writeShippedCheckpoint(this.#directory, { epoch: wal.config.stream.epoch, sequence: wal.durableSequence, ends: entries }, this.#deps.disk);
    } catch (error) {
      // An OS failure (EMFILE, ENOSPC) costs only recovery time: the previous checkpoint stays and the
      // next start reads more WAL objects; the next interval tries again.
      this.#deps.metrics?.counter('ferry_engine_checkpoint_failures_total', 'Shipped-offsets checkpoints that could not be written (the next start reads more WAL objects)').add();
      if (!isOsError(error)) throw error;
      this.#deps.storage.writeFailed(this.#directory, error);
    }
  }

  #tick(): void {
    if (this.#stopped || this.#wal() === null) return;
    this.checkpoint();
    this.start();
  }
}
