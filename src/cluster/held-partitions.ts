import type { Logger } from '../observability/logger.ts';
import type { Uuid } from '../util/uuid.ts';
import { type ControlStore, RecordCache, type Versioned } from '../control/control-store.ts';
import { type PartitionRecord, partitionKey, type TopicRecord } from './control-records.ts';

export interface HeldPartitionsOptions {
  readonly control: ControlStore;
  /** [C6]: stop serving. */
  release(topic: string, partition: number): Promise<void>;
  unfollow(topic: string, partition: number): Promise<void>;
  /**
   * A topic was deleted: drop what is left of it here, of incarnation `topicId` (null: whichever
   * is here). A later incarnation the host took up meanwhile (a follower following again [D4]) is
   * let go of, never deleted: the next scan follows it.
   */
  forget(topic: string, topicId: Uuid | null): Promise<void>;
}

/**
 * The partitions as this broker holds them (docs/cluster-protocol.md [C3]-[C6]): their records as
 * it last read or wrote them, which it serves and follows, the leader epoch it adopted each at and
 * the incarnation each topic was taken up under; and the letting go of them (a release, an
 * unfollow, a deleted topic forgotten). Scans and writer-epoch changes, which adopt and release
 * partitions, run one at a time (`exclusive`). It depends on no other part of the node: a
 * Membership gets it as the ServedPartitions a step-down releases, a TopicCatalog as the
 * PartitionsHeldHere a delete updates.
 */
export class HeldPartitions {
  readonly #options: HeldPartitionsOptions;
  readonly #log: Logger;
  readonly #recordCache: RecordCache<PartitionRecord>;
  /** The partition records as last read or written here, by `topic/partition`. */
  readonly #records = new Map<string, Versioned<PartitionRecord>>();
  readonly #served = new Set<string>();
  readonly #following = new Set<string>();
  /**
   * [L8] Each partition's leader epoch as this broker last adopted it (kept after it lets go): at
   * that epoch every earlier leader's stream is sealed (L2), so no other broker acknowledges there.
   * Epochs rise across incarnations [L4], so an entry never matches a later incarnation's record.
   */
  readonly #adoptedEpochs = new Map<string, number>();
  /** The topic id each topic with partitions served or followed here was adopted under. */
  readonly #incarnations = new Map<string, Uuid>();
  /** Scans and writer-epoch changes, one at a time (both adopt and release partitions). */
  #serial: Promise<void> = Promise.resolve();

  constructor(options: HeldPartitionsOptions, log: Logger) {
    this.#options = options;
    this.#log = log;
    this.#recordCache = new RecordCache(options.control, 'partitions/');
  }

  /** Runs `work` after every scan or writer-epoch change before it. */
  exclusive(work: () => Promise<void>): Promise<void> {
    const run = this.#serial.then(work);
    this.#serial = run.catch(() => {});
    return run;
  }

  /** A scan's read of every partition record (`keepOnly` then drops the deleted ones from the records as last read). */
  readRecords(): Promise<ReadonlyMap<string, Versioned<PartitionRecord>>> {
    return this.#recordCache.refresh();
  }

  /** Forgets the records as last read that `records` (a scan's) no longer holds: deleted (their topic too, by any broker). */
  keepOnly(records: ReadonlyMap<string, Versioned<PartitionRecord>>): void {
    for (const id of this.#records.keys()) if (!records.has(id)) this.#records.delete(id); // no stale leader, no growth
  }

  /** Partition `id`'s record as last read or written here. */
  record(id: string): Versioned<PartitionRecord> | undefined {
    return this.#records.get(id);
  }

  /** A scan's judgement of partition `id`'s record: of this incarnation (`current`), or none (null). */
  noteScanned(id: string, current: Versioned<PartitionRecord> | null): void {
    if (current !== null) this.#records.set(id, current);
    else this.#records.delete(id);
  }

  /** A record this broker wrote (its compare-and-swap returned the new version). */
  wrote(id: string, written: Versioned<PartitionRecord>): void {
    this.#records.set(id, written);
    this.#recordCache.note(id, written);
  }

  /** Whether a partition record as last read names `nodeId` its leader. */
  ledBy(nodeId: number): boolean {
    for (const { value } of this.#records.values()) if (value.leader === nodeId) return true;
    return false;
  }

  serves(id: string): boolean {
    return this.#served.has(id);
  }

  /** How many partitions this broker serves. */
  get servedCount(): number {
    return this.#served.size;
  }

  follows(id: string): boolean {
    return this.#following.has(id);
  }

  /** This broker serves `topic`'s partition `id` now, adopted at `leaderEpoch` of incarnation `topicId`. */
  adopted(topic: string, id: string, leaderEpoch: number, topicId: Uuid): void {
    this.#served.add(id);
    this.#adoptedEpochs.set(id, leaderEpoch);
    this.#incarnations.set(topic, topicId);
  }

  /** This broker follows `topic`'s partition `id` now, of incarnation `topicId`. */
  followed(topic: string, id: string, topicId: Uuid): void {
    this.#following.add(id);
    this.#incarnations.set(topic, topicId);
  }

  /** [C7] The engine let go of every partition led through the old writer: none is served now. */
  servesNone(): void {
    this.#served.clear();
  }

  /** [L8] The leader epoch at which this broker last adopted partition `id`; undefined if never. */
  adoptedEpoch(id: string): number | undefined {
    return this.#adoptedEpochs.get(id);
  }

  /** [L4] This broker's delete removed partition `id`'s record. */
  recordRemoved(id: string): void {
    this.#recordCache.note(id, null);
    this.#adoptedEpochs.delete(id);
  }

  /** [C1] Another process took this node id over: let go of everything led here, after the scan under way. */
  releaseAll(): Promise<void> {
    return this.exclusive(async () => {
      for (const id of [...this.#served]) {
        const at = id.lastIndexOf('/');
        await this.release(id.slice(0, at), Number(id.slice(at + 1)));
      }
    });
  }

  /** [C6] Another broker leads the partition: stop serving it. */
  async release(topic: string, partition: number): Promise<void> {
    this.#served.delete(partitionKey(topic, partition));
    await this.#options.release(topic, partition);
    this.#log.info({ topic, partition }, `released ${partitionKey(topic, partition)}: another broker leads it`);
  }

  async unfollow(topic: string, partition: number): Promise<void> {
    this.#following.delete(partitionKey(topic, partition));
    await this.#options.unfollow(topic, partition);
  }

  /** [C2], [L4]: lets go of partitions whose topic no longer exists, or exists as another incarnation (a new topic id). */
  async forgetDeleted(topics: ReadonlyMap<string, TopicRecord>): Promise<void> {
    const gone = new Set<string>();
    for (const id of [...this.#served, ...this.#following]) {
      const topic = id.slice(0, id.lastIndexOf('/'));
      if (topics.get(topic)?.topicId === this.#incarnations.get(topic)) continue;
      this.#served.delete(id);
      this.#following.delete(id);
      this.#records.delete(id);
      gone.add(topic);
    }
    for (const topic of gone) {
      const stale = this.#incarnations.get(topic) ?? null;
      this.#incarnations.delete(topic);
      await this.#options.forget(topic, stale);
    }
  }
}
