import type { StreamId } from '../wal/keys.ts';

/**
 * How long a sealed stream whose every object below the seal is gone waits before the objects
 * above its seal go ([G6]): a fenced writer's puts that were in flight when it was sealed [W6]
 * land late (its retries ride out an outage); waiting lets most of them land first, and any that
 * land later go at a later pass. Readers never read past a seal, so the wait costs only storage.
 */
export const WAL_ORPHAN_DELAY_MS = 10 * 60 * 1000;

/** When each sealed stream was first seen collected down to its seal (monotonic ms). */
export class AboveSealClock {
  readonly #delayMs: number;
  readonly #collectedSinceMs = new Map<string, number>();

  constructor(delayMs = WAL_ORPHAN_DELAY_MS) {
    this.#delayMs = delayMs;
  }

  /** Notes that `stream` is collected down to its seal at `nowMs`; true once that has held for the delay. */
  due(stream: StreamId, nowMs: number): boolean {
    const key = `${stream.writerId}/${stream.epoch}`;
    const since = this.#collectedSinceMs.get(key);
    if (since === undefined) {
      this.#collectedSinceMs.set(key, nowMs);
      return this.#delayMs <= 0;
    }
    return nowMs - since >= this.#delayMs;
  }

  /** Streams no longer listed: their entries go, so the map stays as small as the streams kept. */
  keepOnly(streams: readonly StreamId[]): void {
    const kept = new Set(streams.map((stream) => `${stream.writerId}/${stream.epoch}`));
    for (const key of this.#collectedSinceMs.keys()) if (!kept.has(key)) this.#collectedSinceMs.delete(key);
  }
}
