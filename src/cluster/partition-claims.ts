import { FerryError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import type { Clock, Timer } from '../util/clock.ts';
import type { Uuid } from '../util/uuid.ts';
import { regressed } from '../util/regressions.ts';
import { assert } from '../util/assert.ts';
import type { StreamId } from '../wal/keys.ts';
import type { ControlStore, Versioned } from '../control/control-store.ts';
import { ReadsAfter } from '../control/reads-after.ts';
import type { SettledPrefix } from '../partition/rebuild.ts';
import { type QueueAdoption, type Served, TakeoverStages } from './takeover-stages.ts';
import { type ClaimPlan, type Incarnation, planTakeover, sealedInChain } from './takeover.ts';
import type { Membership } from './membership.ts';
import { ADMIN_CHANGE_ATTEMPTS_MAX, type TopicCatalog } from './topic-catalog.ts';
import type { HeldPartitions } from './held-partitions.ts';
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
 * serving; the claims run apart, CLAIMS_IN_FLIGHT): a broker taking over a dead one's share takes over all of it in about the time of
 * one adoption rather than their sum. An adoption is mostly waiting on the stores (its claim, the
 * tier's end, the reads), and the rebuilds of one stream share their reads [K7]: at 8 a broker
 * adopting 500 partitions took 9.5-15 s here, at 32 5.9-7.6 s, at 64 no faster (issue 28,
 * bench/failover.bench.ts at 1,000 partitions). Bounded because each rebuild holds up to
 * REBUILD_READ_AHEAD WAL objects: shared when the rebuilds read one stream, but up to this many
 * times that when each reads a stream of its own.
 */
export const ADOPTIONS_IN_FLIGHT = 32;
/**
 * [K4] How many claims one scan makes at once (each a compare-and-swap of the partition record and
 * a read of its topic record, shared with the claims beside it [C3]): they run apart from the
 * adoptions (TakeoverStages), so a broker taking over 500 partitions claims them all in the first
 * moments and their produces wait for the adoptions [K5].
 */
export const CLAIMS_IN_FLIGHT = 32;

/**
 * How long a create or a grow waits for the scan that claims its partitions here: a scan behind a
 * long rebuild would otherwise hold the answer past a client's request timeout. The claim goes on
 * after the answer; until it lands, clients are told LEADER_NOT_AVAILABLE and retry.
 */
const ADMIN_SCAN_WAIT_MS = 3000;

export interface PartitionClaimsOptions {
  readonly control: ControlStore;
  /** This broker's record: its node id. */
  readonly self: Pick<BrokerRecord, 'nodeId'>;
  readonly writer: WriterEpochs;
  readonly clock: Clock;
  /**
   * [C4]-[C5], after this node won the compare-and-swap of `plan.next` [C3]: seal, rebuild, then
   * serve. Throwing leaves the partition to a later scan (which claims it again, one epoch up).
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: an adopter with nothing settled is an async function returning nothing
  adopt(topic: string, partition: number, partitions: number, plan: ClaimPlan, promoted: boolean): Promise<SettledPrefix | null | void>;
  /**
   * [K7] Runs one scan's adoptions with the WAL reads of their rebuilds kept for all of them: the
   * partitions of one dead stream read each of its objects once, however many run at a time.
   */
  adoptTogether?<T>(adoptions: () => Promise<T>): Promise<T>;
  /** Replication factor > 1: start following a partition another broker leads (throwing retries later). */
  follow(topic: string, partition: number, partitions: number, record: PartitionRecord): Promise<void>;
  /** A followed partition's record names a log start (DeleteRecords on its leader): the follower serves nothing below it either. */
  followLogStart?(topic: string, partition: number, logStartOffset: number): void;
  /** After each scan: leaders, replica sets and leases may have changed (followers re-target their reports, leaders re-check their in-sync sets). */
  scanned?(): void;
}

/**
 * This broker's part in the partitions (docs/cluster-protocol.md [C2]-[C7]): each scan reads the
 * records, claims its fair share of the partitions whose leader is gone by compare-and-swap,
 * adopts what it won, lets go of what it lost, follows the partitions it is a follower of, and a
 * fenced writer is replaced by a new epoch.
 */
export class PartitionClaims {
  readonly #options: PartitionClaimsOptions;
  readonly #log: Logger;
  readonly #membership: Membership;
  readonly #catalog: TopicCatalog;
  readonly #held: HeldPartitions;
  /** [K5] The adoptions under way here, by partition: each settles once it ended (adoptionOf). */
  readonly #adopting = new Map<string, Promise<void>>();
  /** [C3] The topic records read after claims: each claim's read starts after its compare-and-swap landed; claims at once share them. */
  readonly #topicsAfterClaims: ReadsAfter<Versioned<TopicRecord> | null>;
  /** A scan asked for by admin changes that has not started yet (scanAfterChange). */
  #adminScan: Promise<void> | null = null;
  #stopped = false;
  #newEpochWanted = false;

  constructor(options: PartitionClaimsOptions, membership: Membership, catalog: TopicCatalog, held: HeldPartitions, log: Logger) {
    this.#options = options;
    this.#log = log;
    this.#membership = membership;
    this.#catalog = catalog;
    this.#held = held;
    this.#topicsAfterClaims = new ReadsAfter((topic) => options.control.read<TopicRecord>(`topics/${topic}`));
  }

  /** Claims and follows nothing more (the node stops). */
  stop(): void {
    this.#stopped = true;
  }

  /** The partition's leader as last scanned; null if none is alive. */
  leaderOf(topic: string, partition: number): { broker: BrokerRecord; record: PartitionRecord } | null {
    const record = this.#held.record(partitionKey(topic, partition))?.value;
    const broker = record === undefined ? undefined : this.#membership.liveBroker(record.leader);
    return record === undefined || broker === undefined ? null : { broker, record };
  }

  /**
   * The followers of a partition: the next replicationFactor - 1 live brokers after its leader,
   * by node id, wrapping around, skipping those whose record says storageFailing ([C1]: a broker
   * that cannot write its disk or reach the WAL store cannot follow; the next one follows instead).
   * Every broker computes the same list from the same records.
   */
  followersOf(topic: string, partition: number): BrokerRecord[] {
    const factor = this.#catalog.topics().get(topic)?.replicationFactor ?? 1;
    if (factor <= 1) return [];
    const leader = this.leaderOf(topic, partition)?.broker.nodeId;
    if (leader === undefined) return [];
    const live = this.#membership.liveBrokers().sort((a, b) => a.nodeId - b.nodeId);
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
    let current = this.#held.record(id) ?? null;
    for (let attempt = 0; attempt < ADMIN_CHANGE_ATTEMPTS_MAX; attempt++) {
      if (current === null || !this.#leadsAsAdopted(id, current.value))
        throw new FerryError('NotLeader', `Leader not local for partition ${topic}-${partition} on broker ${this.#options.self.nodeId}`);
      if ((current.value.logStartOffset ?? 0) >= logStartOffset) return;
      const written = await control.replace<PartitionRecord>(`partitions/${id}`, current, { ...current.value, logStartOffset });
      if (written !== null) {
        this.#held.wrote(id, written);
        return;
      }
      current = await control.read<PartitionRecord>(`partitions/${id}`); // changed: still ours (a settled prefix noted), or claimed by another
    }
    throw new FerryError('OutcomeUnknown', `the log start of ${id} changed under ${ADMIN_CHANGE_ATTEMPTS_MAX} attempts in a row to raise it to ${logStartOffset}`);
  }

  /** Whether this broker serves the partition as the leader `record` names, at the epoch it adopted, with its lease held. */
  #leadsAsAdopted(id: string, record: PartitionRecord): boolean {
    return this.#membership.leaseHeld() && this.#held.serves(id) && record.leader === this.#options.self.nodeId && this.#held.adoptedEpoch(id) === record.leaderEpoch;
  }

  /**
   * A scan now, after a create or a grow of `topic`, so that this broker leads its share when the
   * change is answered (all of it alone, as Kafka's controller names the leaders in the create);
   * waits for it at most ADMIN_SCAN_WAIT_MS. One that fails leaves it to the next scan (the change
   * stands). Changes that ask while a scan waits to start share it (a CreateTopics of many topics
   * runs one or two scans, not one per topic): it starts after each of them.
   */
  async scanAfterChange(topic: string): Promise<void> {
    this.#adminScan ??= this.#held.exclusive(() => {
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
    return this.#held.exclusive(() => this.#scan());
  }

  async #scan(): Promise<void> {
    const { self } = this.#options;
    const observedMs = this.#membership.sawBrokers([...(await this.#membership.readBrokers()).values()]);
    const topicsReadMs = this.#options.clock.monotonicMs();
    const allTopicRecords = [...(await this.#catalog.readTopics())];
    const stalledDeletes = this.#catalog.sawTopics(topicsReadMs, allTopicRecords);
    const records = await this.#held.readRecords();
    this.#held.keepOnly(records); // deleted (its topic too, by any broker): no stale leader, no growth
    this.#noteSealedStream(records.values());
    await this.#held.forgetDeleted(this.#catalog.topics());
    // [C1] A broker whose disk fails leads nothing: what it leads is up for grabs, and it counts in no one's share.
    this.#membership.recheckStorage();
    // [C1] Others as of when their records were read, not after the slow reads since (a LIST of many partition records).
    const mayLead = (b: BrokerRecord) => (b.nodeId === self.nodeId ? this.#membership.mayLead() : this.#membership.isAlive(b, observedMs) && b.storageFailing !== true);
    const canLead = new Set(this.#membership.brokers.filter(mayLead).map((b) => b.nodeId));
    const total = [...this.#catalog.topics().values()].reduce((sum, t) => sum + t.partitions, 0);
    const fairShare = Math.ceil(total / Math.max(1, canLead.size));
    // No claims while this broker's own lease may have lapsed in others' eyes, its writer is fenced, or its disk fails.
    const mayClaim = () => !this.#newEpochWanted && this.#membership.mayLead();
    // [K4] Claims run CLAIMS_IN_FLIGHT at once, the adoptions of those won ADOPTIONS_IN_FLIGHT; the scan waits for all of them.
    const takeovers = new TakeoverStages(CLAIMS_IN_FLIGHT, ADOPTIONS_IN_FLIGHT);
    const adoptAll = async () => {
      try {
        await this.#claimAndFollow(records, canLead, fairShare, mayClaim, takeovers);
      } catch (error) {
        await takeovers.settled().catch(() => {}); // the scan ends only once what it started ended
        throw error;
      }
      await takeovers.settled();
    };
    await (this.#options.adoptTogether ?? ((adopt) => adopt()))(adoptAll); // [K7]
    const stalledIds = new Map(allTopicRecords.map(([name, record]) => [name, record.value.topicId]));
    for (const name of stalledDeletes) await this.#catalog.finishStalledDelete(name, stalledIds.get(name)!);
    this.#options.scanned?.();
    if (this.#newEpochWanted) await this.#startNewEpoch();
  }

  /** [C3], [C6], followers: one scan's pass over every partition of the topics it read. */
  async #claimAndFollow(records: ReadonlyMap<string, Versioned<PartitionRecord>>, canLead: ReadonlySet<number>, fairShare: number, mayClaim: () => boolean, takeovers: TakeoverStages): Promise<void> {
    const { self } = this.#options;
    for (const [topic, { topicId, partitions, leaderEpochBase = 0 }] of this.#catalog.topics()) {
      for (let partition = 0; partition < partitions && !this.#stopped && !takeovers.failed; partition++) {
        const id = partitionKey(topic, partition);
        const recorded = records.get(id) ?? null;
        const current = recorded === null ? null : await this.#ofIncarnation(topic, topicId, recorded);
        if (current === undefined) continue; // this scan's view of the topic is older than the record: next scan
        this.#held.noteScanned(id, current);
        const leader = current?.value.leader;
        if (leader === self.nodeId) {
          // Named leader but not serving (a restart, a new writer epoch, a failed adoption): claim it again [C3].
          if (!this.#held.serves(id) && mayClaim()) await takeovers.claim((adopt) => this.#takeOver(topic, { topicId, leaderEpochBase }, partition, partitions, recorded, current, adopt, takeovers));
        } else {
          if (this.#held.serves(id)) await this.#held.release(topic, partition);
          const upForGrabs = leader === undefined || !canLead.has(leader);
          // Claims and adoptions under way count towards the share: each adds a partition served unless it loses its race.
          if (upForGrabs && this.#held.servedCount + takeovers.inFlight < fairShare && mayClaim())
            await takeovers.claim((adopt) => this.#takeOver(topic, { topicId, leaderEpochBase }, partition, partitions, recorded, current, adopt, takeovers));
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
   * and serve: the adoption is queued in `takeovers`, and this claim's slot is free for the next.
   */
  async #takeOver(
    topic: string,
    incarnation: Incarnation,
    partition: number,
    partitions: number,
    recorded: Versioned<PartitionRecord> | null,
    current: Versioned<PartitionRecord> | null,
    adopt: QueueAdoption,
    takeovers: TakeoverStages,
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
    const confirmed = (await this.#topicsAfterClaims.read(topic))?.value;
    if (confirmed?.topicId !== topicId || confirmed.deleting === true) return;
    this.#held.wrote(id, won);
    this.#log.info({ topic, partition, leaderEpoch: plan.next.leaderEpoch }, `claimed ${id} at leader epoch ${plan.next.leaderEpoch}`);
    this.#adopt(topic, partition, partitions, plan, won, adopt, takeovers);
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
  watchWriter(): void {
    const stream = this.#membership.stream;
    void this.#options.writer.whenFailed().then(() => {
      if (this.#stopped || this.#membership.stream !== stream || regressed('fenced-writer-stays-fenced')) return;
      this.#newEpochWanted = true;
      void this.#held.exclusive(() => this.#startNewEpoch()).catch((error: unknown) => this.#log.error({ err: error }, `could not start a new writer epoch: ${String(error)}`));
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
    this.#held.servesNone(); // the engine lets go of them with the old writer
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
    this.watchWriter();
    await this.#membership.renew();
    await this.#scan();
  }

  /** Follows the partition when this broker is one of its followers, stops when it no longer is. */
  async #replicate(topic: string, partition: number, partitions: number, record: PartitionRecord): Promise<void> {
    const id = partitionKey(topic, partition);
    const mine = this.followersOf(topic, partition).some((b) => b.nodeId === this.#options.self.nodeId);
    if (mine && !this.#held.follows(id)) {
      try {
        await this.#options.follow(topic, partition, partitions, record);
        this.#held.followed(topic, id, record.topicId);
      } catch (error) {
        this.#log.warn({ topic, partition, err: error }, `could not follow ${id} yet: ${error instanceof Error ? error.message : String(error)}`);
      }
    } else if (!mine && this.#held.follows(id)) {
      await this.#held.unfollow(topic, partition);
    } else if (mine && record.logStartOffset !== undefined) {
      this.#options.followLogStart?.(topic, partition, record.logStartOffset); // as of this scan's read; the answers to its reports bring it sooner [R6]
    }
  }

  /** [K4] Whether any adoption is under way here. */
  adopting(): boolean {
    return this.#adopting.size > 0;
  }

  /**
   * [K5] While this broker adopts the partition (claimed, sealing and rebuilding): settles once the
   * adoption ended, served or not; null otherwise. A produce that reaches a new leader before it
   * serves waits for this rather than send the client off to back off and ask again.
   */
  adoptionOf(topic: string, partition: number): Promise<void> | null {
    return this.#adopting.get(partitionKey(topic, partition)) ?? null;
  }

  /** Queues the adoption of a claim won; from now until it ended, a produce for the partition waits for it [K5]. */
  #adopt(topic: string, partition: number, partitions: number, plan: ClaimPlan, won: Versioned<PartitionRecord>, adopt: QueueAdoption, takeovers: TakeoverStages): void {
    const id = partitionKey(topic, partition);
    const adoption = adopt((served) => this.#adoptNow(topic, partition, partitions, plan, won, served, takeovers));
    this.#adopting.set(id, adoption);
    void adoption.then(() => {
      if (this.#adopting.get(id) === adoption) this.#adopting.delete(id);
    });
  }

  /** [C4]-[C5] Seal, rebuild, serve; then the settled prefix found is noted [K6], once served (TakeoverStages.afterwards). */
  async #adoptNow(topic: string, partition: number, partitions: number, plan: ClaimPlan, won: Versioned<PartitionRecord>, served: Served, takeovers: TakeoverStages): Promise<void> {
    // Queued behind others, it may start after the node stopped or its writer was fenced [C7]: it
    // would seal and rebuild to serve through a writer that acknowledges nothing (review 28e, 64
    // of 96 did). Left to the next scan, which claims it again through the new stream.
    if (this.#stopped || this.#newEpochWanted) return;
    // [K3] A follower promoted here keeps its local log (its copy of the chain's prefix).
    const promoted = this.#held.follows(partitionKey(topic, partition));
    if (promoted) await this.#held.unfollow(topic, partition);
    let settled: SettledPrefix | null = null;
    try {
      settled = (await this.#options.adopt(topic, partition, partitions, plan, promoted)) ?? null;
      this.#held.adopted(topic, partitionKey(topic, partition), plan.next.leaderEpoch, plan.next.topicId);
      served(); // counted as served now, no more as a takeover in flight
    } catch (error) {
      this.#log.warn({ topic, partition, err: error }, `could not adopt ${partitionKey(topic, partition)} yet: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    takeovers.afterwards(this.#noteSettled(partitionKey(topic, partition), won, settled));
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
      this.#held.wrote(id, written);
    } catch (error) {
      this.#log.warn({ partitionKey: id, err: error }, `could not note ${id}'s settled streams (the next takeover reads them again): ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
