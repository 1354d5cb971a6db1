import { FerryError } from '../errors.ts';
import { componentLogger, type Logger, type LoggerOption } from '../observability/logger.ts';
import { sleep } from '../util/backoff.ts';
import type { Timer } from '../util/clock.ts';
import type { Uuid } from '../util/uuid.ts';
import { regressed } from '../util/regressions.ts';
import type { StreamId } from '../wal/keys.ts';
import { RecordCache, type Versioned } from '../control/control-store.ts';
import { type MembershipOptions, Membership } from './membership.ts';
import { ADMIN_CHANGE_ATTEMPTS_MAX, TopicCatalog, type TopicCatalogOptions } from './topic-catalog.ts';
import { AdoptionPool } from './adoption-pool.ts';
import { type ClaimPlan, type Incarnation, planTakeover, sealedInChain } from './takeover.ts';
import { assert } from '../util/assert.ts';
import type { TopicConfigs } from '../log/topic-config.ts';
import type { ConfigAlteration } from '../log/topic-config-changes.ts';
import type { SettledPrefix } from '../replica/rebuild.ts';
import { type BrokerRecord, type EpochFloorRecord, epochFloorKey, type PartitionRecord, partitionKey, type TopicRecord } from './control-records.ts';

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
 * [K1] After a peer's exit, this broker scans again every EXIT_FOLLOW_UP_INTERVAL_MS, at most
 * EXIT_FOLLOW_UP_SCANS times, while a partition record it read still names the exited broker:
 * the partitions another survivor claims are then in this broker's Metadata within a few tens of
 * ms, not at its next scan (a client told "no leader" meanwhile backs off and asks again). The
 * cost, a scan's reads a few times, comes only with a broker's exit.
 */
const EXIT_FOLLOW_UP_INTERVAL_MS = 25;
const EXIT_FOLLOW_UP_SCANS = 20;

/**
 * How long a create or a grow waits for the scan that claims its partitions here: a scan behind a
 * long rebuild would otherwise hold the answer past a client's request timeout. The claim goes on
 * after the answer; until it lands, clients are told LEADER_NOT_AVAILABLE and retry.
 */
const ADMIN_SCAN_WAIT_MS = 3000;

export interface ClusterNodeOptions extends MembershipOptions, Omit<TopicCatalogOptions, 'self'> {
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
  readonly #catalog: TopicCatalog;
  readonly #partitionRecords: RecordCache<PartitionRecord>;
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
  /** A scan asked for by admin changes that has not started yet (scanAfterChange). */
  #adminScan: Promise<void> | null = null;
  #sightingTimer: Timer | null = null;
  #stopped = false;
  /** Scans and writer-epoch changes, one at a time (both adopt and release partitions). */
  #serial: Promise<void> = Promise.resolve();
  #newEpochWanted = false;
  /** A scan confirming the lease after a lapse is under way. */
  #confirming = false;

  constructor(options: ClusterNodeOptions) {
    this.#options = options;
    this.#log = componentLogger(options.log, 'cluster');
    this.#membership = new Membership(options, { releaseAll: () => this.#releaseAll() }, this.#log);
    this.#catalog = new TopicCatalog(
      options,
      this.#membership.lease,
      {
        adoptedEpoch: (id) => this.#adoptedEpochs.get(id),
        recordRemoved: (id) => {
          this.#partitionRecords.note(id, null);
          this.#adoptedEpochs.delete(id);
        },
        forgetDeleted: (topics) => this.#forgetDeleted(topics),
      },
      this.#log,
    );
    this.#partitionRecords = new RecordCache(options.control, 'partitions/');
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
    return this.#catalog.topicSightingStands(topic, topicId);
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
    return this.#catalog.topics();
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
    const factor = this.#catalog.topics().get(topic)?.replicationFactor ?? 1;
    if (leader === undefined || factor <= 1) return [];
    const live = this.liveBrokers().sort((a, b) => a.nodeId - b.nodeId);
    const at = live.findIndex((b) => b.nodeId === leader);
    const after = [...live.slice(at + 1), ...live.slice(0, at)];
    return after.filter((b) => b.storageFailing !== true).slice(0, factor - 1);
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
   * Creates a topic record; false if it exists (then its record is read, so this broker knows
   * its real partition count at once). Its partitions are claimed on the next scans (a request's
   * create asks for one at once: scanAfterChange).
   */
  createTopic(name: string, partitions: number, replicationFactor = 1, configs: Readonly<Record<string, string | null>> = {}): Promise<boolean> {
    return this.#catalog.createTopic(name, partitions, replicationFactor, configs);
  }

  /** Kafka's CreatePartitions in a cluster (TopicCatalog.createPartitions). */
  createPartitions(name: string, newTotalCount: number, validateOnly = false): Promise<TopicRecord> {
    return this.#catalog.createPartitions(name, newTotalCount, validateOnly);
  }

  /** A topic as its control record says, read now when this broker has not seen it yet; null when it does not exist. */
  describeTopic(name: string): Promise<TopicRecord | null> {
    return this.#catalog.describeTopic(name);
  }

  /** A topic as its control record says now, always read (DescribeConfigs); null when it does not exist or is being deleted. */
  readTopic(name: string): Promise<TopicRecord | null> {
    return this.#catalog.readTopic(name);
  }

  /** Whether `topicId` is the topic's incarnation as its control record says now, not as last scanned. */
  isCurrentIncarnation(name: string, topicId: Uuid): Promise<boolean> {
    return this.#catalog.isCurrentIncarnation(name, topicId);
  }

  /** IncrementalAlterConfigs of a topic (TopicCatalog.alterTopicConfig): returns the topic's configs after. */
  alterTopicConfig(name: string, alteration: ConfigAlteration, validateOnly = false): Promise<TopicConfigs> {
    return this.#catalog.alterTopicConfig(name, alteration, validateOnly);
  }

  /** Deletes a topic's records ([L4], TopicCatalog.deleteTopic); every broker lets its partitions go on its next scan. */
  deleteTopic(name: string): Promise<boolean> {
    return this.#catalog.deleteTopic(name);
  }

  /** [C2], [L4]: lets go of partitions whose topic no longer exists, or exists as another incarnation (a new topic id). */
  async #forgetDeleted(topics: ReadonlyMap<string, TopicRecord>): Promise<void> {
    const gone = new Set<string>();
    for (const id of [...this.#served, ...this.#following]) {
      const topic = id.slice(0, id.lastIndexOf('/'));
      if (topics.get(topic)?.topicId === this.#incarnations.get(topic)) continue;
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
    const topicsReadMs = this.#options.clock.monotonicMs();
    const allTopicRecords = [...(await this.#catalog.readTopics())];
    const stalledDeletes = this.#catalog.sawTopics(topicsReadMs, allTopicRecords);
    const records = await this.#partitionRecords.refresh();
    for (const id of this.#partitions.keys()) if (!records.has(id)) this.#partitions.delete(id); // deleted (its topic too, by any broker): no stale leader, no growth
    this.#noteSealedStream(records.values());
    await this.#forgetDeleted(this.#catalog.topics());
    // [C1] A broker whose disk fails leads nothing: what it leads is up for grabs, and it counts in no one's share.
    this.#membership.recheckStorage();
    // [C1] Others as of when their records were read, not after the slow reads since (a LIST of many partition records).
    const mayLead = (b: BrokerRecord) => (b.nodeId === self.nodeId ? this.#membership.mayLead() : this.#membership.isAlive(b, observedMs) && b.storageFailing !== true);
    const canLead = new Set(this.#membership.brokers.filter(mayLead).map((b) => b.nodeId));
    const total = [...this.#catalog.topics().values()].reduce((sum, t) => sum + t.partitions, 0);
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
    for (const name of stalledDeletes) await this.#catalog.finishStalledDelete(name, stalledIds.get(name)!);
    this.#options.scanned?.();
    if (this.#newEpochWanted) await this.#startNewEpoch();
  }

  /** [C3], [C6], followers: one scan's pass over every partition of the topics it read. */
  async #claimAndFollow(records: ReadonlyMap<string, Versioned<PartitionRecord>>, canLead: ReadonlySet<number>, fairShare: number, mayClaim: () => boolean, adoptions: AdoptionPool): Promise<void> {
    const { self } = this.#options;
    for (const [topic, { topicId, partitions, leaderEpochBase = 0 }] of this.#catalog.topics()) {
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

  /** [L8] Sees the topic records every leaseMs / 3 on its own timer: a slow scan must not let every sighting lapse. */
  #scheduleSightingCheck(): void {
    this.#sightingTimer = this.#options.clock.setTimer(
      this.#options.self.leaseMs / 3,
      () => {
        if (this.#stopped) return;
        this.#catalog
          .checkSightings()
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
