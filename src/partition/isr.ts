import { assert } from '../util/assert.ts';
import type { Clock, Timer } from '../util/clock.ts';
import { regressed } from '../util/regressions.ts';

/**
 * Kafka's replica.lag.time.max.ms: a follower that has not caught up with the leader for this
 * long leaves the in-sync set. Longer keeps a slow follower counted (acks=all waits for it that
 * long before going on without it); shorter drops followers on a hiccup of the object store.
 */
export const REPLICA_LAG_TIME_MAX_MS = 30_000;
/** Kafka's log_start_offset of a replica Fetch that does not say (an older peer): never at or above any offset. */
export const UNKNOWN_LOG_START = -1;

/** Which followers may count for a leader partition right now (docs/cluster-protocol.md, "Replication factor > 1"). */
export interface ReplicaSet {
  /**
   * The partition's replica set without its leader, restricted to replicas whose broker holds a
   * live lease (a cluster), or the attached in-process replicas (embedded).
   */
  followers(): ReadonlySet<string>;
}

interface Progress {
  logEndOffset: number;
  /** The log start the follower last reported (UNKNOWN_LOG_START: it did not say): DeleteRecords waits for it [R6]. */
  logStartOffset: number;
  /** Monotonic time the follower was last known to hold everything durable on the leader. */
  caughtUpAtMs: number;
  /** The follower's previous report: when, and the leader's durable end then. */
  reportedAtMs: number;
  /** Monotonic time of its first report in this leadership: the lag of one never caught up counts from it. */
  readonly firstReportAtMs: number;
  leaderEndAtReport: number;
}

/**
 * The in-sync replicas of one leader partition (Kafka's ISR; [R4] of docs/cluster-protocol.md),
 * from the followers' reports timed on the injected clock. A follower is in sync while all hold:
 * - I1 it is in the replica set and its broker's lease is live (`ReplicaSet`), so a dead broker
 *   drops out as soon as its lease lapses;
 * - I2 it has reported in this leadership;
 * - I3 it holds everything durable on the leader, or caught up within `lagTimeMaxMs` (Kafka's
 *   rule: a report reaching the leader's end as it was at the previous report counts as caught
 *   up at that previous report).
 * The table never holds a follower outside the replica set.
 */
export class InSyncReplicas {
  readonly #clock: Clock;
  readonly #lagTimeMaxMs: number;
  readonly #replicas: ReplicaSet;
  readonly #progress = new Map<string, Progress>();

  constructor(clock: Clock, replicas: ReplicaSet, lagTimeMaxMs = REPLICA_LAG_TIME_MAX_MS) {
    this.#clock = clock;
    this.#replicas = replicas;
    this.#lagTimeMaxMs = lagTimeMaxMs;
  }

  /**
   * A follower reports it applied everything below `logEndOffset`, and that its log starts at
   * `logStartOffset`; false (ignored) if it is not in the replica set.
   */
  noteProgress(replicaId: string, logEndOffset: number, leaderEnd: number, logStartOffset = UNKNOWN_LOG_START): boolean {
    if (!this.#replicas.followers().has(replicaId)) return false;
    const nowMs = this.#clock.monotonicMs();
    const known = this.#progress.get(replicaId);
    if (known === undefined) {
      this.#progress.set(replicaId, {
        logEndOffset,
        logStartOffset,
        caughtUpAtMs: logEndOffset >= leaderEnd ? nowMs : Number.NEGATIVE_INFINITY,
        reportedAtMs: nowMs,
        firstReportAtMs: nowMs,
        leaderEndAtReport: leaderEnd,
      });
      return true;
    }
    // The log end now, as Kafka takes each replica fetch offset: a lower report means the follower's
    // log was replaced (a topic deleted and created again, a rebuild), and what it held before counts no more.
    // The log start likewise: the one reported last, as Kafka's replica state keeps it.
    known.logEndOffset = logEndOffset;
    known.logStartOffset = logStartOffset;
    if (known.logEndOffset >= leaderEnd) known.caughtUpAtMs = nowMs;
    else if (known.logEndOffset >= known.leaderEndAtReport) known.caughtUpAtMs = Math.max(known.caughtUpAtMs, known.reportedAtMs);
    known.reportedAtMs = nowMs;
    known.leaderEndAtReport = leaderEnd;
    return true;
  }

  /** The in-sync followers and their log ends, given the leader's durable end now. */
  inSync(leaderEnd: number): Map<string, number> {
    return new Map([...this.#inSyncProgress(leaderEnd)].map(([id, progress]) => [id, progress.logEndOffset]));
  }

  /**
   * The lowest log start any in-sync follower reported (Infinity with none in sync), given the
   * leader's durable end now: with the leader's own, Kafka's low watermark.
   */
  lowestInSyncLogStart(leaderEnd: number): number {
    return Math.min(Infinity, ...[...this.#inSyncProgress(leaderEnd).values()].map((progress) => progress.logStartOffset));
  }

  #inSyncProgress(leaderEnd: number): Map<string, Progress> {
    const members = this.#replicas.followers();
    const nowMs = this.#clock.monotonicMs();
    const inSync = new Map<string, Progress>();
    for (const [id, progress] of this.#progress) {
      if (!members.has(id) && !regressed('isr-keeps-dead-replica')) {
        this.#progress.delete(id); // left the replica set or its lease lapsed: a later report starts afresh
        continue;
      }
      if (progress.logEndOffset >= leaderEnd || nowMs - progress.caughtUpAtMs <= this.#lagTimeMaxMs) inSync.set(id, progress);
    }
    assert(this.#progress.size <= members.size || regressed('isr-keeps-dead-replica'), 'I1: the follower table holds only members of the replica set');
    return inSync;
  }

  /**
   * Each follower in the replica set that reported, in or out of sync: offsets behind `leaderEnd`
   * at its last report, and ms since it last held everything durable here (0 while it does).
   * Read only: unlike `inSync`, it forgets no one.
   */
  lags(leaderEnd: number): Map<string, { readonly offsets: number; readonly ms: number }> {
    const members = this.#replicas.followers();
    const nowMs = this.#clock.monotonicMs();
    const lags = new Map<string, { offsets: number; ms: number }>();
    for (const [id, progress] of this.#progress) {
      if (!members.has(id)) continue;
      const behind = Math.max(0, leaderEnd - progress.logEndOffset);
      lags.set(id, { offsets: behind, ms: behind === 0 ? 0 : nowMs - Math.max(progress.caughtUpAtMs, progress.firstReportAtMs) });
    }
    return lags;
  }

  /**
   * Whether fewer followers are in sync than the replica set holds (Kafka's under-replicated
   * partition). Read only, as `lags`: a scrape must not change what the leader decides.
   */
  underReplicated(leaderEnd: number): boolean {
    const members = this.#replicas.followers();
    const nowMs = this.#clock.monotonicMs();
    let inSync = 0;
    for (const [id, progress] of this.#progress) {
      if (members.has(id) && (progress.logEndOffset >= leaderEnd || nowMs - progress.caughtUpAtMs <= this.#lagTimeMaxMs)) inSync++;
    }
    return inSync < members.size;
  }

  /** When the first lagging in-sync follower would fall out (monotonic ms), or null if none lags. */
  nextLapseMs(leaderEnd: number): number | null {
    let next: number | null = null;
    const nowMs = this.#clock.monotonicMs();
    for (const progress of this.#progress.values()) {
      if (progress.logEndOffset >= leaderEnd) continue;
      const lapseMs = progress.caughtUpAtMs + this.#lagTimeMaxMs;
      if (lapseMs >= nowMs && (next === null || lapseMs < next)) next = lapseMs;
    }
    return next;
  }

  /** Runs `callback` at monotonic time `atMs` (background: a lapse check never keeps a process alive). */
  atMonotonic(atMs: number, callback: () => void): Timer {
    return this.#clock.setTimer(Math.max(0, atMs - this.#clock.monotonicMs()), callback, true);
  }

  /** How many followers the table holds (bounded by the replica set). */
  get size(): number {
    return this.#progress.size;
  }
}
