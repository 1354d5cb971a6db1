import { componentLogger, type Logger, type LoggerOption } from '../../observability/logger.ts';
import { isFerryError } from '../../errors.ts';
import { assert } from '../../util/assert.ts';
import type { Clock, Timer } from '../../util/clock.ts';
import type { GroupCoordinator } from './coordinator.ts';
import type { GroupOffset, GroupOffsetStore } from './offset-store.ts';

/**
 * Kafka's offsets.retention.minutes (7 days): how long a group with no members keeps its offsets.
 * Longer keeps more groups' offsets (memory on a single broker, one control record each in a
 * cluster); shorter makes a consumer that was away that long start from its reset policy.
 */
export const OFFSETS_RETENTION_MINUTES_DEFAULT = 7 * 24 * 60;
/** Kafka's offsets.retention.check.interval.ms: how often expiry runs (a LIST and a read per group in a cluster). */
export const OFFSETS_RETENTION_CHECK_INTERVAL_MS = 600_000;
const MS_PER_MINUTE = 60_000;

assert(OFFSETS_RETENTION_CHECK_INTERVAL_MS < OFFSETS_RETENTION_MINUTES_DEFAULT * MS_PER_MINUTE, 'expiry runs several times per retention period');

export interface OffsetExpiryOptions {
  readonly groups: GroupCoordinator;
  readonly offsets: GroupOffsetStore;
  readonly clock: Clock;
  readonly retentionMs: number;
  readonly checkIntervalMs?: number;
  /** Whether this broker coordinates the group (only the coordinator expires a group's offsets). */
  readonly coordinates: (group: string) => boolean;
  readonly log?: LoggerOption;
}

/**
 * Expires consumer group offsets as Kafka does (KIP-211): a group with members keeps them all; in a
 * group with none, an offset expires `retentionMs` after the later of its commit and the moment
 * the group became empty (a simple consumer committing without joining counts from its commit).
 * An empty group with no offsets left is dropped from the coordinator (Kafka deletes it too), so
 * neither the coordinator's groups nor the stored offsets only grow.
 *
 * A group's emptiness is known only to the coordinator holding it in memory: after a restart or a
 * coordinator move, a group whose stored offsets were committed by members (not a simple
 * consumer's, which expire from their commit) counts as empty from the first round that found it, so its offsets never expire before a whole
 * retention in this coordinator's sight (they may outlive Kafka's by that much, never fall short).
 * An offset of an older file (no byMember) may be a member's, so it counts as one: never short.
 */
export class OffsetExpiry {
  readonly #options: OffsetExpiryOptions;
  readonly #log: Logger;
  #timer: Timer | null = null;
  #stopped = false;
  /** Groups with offsets but no state here (a restart, a coordinator move): when a round first found each. */
  readonly #foundEmptyMs = new Map<string, number>();

  constructor(options: OffsetExpiryOptions) {
    assert(options.retentionMs > 0, 'offsets retention is positive');
    this.#options = options;
    this.#log = componentLogger(options.log, 'groups');
  }

  start(): void {
    this.#schedule();
  }

  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
  }

  /** One expiry round: removes what is due, drops empty groups with nothing left; returns the offsets removed. */
  async expireNow(): Promise<number> {
    const { groups, offsets, clock, coordinates } = this.#options;
    const nowMs = clock.nowMs();
    let removed = 0;
    const present = new Set([...(await offsets.groups()), ...groups.emptyGroups()]);
    for (const group of this.#foundEmptyMs.keys()) if (!present.has(group)) this.#foundEmptyMs.delete(group); // bounded by the stored groups
    for (const group of present) {
      if (!coordinates(group)) {
        this.#foundEmptyMs.delete(group); // another coordinator's sight: a finding from before a move away must not count after a move back
        continue;
      }
      if ((groups.status(group)?.members ?? 0) > 0) {
        this.#foundEmptyMs.delete(group);
        continue; // a group with members keeps its offsets
      }
      const stored = await offsets.list(group);
      // judged again after the read: a consumer may have rejoined while it ran (a store read is I/O)
      const status = groups.status(group);
      if (status !== undefined && status.members > 0) continue;
      const emptySinceMs = status?.emptySinceMs ?? (stored.some((offset) => offset.committed.byMember !== false) ? this.#foundEmpty(group, nowMs) : null);
      const due = stored.filter((offset) => this.#expiresAtMs(offset, emptySinceMs) <= nowMs);
      if (due.length > 0 && !(await this.#remove(group, due))) continue;
      removed += due.length;
      if (due.length === stored.length) {
        this.#foundEmptyMs.delete(group);
        if (groups.status(group)?.members === 0) {
          groups.forget(group); // empty, nothing left: gone, as in Kafka
          offsets.forget(group);
        }
      }
    }
    return removed;
  }

  /**
   * Removes the due offsets under this broker's claim on the group (taking it, as a join would);
   * false if a consumer joined since the group was judged empty, or another coordinator claimed
   * the group first (its state here is stale and dropped). Joins wait while it runs: one that
   * came in between would fetch offsets that then vanish (its group has a member: KIP-211).
   * Called right after the group was judged empty, with no await in between.
   */
  async #remove(group: string, due: readonly GroupOffset[]): Promise<boolean> {
    const { groups, offsets } = this.#options;
    const releaseJoins = groups.holdJoins(group);
    if (releaseJoins === null) return false;
    try {
      const claim = await offsets.claim(group);
      try {
        await offsets.remove(group, due, claim);
        return true;
      } catch (error) {
        if (!isFerryError(error, 'NotCoordinator')) throw error;
        groups.drop(group, claim);
        return false;
      }
    } finally {
      releaseJoins();
    }
  }

  /** When this coordinator first found `group` without state: where its emptiness counts from. */
  #foundEmpty(group: string, nowMs: number): number {
    const found = this.#foundEmptyMs.get(group);
    if (found !== undefined) return found;
    this.#foundEmptyMs.set(group, nowMs);
    return nowMs;
  }

  /** The later of the commit and the group's emptying, plus the retention; never for an old offset of a group not seen empty. */
  #expiresAtMs(offset: GroupOffset, emptySinceMs: number | null): number {
    const committedMs = offset.committed.commitTimestampMs;
    const fromMs = committedMs === undefined ? (emptySinceMs ?? Number.POSITIVE_INFINITY) : Math.max(committedMs, emptySinceMs ?? Number.NEGATIVE_INFINITY);
    return fromMs + this.#options.retentionMs;
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = this.#options.clock.setTimer(
      this.#options.checkIntervalMs ?? OFFSETS_RETENTION_CHECK_INTERVAL_MS,
      () => {
        this.expireNow()
          .then(
            (removed) => removed > 0 && this.#log.info({ removed }, `expired ${removed} committed offsets of empty consumer groups`),
            (error: unknown) => this.#log.warn({ err: error }, `offset expiry failed (retried in the next round): ${error instanceof Error ? error.message : String(error)}`),
          )
          .finally(() => this.#schedule());
      },
      true,
    );
  }
}
