import type { ObjectStore } from '../store/object-store.ts';
import type { Clock } from '../util/clock.ts';
import type { Uuid } from '../util/uuid.ts';
import { tieredPartitionPrefix } from './keys.ts';
import type { TierRecords } from './tier-record.ts';

/**
 * Sweeps after a retired incarnation is deleted: a leader still uploading when its topic was
 * deleted lands at most one more object per partition, so a retired incarnation's prefixes are
 * listed again at this many later sweeps before they are forgotten.
 */
const RETIRED_SWEEPS_AFTER_DELETE = 2;

/**
 * The topic ids with a deletion record (DI1, docs/tier-protocol.md), read at each call: only an
 * incarnation named there is swept. A topic's absence from some list is never a deletion (a broker
 * on an empty disk, a read replica, another engine sharing the bucket know fewer topics than exist).
 */
export type DeletedTopicIds = () => Promise<{ has(topicId: Uuid): boolean }>;

/**
 * Deletes what the tier holds of topic incarnations that were deleted (docs/tier-protocol.md,
 * "Deleted incarnations"): their tiered segments, then their tier records. An incarnation is
 * deleted only when its deletion record says so (DI1), and a deleted incarnation never comes back
 * (a re-created topic has a new id). As with orphans [T6], it goes once seen so at two sweeps at
 * least `delayMs` apart: a read of the deleted topic that started before the delete finds it meanwhile.
 */
export class RetiredIncarnationSweeper {
  readonly #store: ObjectStore;
  readonly #prefix: string;
  readonly #records: TierRecords;
  readonly #clock: Clock;
  readonly #delayMs: number;
  readonly #deletedTopicIds: DeletedTopicIds;
  /** Topic id -> when it was first seen retired (monotonic ms). */
  readonly #firstSeenRetiredMs = new Map<Uuid, number>();
  /** Incarnations deleted here, with their partitions and the sweeps left that list them again. */
  readonly #deleted = new Map<Uuid, { partitions: Set<number>; sweepsLeft: number }>();

  constructor(options: { store: ObjectStore; prefix: string; records: TierRecords; clock: Clock; delayMs: number; deletedTopicIds: DeletedTopicIds }) {
    this.#store = options.store;
    this.#prefix = options.prefix;
    this.#records = options.records;
    this.#clock = options.clock;
    this.#delayMs = options.delayMs;
    this.#deletedTopicIds = options.deletedTopicIds;
  }

  /** One look: returns the objects deleted. */
  async sweep(): Promise<number> {
    const byTopic = new Map<Uuid, Set<number>>();
    for (const { topicId, partition } of await this.#records.list()) byTopic.set(topicId, (byTopic.get(topicId) ?? new Set()).add(partition));
    const deleted = await this.#deletedTopicIds();
    const nowMs = this.#clock.monotonicMs();
    for (const topicId of this.#firstSeenRetiredMs.keys()) if (!byTopic.has(topicId)) this.#firstSeenRetiredMs.delete(topicId);
    let swept = await this.#sweepDeletedAgain();
    for (const [topicId, partitions] of byTopic) {
      // DI1: no deletion record, no delete (a record is never removed, so one read stays true).
      if (!deleted.has(topicId)) continue;
      const firstMs = this.#firstSeenRetiredMs.get(topicId);
      if (firstMs === undefined) this.#firstSeenRetiredMs.set(topicId, nowMs);
      else if (nowMs - firstMs >= this.#delayMs) swept += await this.#delete(topicId, partitions);
    }
    return swept;
  }

  /** Its segments first, then its records: a record left behind by a failure here is found again next sweep. */
  async #delete(topicId: Uuid, partitions: Set<number>): Promise<number> {
    let deleted = 0;
    for (const partition of partitions) {
      deleted += await this.#deleteObjects(topicId, partition);
      await this.#records.remove(topicId, partition);
    }
    this.#firstSeenRetiredMs.delete(topicId);
    this.#deleted.set(topicId, { partitions, sweepsLeft: RETIRED_SWEEPS_AFTER_DELETE });
    return deleted;
  }

  /** Late uploads of a leader that had not yet heard of the delete (RETIRED_SWEEPS_AFTER_DELETE). */
  async #sweepDeletedAgain(): Promise<number> {
    let deleted = 0;
    for (const [topicId, entry] of this.#deleted) {
      for (const partition of entry.partitions) deleted += await this.#deleteObjects(topicId, partition);
      if (--entry.sweepsLeft <= 0) this.#deleted.delete(topicId);
    }
    return deleted;
  }

  async #deleteObjects(topicId: Uuid, partition: number): Promise<number> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      // every page first: a listing's token may not survive deletes between its pages
      const page = await this.#store.list(tieredPartitionPrefix(this.#prefix, topicId, partition), token === undefined ? {} : { token });
      for (const object of page.objects) keys.push(object.key);
      token = page.nextToken;
    } while (token !== undefined);
    for (const key of keys) await this.#store.delete(key);
    return keys.length;
  }
}
