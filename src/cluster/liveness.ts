import type { Clock } from '../util/clock.ts';
import type { Versioned } from '../control/control-store.ts';

/** What liveness needs of a broker record. */
export interface LeaseRecord {
  readonly nodeId: number;
  /** 0 after a clean shutdown (resigned): dead at once. */
  readonly renewedAtMs: number;
  readonly leaseMs: number;
}

/**
 * Other brokers' liveness as this broker observes it (docs/cluster-protocol.md [C1]): a broker is
 * alive while its record changed within its `leaseMs`, measured on this process's monotonic
 * clock from the scan that first saw the change. Wall-clock `renewedAtMs` is never compared with
 * the local clock, so clock skew cannot make a healthy broker look dead. A broker first seen now
 * counts as renewed now: a new observer waits a whole lease before it takes anything over.
 */
export class Liveness {
  readonly #clock: Clock;
  readonly #seen = new Map<number, { etag: string; seenMs: number }>();
  /** [K1] Record versions (ETags) whose process is known to have exited: dead whatever their age. */
  readonly #exited = new Map<number, string>();
  /** When the records were last read: a verdict is as of then (nothing new is known since). */
  #observedMs: number | null = null;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Notes the records of a scan (every broker record, with its ETag); returns the monotonic time they count as read. */
  observe(records: Iterable<Versioned<LeaseRecord>>): number {
    const nowMs = this.#clock.monotonicMs();
    const present = new Set<number>();
    for (const { value, etag } of records) {
      present.add(value.nodeId);
      if (this.#seen.get(value.nodeId)?.etag !== etag) this.#seen.set(value.nodeId, { etag, seenMs: nowMs });
      if (this.#exited.has(value.nodeId) && this.#exited.get(value.nodeId) !== etag) this.#exited.delete(value.nodeId); // written again since: the lease judges it
    }
    for (const nodeId of [...this.#seen.keys()]) if (!present.has(nodeId)) this.#seen.delete(nodeId);
    for (const nodeId of [...this.#exited.keys()]) if (!present.has(nodeId)) this.#exited.delete(nodeId);
    this.#observedMs = nowMs;
    return nowMs;
  }

  /**
   * Alive: not resigned, and its record changed less than its lease before the last reading of
   * the records (`observe`). A verdict is as of what was read: however long a scan then takes
   * (rebuilding partitions for longer than a lease), a broker that renewed all along is never dead
   * to it, and a dead one is found dead by the first scan after its lease ran out ([R4]).
   */
  isAlive(record: LeaseRecord, atMs = this.#observedMs ?? this.#clock.monotonicMs()): boolean {
    const seen = this.#seen.get(record.nodeId);
    if (seen !== undefined && this.#exited.get(record.nodeId) === seen.etag) return false;
    return record.renewedAtMs > 0 && seen !== undefined && atMs - seen.seenMs <= record.leaseMs;
  }

  /**
   * [K1] The process that wrote version `etag` of broker `nodeId`'s record has exited (its peer
   * connection ended and its listener refuses, and the record still names its incarnation): that
   * version is dead now, as a resignation would be. A later version (a renewal that was on its way,
   * a new process) is judged by its lease again.
   */
  exited(nodeId: number, etag: string): void {
    this.#exited.set(nodeId, etag);
    if (this.#seen.get(nodeId) === undefined) this.#seen.set(nodeId, { etag, seenMs: this.#clock.monotonicMs() });
  }
}
