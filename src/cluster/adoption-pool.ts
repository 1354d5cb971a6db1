import { assert } from '../util/assert.ts';

/**
 * [K4] The adoptions of one scan, up to a bound at once. `run` waits for room, then starts the
 * work without waiting for it; `settled` waits for all of it, so the scan that started them is
 * still exclusive ([C2]: no other scan or writer epoch change runs meanwhile). The first failure
 * stops the pool: nothing more starts, and `settled` throws it once the rest ended, as a scan
 * that adopted one after another stopped at its first failure.
 */
export class AdoptionPool {
  readonly #limit: number;
  readonly #running = new Set<Promise<void>>();
  #failure: { readonly error: unknown } | null = null;

  constructor(limit: number) {
    assert(Number.isSafeInteger(limit) && limit >= 1, `an adoption pool runs at least one at a time, not ${limit}`);
    this.#limit = limit;
  }

  /** Adoptions started and not yet ended. */
  get inFlight(): number {
    return this.#running.size;
  }

  /** Whether an adoption failed: the scan starts nothing more. */
  get failed(): boolean {
    return this.#failure !== null;
  }

  /** Starts `work` once fewer than the bound run (not at all after a failure). */
  async run(work: () => Promise<void>): Promise<void> {
    while (this.#running.size >= this.#limit) await Promise.race(this.#running);
    if (this.#failure !== null) return;
    const running: Promise<void> = work().then(
      () => void this.#running.delete(running),
      (error: unknown) => {
        this.#running.delete(running);
        this.#failure ??= { error };
      },
    );
    this.#running.add(running);
  }

  /** Waits for every adoption started; throws the first failure. */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.race(this.#running);
    if (this.#failure !== null) throw this.#failure.error;
  }
}
