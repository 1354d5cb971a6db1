import type { MetricsRegistry } from '../metrics/index.ts';
import { componentLogger, type Logger, type LoggerOption } from '../observability/logger.ts';

/**
 * What the logs tell about their disk: each failed write (a full disk, an I/O error) and each
 * write that succeeds. A failure spell starts at the first failure and ends at the next success;
 * the logs recover by themselves (see PartitionLog: a failed write leaves the log as before it).
 */
export interface StorageObserver {
  /** `bytes`: how much the failed write tried to add (0 when unknown). */
  writeFailed(directory: string, error: unknown, bytes?: number): void;
  writeSucceeded(): void;
}

/**
 * One engine's storage health: counts every failed write (ferry_storage_write_failures_total),
 * shows whether writes are failing now (ferry_storage_failing), and logs one line when a spell
 * starts and one when it ends, however many writes fail in between.
 */
export class StorageHealth implements StorageObserver {
  readonly #log: Logger;
  readonly #failures: { add(): void } | null;
  readonly #failing: { set(value: number): void } | null;
  #spellFailures = 0;
  /** The most bytes a write that failed in this spell tried to add: a probe must find that much room. */
  #spellBytes = 0;

  constructor(metrics?: MetricsRegistry, log?: LoggerOption) {
    this.#log = componentLogger(log, 'storage');
    this.#failures = metrics?.counter('ferry_storage_write_failures_total', 'Local log writes that failed (a full disk, an I/O error); each left its log as before it') ?? null;
    this.#failing = metrics?.gauge('ferry_storage_failing', '1 while local log writes fail, 0 once they succeed again') ?? null;
  }

  /** Whether the last write failed. */
  get failing(): boolean {
    return this.#spellFailures > 0;
  }

  /** The most bytes a write that failed in the current spell tried to add (0 outside a spell). */
  get failedWriteBytes(): number {
    return this.#spellBytes;
  }

  writeFailed(directory: string, error: unknown, bytes = 0): void {
    this.#failures?.add();
    this.#spellBytes = Math.max(this.#spellBytes, bytes);
    if (this.#spellFailures++ === 0) {
      this.#failing?.set(1);
      this.#log.error(
        { directory, err: error, bytes },
        `storage: writes to ${directory} fail (${error instanceof Error ? error.message : String(error)}); the request is answered KAFKA_STORAGE_ERROR and writes are retried as they come`,
      );
    }
  }

  writeSucceeded(): void {
    if (this.#spellFailures === 0) return;
    this.#log.info({ failedWrites: this.#spellFailures }, `storage: writes succeed again after ${this.#spellFailures} failed`);
    this.#spellFailures = 0;
    this.#spellBytes = 0;
    this.#failing?.set(0);
  }
}
