import type { ControlStore } from '../control/control-store.ts';
import { isUuid, type Uuid } from '../util/uuid.ts';

/** A deletion record: the durable word that a topic incarnation was deleted (docs/tier-protocol.md, DI1). */
export interface DeletionRecord {
  readonly topic: string;
  readonly topicId: Uuid;
}

/** Where deletion records live under the control root: one per deleted incarnation, kept for good (a few bytes each). */
const DELETION_RECORDS_PREFIX = 'deleted-topics/';

/**
 * The deletion records of topic incarnations (docs/tier-protocol.md, DI1: nothing is deleted
 * because local state lacks it). Whoever deletes an incarnation writes its record before anything
 * of it is removed; every sweeper (WAL GC, the tier's retired sweeper) deletes an incarnation's
 * objects only once its record is read. The records are never removed: an object of the
 * incarnation may remain anywhere for as long as it likes, and an id never comes back, so a record
 * once read stays true and is remembered here; an absent one is read again each time it is asked.
 */
export class DeletedIncarnations {
  readonly #control: ControlStore;
  /** Ids read deleted (or recorded here): true for good. */
  readonly #deleted = new Set<Uuid>();

  constructor(control: ControlStore) {
    this.#control = control;
  }

  /** Writes the deletion record of `topicId` (create-if-absent: a second delete of it finds it there). */
  async record(topic: string, topicId: Uuid): Promise<void> {
    await this.#control.create<DeletionRecord>(deletionKey(topicId), { topic, topicId });
    this.#deleted.add(topicId);
  }

  /** Whether `topicId` has a deletion record (a fresh read unless one was read before). */
  async isDeleted(topicId: Uuid): Promise<boolean> {
    if (this.#deleted.has(topicId)) return true;
    if ((await this.#control.read<DeletionRecord>(deletionKey(topicId))) === null) return false;
    this.#deleted.add(topicId);
    return true;
  }

  /** Every id with a deletion record (one LIST): the ids a sweeper may take. */
  async list(): Promise<ReadonlySet<Uuid>> {
    for (const key of await this.#control.list(DELETION_RECORDS_PREFIX)) {
      const topicId = key.slice(DELETION_RECORDS_PREFIX.length);
      if (isUuid(topicId)) this.#deleted.add(topicId);
    }
    return this.#deleted;
  }
}

function deletionKey(topicId: Uuid): string {
  return `${DELETION_RECORDS_PREFIX}${topicId}`;
}
