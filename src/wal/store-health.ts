import { isStoreError, type StoreErrorKind } from '../store/errors.ts';
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
 *   connection, a throttle, revoked access: isReadFailure) with none sent later answered. It counts
 *   from when the first such read was seen failing, not from when it was sent: one read that hung
 *   for a lease would otherwise count as a lease of failure at once. An answer ends it (a store that
 *   answers NotFound is reachable), so a stray timeout among answered reads moves nothing; a write
 *   that lands does not (a store may take writes and refuse reads).
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
   * way). It says nothing of reads: a store may take writes and refuse reads.
   */
  writeLanded(startedMs: number): void {
    this.#landedSentMs = Math.max(this.#landedSentMs, startedMs);
    if (this.#failingSinceMs !== null && this.#failingSinceMs > startedMs) return;
    this.#failingSinceMs = null;
  }

  /** A read that started at `startedMs` (monotonic) got no answer: starts a read failure, unless one sent later was answered. */
  readUnanswered(startedMs: number): void {
    if (startedMs <= this.#answeredSentMs) return;
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

  /**
   * While writes fail: one small put whose landing ends the failure; while reads fail, one read
   * of the same key (a broker flagged storageFailing follows nothing, so it has no read of its
   * own to find the store answering again). One probe at a time.
   */
  recheck(): void {
    if ((this.#failingSinceMs === null && this.#readFailure === null) || this.#probing) return;
    this.#probing = true;
    const startedMs = this.#clock.monotonicMs();
    const write =
      this.#failingSinceMs === null
        ? Promise.resolve()
        : this.#store.put(this.#probeKey, PROBE_BODY).then(
            () => this.writeLanded(startedMs),
            () => this.writeFailed(startedMs),
          );
    const read =
      this.#readFailure === null
        ? Promise.resolve()
        : this.#store.head(this.#probeKey).then(
            () => this.readAnswered(startedMs),
            (error: unknown) => (isReadFailure(error) ? this.readUnanswered(startedMs) : this.readAnswered(startedMs)),
          );
    void Promise.all([write, read]).finally(() => (this.#probing = false));
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
 * The store refused or left unanswered a read as a cut off or overloaded store does: a timeout, a
 * broken connection or a 5xx (Unavailable), a throttle (S3's 503 SlowDown), revoked access
 * (AccessDenied). The write track counts the same refusals. An absent object is an answer.
 */
function isReadFailure(error: unknown): boolean {
  return isStoreError(error) && READ_FAILURES.has(error.kind);
}

const READ_FAILURES: ReadonlySet<StoreErrorKind> = new Set(['Timeout', 'Unavailable', 'Throttled', 'AccessDenied']);

/**
 * `store` as a follower reads it, telling `outcomes` of each GET, HEAD and LIST: a failure
 * (isReadFailure) or an answer (an object, or none): a broker that only follows has nothing else
 * to find a cut with. Other errors (a bad request) say neither. Writes pass through unobserved
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
      if (isReadFailure(error)) outcomes.unanswered(startedMs);
      else if (isStoreError(error, 'NotFound')) outcomes.answered(startedMs);
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
