import { FerryError } from '../errors.ts';
import { componentLogger, type Logger, type LoggerOption } from '../observability/logger.ts';
import { sleep } from '../util/backoff.ts';
import type { Timer } from '../util/clock.ts';
import { systemRandom } from '../util/random.ts';
import { isUuid, randomUuid, type Uuid } from '../util/uuid.ts';
import { regressed } from '../util/regressions.ts';
import type { StreamId } from '../wal/keys.ts';
import { RecordCache, type Versioned } from '../control/control-store.ts';
import { type MembershipOptions, Membership } from './membership.ts';
import { AdoptionPool } from './adoption-pool.ts';
import { StalledDeletes } from './stalled-deletes.ts';
import { type ClaimPlan, type Incarnation, planTakeover, sealedInChain } from './takeover.ts';
import { TopicSightings } from './topic-sightings.ts';
import { assert } from '../util/assert.ts';
import { parseTopicConfigs, type TopicConfigs } from '../log/topic-config.ts';
import { applyConfigAlteration, type ConfigAlteration } from '../log/topic-config-changes.ts';
import { checkPartitionIncrease } from '../engine/partition-increase.ts';
import { validateTopicName } from '../engine/topic-name.ts';
import { DeletedIncarnations } from '../tier/deleted-incarnations.ts';
import { PARTITIONS_PER_TOPIC_MAX } from '../engine/topic-registry.ts';
import type { SettledPrefix } from '../replica/rebuild.ts';
import { type BrokerRecord, type EpochFloorRecord, epochFloorKey, type PartitionRecord, partitionKey, type TopicRecord, topicOf } from './control-records.ts';

/**
 * [L4] A topic record marked `deleting` for this many leases (as one broker's scans see it) is a
 * delete that stopped halfway: a scan finishes it. A delete under way takes a few store requests
 * per partition; a lease is the cluster's measure of a broker that stopped.
 */
export const STALLED_DELETE_LEASES = 2;

/** This broker's WAL writer as the cluster sees it: its stream, and a new epoch when it is fenced ([C7]). */
export interface WriterEpochs {
  /** Resolves once the current writer is fenced or failed. */
  whenFailed(): Promise<unknown>;
  /** Fences the current writer, lets go of every partition led through it, returns the new stream. */
  startNewEpoch(): Promise<StreamId>;
}

/**
 * [K4] How many partitions one scan adopts at once (each seals, rebuilds the tail and starts
 * serving): a broker taking over a dead one's share takes over all of it in about the time of
 * one adoption rather than their sum. Bounded because each adoption holds up to
 * REBUILD_READ_AHEAD WAL objects in memory and keeps that many GETs in flight.
 */
export const ADOPTIONS_IN_FLIGHT = 8;

/**
 * How many compare-and-swaps one alterTopicConfig tries before it gives up: each lost one means
 * another write of the same topic record came between its read and its write (a burst of
 * alterations of one topic), and each costs a GET and a PUT.
 */
const ALTER_ATTEMPTS_MAX = 8;

/**
 * [K1] After a peer's exit, this broker scans again every EXIT_FOLLOW_UP_INTERVAL_MS, at most
 * EXIT_FOLLOW_UP_SCANS times, while a partition record it read still names the exited broker:
 * the partitions another survivor claims are then in this broker's Metadata within a few tens of
 * ms, not at its next scan (a client told "no leader" meanwhile backs off and asks again). The
 * cost, a scan's reads a few times, comes only with a broker's exit.
 */
const EXIT_FOLLOW_UP_INTERVAL_MS = 25;
const EXIT_FOLLOW_UP_SCANS = 20;

/**
 * Compare-and-swap rounds an admin change of one record (a topic's partition count, a partition's
 * log start) may lose to other writers of it (a concurrent grow, a leader noting its settled
 * streams) before it reports the race as an unknown outcome; each round is a read and a write.
 */
const ADMIN_CHANGE_ATTEMPTS_MAX = 10;
/**
 * How long a create or a grow waits for the scan that claims its partitions here: a scan behind a
 * long rebuild would otherwise hold the answer past a client's request timeout. The claim goes on
 * after the answer; until it lands, clients are told LEADER_NOT_AVAILABLE and retry.
 */
const ADMIN_SCAN_WAIT_MS = 3000;

export interface ClusterNodeOptions extends MembershipOptions {
  readonly writer: WriterEpochs;
  /** How often leadership is re-examined; the lease is renewed every leaseMs / 3 on its own timer. */
  readonly scanIntervalMs: number;
  /**
   * [C4]-[C5], after this node won the compare-and-swap of `plan.next` [C3]: seal, rebuild, then
   * serve. Throwing leaves the partition to a later scan (which claims it again, one epoch up).
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: an adopter with nothing settled is an async function returning nothing
  adopt(topic: string, partition: number, partitions: number, plan: ClaimPlan, promoted: boolean): Promise<SettledPrefix | null | void>;
  /** [C6]: stop serving. */
  release(topic: string, partition: number): Promise<void>;
  /** Replication factor > 1: start following a partition another broker leads (throwing retries later). */
  follow(topic: string, partition: number, partitions: number, record: PartitionRecord): Promise<void>;
  unfollow(topic: string, partition: number): Promise<void>;
  /** A followed partition's record names a log start (DeleteRecords on its leader): the follower serves nothing below it either. */
  followLogStart?(topic: string, partition: number, logStartOffset: number): void;
  /**
   * A topic was deleted: drop what is left of it here, of incarnation `topicId` (null: whichever
   * is here). A later incarnation the host took up meanwhile (a follower following again [D4]) is
   * let go of, never deleted: the next scan follows it.
   */
  forget(topic: string, topicId: Uuid | null): Promise<void>;
  /** The node stops: end whatever follows partitions in the background. */
  stopped?(): void;
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
  /** After each scan: leaders, replica sets and leases may have changed (followers re-target their reports, leaders re-check their in-sync sets). */
  scanned?(): void;
  readonly log?: LoggerOption;
}

/**
 * This broker's view of the cluster and its part in it (docs/cluster-protocol.md, C1-C7): it
 * keeps its lease (and stops acknowledging once it may have lapsed), claims its fair share of
 * partitions whose leader is gone by compare-and-swap, adopts what it won, lets go of what it
 * lost, and starts a new writer epoch when its stream is fenced.
 */
export class ClusterNode {
  readonly #options: ClusterNodeOptions;
  readonly #log: Logger;
  readonly #membership: Membership;
  readonly #topicRecords: RecordCache<TopicRecord>;
  /** [L8] The topic records as the sighting check reads them, between scans (its own cache: the two run concurrently). */
  readonly #sightingRecords: RecordCache<TopicRecord>;
  readonly #sightings: TopicSightings;
  readonly #partitionRecords: RecordCache<PartitionRecord>;
  #topics = new Map<string, TopicRecord>();
  /** Each topic's configs as last handed to topicConfigsChanged (JSON), to hand over only changes. */
  readonly #handedConfigs = new Map<string, string>();
  readonly #partitions = new Map<string, Versioned<PartitionRecord>>();
  readonly #served = new Set<string>();
  /** [K5] The adoptions under way here, by partition: each settles once it ended (adoptionOf). */
  readonly #adopting = new Map<string, Promise<void>>();
  readonly #following = new Set<string>();
  /**
   * [L8] Each partition's leader epoch as this broker last adopted it (kept after it lets go): at
   * that epoch every earlier leader's stream is sealed (L2), so no other broker acknowledges there.
   * Epochs rise across incarnations [L4], so an entry never matches a later incarnation's record.
   */
  readonly #adoptedEpochs = new Map<string, number>();
  /** The topic id each topic with partitions served or followed here was adopted under. */
  readonly #incarnations = new Map<string, Uuid>();
  #leaseTimer: Timer | null = null;
  #scanTimer: Timer | null = null;
  /** DI1: where a delete records the incarnation it deleted. */
  readonly #deletions: DeletedIncarnations;
  /** A scan asked for by admin changes that has not started yet (scanAfterChange). */
  #adminScan: Promise<void> | null = null;
  #sightingTimer: Timer | null = null;
  #stopped = false;
  readonly #stalledDeletes: StalledDeletes;
  /** Scans and writer-epoch changes, one at a time (both adopt and release partitions). */
  #serial: Promise<void> = Promise.resolve();
  #newEpochWanted = false;
  /** A scan confirming the lease after a lapse is under way. */
  #confirming = false;

  constructor(options: ClusterNodeOptions) {
    this.#options = options;
    this.#log = componentLogger(options.log, 'cluster');
    this.#membership = new Membership(options, { releaseAll: () => this.#releaseAll() }, this.#log);
    this.#stalledDeletes = new StalledDeletes(options.clock, STALLED_DELETE_LEASES * options.self.leaseMs);
    this.#topicRecords = new RecordCache(options.control, 'topics/');
    this.#sightingRecords = new RecordCache(options.control, 'topics/');
    this.#sightings = new TopicSightings(this.#membership.lease);
    this.#partitionRecords = new RecordCache(options.control, 'partitions/');
    this.#deletions = new DeletedIncarnations(options.control);
  }

  get nodeId(): number {
    return this.#options.self.nodeId;
  }

  /** This process's mark, unique to it: what it claims records with (its broker record, the groups it coordinates). */
  get incarnation(): string {
    return this.#membership.incarnation;
  }

  /** Renews the lease and scans once (so Metadata is right from the start), then keeps both going. */
  async start(): Promise<void> {
    // [K1] Listening before the record names the port: a peer that connects finds it.
    this.#membership.openPeerLinks((nodeId, incarnation) => void this.#peerExited(nodeId, incarnation));
    await this.#membership.renew();
    const lapse = this.#membership.lease.lapse;
    // Renewing already: the first scan rebuilds what the records name this broker leader of, which
    // may take longer than a lease (others would count it dead mid-rebuild). It is the confirming scan.
    this.#confirming = true;
    this.#scheduleLease();
    this.#scheduleSightingCheck(); // [L8] from the start too: what the first scan adopted stays acknowledgeable however long it takes
    try {
      await this.scan();
    } catch (error) {
      this.#leaseTimer?.cancel();
      this.#sightingTimer?.cancel();
      throw error;
    } finally {
      this.#confirming = false;
    }
    this.#membership.lease.confirm(lapse); // the first scan saw what this broker leads
    this.#scheduleScan();
    this.#watchWriter();
  }

  /** The stream this broker writes now (a new one after each writer epoch change, [C7]). */
  get stream(): StreamId {
    return this.#membership.stream;
  }

  /**
   * [C1] Whether this broker may acknowledge now: its lease is surely held in everyone's eyes,
   * and after a lapse, a scan confirmed which partitions are still its own.
   */
  leaseHeld(): boolean {
    return this.#membership.leaseHeld();
  }

  /** [L8] Whether a read that started within the held share of a lease saw incarnation `topicId` of `topic` alive. */
  topicSightingStands(topic: string, topicId: Uuid): boolean {
    return this.#sightings.standing(topic, topicId);
  }

  /** Stops renewing the lease and scanning. */
  stop(): void {
    this.#stopped = true;
    this.#membership.stop();
    this.#leaseTimer?.cancel();
    this.#scanTimer?.cancel();
    this.#sightingTimer?.cancel();
    this.#options.stopped?.();
  }

  /**
   * Clears the lease at once (a clean shutdown), so others take over without waiting it out. No
   * renewal starts after it, and it is written after every renewal already on its way.
   */
  resign(): Promise<void> {
    return this.#membership.resign();
  }

  /** [K1] Stops the peer listener and its connections (after a resignation, or when the broker gave up starting). */
  closePeerLinks(): void {
    this.#membership.closePeerLinks();
  }

  /**
   * [K1] A peer's process exited (its connection ended, its listener refuses). The store stays the
   * arbiter: only if the broker record still names that incarnation is the record's version dead
   * now (a resigned one is dead already); the scan that follows claims what it led by compare-and-swap
   * [C3], and the seal fences whatever the old writer might still have on its way [C4].
   */
  async #peerExited(nodeId: number, incarnation: string): Promise<void> {
    if (this.#stopped) return;
    try {
      const record = await this.#membership.readBroker(nodeId);
      if (!this.#membership.peerExited(nodeId, incarnation, record)) return;
      await this.scan();
      for (let scans = 0; scans < EXIT_FOLLOW_UP_SCANS && !this.#stopped && this.#ledBy(nodeId); scans++) {
        await sleep(this.#options.clock, EXIT_FOLLOW_UP_INTERVAL_MS);
        await this.scan();
      }
    } catch (error) {
      this.#log.warn({ peer: nodeId, err: error }, `checking broker ${nodeId} after its peer link ended failed (its lease decides): ${String(error)}`);
    }
  }

  /** Whether a partition record as last read names `nodeId` its leader. */
  #ledBy(nodeId: number): boolean {
    for (const { value } of this.#partitions.values()) if (value.leader === nodeId) return true;
    return false;
  }

  /** [C1] Brokers alive as this one observes them; itself unless its lease lapsed unrenewed. */
  liveBrokers(): BrokerRecord[] {
    return this.#membership.liveBrokers();
  }

  topics(): ReadonlyMap<string, TopicRecord> {
    return this.#topics;
  }

  /** The partition's leader as last scanned; null if none is alive. */
  leaderOf(topic: string, partition: number): { broker: BrokerRecord; record: PartitionRecord } | null {
    const record = this.#partitions.get(partitionKey(topic, partition))?.value;
    const broker = record === undefined ? undefined : this.liveBrokers().find((b) => b.nodeId === record.leader);
    return record === undefined || broker === undefined ? null : { broker, record };
  }

  /**
   * The followers of a partition: the next replicationFactor - 1 live brokers after its leader,
   * by node id, wrapping around, skipping those whose record says storageFailing ([C1]: a broker
   * that cannot write its disk or reach the WAL store cannot follow; the next one follows instead).
   * Every broker computes the same list from the same records.
   */
  followersOf(topic: string, partition: number): BrokerRecord[] {
    const leader = this.leaderOf(topic, partition)?.broker.nodeId;
    const factor = this.#topics.get(topic)?.replicationFactor ?? 1;
    if (leader === undefined || factor <= 1) return [];
    const live = this.liveBrokers().sort((a, b) => a.nodeId - b.nodeId);
    const at = live.findIndex((b) => b.nodeId === leader);
    const after = [...live.slice(at + 1), ...live.slice(0, at)];
    return after.filter((b) => b.storageFailing !== true).slice(0, factor - 1);
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
   * DeleteRecords in a cluster, before the leader moves its own log: the partition record this
   * broker claimed, and serves at its epoch, takes `logStartOffset` (only ever up), so every later
   * leader starts its log there ([C5]; PartitionHost.adopt). NotLeader unless this broker holds its
   * lease and the record still names it at the epoch it adopted (another claim won since: the
   * caller answers NOT_LEADER_OR_FOLLOWER and the client goes to the new leader).
   */
  async recordLogStart(topic: string, partition: number, logStartOffset: number): Promise<void> {
    const id = partitionKey(topic, partition);
    const { control } = this.#options;
    let current = this.#partitions.get(id) ?? null;
    for (let attempt = 0; attempt < ADMIN_CHANGE_ATTEMPTS_MAX; attempt++) {
      if (current === null || !this.#leadsAsAdopted(id, current.value)) throw new FerryError('NotLeader', `Leader not local for partition ${topic}-${partition} on broker ${this.nodeId}`);
      if ((current.value.logStartOffset ?? 0) >= logStartOffset) return;
      const written = await control.replace<PartitionRecord>(`partitions/${id}`, current, { ...current.value, logStartOffset });
      if (written !== null) {
        this.#partitions.set(id, written);
        this.#partitionRecords.note(id, written);
        return;
      }
      current = await control.read<PartitionRecord>(`partitions/${id}`); // changed: still ours (a settled prefix noted), or claimed by another
    }
    throw new FerryError('OutcomeUnknown', `the log start of ${id} changed under ${ADMIN_CHANGE_ATTEMPTS_MAX} attempts in a row to raise it to ${logStartOffset}`);
  }

  /** Whether this broker serves the partition as the leader `record` names, at the epoch it adopted, with its lease held. */
  #leadsAsAdopted(id: string, record: PartitionRecord): boolean {
    return this.leaseHeld() && this.#served.has(id) && record.leader === this.nodeId && this.#adoptedEpochs.get(id) === record.leaderEpoch;
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
      if (record?.topicId !== topic.topicId || (record.leader === this.nodeId && this.#adoptedEpochs.get(partitionKey(name, partition)) === record.leaderEpoch)) continue;
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
      this.#partitionRecords.note(id, null);
      this.#adoptedEpochs.delete(id);
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
    await this.#forgetDeleted();
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

  /** [C2], [L4]: lets go of partitions whose topic no longer exists, or exists as another incarnation (a new topic id). */
  async #forgetDeleted(): Promise<void> {
    const gone = new Set<string>();
    for (const id of [...this.#served, ...this.#following]) {
      const topic = id.slice(0, id.lastIndexOf('/'));
      if (this.#topics.get(topic)?.topicId === this.#incarnations.get(topic)) continue;
      this.#served.delete(id);
      this.#following.delete(id);
      this.#partitions.delete(id);
      gone.add(topic);
    }
    for (const topic of gone) {
      const stale = this.#incarnations.get(topic) ?? null;
      this.#incarnations.delete(topic);
      await this.#options.forget(topic, stale);
    }
  }

  /**
   * A scan now, after a create or a grow of `topic`, so that this broker leads its share when the
   * change is answered (all of it alone, as Kafka's controller names the leaders in the create);
   * waits for it at most ADMIN_SCAN_WAIT_MS. One that fails leaves it to the next scan (the change
   * stands). Changes that ask while a scan waits to start share it (a CreateTopics of many topics
   * runs one or two scans, not one per topic): it starts after each of them.
   */
  async scanAfterChange(topic: string): Promise<void> {
    this.#adminScan ??= this.#exclusive(() => {
      this.#adminScan = null; // asked from now on: a later scan, which starts after the asker's change
      return this.#scan();
    });
    const scanned = this.#adminScan.catch((error: unknown) => this.#log.warn({ topic, err: error }, `scan after a change of topic ${topic} failed: ${String(error)}`));
    let timer: Timer | null = null;
    const waited = new Promise<void>((resolve) => (timer = this.#options.clock.setTimer(ADMIN_SCAN_WAIT_MS, resolve, true)));
    await Promise.race([scanned, waited]);
    (timer as Timer | null)?.cancel();
  }

  /** [C2]-[C3], [C6]: reads the records, claims what is up for grabs within the fair share, lets go of what was lost. */
  scan(): Promise<void> {
    return this.#exclusive(() => this.#scan());
  }

  #exclusive(work: () => Promise<void>): Promise<void> {
    const run = this.#serial.then(work);
    this.#serial = run.catch(() => {});
    return run;
  }

  async #scan(): Promise<void> {
    const { self } = this.#options;
    const observedMs = this.#membership.sawBrokers([...(await this.#membership.readBrokers()).values()]);
    // A topic record without an id predates topic ids; such a topic is not served (see TopicRecord.topicId).
    // A topic being deleted is gone already [L4].
    const topicsReadMs = this.#options.clock.monotonicMs();
    const allTopicRecords = [...(await this.#topicRecords.refresh())];
    this.#sightings.observe(topicsReadMs, allTopicRecords);
    const stalledDeletes = this.#stalledDeletes.observe(allTopicRecords);
    const topicRecords = allTopicRecords.filter(([, record]) => isUuid(record.value.topicId) && record.value.deleting !== true);
    this.#topics = new Map(topicRecords.map(([name, record]) => [name, this.#newerView(name, topicOf(record.value))]));
    for (const [name, record] of topicRecords) this.#handConfigs(name, record.value.configs ?? {});
    for (const name of this.#handedConfigs.keys()) if (!this.#topics.has(name)) this.#handedConfigs.delete(name);
    const records = await this.#partitionRecords.refresh();
    for (const id of this.#partitions.keys()) if (!records.has(id)) this.#partitions.delete(id); // deleted (its topic too, by any broker): no stale leader, no growth
    this.#noteSealedStream(records.values());
    await this.#forgetDeleted();
    // [C1] A broker whose disk fails leads nothing: what it leads is up for grabs, and it counts in no one's share.
    this.#membership.recheckStorage();
    // [C1] Others as of when their records were read, not after the slow reads since (a LIST of many partition records).
    const mayLead = (b: BrokerRecord) => (b.nodeId === self.nodeId ? this.#membership.mayLead() : this.#membership.isAlive(b, observedMs) && b.storageFailing !== true);
    const canLead = new Set(this.#membership.brokers.filter(mayLead).map((b) => b.nodeId));
    const total = [...this.#topics.values()].reduce((sum, t) => sum + t.partitions, 0);
    const fairShare = Math.ceil(total / Math.max(1, canLead.size));
    // No claims while this broker's own lease may have lapsed in others' eyes, its writer is fenced, or its disk fails.
    const mayClaim = () => !this.#newEpochWanted && this.#membership.mayLead();
    // [K4] Claims and adoptions run ADOPTIONS_IN_FLIGHT at once; the scan waits for all of them.
    const adoptions = new AdoptionPool(ADOPTIONS_IN_FLIGHT);
    try {
      await this.#claimAndFollow(records, canLead, fairShare, mayClaim, adoptions);
    } catch (error) {
      await adoptions.settled().catch(() => {}); // the scan ends only once what it started ended
      throw error;
    }
    await adoptions.settled();
    const stalledIds = new Map(allTopicRecords.map(([name, record]) => [name, record.value.topicId]));
    for (const name of stalledDeletes) await this.#finishStalledDelete(name, stalledIds.get(name)!);
    this.#options.scanned?.();
    if (this.#newEpochWanted) await this.#startNewEpoch();
  }

  /** [C3], [C6], followers: one scan's pass over every partition of the topics it read. */
  async #claimAndFollow(records: ReadonlyMap<string, Versioned<PartitionRecord>>, canLead: ReadonlySet<number>, fairShare: number, mayClaim: () => boolean, adoptions: AdoptionPool): Promise<void> {
    const { self } = this.#options;
    for (const [topic, { topicId, partitions, leaderEpochBase = 0 }] of this.#topics) {
      for (let partition = 0; partition < partitions && !this.#stopped && !adoptions.failed; partition++) {
        const id = partitionKey(topic, partition);
        const recorded = records.get(id) ?? null;
        const current = recorded === null ? null : await this.#ofIncarnation(topic, topicId, recorded);
        if (current === undefined) continue; // this scan's view of the topic is older than the record: next scan
        if (current !== null) this.#partitions.set(id, current);
        else this.#partitions.delete(id);
        const leader = current?.value.leader;
        if (leader === self.nodeId) {
          // Named leader but not serving (a restart, a new writer epoch, a failed adoption): claim it again [C3].
          if (!this.#served.has(id) && mayClaim()) await adoptions.run(() => this.#takeOver(topic, { topicId, leaderEpochBase }, partition, partitions, recorded, current));
        } else {
          if (this.#served.has(id)) await this.#release(topic, partition);
          const upForGrabs = leader === undefined || !canLead.has(leader);
          // Adoptions under way count towards the share: each adds a partition served unless it loses its race.
          if (upForGrabs && this.#served.size + adoptions.inFlight < fairShare && mayClaim())
            await adoptions.run(() => this.#takeOver(topic, { topicId, leaderEpochBase }, partition, partitions, recorded, current));
          else if (!upForGrabs) await this.#replicate(topic, partition, partitions, current!.value);
        }
      }
    }
  }

  /** [L4] A delete that stopped after its mark: finished here (a failure leaves it to a later scan). */
  async #finishStalledDelete(name: string, topicId: Uuid): Promise<void> {
    this.#log.info({ topic: name }, `finishing the delete of topic ${name}, left halfway`);
    // The mark stood STALLED_DELETE_LEASES of this broker's leases: sightings from before it lapsed (a longer lease of another broker's is waited out).
    await this.#deleteTopic(name, STALLED_DELETE_LEASES * this.#options.self.leaseMs, topicId).catch((error: unknown) =>
      this.#log.warn({ topic: name, err: error }, `could not finish the delete of topic ${name} yet: ${error instanceof Error ? error.message : String(error)}`),
    );
  }

  /**
   * L6, [C7] A chain (of any partition) in which this broker's current stream is followed by
   * another: a later leader sealed it, so the writer is fenced whether or not a put met the seal
   * yet. Nothing more is claimed through it (each claim would cost a rebuild, served by a writer
   * that can acknowledge nothing); the scan ends with a new writer epoch.
   */
  #noteSealedStream(records: Iterable<Versioned<PartitionRecord>>): void {
    // A process another one took the node id from, or whose lease lapsed, claims nothing anyway: the
    // renewal that brings the lease back finds out first whether this process is still the node.
    if (this.#newEpochWanted || this.#membership.superseded || !this.#membership.lease.renewedInTime()) return;
    for (const { value } of records) {
      const stream = this.#membership.stream;
      if (!sealedInChain(value.chain, stream)) continue;
      this.#log.warn({ writerId: stream.writerId, epoch: stream.epoch }, `this broker's stream ${stream.writerId}/${stream.epoch} was sealed by a later leader: starting a new writer epoch`);
      this.#newEpochWanted = true;
      return;
    }
  }

  /**
   * [C2], [L4] The partition record when it is of incarnation `topicId`; null when it is a deleted
   * incarnation's leftover (a claim replaces it, inheriting nothing); undefined when the topic was
   * created again after this scan read the topics, so the record is newer than the view of it.
   */
  async #ofIncarnation(topic: string, topicId: Uuid, recorded: Versioned<PartitionRecord>): Promise<Versioned<PartitionRecord> | null | undefined> {
    if (recorded.value.topicId === topicId) return recorded;
    const fresh = await this.#options.control.read<TopicRecord>(`topics/${topic}`);
    return fresh?.value.topicId === topicId && fresh.value.deleting !== true ? null : undefined;
  }

  /**
   * [C3]-[C5] Every adoption: plan from the record of this incarnation (`current`), compare-and-swap
   * this broker's current stream into the chain one leader epoch up over the record as read
   * (`recorded`: a deleted incarnation's leftover is replaced whole), and only then seal, rebuild
   * and serve.
   */
  async #takeOver(
    topic: string,
    incarnation: Incarnation,
    partition: number,
    partitions: number,
    recorded: Versioned<PartitionRecord> | null,
    current: Versioned<PartitionRecord> | null,
  ): Promise<void> {
    const { control, self } = this.#options;
    const { topicId } = incarnation;
    const id = partitionKey(topic, partition);
    const plan = planTakeover(current?.value ?? null, self.nodeId, this.#membership.stream, current === null ? await this.#firstEpochOf(topic, incarnation) : incarnation);
    if (plan.kind === 'stream-sealed') {
      const { stream } = this.#membership;
      this.#log.warn(
        { topic, partition, writerId: stream.writerId, epoch: stream.epoch },
        `${id}: this broker's stream ${stream.writerId}/${stream.epoch} was sealed by a later leader: starting a new writer epoch`,
      );
      this.#newEpochWanted = true; // [C7], once this scan is done
      return;
    }
    const won = recorded === null ? await control.create(`partitions/${id}`, plan.next) : await control.replace(`partitions/${id}`, recorded, plan.next);
    if (won === null) return; // [C3] someone else changed it first: the next scan sees who
    // [C3], [L4] The claim was made from this scan's view of the topic: serve it only if that incarnation still exists.
    const confirmed = (await control.read<TopicRecord>(`topics/${topic}`))?.value;
    if (confirmed?.topicId !== topicId || confirmed.deleting === true) return;
    this.#partitions.set(id, won);
    this.#partitionRecords.note(id, won);
    this.#log.info({ topic, partition, leaderEpoch: plan.next.leaderEpoch }, `claimed ${id} at leader epoch ${plan.next.leaderEpoch}`);
    await this.#adopt(topic, partition, partitions, plan, won);
  }

  /**
   * [L4] The incarnation as its first claim of a partition sees it: its base, raised past the
   * name's epoch floor as read now. Every delete of an earlier incarnation wrote the floor before
   * it removed its topic record, so before this incarnation was created: read here, the floor
   * closes the window a create leaves between its own read of it and its create-if-absent.
   */
  async #firstEpochOf(topic: string, incarnation: Incarnation): Promise<Incarnation> {
    const floor = (await this.#options.control.read<EpochFloorRecord>(epochFloorKey(topic)))?.value.leaderEpoch ?? -1;
    return floor < incarnation.leaderEpochBase ? incarnation : { ...incarnation, leaderEpochBase: floor + 1 };
  }

  /** [C7] Watches the current writer: once it is fenced or fails, a new epoch replaces it. */
  #watchWriter(): void {
    const stream = this.#membership.stream;
    void this.#options.writer.whenFailed().then(() => {
      if (this.#stopped || this.#membership.stream !== stream || regressed('fenced-writer-stays-fenced')) return;
      this.#newEpochWanted = true;
      void this.#exclusive(() => this.#startNewEpoch()).catch((error: unknown) => this.#log.error({ err: error }, `could not start a new writer epoch: ${String(error)}`));
    });
  }

  /**
   * [C7] The writer was fenced or its stream sealed: give up every partition led through it, start
   * a new epoch, publish its stream in this broker's record, and claim again (one epoch up, with
   * the old stream sealed) every partition whose record still names this broker.
   */
  async #startNewEpoch(): Promise<void> {
    if (!this.#newEpochWanted || this.#stopped) return;
    const before = this.#membership.stream;
    this.#served.clear(); // the engine lets go of them with the old writer
    try {
      this.#membership.useStream(await this.#options.writer.startNewEpoch());
    } catch (error) {
      throw new FerryError('Storage', `could not start a new writer epoch (the next scan tries again): ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    this.#newEpochWanted = false;
    this.#log.warn(
      { writerId: before.writerId, fencedEpoch: before.epoch, epoch: this.#membership.stream.epoch },
      `writer epoch ${before.epoch} of ${before.writerId} fenced; now writing epoch ${this.#membership.stream.epoch}`,
    );
    this.#watchWriter();
    await this.#membership.renew();
    await this.#scan();
  }

  /** Follows the partition when this broker is one of its followers, stops when it no longer is. */
  async #replicate(topic: string, partition: number, partitions: number, record: PartitionRecord): Promise<void> {
    const id = partitionKey(topic, partition);
    const mine = this.followersOf(topic, partition).some((b) => b.nodeId === this.nodeId);
    if (mine && !this.#following.has(id)) {
      try {
        await this.#options.follow(topic, partition, partitions, record);
        this.#following.add(id);
        this.#incarnations.set(topic, record.topicId);
      } catch (error) {
        this.#log.warn({ topic, partition, err: error }, `could not follow ${id} yet: ${error instanceof Error ? error.message : String(error)}`);
      }
    } else if (!mine && this.#following.has(id)) {
      await this.#unfollow(topic, partition);
    } else if (mine && record.logStartOffset !== undefined) {
      this.#options.followLogStart?.(topic, partition, record.logStartOffset); // as of this scan's read; the answers to its reports bring it sooner [R6]
    }
  }

  async #unfollow(topic: string, partition: number): Promise<void> {
    this.#following.delete(partitionKey(topic, partition));
    await this.#options.unfollow(topic, partition);
  }

  /**
   * [K5] While this broker adopts the partition (claimed, sealing and rebuilding): settles once the
   * adoption ended, served or not; null otherwise. A produce that reaches a new leader before it
   * serves waits for this rather than send the client off to back off and ask again.
   */
  adoptionOf(topic: string, partition: number): Promise<void> | null {
    return this.#adopting.get(partitionKey(topic, partition)) ?? null;
  }

  async #adopt(topic: string, partition: number, partitions: number, plan: ClaimPlan, won: Versioned<PartitionRecord>): Promise<void> {
    const id = partitionKey(topic, partition);
    const adoption = this.#adoptNow(topic, partition, partitions, plan, won);
    this.#adopting.set(id, adoption);
    try {
      await adoption;
    } finally {
      if (this.#adopting.get(id) === adoption) this.#adopting.delete(id);
    }
  }

  async #adoptNow(topic: string, partition: number, partitions: number, plan: ClaimPlan, won: Versioned<PartitionRecord>): Promise<void> {
    // [K3] A follower promoted here keeps its local log (its copy of the chain's prefix).
    const promoted = this.#following.has(partitionKey(topic, partition));
    if (promoted) await this.#unfollow(topic, partition);
    let settled: SettledPrefix | null = null;
    try {
      settled = (await this.#options.adopt(topic, partition, partitions, plan, promoted)) ?? null;
      this.#served.add(partitionKey(topic, partition));
      this.#adoptedEpochs.set(partitionKey(topic, partition), plan.next.leaderEpoch);
      this.#incarnations.set(topic, plan.next.topicId);
    } catch (error) {
      this.#log.warn({ topic, partition, err: error }, `could not adopt ${partitionKey(topic, partition)} yet: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    await this.#noteSettled(partitionKey(topic, partition), won, settled);
  }

  /**
   * [K6] Writes the settled prefix the adoption found into the record it claimed, if it says more
   * than the record does, by compare-and-swap over that very version: a record changed since
   * (another claim) is left alone, and so is a failed write (the next adoption finds it again).
   */
  async #noteSettled(id: string, won: Versioned<PartitionRecord>, settled: SettledPrefix | null): Promise<void> {
    const known = won.value.settled;
    if (settled === null || settled.count === 0 || (known !== undefined && known.count >= settled.count)) return;
    assert(settled.count < won.value.chain.length, `a settled prefix of ${settled.count} streams leaves the current stream of a chain of ${won.value.chain.length} out`);
    try {
      const written = await this.#options.control.replace(`partitions/${id}`, won, { ...won.value, settled });
      if (written === null) return; // changed since the claim: a later claim's record stands
      this.#partitions.set(id, written);
      this.#partitionRecords.note(id, written);
    } catch (error) {
      this.#log.warn({ partitionKey: id, err: error }, `could not note ${id}'s settled streams (the next takeover reads them again): ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** [C1] Another process took this node id over: let go of everything led here, after the scan under way. */
  #releaseAll(): Promise<void> {
    return this.#exclusive(async () => {
      for (const id of [...this.#served]) {
        const at = id.lastIndexOf('/');
        await this.#release(id.slice(0, at), Number(id.slice(at + 1)));
      }
    });
  }

  async #release(topic: string, partition: number): Promise<void> {
    this.#served.delete(partitionKey(topic, partition));
    await this.#options.release(topic, partition);
    this.#log.info({ topic, partition }, `released ${partitionKey(topic, partition)}: another broker leads it`);
  }

  /**
   * After a lapse: acknowledge again only once a scan let go of what others took meanwhile [C6].
   * Not awaited by the renewals: a scan may rebuild partitions for longer than a lease.
   */
  #confirmLease(): void {
    const { lease } = this.#membership;
    if (!lease.awaitingConfirmation || this.#confirming || this.#membership.saysStorageFailing) return;
    this.#confirming = true;
    const lapse = lease.lapse;
    this.scan()
      .then(() => {
        lease.confirm(lapse);
        this.#log.info({}, 'lease renewed after a lapse: acknowledging again');
      })
      .catch((error: unknown) => this.#log.warn({ err: error }, `cluster scan after a lease lapse failed (not acknowledging yet): ${String(error)}`))
      .finally(() => (this.#confirming = false));
  }

  #scheduleLease(): void {
    this.#leaseTimer = this.#options.clock.setTimer(
      this.#options.self.leaseMs / 3,
      () => {
        if (this.#stopped || this.#membership.superseded) return; // a process another one took the node id from renews nothing again
        this.#membership
          .renew()
          .then(() => this.#confirmLease())
          .catch((error: unknown) =>
            this.#log.warn(
              { leaseHeld: this.#membership.lease.held(), err: error },
              `lease renewal failed${this.#membership.lease.held() ? '' : ' (not acknowledging until it is renewed)'}: ${String(error)}`,
            ),
          )
          .finally(() => this.#scheduleLease());
      },
      true,
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

  /** [L8] Sees the topic records every leaseMs / 3 on its own timer: a slow scan must not let every sighting lapse. */
  #scheduleSightingCheck(): void {
    this.#sightingTimer = this.#options.clock.setTimer(
      this.#options.self.leaseMs / 3,
      () => {
        if (this.#stopped) return;
        const startedMs = this.#options.clock.monotonicMs();
        // One record that cannot be read is that topic's alone (not seen alive), never every topic's.
        this.#sightingRecords
          .refresh((name, error) => this.#log.warn({ topic: name, err: error }, `topic check: record of ${name} unreadable: ${String(error)}`))
          .then((records) => {
            this.#sightings.observe(startedMs, records);
            this.#seeGrownTopics(records);
          })
          .catch((error: unknown) => this.#log.warn({ err: error }, `topic check failed: ${String(error)}`))
          .finally(() => this.#scheduleSightingCheck());
      },
      true,
    );
  }

  #scheduleScan(): void {
    this.#scanTimer = this.#options.clock.setTimer(
      this.#options.scanIntervalMs,
      () => {
        if (this.#stopped) return;
        this.scan()
          .catch((error: unknown) => this.#log.warn({ err: error }, `cluster scan failed: ${String(error)}`))
          .finally(() => this.#scheduleScan());
      },
      true,
    );
  }
}
