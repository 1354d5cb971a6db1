import type { Clock } from '../util/clock.ts';
import type { Versioned } from '../control/control-store.ts';
import type { TopicRecord } from './control-records.ts';

/**
 * Topic deletes left halfway (docs/cluster-protocol.md [L4]): a topic record marked `deleting`
 * whose version this broker has seen unchanged for `stallMs` on its monotonic clock. The delete
 * that marked it stopped (its broker died, or a store error failed the request after the mark),
 * and nothing else finishes it: the name is gone for every broker yet can never be created again.
 * A scan finishes such a delete, as Kafka's controller completes a topic marked for deletion
 * whatever became of the request that asked for it. Deletes are safe to run concurrently, so
 * `stallMs` only spares a delete under way the duplicate requests.
 */
export class StalledDeletes {
  readonly #clock: Clock;
  readonly #stallMs: number;
  /** Marked topic records as first seen in this version. */
  readonly #seen = new Map<string, { etag: string; seenMs: number }>();

  constructor(clock: Clock, stallMs: number) {
    this.#clock = clock;
    this.#stallMs = stallMs;
  }

  /** Notes a scan's topic records (every one, marked or not); returns the names whose delete stalled. */
  observe(records: Iterable<readonly [string, Versioned<TopicRecord>]>): string[] {
    const nowMs = this.#clock.monotonicMs();
    const marked = new Set<string>();
    const stalled: string[] = [];
    for (const [name, { value, etag }] of records) {
      if (value.deleting !== true) continue;
      marked.add(name);
      const seen = this.#seen.get(name);
      if (seen?.etag !== etag) this.#seen.set(name, { etag, seenMs: nowMs });
      else if (nowMs - seen.seenMs >= this.#stallMs) stalled.push(name);
    }
    for (const name of [...this.#seen.keys()]) if (!marked.has(name)) this.#seen.delete(name);
    return stalled;
  }
}
