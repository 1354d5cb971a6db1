import { assert } from '../util/assert.ts';

/**
 * At most `permits` tasks run at once; the rest wait in arrival order. No timers: a waiter is
 * let in by the task that finishes, so under the simulation the order is the scheduler's.
 */
export class Semaphore {
  readonly #permits: number;
  readonly #waiters: (() => void)[] = [];
  #running = 0;

  constructor(permits: number) {
    assert(Number.isSafeInteger(permits) && permits >= 1, `a semaphore of ${permits} permits`);
    this.#permits = permits;
  }

  /** Tasks running now (at most the permits). */
  get running(): number {
    return this.#running;
  }

  get waiting(): number {
    return this.#waiters.length;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    await this.#acquire();
    try {
      return await task();
    } finally {
      this.#release();
    }
  }

  #acquire(): Promise<void> {
    if (this.#running < this.#permits) {
      this.#running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Hands the permit straight to the next waiter, so a newcomer never overtakes it. */
  #release(): void {
    const next = this.#waiters.shift();
    if (next !== undefined) next();
    else this.#running--;
    assert(this.#running >= 0 && this.#running <= this.#permits, `${this.#running} tasks hold ${this.#permits} permits`);
  }
}
