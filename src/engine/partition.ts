import { FerryError } from '../errors.ts';
import type { PartitionLog } from '../log/partition-log.ts';

interface DataWaiter {
  readonly offset: number;
  readonly resolve: () => void;
}

/**
 * One partition of the embedded engine: its log plus the high watermark that consumers may
 * read up to. Locally the high watermark is what the flush policy has made durable, so a reader
 * never sees a record that a crash could take back.
 */
export class Partition {
  readonly topic: string;
  readonly index: number;
  readonly log: PartitionLog;
  #highWatermark: number;
  #waiters: DataWaiter[] = [];

  constructor(topic: string, index: number, log: PartitionLog) {
    this.topic = topic;
    this.index = index;
    this.log = log;
    this.#highWatermark = log.logEndOffset;
  }

  get highWatermark(): number {
    return this.#highWatermark;
  }

  /** Appends as leader and resolves once the batch is durable; offsets are known at once. */
  append(records: Uint8Array, leaderEpoch: number): { baseOffset: number; lastOffset: number; durable: Promise<void> } {
    const { baseOffset, lastOffset } = this.log.append(records, leaderEpoch);
    const durable = this.log.waitForFlush(lastOffset).then(() => this.#advance(lastOffset + 1));
    return { baseOffset, lastOffset, durable };
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
