import { FerryError } from '../errors.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import type { WalWriter } from '../wal/writer.ts';

interface DataWaiter {
  readonly offset: number;
  readonly resolve: () => void;
}

/**
 * One partition of the embedded engine: its log plus the high watermark that consumers may
 * read up to. The high watermark is what is durable, so a reader never sees a record that a
 * crash could take back: with a WAL, what lies in durable WAL objects (KIP-1176); without one,
 * what the local flush policy has synced.
 */
export class Partition {
  readonly topic: string;
  readonly index: number;
  readonly log: PartitionLog;
  readonly #wal: WalWriter | null;
  #highWatermark: number;
  #waiters: DataWaiter[] = [];

  constructor(topic: string, index: number, log: PartitionLog, wal: WalWriter | null) {
    this.topic = topic;
    this.index = index;
    this.log = log;
    this.#wal = wal;
    this.#highWatermark = log.logEndOffset;
  }

  get highWatermark(): number {
    return this.#highWatermark;
  }

  /**
   * Appends as leader: waits for room in the WAL's upload buffer (backpressure), appends to
   * the local log, hands the same bytes to the WAL [W1], and returns the offsets with a promise
   * that resolves once they are durable and the high watermark has passed them.
   */
  async append(records: Uint8Array, leaderEpoch: number): Promise<{ baseOffset: number; lastOffset: number; durable: Promise<void> }> {
    const wal = this.#wal;
    if (wal !== null) await wal.reserve(records.length);
    const { baseOffset, lastOffset } = this.log.append(records, leaderEpoch);
    let durable: Promise<void>;
    if (wal === null) {
      durable = this.log.waitForFlush(lastOffset);
    } else {
      wal.append({ topic: this.topic, partition: this.index, leaderEpoch, baseOffset, lastOffset, data: records });
      durable = wal.waitForDurable(this.topic, this.index, lastOffset);
    }
    return { baseOffset, lastOffset, durable: durable.then(() => this.#advance(lastOffset + 1)) };
  }

  /** Resolves when the high watermark passes `offset` (new data to read), or when `signal` aborts. */
  waitForData(offset: number, signal?: AbortSignal): Promise<void> {
    if (this.#highWatermark > offset || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter = { offset, resolve };
      this.#waiters.push(waiter);
      signal?.addEventListener('abort', () => {
        this.#waiters = this.#waiters.filter((other) => other !== waiter);
        resolve();
      }, { once: true });
    });
  }

  /** Wakes every waiter; used at close, after which reads fail with Closed. */
  wakeAll(): void {
    for (const waiter of this.#waiters.splice(0)) waiter.resolve();
  }

  checkReadable(offset: number): void {
    if (offset > this.#highWatermark) {
      throw new FerryError('OffsetOutOfRange', `offset ${offset} is past the high watermark ${this.#highWatermark} of ${this.topic}-${this.index}`);
    }
  }

  #advance(highWatermark: number): void {
    if (highWatermark <= this.#highWatermark) return;
    this.#highWatermark = highWatermark;
    const still: DataWaiter[] = [];
    for (const waiter of this.#waiters) {
      if (waiter.offset < highWatermark) waiter.resolve();
      else still.push(waiter);
    }
    this.#waiters = still;
  }
}
