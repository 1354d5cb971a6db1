import type { ObjectStore } from '../store/object-store.ts';
import type { Clock } from '../util/clock.ts';

/** The probe's body: its content does not matter, only that a write lands. */
const PROBE_BODY = new TextEncoder().encode('ferry: a write to the WAL store landed\n');

/** Where a broker's probe writes go: outside `wal/`, so no listing of streams ever sees them. */
export function storeHealthProbeKey(prefix: string, writerId: string): string {
  return `${prefix}store-health/${writerId}`;
}

/**
 * Whether this engine can write to its WAL store, across its writers' epochs (docs/cluster-protocol.md
 * [C1] storageFailing): since when its writes have failed with none landing. A writer that failed
 * for good (a non-retriable fault: revoked access) or was fenced and replaced does not end the
 * failure; only a write that lands does: an upload of any writer, or a probe (`recheck`), which a
 * broker that leads nothing any more needs, having no upload of its own to find out with. Reads of
 * its followers that go unanswered start a failure too (`readUnanswered`).
 */
export class WalStoreHealth {
  readonly #store: ObjectStore;
  readonly #probeKey: string;
  readonly #clock: Clock;
  /** Monotonic start of the first write that failed since one last landed; null while writes land. */
  #failingSinceMs: number | null = null;
  /** Monotonic start of the latest-sent write that landed: a failure of a write sent before it is older news. */
  #landedSentMs = -Infinity;
  #probing = false;

  constructor(store: ObjectStore, probeKey: string, clock: Clock) {
    this.#store = store;
    this.#probeKey = probeKey;
    this.#clock = clock;
  }

  /**
   * A write that started at `startedMs` (monotonic) failed. One sent no later than a write that
   * landed says nothing newer than that landing (a request to an unreachable store fails seconds
   * after it was sent): counted from its start, it would make a store that takes writes look
   * failing for that long at once.
   */
  writeFailed(startedMs: number): void {
    if (startedMs <= this.#landedSentMs) return;
    this.#failingSinceMs = Math.min(this.#failingSinceMs ?? startedMs, startedMs);
  }

  /**
   * A read that started at `startedMs` (monotonic) got no answer (a timeout, a broken connection):
   * for a broker that leads nothing, a follower's reads are all that can find the store out of reach.
   * It starts a failure as a failed write does, and as with one only a write that lands ends it
   * (a store may answer reads and refuse writes; the probe, `recheck`, writes).
   */
  readUnanswered(startedMs: number): void {
    this.writeFailed(startedMs);
  }

  /**
   * A write sent at `startedMs` (monotonic; a lower bound will do) landed: the store takes this
   * engine's writes, unless a write sent after it has failed since (the same older news, the other way).
   */
  writeLanded(startedMs: number): void {
    this.#landedSentMs = Math.max(this.#landedSentMs, startedMs);
    if (this.#failingSinceMs !== null && this.#failingSinceMs > startedMs) return;
    this.#failingSinceMs = null;
  }

  /** How long writes have failed with none landing; 0 while they land. */
  failingForMs(): number {
    return this.#failingSinceMs === null ? 0 : Math.max(0, this.#clock.monotonicMs() - this.#failingSinceMs);
  }

  /** While writes fail: one small put (one at a time) whose landing ends the failure. */
  recheck(): void {
    if (this.#failingSinceMs === null || this.#probing) return;
    this.#probing = true;
    const startedMs = this.#clock.monotonicMs();
    this.#store
      .put(this.#probeKey, PROBE_BODY)
      .then(
        () => this.writeLanded(startedMs),
        () => this.writeFailed(startedMs),
      )
      .finally(() => (this.#probing = false));
  }
}
