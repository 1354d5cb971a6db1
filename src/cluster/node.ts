import { componentLogger, type Logger, type LoggerOption } from '../observability/logger.ts';
import { sleep } from '../util/backoff.ts';
import type { Timer } from '../util/clock.ts';
import type { Uuid } from '../util/uuid.ts';
import type { StreamId } from '../wal/keys.ts';
import { type MembershipOptions, Membership } from './membership.ts';
import { HeldPartitions, type HeldPartitionsOptions } from './held-partitions.ts';
import { PartitionClaims, type PartitionClaimsOptions } from './partition-claims.ts';
import { TopicCatalog, type TopicCatalogOptions } from './topic-catalog.ts';
import type { TopicConfigs } from '../log/topic-config.ts';
import type { ConfigAlteration } from '../log/topic-config-changes.ts';
import type { BrokerRecord, PartitionRecord, TopicRecord } from './control-records.ts';

/**
 * [K1] After a peer's exit, this broker scans again, first EXIT_FOLLOW_UP_INTERVAL_MS later and
 * then at twice the wait each time up to EXIT_FOLLOW_UP_INTERVAL_MAX_MS, while a partition record
 * it read still names the exited broker, for at most EXIT_FOLLOW_UP_MS: the partitions another
 * survivor claims are then in this broker's Metadata within a few tens to hundreds of ms, not at
 * its next scan (a client told "no leader" meanwhile backs off and asks again). A survivor
 * adopting 500 partitions claims them over seconds, ADOPTIONS_IN_FLIGHT at a time (issue 28):
 * 20 follow-ups of 25 ms, the bound before, could end before its last claims. The cost, a scan's
 * reads a few times a second, comes only with a broker's exit, and ends once every partition it
 * led has another leader or the node lives again (a new process of it).
 */
const EXIT_FOLLOW_UP_INTERVAL_MS = 25;
const EXIT_FOLLOW_UP_INTERVAL_MAX_MS = 200;
const EXIT_FOLLOW_UP_MS = 60_000;

/** What each part of the node takes (they share the store, the clock and this broker's record), and the node's own. */
export interface ClusterNodeOptions extends MembershipOptions, Omit<TopicCatalogOptions, 'self'>, Omit<PartitionClaimsOptions, 'self'>, Omit<HeldPartitionsOptions, 'control'> {
  /** How often leadership is re-examined; the lease is renewed every leaseMs / 3 on its own timer. */
  readonly scanIntervalMs: number;
  /** The node stops: end whatever follows partitions in the background. */
  stopped?(): void;
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
  readonly #held: HeldPartitions;
  readonly #claims: PartitionClaims;
  #leaseTimer: Timer | null = null;
  #scanTimer: Timer | null = null;
  #sightingTimer: Timer | null = null;
  #stopped = false;
  /** A scan confirming the lease after a lapse is under way. */
  #confirming = false;

  constructor(options: ClusterNodeOptions) {
    this.#options = options;
    this.#log = componentLogger(options.log, 'cluster');
    this.#held = new HeldPartitions(options, this.#log);
    this.#membership = new Membership(options, this.#held, this.#log);
    this.#catalog = new TopicCatalog(options, this.#membership.lease, this.#held, this.#log);
    this.#claims = new PartitionClaims(options, this.#membership, this.#catalog, this.#held, this.#log);
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
    this.#claims.watchWriter();
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
    this.#claims.stop();
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

  /** [K1] A peer's process exited: if its broker record says so too (Membership.peerExited), scan now and follow up. */
  async #peerExited(nodeId: number, incarnation: string): Promise<void> {
    if (this.#stopped) return;
    try {
      const record = await this.#membership.readBroker(nodeId);
      if (!this.#membership.peerExited(nodeId, incarnation, record)) return;
      await this.scan();
      const { clock } = this.#options;
      const untilMs = clock.monotonicMs() + EXIT_FOLLOW_UP_MS;
      // Until no record names the node, or the node lives again (a new process of it renewed: review 28d, it claims back what names it).
      const exitedStill = () => this.#held.ledBy(nodeId) && this.#membership.liveBroker(nodeId) === undefined;
      for (let waitMs = EXIT_FOLLOW_UP_INTERVAL_MS; !this.#stopped && exitedStill() && clock.monotonicMs() < untilMs; waitMs = Math.min(EXIT_FOLLOW_UP_INTERVAL_MAX_MS, 2 * waitMs)) {
        await sleep(clock, waitMs);
        await this.scan();
      }
    } catch (error) {
      this.#log.warn({ peer: nodeId, err: error }, `checking broker ${nodeId} after its peer link ended failed (its lease decides): ${String(error)}`);
    }
  }

  /** [C1] Brokers alive as this one observes them; itself unless its lease lapsed unrenewed. */
  liveBrokers(): BrokerRecord[] {
    return this.#membership.liveBrokers();
  }

  /** The partition's leader as last scanned; null if none is alive. */
  leaderOf(topic: string, partition: number): { broker: BrokerRecord; record: PartitionRecord } | null {
    return this.#claims.leaderOf(topic, partition);
  }

  /** The followers of a partition: the next replicationFactor - 1 live brokers after its leader, by node id (PartitionClaims.followersOf). */
  followersOf(topic: string, partition: number): BrokerRecord[] {
    return this.#claims.followersOf(topic, partition);
  }

  /** [K4] Whether this broker is adopting any partition now (claimed, sealing or rebuilding). */
  adopting(): boolean {
    return this.#claims.adopting();
  }

  /** [K5] While this broker adopts the partition: settles once the adoption ended, served or not; null otherwise. */
  adoptionOf(topic: string, partition: number): Promise<void> | null {
    return this.#claims.adoptionOf(topic, partition);
  }

  /** DeleteRecords in a cluster, before the leader moves its own log (PartitionClaims.recordLogStart). */
  recordLogStart(topic: string, partition: number, logStartOffset: number): Promise<void> {
    return this.#claims.recordLogStart(topic, partition, logStartOffset);
  }

  /** [C2]-[C3], [C6]: reads the records, claims what is up for grabs within the fair share, lets go of what was lost. */
  scan(): Promise<void> {
    return this.#claims.scan();
  }

  /** A scan now, after a create or a grow of `topic`, waited for at most a few seconds (PartitionClaims.scanAfterChange). */
  scanAfterChange(topic: string): Promise<void> {
    return this.#claims.scanAfterChange(topic);
  }

  topics(): ReadonlyMap<string, TopicRecord> {
    return this.#catalog.topics();
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
