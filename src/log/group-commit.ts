import { FerryError } from '../errors.ts';
import type { Clock, Timer } from '../util/clock.ts';
import type { FlushPolicy } from './config.ts';

interface Waiter {
  readonly offset: number;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/**
 * Group commit for one log: one fdatasync covers every append made before it started. Waiters
 * resolve once a flush that began after their append completes, never earlier. A failed
 * fdatasync rejects every waiter and marks the log failed (the kernel may have dropped the dirty
 * pages), so nothing unflushed is ever acknowledged, until the log wrote the unsynced bytes
 * again and synced them (`recovered`).
 */
export class GroupCommit {
  readonly #policy: FlushPolicy;
  readonly #clock: Clock;
  readonly #flush: () => Promise<void>;
  /** Offsets below this are on disk. */
  #flushedOffset: number;
  /** Offsets below this have been written; the next flush will cover them. */
  #writtenOffset: number;
  #pendingBytes = 0;
  #waiters: Waiter[] = [];
  #timer: Timer | null = null;
  #inFlight: Promise<void> | null = null;
  #failure: Error | null = null;

  constructor(policy: FlushPolicy, clock: Clock, flushedOffset: number, flush: () => Promise<void>) {
    this.#policy = policy;
    this.#clock = clock;
    this.#flushedOffset = flushedOffset;
    this.#writtenOffset = flushedOffset;
    this.#flush = flush;
  }

  get flushedOffset(): number {
    return this.#flushedOffset;
  }

  get failure(): Error | null {
    return this.#failure;
  }

  /** Notes that offsets below `endOffset` are written (and, for per-append, already synced). */
  noteWritten(endOffset: number, bytes: number, synced: boolean): void {
    this.#writtenOffset = endOffset;
    if (synced) {
      this.#flushedOffset = endOffset;
      this.#resolveUpTo(endOffset);
      return;
    }
    this.#pendingBytes += bytes;
    if (this.#policy.kind === 'group') this.#schedule(this.#policy);
  }

  /** Resolves when `offset` is on disk (at once under the `none` policy: the OS decides). */
  waitFor(offset: number): Promise<void> {
    if (this.#failure !== null) return Promise.reject(this.#failure);
    if (offset < this.#flushedOffset || this.#policy.kind === 'none') return Promise.resolve();
    return new Promise((resolve, reject) => this.#waiters.push({ offset, resolve, reject }));
  }

  /** Flushes everything written so far, now. */
  async flushNow(): Promise<void> {
    while (this.#flushedOffset < this.#writtenOffset) {
      if (this.#failure !== null) throw this.#failure;
      await (this.#inFlight ?? this.#start());
    }
  }

  /**
   * The log starts over at `offset` with nothing of its own (PartitionLog.startAt): everything
   * below lives elsewhere, durably, and nothing above was written. Waiters are told it is gone.
   */
  restartAt(offset: number, error: Error): void {
    this.abort(error);
    this.#writtenOffset = offset;
    this.#flushedOffset = offset;
    this.#pendingBytes = 0;
  }

  /** Notes a truncation: offsets at or past `endOffset` no longer exist. */
  noteTruncated(endOffset: number): void {
    this.#writtenOffset = Math.min(this.#writtenOffset, endOffset);
    this.#flushedOffset = Math.min(this.#flushedOffset, endOffset);
  }

  /** Rejects every waiter with `error` (the log was closed under them). */
  abort(error: Error): void {
    this.#timer?.cancel();
    this.#timer = null;
    for (const waiter of this.#waiters.splice(0)) waiter.reject(error);
  }

  #schedule(policy: { bytes: number; ms: number }): void {
    if (this.#inFlight !== null) return; // the completion handler reschedules
    if (policy.ms === 0) {
      // As soon as possible, but after the producers woken by the last flush have appended:
      // starting at once would cover one batch and leave the rest for the next sync (measured:
      // half the syncs, 1.3x the throughput with 8 producers).
      if (this.#timer === null)
        this.#timer = this.#clock.immediate(() => {
          this.#timer = null;
          if (this.#inFlight === null) void this.#start();
        });
    } else if (this.#pendingBytes >= policy.bytes) {
      this.#timer?.cancel();
      this.#timer = null;
      void this.#start();
    } else if (this.#timer === null) {
      this.#timer = this.#clock.setTimer(policy.ms, () => {
        this.#timer = null;
        if (this.#inFlight === null) void this.#start();
      });
    }
  }

  #start(): Promise<void> {
    const target = this.#writtenOffset;
    this.#pendingBytes = 0;
    const flight = this.#flush().then(
      () => this.#completed(target),
      (error: unknown) => this.#failed(error),
    );
    this.#inFlight = flight;
    return flight;
  }

  #completed(target: number): void {
    this.#inFlight = null;
    this.#flushedOffset = Math.max(this.#flushedOffset, target);
    this.#resolveUpTo(this.#flushedOffset);
    if (this.#writtenOffset > this.#flushedOffset && this.#policy.kind === 'group') this.#schedule(this.#policy);
  }

  #failed(error: unknown): void {
    this.#inFlight = null;
    this.fail(error);
  }

  /** Marks the log failed: a sync did not complete, so nothing after the last good one is safe. */
  fail(error: unknown): void {
    if (this.#failure !== null) return;
    this.#failure = new FerryError('Storage', `fdatasync failed; the unsynced writes are written again before the next one: ${String(error)}`, { cause: error });
    this.abort(this.#failure);
  }

  /** The log wrote everything below `endOffset` again and synced it: it takes writes again. */
  recovered(endOffset: number): void {
    this.#failure = null;
    this.#pendingBytes = 0;
    this.#writtenOffset = endOffset;
    this.#flushedOffset = endOffset;
  }

  #resolveUpTo(flushedOffset: number): void {
    if (this.#waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const waiter of this.#waiters) {
      if (waiter.offset < flushedOffset) waiter.resolve();
      else still.push(waiter);
    }
    this.#waiters = still;
  }
}
