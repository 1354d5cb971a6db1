import type { Clock, Timer } from '../util/clock.ts';
import { type Random, systemRandom } from '../util/random.ts';
import { isUuid, randomUuid, type Uuid } from '../util/uuid.ts';
import type { StreamId } from '../wal/keys.ts';
import { type ControlStore, RecordCache, type Versioned } from './control-store.ts';

export interface BrokerRecord {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
  readonly rack: string | null;
  readonly stream: StreamId;
  readonly renewedAtMs: number;
  readonly leaseMs: number;
}

export interface TopicRecord {
  /**
   * Kafka's topic id, drawn when the record is created (DESIGN.md contract 10): a topic deleted
   * and created again is another incarnation, and nothing of the old one is served for it.
   */
  readonly topicId: Uuid;
  readonly partitions: number;
  /** Brokers holding each partition: its leader plus this many minus one followers (default 1). */
  readonly replicationFactor?: number;
}

export interface PartitionRecord {
  /** The topic incarnation this record is of; a record naming another id is a deleted one's leftover. */
  readonly topicId: Uuid;
  readonly leader: number;
  readonly leaderEpoch: number;
  /** Every WAL stream that carried the partition, oldest first (docs/cluster-protocol.md). */
  readonly chain: readonly StreamId[];
}

export interface ClusterNodeOptions {
  readonly control: ControlStore;
  readonly self: Omit<BrokerRecord, 'renewedAtMs'>;
  readonly clock: Clock;
  /** How often leadership is re-examined; the lease is renewed every leaseMs / 3 on its own timer. */
  readonly scanIntervalMs: number;
  /** Draws the ids of topics this node creates; the operating system's by default (ids must never repeat). */
  readonly random?: Random;
  /** [C4]-[C5]: seal the chain and rebuild, then serve. Throwing leaves the partition to a later scan. */
  adopt(topic: string, partition: number, partitions: number, record: PartitionRecord): Promise<void>;
  /** [C6]: stop serving. */
  release(topic: string, partition: number): Promise<void>;
  /** Replication factor > 1: start following a partition another broker leads (throwing retries later). */
  follow(topic: string, partition: number, partitions: number, record: PartitionRecord): Promise<void>;
  unfollow(topic: string, partition: number): Promise<void>;
  /** A topic was deleted: drop what is left of it here. */
  forget(topic: string): Promise<void>;
  /** The node stops: end whatever follows partitions in the background. */
  stopped?(): void;
  /** After each scan: leaders, replica sets and leases may have changed (followers re-target their reports, leaders re-check their in-sync sets). */
  scanned?(): void;
  log?(message: string): void;
}

/** A lease counts as alive this long past its own duration: slack for clocks and slow writes. */
const LEASE_GRACE_FACTOR = 1;

/**
 * This broker's view of the cluster and its part in it (docs/cluster-protocol.md, C1-C6): it
 * keeps its lease, claims its fair share of partitions whose leader is gone by compare-and-swap,
 * adopts what it won and lets go of what it lost.
 */
export class ClusterNode {
  readonly #options: ClusterNodeOptions;
  readonly #brokerRecords: RecordCache<BrokerRecord>;
  readonly #topicRecords: RecordCache<TopicRecord>;
  readonly #partitionRecords: RecordCache<PartitionRecord>;
  #brokers: BrokerRecord[] = [];
  #topics = new Map<string, TopicRecord>();
  readonly #partitions = new Map<string, Versioned<PartitionRecord>>();
  readonly #served = new Set<string>();
  readonly #following = new Set<string>();
  /** The topic id each topic with partitions served or followed here was adopted under. */
  readonly #incarnations = new Map<string, Uuid>();
  #leaseTimer: Timer | null = null;
  #scanTimer: Timer | null = null;
  #stopped = false;

  constructor(options: ClusterNodeOptions) {
    this.#options = options;
    this.#brokerRecords = new RecordCache(options.control, 'brokers/');
    this.#topicRecords = new RecordCache(options.control, 'topics/');
    this.#partitionRecords = new RecordCache(options.control, 'partitions/');
  }

  get nodeId(): number {
    return this.#options.self.nodeId;
  }

  /** Renews the lease and scans once (so Metadata is right from the start), then keeps both going. */
  async start(): Promise<void> {
    await this.#renew();
    await this.scan();
    this.#scheduleLease();
    this.#scheduleScan();
  }

  /** Stops renewing the lease and scanning. */
  stop(): void {
    this.#stopped = true;
    this.#leaseTimer?.cancel();
    this.#scanTimer?.cancel();
    this.#options.stopped?.();
  }

  /** Clears the lease at once (a clean shutdown), so others take over without waiting it out. */
  async resign(): Promise<void> {
    await this.#options.control.put(`brokers/${this.nodeId}`, { ...this.#options.self, renewedAtMs: 0 });
  }

  liveBrokers(): BrokerRecord[] {
    const nowMs = this.#options.clock.nowMs();
    return this.#brokers.filter((broker) => isAlive(broker, nowMs));
  }

  topics(): ReadonlyMap<string, TopicRecord> {
    return this.#topics;
  }

  /** The partition's leader as last scanned; null if none is alive. */
  leaderOf(topic: string, partition: number): { broker: BrokerRecord; record: PartitionRecord } | null {
    const record = this.#partitions.get(key(topic, partition))?.value;
    const broker = record === undefined ? undefined : this.liveBrokers().find((b) => b.nodeId === record.leader);
    return record === undefined || broker === undefined ? null : { broker, record };
  }

  /**
   * The followers of a partition: the next replicationFactor - 1 live brokers after its leader,
   * by node id, wrapping around. Every broker computes the same list from the same records.
   */
  followersOf(topic: string, partition: number): BrokerRecord[] {
    const leader = this.leaderOf(topic, partition)?.broker.nodeId;
    const factor = this.#topics.get(topic)?.replicationFactor ?? 1;
    if (leader === undefined || factor <= 1) return [];
    const live = this.liveBrokers().sort((a, b) => a.nodeId - b.nodeId);
    const at = live.findIndex((b) => b.nodeId === leader);
    return Array.from({ length: Math.min(factor, live.length) - 1 }, (_, i) => live[(at + 1 + i) % live.length]!);
  }

  /** Creates a topic record; false if it exists. Its partitions are claimed on the next scans. */
  async createTopic(name: string, partitions: number, replicationFactor = 1): Promise<boolean> {
    const topicId = randomUuid(this.#options.random ?? systemRandom);
    const created = await this.#options.control.create<TopicRecord>(`topics/${name}`, { topicId, partitions, replicationFactor });
    if (created !== null) {
      this.#topics.set(name, created.value);
      this.#topicRecords.note(name, created);
    }
    return created !== null;
  }

  /** Deletes a topic's records; every broker lets its partitions go on its next scan. */
  async deleteTopic(name: string): Promise<boolean> {
    const topic = await this.#options.control.read<TopicRecord>(`topics/${name}`);
    if (topic === null) return false;
    await this.#options.control.delete(`topics/${name}`);
    for (let partition = 0; partition < topic.value.partitions; partition++) {
      await this.#options.control.delete(`partitions/${key(name, partition)}`);
      this.#partitionRecords.note(key(name, partition), null);
    }
    this.#topics.delete(name);
    this.#topicRecords.note(name, null);
    await this.#forgetDeleted();
    return true;
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
      this.#incarnations.delete(topic);
      await this.#options.forget(topic);
    }
  }

  /** [C2]-[C3], [C6]: reads the records, claims what is up for grabs within the fair share, lets go of what was lost. */
  async scan(): Promise<void> {
    const { self, clock } = this.#options;
    this.#brokers = [...(await this.#brokerRecords.refresh()).values()].map((record) => record.value);
    // A topic record without an id predates topic ids; such a topic is not served (see TopicRecord.topicId).
    const topicRecords = [...(await this.#topicRecords.refresh())].filter(([, record]) => isUuid(record.value.topicId));
    this.#topics = new Map(topicRecords.map(([name, record]) => [name, { topicId: record.value.topicId, partitions: record.value.partitions, replicationFactor: record.value.replicationFactor ?? 1 }]));
    const records = await this.#partitionRecords.refresh();
    for (const id of this.#partitions.keys()) if (!records.has(id)) this.#partitions.delete(id); // deleted (its topic too, by any broker): no stale leader, no growth
    await this.#forgetDeleted();
    const live = new Set(this.liveBrokers().map((b) => b.nodeId));
    const total = [...this.#topics.values()].reduce((sum, t) => sum + t.partitions, 0);
    const fairShare = Math.ceil(total / Math.max(1, live.size));
    for (const [topic, { topicId, partitions }] of this.#topics) {
      for (let partition = 0; partition < partitions && !this.#stopped; partition++) {
        const id = key(topic, partition);
        const recorded = records.get(id) ?? null;
        const current = recorded === null ? null : await this.#ofIncarnation(topic, topicId, recorded);
        if (current === undefined) continue; // this scan's view of the topic is older than the record: next scan
        if (current !== null) this.#partitions.set(id, current);
        else this.#partitions.delete(id);
        const leader = current?.value.leader;
        if (leader === self.nodeId) {
          if (!this.#served.has(id)) await this.#adopt(topic, partition, partitions, current!.value);
        } else {
          if (this.#served.has(id)) await this.#release(topic, partition);
          const upForGrabs = leader === undefined || !live.has(leader);
          if (upForGrabs && this.#served.size < fairShare) await this.#claim(topic, topicId, partition, partitions, recorded, clock.nowMs());
          else if (!upForGrabs) await this.#replicate(topic, partition, partitions, current!.value);
        }
      }
    }
    this.#options.scanned?.();
  }

  /**
   * [C2], [L4] The partition record when it is of incarnation `topicId`; null when it is a deleted
   * incarnation's leftover (a claim replaces it, inheriting nothing); undefined when the topic was
   * created again after this scan read the topics, so the record is newer than the view of it.
   */
  async #ofIncarnation(topic: string, topicId: Uuid, recorded: Versioned<PartitionRecord>): Promise<Versioned<PartitionRecord> | null | undefined> {
    if (recorded.value.topicId === topicId) return recorded;
    const fresh = await this.#options.control.read<TopicRecord>(`topics/${topic}`);
    return fresh?.value.topicId === topicId ? null : undefined;
  }

  /** `recorded`: the partition's record as read, of this incarnation or a deleted one's leftover (replaced whole). */
  async #claim(topic: string, topicId: Uuid, partition: number, partitions: number, recorded: Versioned<PartitionRecord> | null, nowMs: number): Promise<void> {
    const { control, self } = this.#options;
    const id = key(topic, partition);
    const previous = recorded?.value.topicId === topicId ? recorded.value : undefined;
    const chain = previous?.chain ?? [];
    const last = chain.at(-1);
    const mine = last !== undefined && last.writerId === self.stream.writerId && last.epoch === self.stream.epoch;
    const next: PartitionRecord = { topicId, leader: self.nodeId, leaderEpoch: (previous?.leaderEpoch ?? -1) + 1, chain: mine ? chain : [...chain, self.stream] };
    const won = recorded === null ? await control.create(`partitions/${id}`, next) : await control.replace(`partitions/${id}`, recorded, next);
    if (won === null) return; // [C3] someone else claimed it first
    // [C3], [L4] The claim was made from this scan's view of the topic: serve it only if that incarnation still exists.
    if ((await control.read<TopicRecord>(`topics/${topic}`))?.value.topicId !== topicId) return;
    this.#partitions.set(id, won);
    this.#partitionRecords.note(id, won);
    this.#options.log?.(`claimed ${id} at leader epoch ${next.leaderEpoch} (${nowMs})`);
    await this.#adopt(topic, partition, partitions, next);
  }

  /** Follows the partition when this broker is one of its followers, stops when it no longer is. */
  async #replicate(topic: string, partition: number, partitions: number, record: PartitionRecord): Promise<void> {
    const id = key(topic, partition);
    const mine = this.followersOf(topic, partition).some((b) => b.nodeId === this.nodeId);
    if (mine && !this.#following.has(id)) {
      try {
        await this.#options.follow(topic, partition, partitions, record);
        this.#following.add(id);
        this.#incarnations.set(topic, record.topicId);
      } catch (error) {
        this.#options.log?.(`could not follow ${id} yet: ${error instanceof Error ? error.message : String(error)}`);
      }
    } else if (!mine && this.#following.has(id)) {
      await this.#unfollow(topic, partition);
    }
  }

  async #unfollow(topic: string, partition: number): Promise<void> {
    this.#following.delete(key(topic, partition));
    await this.#options.unfollow(topic, partition);
  }

  async #adopt(topic: string, partition: number, partitions: number, record: PartitionRecord): Promise<void> {
    if (this.#following.has(key(topic, partition))) await this.#unfollow(topic, partition); // promoted
    try {
      await this.#options.adopt(topic, partition, partitions, record);
      this.#served.add(key(topic, partition));
      this.#incarnations.set(topic, record.topicId);
    } catch (error) {
      this.#options.log?.(`could not adopt ${key(topic, partition)} yet: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  async #release(topic: string, partition: number): Promise<void> {
    this.#served.delete(key(topic, partition));
    await this.#options.release(topic, partition);
    this.#options.log?.(`released ${key(topic, partition)}: another broker leads it`);
  }

  async #renew(): Promise<void> {
    await this.#options.control.put(`brokers/${this.nodeId}`, { ...this.#options.self, renewedAtMs: this.#options.clock.nowMs() });
  }

  #scheduleLease(): void {
    this.#leaseTimer = this.#options.clock.setTimer(this.#options.self.leaseMs / 3, () => {
      if (this.#stopped) return;
      this.#renew().catch((error: unknown) => this.#options.log?.(`lease renewal failed: ${String(error)}`)).finally(() => this.#scheduleLease());
    }, true);
  }

  #scheduleScan(): void {
    this.#scanTimer = this.#options.clock.setTimer(this.#options.scanIntervalMs, () => {
      if (this.#stopped) return;
      this.scan().catch((error: unknown) => this.#options.log?.(`cluster scan failed: ${String(error)}`)).finally(() => this.#scheduleScan());
    }, true);
  }
}

function key(topic: string, partition: number): string {
  return `${topic}/${partition}`;
}

function isAlive(broker: BrokerRecord, nowMs: number): boolean {
  return nowMs - broker.renewedAtMs <= broker.leaseMs * (1 + LEASE_GRACE_FACTOR) && broker.renewedAtMs > 0;
}
