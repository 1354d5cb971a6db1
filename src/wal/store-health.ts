import { isStoreError } from '../store/errors.ts';
import type { GetOptions, GetResult, ListOptions, ListPage, ObjectInfo, ObjectStore } from '../store/object-store.ts';
import type { Clock } from '../util/clock.ts';

/** The probe's body: its content does not matter, only that a write lands. */
const PROBE_BODY = new TextEncoder().encode('ferry: a write to the WAL store landed\n');

/** Where a broker's probe writes go: outside `wal/`, so no listing of streams ever sees them. */
export function storeHealthProbeKey(prefix: string, writerId: string): string {
  return `${prefix}store-health/${writerId}`;
}

/** A read the store left unanswered, while no later one was answered. */
interface ReadFailure {
  /** Monotonic start of the earliest such read: an answer to a read sent at or after it ends the failure. */
  readonly sentMs: number;
  /** When it was first seen failing: the failure counts from then. */
  readonly seenMs: number;
}

/**
 * Whether this engine can reach its WAL store, across its writers' epochs (docs/cluster-protocol.md
 * [C1] storageFailing), on two tracks:
 * - writes: since when its writes have failed with none landing. A writer that failed for good (a
 *   non-retriable fault: revoked access) or was fenced and replaced does not end the failure; only
 *   a write that lands does: an upload of any writer, or a probe (`recheck`), which a broker that
 *   leads nothing any more needs, having no upload of its own to find out with;
 * - reads (a follower's): since when its reads have gone unanswered (a timeout, a broken
 *   connection) with none sent later answered and no write landed. It counts from when the first
 *   such read was seen failing, not from when it was sent: one read that hung for a lease would
 *   otherwise count as a lease of failure at once. An answer of any kind ends it (a store that
 *   answers NotFound is reachable), so a stray timeout among answered reads moves nothing.
 */
export class WalStoreHealth {
  readonly #store: ObjectStore;
  readonly #probeKey: string;
  readonly #clock: Clock;
  /** Monotonic start of the first write that failed since one last landed; null while writes land. */
  #failingSinceMs: number | null = null;
  /** Monotonic start of the latest-sent write that landed: a failure of a write sent before it is older news. */
  #landedSentMs = -Infinity;
  #readFailure: ReadFailure | null = null;
  /** Monotonic start of the latest-sent read that was answered: an unanswered read sent before it is older news. */
  #answeredSentMs = -Infinity;
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
   * A write sent at `startedMs` (monotonic; a lower bound will do) landed: the store takes this
   * engine's writes, unless a write sent after it has failed since (the same older news, the other
   * way). It answers reads too: a read failure sent no later than it ends.
   */
  writeLanded(startedMs: number): void {
    this.#landedSentMs = Math.max(this.#landedSentMs, startedMs);
    this.#endReadFailure(startedMs);
    if (this.#failingSinceMs !== null && this.#failingSinceMs > startedMs) return;
    this.#failingSinceMs = null;
  }

  /** A read that started at `startedMs` (monotonic) got no answer: starts a read failure, unless one sent later was answered. */
  readUnanswered(startedMs: number): void {
    if (startedMs <= Math.max(this.#answeredSentMs, this.#landedSentMs)) return;
    if (this.#readFailure !== null) return; // the earliest counts
    this.#readFailure = { sentMs: startedMs, seenMs: this.#clock.monotonicMs() };
  }

  /** A read that started at `startedMs` (monotonic) was answered (an absent object too): the store answers this broker. */
  readAnswered(startedMs: number): void {
    this.#answeredSentMs = Math.max(this.#answeredSentMs, startedMs);
    this.#endReadFailure(startedMs);
  }

  /** How long writes, or reads, have failed with none landing or answered; 0 while they do. */
  failingForMs(): number {
    const nowMs = this.#clock.monotonicMs();
    const writes = this.#failingSinceMs === null ? 0 : nowMs - this.#failingSinceMs;
    const reads = this.#readFailure === null ? 0 : nowMs - this.#readFailure.seenMs;
    return Math.max(0, writes, reads);
  }

  /** While writes or reads fail: one small put (one at a time) whose landing ends the failure. */
  recheck(): void {
    if ((this.#failingSinceMs === null && this.#readFailure === null) || this.#probing) return;
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

  #endReadFailure(answeredSentMs: number): void {
    if (this.#readFailure !== null && this.#readFailure.sentMs <= answeredSentMs) this.#readFailure = null;
  }
}

/** What a follower's reads tell WalStoreHealth: each read's monotonic start, and whether the store answered it. */
export interface ReadOutcomes {
  answered(startedMs: number): void;
  unanswered(startedMs: number): void;
}

/**
 * `store` as a follower reads it, telling `outcomes` of each GET, HEAD and LIST: unanswered (a
 * timeout, a broken connection, a 5xx) or answered (an absent object and a throttle are answers):
 * a broker that only follows has nothing else to find a cut with. Writes pass through unobserved
 * (their writers report their own). Behaviour is the inner store's.
 */
export function reportingReads(store: ObjectStore, clock: Clock, outcomes: ReadOutcomes): ObjectStore {
  const observed = async <T>(read: () => Promise<T>): Promise<T> => {
    const startedMs = clock.monotonicMs();
    try {
      const answer = await read();
      outcomes.answered(startedMs);
      return answer;
    } catch (error) {
      if (isStoreError(error, 'Timeout') || isStoreError(error, 'Unavailable')) outcomes.unanswered(startedMs);
      else if (isStoreError(error)) outcomes.answered(startedMs);
      throw error;
    }
  };
  return {
    kind: store.kind,
    get: (key: string, options?: GetOptions): Promise<GetResult> => observed(() => store.get(key, options)),
    head: (key: string): Promise<ObjectInfo | null> => observed(() => store.head(key)),
    list: (prefix: string, options?: ListOptions): Promise<ListPage> => observed(() => store.list(prefix, options)),
    put: (key, body, options) => store.put(key, body, options),
    delete: (key) => store.delete(key),
    deleteMany: (keys) => store.deleteMany(keys),
    createMultipartUpload: (key, options) => store.createMultipartUpload(key, options),
    stats: () => store.stats(),
    close: () => store.close(),
  };
}
