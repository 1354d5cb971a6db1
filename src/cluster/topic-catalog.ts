import { FerryError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import { sleep } from '../util/backoff.ts';
import type { Clock } from '../util/clock.ts';
import { type Random, systemRandom } from '../util/random.ts';
import { isUuid, randomUuid, type Uuid } from '../util/uuid.ts';
import { type ControlStore, RecordCache, type Versioned } from '../control/control-store.ts';
import { parseTopicConfigs, type TopicConfigs } from '../log/topic-config.ts';
import { applyConfigAlteration, type ConfigAlteration } from '../log/topic-config-changes.ts';
import { checkPartitionIncrease } from '../engine/partition-increase.ts';
import { validateTopicName } from '../engine/topic-name.ts';
import { PARTITIONS_PER_TOPIC_MAX } from '../engine/topic-registry.ts';
import { DeletedIncarnations } from '../tier/deleted-incarnations.ts';
import type { Lease } from './lease.ts';
import { StalledDeletes } from './stalled-deletes.ts';
import { TopicSightings } from './topic-sightings.ts';
import { type BrokerRecord, type EpochFloorRecord, epochFloorKey, type PartitionRecord, partitionKey, type TopicRecord, topicOf } from './control-records.ts';

/**
 * [L4] A topic record marked `deleting` for this many leases (as one broker's scans see it) is a
 * delete that stopped halfway: a scan finishes it. A delete under way takes a few store requests
 * per partition; a lease is the cluster's measure of a broker that stopped.
 */
export const STALLED_DELETE_LEASES = 2;

/**
 * How many compare-and-swaps one alterTopicConfig tries before it gives up: each lost one means
 * another write of the same topic record came between its read and its write (a burst of
 * alterations of one topic), and each costs a GET and a PUT.
 */
const ALTER_ATTEMPTS_MAX = 8;

/**
 * Compare-and-swap rounds an admin change of one record (a topic's partition count, a partition's
 * log start) may lose to other writers of it (a concurrent grow, a leader noting its settled
 * streams) before it reports the race as an unknown outcome; each round is a read and a write.
 */
export const ADMIN_CHANGE_ATTEMPTS_MAX = 10;

export interface TopicCatalogOptions {
  readonly control: ControlStore;
  /** This broker's record: its node id and lease. */
  readonly self: Pick<BrokerRecord, 'nodeId' | 'leaseMs'>;
  readonly clock: Clock;
  /** Draws the ids of topics this node creates; the operating system's by default (ids must never repeat). */
  readonly random?: Random;
  /**
   * A topic's configs as its record has them, whenever they differ from those last handed over
   * (each scan, and this broker's own creates and alterations): its partitions here take them.
   * Called before the scan adopts anything, so an adoption uses the record's configs.
   */
  topicConfigsChanged?(topic: string, configs: TopicConfigs): void;
  /**
   * Checks a topic's configs as a whole against this broker's defaults (InvalidConfig: local
   * retention above retention) before a create or an alteration writes them.
   */
  checkTopicConfigs?(configs: TopicConfigs, before?: TopicConfigs): void;
}

/** [L4], [L8] What a topic delete needs of the partitions this broker holds. */
export interface PartitionsHeldHere {
  /** The leader epoch at which this broker last adopted partition `id` (`topic/partition`); undefined if never. */
  adoptedEpoch(id: string): number | undefined;
  /** This broker's delete removed partition `id`'s record. */
  recordRemoved(id: string): void;
  /** [C2], [L4] Lets go of partitions whose topic is not in `topics` as the incarnation they were taken up under. */
  forgetDeleted(topics: ReadonlyMap<string, TopicRecord>): Promise<void>;
}

/**
 * The topics as this broker knows them (docs/cluster-protocol.md [L4], [L8]): their records as
 * its scans and its own changes last saw them, the creates, grows, config alterations and deletes
 * it makes (a delete in its steps: mark, wait out other leaders, deletion record, epoch floor,
 * partition records, topic record), and when it last saw each incarnation alive.
 */
export class TopicCatalog {
  readonly #options: TopicCatalogOptions;
  readonly #log: Logger;
  readonly #held: PartitionsHeldHere;
  readonly #topicRecords: RecordCache<TopicRecord>;
  /** [L8] The topic records as the sighting check reads them, between scans (its own cache: the two run concurrently). */
  readonly #sightingRecords: RecordCache<TopicRecord>;
  readonly #sightings: TopicSightings;
  #topics = new Map<string, TopicRecord>();
  /** Each topic's configs as last handed to topicConfigsChanged (JSON), to hand over only changes. */
  readonly #handedConfigs = new Map<string, string>();
  /** DI1: where a delete records the incarnation it deleted. */
  readonly #deletions: DeletedIncarnations;
  readonly #stalledDeletes: StalledDeletes;

  constructor(options: TopicCatalogOptions, lease: Lease, held: PartitionsHeldHere, log: Logger) {
    this.#options = options;
    this.#log = log;
    this.#held = held;
    this.#stalledDeletes = new StalledDeletes(options.clock, STALLED_DELETE_LEASES * options.self.leaseMs);
    this.#topicRecords = new RecordCache(options.control, 'topics/');
    this.#sightingRecords = new RecordCache(options.control, 'topics/');
    this.#sightings = new TopicSightings(lease);
    this.#deletions = new DeletedIncarnations(options.control);
  }

  /** The live topics as last seen (a new map whenever they change: a scan under way goes on over the one it read). */
  topics(): ReadonlyMap<string, TopicRecord> {
    return this.#topics;
  }

  /** [L8] Whether a read that started within the held share of a lease saw incarnation `topicId` of `topic` alive. */
  topicSightingStands(topic: string, topicId: Uuid): boolean {
    return this.#sightings.standing(topic, topicId);
  }

  /** A scan's read of every topic record (`sawTopics` takes the result). */
  readTopics(): Promise<ReadonlyMap<string, Versioned<TopicRecord>>> {
    return this.#topicRecords.refresh();
  }

  /**
   * A scan's topic records, read from `readMs` (monotonic) on: the live ones become the view (a
   * topic record without an id predates topic ids and is not served; a topic being deleted is gone
   * already [L4]) and hand their configs over. Returns the names whose delete stalled.
   */
  sawTopics(readMs: number, allTopicRecords: readonly (readonly [string, Versioned<TopicRecord>])[]): string[] {
    this.#sightings.observe(readMs, allTopicRecords);
    const stalledDeletes = this.#stalledDeletes.observe(allTopicRecords);
    const topicRecords = allTopicRecords.filter(([, record]) => isUuid(record.value.topicId) && record.value.deleting !== true);
    this.#topics = new Map(topicRecords.map(([name, record]) => [name, this.#newerView(name, topicOf(record.value))]));
    for (const [name, record] of topicRecords) this.#handConfigs(name, record.value.configs ?? {});
    for (const name of this.#handedConfigs.keys()) if (!this.#topics.has(name)) this.#handedConfigs.delete(name);
    return stalledDeletes;
  }

  /** [L8] The topic check between scans: every topic record read again, its sightings noted and grown topics shown. */
  checkSightings(): Promise<void> {
    const startedMs = this.#options.clock.monotonicMs();
    // One record that cannot be read is that topic's alone (not seen alive), never every topic's.
    return this.#sightingRecords
      .refresh((name, error) => this.#log.warn({ topic: name, err: error }, `topic check: record of ${name} unreadable: ${String(error)}`))
      .then((records) => {
        this.#sightings.observe(startedMs, records);
        this.#seeGrownTopics(records);
      });
  }

  /**
   * Creates a topic record; false if it exists (then its record is read, so this broker knows
   * its real partition count at once). Its partitions are claimed on the next scans (a request's
   * create asks for one at once: scanAfterChange).
   */
  async createTopic(name: string, partitions: number, replicationFactor = 1, configs: Readonly<Record<string, string | null>> = {}): Promise<boolean> {
    validateTopicName(name); // as the engine's own create: a record under a bad name could never be adopted
    if (!Number.isSafeInteger(partitions) || partitions < 1 || partitions > PARTITIONS_PER_TOPIC_MAX)
      throw new FerryError('InvalidPartitions', `The topic ${name} would have ${partitions} partition(s); a topic has 1 to ${PARTITIONS_PER_TOPIC_MAX}.`);
    const parsed = parseTopicConfigs(Object.entries(configs)); // a bad config creates nothing
    this.#options.checkTopicConfigs?.(parsed);
    const topicId = randomUuid(this.#options.random ?? systemRandom);
    // [L4] Epochs go on from the deleted incarnations' floor. The floor is read before the create, so
    // an incarnation created, claimed and deleted whole between this read and the create is missed
    // here; the first claim of each partition reads the floor again (#firstEpochOf) and goes past it.
    const floor = (await this.#options.control.read<EpochFloorRecord>(epochFloorKey(name)))?.value.leaderEpoch;
    const leaderEpochBase = floor === undefined ? 0 : floor + 1;
    const record: TopicRecord = { topicId, partitions, replicationFactor, leaderEpochBase, ...(Object.keys(parsed).length === 0 ? {} : { configs: parsed }) };
    const created = await this.#options.control.create<TopicRecord>(`topics/${name}`, record);
    if (created === null) {
      await this.describeTopic(name);
      return false;
    }
    this.#noteTopic(name, created);
    return true;
  }

  /**
   * Kafka's CreatePartitions in a cluster: the topic record's partition count rises to
   * `newTotalCount` by compare-and-swap (a delete's mark or a concurrent grow makes it read again).
   * The new partitions are claimed by the scans as a new topic's are, every broker sees the count
   * at its next scan, and nothing of the old partitions' records changes (their leaders and
   * epochs). `validateOnly`: the checks alone. UnknownTopicOrPartition for a topic that does not
   * exist or is being deleted; InvalidPartitions for a count that is no increase (checkPartitionIncrease).
   * Returns the topic as it is (or would be) after the change.
   */
  async createPartitions(name: string, newTotalCount: number, validateOnly = false): Promise<TopicRecord> {
    const { control } = this.#options;
    for (let attempt = 0; attempt < ADMIN_CHANGE_ATTEMPTS_MAX; attempt++) {
      const read = await control.read<TopicRecord>(`topics/${name}`);
      if (read === null || read.value.deleting === true || !isUuid(read.value.topicId)) throw new FerryError('UnknownTopicOrPartition', `unknown topic ${name}`);
      checkPartitionIncrease(name, read.value.partitions, newTotalCount);
      const grown: TopicRecord = { ...read.value, partitions: newTotalCount }; // every other field as read (its config, its epoch base)
      if (validateOnly) return grown;
      const written = await control.replace<TopicRecord>(`topics/${name}`, read, grown);
      if (written === null) continue; // changed since the read (a grow, a mark): judged again on the new version
      if (this.#topics.get(name)?.topicId === grown.topicId || !this.#topics.has(name)) this.#noteTopic(name, written);
      this.#log.info({ topic: name, from: read.value.partitions, to: newTotalCount }, `topic ${name} grew from ${read.value.partitions} to ${newTotalCount} partitions`);
      return grown;
    }
    throw new FerryError('OutcomeUnknown', `the partition count of topic ${name} changed under ${ADMIN_CHANGE_ATTEMPTS_MAX} attempts in a row to raise it to ${newTotalCount}`);
  }

  /**
   * A topic as its control record says, read now when this broker has not seen it yet (a scan
   * may not have come by since another broker created it); null when it does not exist.
   */
  async describeTopic(name: string): Promise<TopicRecord | null> {
    const known = this.#topics.get(name);
    if (known !== undefined) return known;
    const read = await this.#options.control.read<TopicRecord>(`topics/${name}`);
    if (read === null || read.value.deleting === true) return null; // being deleted: gone already
    this.#noteTopic(name, read);
    return this.#topics.get(name)!;
  }

  /**
   * A topic as its control record says now, always read (DescribeConfigs: a config altered
   * through another broker a moment ago is shown, not the copy of this broker's last scan); null
   * when it does not exist or is being deleted.
   */
  async readTopic(name: string): Promise<TopicRecord | null> {
    const read = await this.#options.control.read<TopicRecord>(`topics/${name}`);
    return read === null || read.value.deleting === true ? null : read.value; // not noted: scans keep this broker's view
  }

  /**
   * Whether `topicId` is the topic's incarnation as its control record says now, not as last
   * scanned: a broker that has not scanned since the topic was deleted and created again would
   * take the newer incarnation for a deleted one.
   */
  async isCurrentIncarnation(name: string, topicId: Uuid): Promise<boolean> {
    const read = await this.#options.control.read<TopicRecord>(`topics/${name}`);
    return read !== null && read.value.deleting !== true && read.value.topicId === topicId;
  }

  #noteTopic(name: string, record: Versioned<TopicRecord>): void {
    // [L8] A write of this broker's answered late (an alteration or a grow that landed before another grow) is an older read: it takes no count back.
    this.#topics.set(name, this.#newerView(name, topicOf(record.value)));
    this.#topicRecords.note(name, record);
    this.#handConfigs(name, record.value.configs ?? {});
  }

  /**
   * IncrementalAlterConfigs of a topic: `changes` applied to its record's configs and checked
   * whole (a bad one changes nothing: InvalidConfig), then, unless `validateOnly`, written by
   * compare-and-swap of the record, read again and retried when another write came first (at most
   * ALTER_ATTEMPTS_MAX times: OutcomeUnknown then). Every broker takes the new configs on its next
   * scan; this one at once. Returns the topic's configs after. UnknownTopicOrPartition if none.
   */
  async alterTopicConfig(name: string, alteration: ConfigAlteration, validateOnly = false): Promise<TopicConfigs> {
    const { control } = this.#options;
    for (let attempt = 0; attempt < ALTER_ATTEMPTS_MAX; attempt++) {
      const read = await control.read<TopicRecord>(`topics/${name}`);
      if (read === null || read.value.deleting === true || !isUuid(read.value.topicId)) throw new FerryError('UnknownTopicOrPartition', `unknown topic ${name}`);
      const configs = applyConfigAlteration(read.value.configs ?? {}, alteration); // from the record as read: a replace-all sees every config set
      this.#options.checkTopicConfigs?.(configs, read.value.configs ?? {});
      if (validateOnly) return configs;
      const written = await control.replace<TopicRecord>(`topics/${name}`, read, { ...read.value, configs });
      if (written === null) continue; // another broker changed the record first (an alteration, a delete's mark): look again
      this.#noteTopic(name, written); // the record as it is now: this broker need not wait for a scan
      return configs;
    }
    throw new FerryError('OutcomeUnknown', `the configs of topic ${name} changed under ${ALTER_ATTEMPTS_MAX} alterations in a row: not altered, try again`);
  }

  /** topicConfigsChanged, only when `configs` differ from those last handed over for `name`. */
  #handConfigs(name: string, configs: TopicConfigs): void {
    const json = JSON.stringify(Object.entries(configs).sort(([a], [b]) => a.localeCompare(b)));
    if (this.#handedConfigs.get(name) === json) return;
    try {
      this.#options.topicConfigsChanged?.(name, configs);
      this.#handedConfigs.set(name, json);
    } catch (error) {
      // The next scan hands them over again (a full disk kept the engine's registry from taking them).
      this.#log.warn({ topic: name, err: error }, `topic ${name}: its configs could not be applied here yet: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /**
   * Deletes a topic's records; every broker lets its partitions go on its next scan. [L4] The topic
   * record is marked first and removed last: while it exists no new incarnation of the name can be
   * created, so every partition record removed in between is of this incarnation (or an older
   * leftover), never one that a new incarnation claimed. A delete that stopped halfway leaves the
   * mark; deleting again finishes it, and so does any broker's scan once the mark stood a lease
   * (StalledDeletes).
   */
  deleteTopic(name: string): Promise<boolean> {
    return this.#deleteTopic(name, 0);
  }

  /** deleteTopic of a topic whose mark has stood at least `markStoodMs` already; `stalled`: only that incarnation (a stalled delete a scan saw). */
  async #deleteTopic(name: string, markStoodMs: number, stalled?: Uuid): Promise<boolean> {
    const { control } = this.#options;
    let topic = await control.read<TopicRecord>(`topics/${name}`);
    // A stalled delete is finished only while its incarnation stands marked: finished elsewhere since
    // the scan saw it, the name may be a new incarnation's already, which no one asked to delete.
    if (stalled !== undefined && (topic?.value.topicId !== stalled || topic.value.deleting !== true)) return false;
    while (topic !== null && topic.value.deleting !== true) {
      const marked = await control.replace<TopicRecord>(`topics/${name}`, topic, { ...topic.value, deleting: true });
      topic = marked ?? (await control.read<TopicRecord>(`topics/${name}`)); // lost a race: look again
    }
    if (topic === null) return false;
    this.#sightings.deleted(name, this.#options.clock.monotonicMs()); // this broker acknowledges nothing more on it
    await this.#waitOutOtherLeaders(name, topic.value, markStoodMs);
    await this.#finishDelete(name, topic.value);
    return true;
  }

  /**
   * [L8] Another broker leading a partition of the marked incarnation stops acknowledging on it
   * within the held share of a lease of the mark (its sighting of the topic lapses, and every read
   * since sees the mark). Only after that may the name be created again (the records' removal), or
   * it would acknowledge into the deleted incarnation records the new one's clients took for theirs.
   */
  async #waitOutOtherLeaders(name: string, topic: TopicRecord, markStoodMs: number): Promise<void> {
    // Every broker's sighting lapses within the held share of its own lease (brokers may run with
    // different leases): the longest one recorded bounds them all.
    const brokers = await new RecordCache<BrokerRecord>(this.#options.control, 'brokers/').refresh();
    const waitMs = Math.max(this.#options.self.leaseMs, ...[...brokers.values()].map((b) => b.value.leaseMs)) - markStoodMs;
    if (waitMs <= 0) return;
    for (let partition = 0; partition < topic.partitions; partition++) {
      const record = (await this.#options.control.read<PartitionRecord>(`partitions/${partitionKey(name, partition)}`))?.value;
      // A record names the last claimer, not who serves: only a partition this broker adopted at the
      // record's epoch (sealing every earlier leader's stream, L2) is surely acknowledged on by no one else.
      if (record?.topicId !== topic.topicId || (record.leader === this.#options.self.nodeId && this.#held.adoptedEpoch(partitionKey(name, partition)) === record.leaderEpoch)) continue;
      await sleep(this.#options.clock, waitMs);
      return;
    }
  }

  /**
   * [L4] The rest of a delete once the topic record is marked: the deletion record (DI1: only it
   * lets the sweepers take the incarnation's objects; written after the mark, which no one undoes),
   * the epoch floor, the partition records, then the topic record.
   */
  async #finishDelete(name: string, topic: TopicRecord): Promise<void> {
    const { control } = this.#options;
    await this.#deletions.record(name, topic.topicId);
    // Only this incarnation leaves the view: a delete that waited [L8] may end after the same one was
    // finished elsewhere and the name created again, an incarnation this broker may serve already.
    if (this.#topics.get(name)?.topicId === topic.topicId) {
      this.#topics.delete(name);
      this.#topicRecords.note(name, null);
    }
    // [L4] The floor is raised before any partition record goes (a delete that stops halfway loses
    // no epoch), and again with what the removal read: a claim from a scan that read the topic before
    // the mark may have moved a record one epoch up meanwhile (its claimer then serves nothing).
    let reached = await this.#raiseEpochFloor(name, topic);
    // Another delete of the same topic may have finished meanwhile and the name been created again:
    // each record is removed only while it is still this incarnation's. (A store with conditional
    // deletes would close the window between that read and the delete; this one has none.)
    const { topicId } = topic;
    for (let partition = 0; partition < topic.partitions; partition++) {
      const id = partitionKey(name, partition);
      const record = (await control.read<PartitionRecord>(`partitions/${id}`))?.value;
      reached = Math.max(reached, record?.leaderEpoch ?? -1);
      if (record?.topicId !== topicId) continue;
      await control.delete(`partitions/${id}`);
      this.#held.recordRemoved(id);
    }
    await this.#writeEpochFloor(name, reached);
    const still = (await control.read<TopicRecord>(`topics/${name}`))?.value;
    // An older incarnation the view still held (no scan here since it was deleted elsewhere) is gone
    // as surely: the view keeps only one the record names alive. Checked before the record goes, so
    // no incarnation newer than this read can be in the view yet.
    const viewed = this.#topics.get(name);
    if (viewed !== undefined && (viewed.topicId !== still?.topicId || still.deleting === true)) {
      this.#topics.delete(name);
      this.#topicRecords.note(name, null);
    }
    if (still?.topicId === topicId && still.deleting === true) await control.delete(`topics/${name}`);
    await this.#held.forgetDeleted(this.#topics);
  }

  /**
   * [L4] Before a delete removes any partition record: the name's epoch floor rises to the highest
   * leader epoch this incarnation reached (every partition record under the name, the base of the
   * incarnation minus one for partitions never claimed, and the floor so far). Returns that epoch.
   */
  async #raiseEpochFloor(name: string, topic: TopicRecord): Promise<number> {
    const { control } = this.#options;
    let reached = (topic.leaderEpochBase ?? 0) - 1;
    for (let partition = 0; partition < topic.partitions; partition++) {
      const record = await control.read<PartitionRecord>(`partitions/${partitionKey(name, partition)}`);
      if (record !== null) reached = Math.max(reached, record.value.leaderEpoch);
    }
    await this.#writeEpochFloor(name, reached);
    return reached;
  }

  /** Raises the name's epoch floor to `reached` by compare-and-swap: two deletes finishing one incarnation together never lower it. */
  async #writeEpochFloor(name: string, reached: number): Promise<void> {
    const { control } = this.#options;
    if (reached < 0) return; // nothing above the default base of 0 to carry over
    for (;;) {
      const floor = await control.read<EpochFloorRecord>(epochFloorKey(name));
      if (floor !== null && floor.value.leaderEpoch >= reached) return;
      const written =
        floor === null
          ? await control.create<EpochFloorRecord>(epochFloorKey(name), { leaderEpoch: reached })
          : await control.replace<EpochFloorRecord>(epochFloorKey(name), floor, { leaderEpoch: reached });
      if (written !== null) return;
    }
  }

  /** [L4] A delete that stopped after its mark: finished here (a failure leaves it to a later scan). */
  async finishStalledDelete(name: string, topicId: Uuid): Promise<void> {
    this.#log.info({ topic: name }, `finishing the delete of topic ${name}, left halfway`);
    // The mark stood STALLED_DELETE_LEASES of this broker's leases: sightings from before it lapsed (a longer lease of another broker's is waited out).
    await this.#deleteTopic(name, STALLED_DELETE_LEASES * this.#options.self.leaseMs, topicId).catch((error: unknown) =>
      this.#log.warn({ topic: name, err: error }, `could not finish the delete of topic ${name} yet: ${error instanceof Error ? error.message : String(error)}`),
    );
  }

  /**
   * A topic the check found with more partitions than the view of the last scan (a CreatePartitions
   * since) is shown with them at once (Metadata): a scan may run for seconds (it follows and adopts
   * partitions), and clients would see the topic's old count meanwhile. A count only grows within
   * an incarnation, so the larger one is the newer read.
   */
  #seeGrownTopics(records: Iterable<readonly [string, Versioned<TopicRecord>]>): void {
    for (const [name, record] of records) {
      const current = this.#topics.get(name);
      if (current === undefined || record.value.deleting === true || record.value.topicId !== current.topicId || record.value.partitions <= current.partitions) continue;
      this.#topics = new Map(this.#topics).set(name, topicOf(record.value)); // a new map: a scan under way goes on over the one it read
    }
  }

  /** `scanned`, unless the view holds a newer read of the same incarnation (more partitions: the topic check's, made after the scan's read). */
  #newerView(name: string, scanned: TopicRecord): TopicRecord {
    const current = this.#topics.get(name);
    return current !== undefined && current.topicId === scanned.topicId && current.partitions > scanned.partitions ? current : scanned;
  }
}
