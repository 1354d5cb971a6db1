import { pickByHash } from '../cluster/coordinator-hash.ts';
import { type Engine, FerryError } from '../engine/index.ts';
import type { ClusterNode } from '../cluster/node.ts';
import type { RegisteredAddresses } from '../cluster/replica-address.ts';
import { isFerryError } from '../errors.ts';
import { isStoreError } from '../store/errors.ts';
import { regressed } from '../util/regressions.ts';
import type { Uuid } from '../util/uuid.ts';
import { endpointFor, type ListenerEndpoint } from '../cluster/endpoints.ts';
import type { TopicConfigs } from '../log/topic-config.ts';
import type { ConfigAlteration } from '../log/topic-config-changes.ts';
import { describeTopicConfigs, type TopicConfigEntry } from '../log/topic-config-describe.ts';

/** Kafka's leader epoch of a partition without a leader. */
const NO_LEADER_EPOCH = -1;
/**
 * How long DeleteRecords waits for the in-sync followers' log starts [R6] when the caller names no
 * timeout: Kafka's admin client's default request.timeout.ms, so such a caller is answered within
 * what a Kafka client would wait anyway.
 */
export const DELETE_RECORDS_TIMEOUT_MS_DEFAULT = 30_000;
/** Deleted topic ids a cluster broker remembers (a cache: forgetting one costs a control read). */
const RETIRED_TOPIC_IDS_MAX = 10_000;

export interface BrokerAddress {
  readonly nodeId: number;
  /** Its first listener's address (a broker record's host and port). */
  readonly host: string;
  readonly port: number;
  readonly rack: string | null;
  /** Every listener's advertised address; absent: one listener, at host and port (endpoints.ts endpointFor). */
  readonly endpoints?: readonly ListenerEndpoint[];
}

/**
 * Who leads what, as the handlers need it: one implementation for a single broker (it leads
 * everything its engine has), one for a cluster (the control records, docs/cluster-protocol.md).
 */
export interface Topology {
  brokers(): BrokerAddress[];
  /** Topic name -> partition count, as last seen. */
  topics(): ReadonlyMap<string, number>;
  /** The topic's id (its current incarnation, docs/design.md contract 10); null for an unknown topic. */
  topicId(topic: string): Uuid | null;
  /** The name of the topic with this id, as last seen (KIP-516 requests name topics by id); null if none. */
  topicName(topicId: Uuid): string | null;
  /** The topic's id as its record says now (not as last seen); null if it does not exist. */
  topicIdNow(topic: string): Promise<Uuid | null>;
  /** A topic's partition count from its record, read now if not seen yet; null if it does not exist. */
  partitionCount(name: string): Promise<number | null>;
  /**
   * Whether `topicId` is the topic's current incarnation. An id other than the one last seen is
   * either of a deleted incarnation or of one created since this broker last looked: decided by
   * the topic's record, never by the cache.
   */
  isCurrentIncarnation(topic: string, topicId: Uuid): Promise<boolean>;
  /** The leader's node id, or null while the partition has none. */
  leaderOf(topic: string, partition: number): number | null;
  /** While this broker is taking the partition over: settles once that ended (served or not); null otherwise. */
  adoptionOf(topic: string, partition: number): Promise<void> | null;
  /** The leader's epoch (KIP-320), or -1 while the partition has no leader. */
  leaderEpochOf(topic: string, partition: number): number;
  /** The partition's followers (replication factor > 1); empty for a single broker. */
  followersOf(topic: string, partition: number): BrokerAddress[];
  /** Creates a topic with Kafka topic configs (checked first: InvalidConfig creates nothing); false if it exists. -1 replicas: the broker's default. */
  createTopic(name: string, partitions: number, replicationFactor?: number, configs?: Readonly<Record<string, string | null>>): Promise<boolean>;
  /**
   * IncrementalAlterConfigs of a topic (AlterConfigs: replaceAllChanges): checked whole first
   * (InvalidConfig changes nothing), stored unless `validateOnly`, taken by every broker. Returns the configs after.
   */
  alterTopicConfig(name: string, alteration: ConfigAlteration, validateOnly?: boolean): Promise<TopicConfigs>;
  /** DescribeConfigs of a topic: every known config with value, source and synonyms; null for an unknown topic. */
  describeTopicConfigs(name: string): Promise<TopicConfigEntry[] | null>;
  deleteTopic(name: string): Promise<void>;
  /**
   * Kafka's CreatePartitions: the topic grows to `newTotalCount` partitions (`validateOnly`: the
   * checks alone). UnknownTopicOrPartition, InvalidPartitions (Kafka's messages), OutcomeUnknown
   * for a cluster's store failure part way.
   */
  createPartitions(name: string, newTotalCount: number, validateOnly: boolean): Promise<void>;
  /**
   * Kafka's DeleteRecords of one partition, on its leader: resolves with the low watermark (the
   * log start after the delete, the lowest over the in-sync replicas in a cluster). NotLeader where
   * another broker leads it; OffsetOutOfRange for an offset past the high watermark or below -1
   * (-1: the high watermark). A cluster answers once every in-sync follower took the start up,
   * within `timeoutMs` (the request's; DELETE_RECORDS_TIMEOUT_MS_DEFAULT by default), and
   * OutcomeUnknown (REQUEST_TIMED_OUT) past it [R6].
   */
  deleteRecords(topic: string, partition: number, beforeOffset: number, timeoutMs?: number): Promise<number>;
  /** The broker coordinating a consumer group. */
  coordinatorFor(group: string): BrokerAddress | null;
  /**
   * The broker that answers the controller's requests (CreateTopics, DeleteTopics,
   * CreatePartitions) and that Metadata names controller; null while no broker is live here.
   */
  controllerId(): number | null;
  /**
   * Whether a replica Fetch naming `replicaId` may count: that broker holds a live lease and the
   * connection (`peer`, its remote address) comes from the broker's registered address.
   */
  isReplicaConnection(replicaId: number, peer: string): Promise<boolean>;
}

export class SingleBrokerTopology implements Topology {
  readonly #self: BrokerAddress;
  readonly #engine: Engine;

  constructor(self: BrokerAddress, engine: Engine) {
    this.#self = self;
    this.#engine = engine;
  }

  brokers(): BrokerAddress[] {
    return [this.#self];
  }

  topics(): ReadonlyMap<string, number> {
    return new Map(this.#engine.topics().map((topic) => [topic.name, topic.partitions]));
  }

  topicId(topic: string): Uuid | null {
    return this.#engine.topics().find((t) => t.name === topic)?.id ?? null;
  }

  topicName(topicId: Uuid): string | null {
    return this.#engine.topics().find((t) => t.id === topicId)?.name ?? null;
  }

  /** The engine holds every topic there is: its list is never behind. */
  async topicIdNow(topic: string): Promise<Uuid | null> {
    return this.topicId(topic);
  }

  async partitionCount(name: string): Promise<number | null> {
    return this.#engine.topics().find((t) => t.name === name)?.partitions ?? null;
  }

  /** The engine holds every topic there is: its list is never behind. */
  async isCurrentIncarnation(topic: string, topicId: Uuid): Promise<boolean> {
    return this.topicId(topic) === topicId;
  }

  /** A single broker serves every partition from its start: none is ever taken over. */
  adoptionOf(): Promise<void> | null {
    return null;
  }

  leaderOf(topic: string, partition: number): number | null {
    const partitions = this.#engine.topics().find((t) => t.name === topic)?.partitions ?? 0;
    return partition < partitions ? this.#self.nodeId : null;
  }

  leaderEpochOf(topic: string, partition: number): number {
    return this.#engine.serves(topic, partition) ? this.#engine.leaderEpoch(topic, partition) : NO_LEADER_EPOCH;
  }

  followersOf(): BrokerAddress[] {
    return [];
  }

  async createTopic(name: string, partitions: number, _replicationFactor?: number, configs: Readonly<Record<string, string | null>> = {}): Promise<boolean> {
    if (this.#engine.topics().some((t) => t.name === name)) return false;
    try {
      this.#engine.createTopic(name, { partitions, configs });
    } catch (error) {
      if (isFerryError(error, 'TopicAlreadyExists')) return false; // its delete is still under way
      throw error;
    }
    return true;
  }

  async deleteTopic(name: string): Promise<void> {
    await this.#engine.deleteTopic(name);
  }

  async alterTopicConfig(name: string, alteration: ConfigAlteration, validateOnly = false): Promise<TopicConfigs> {
    return this.#engine.alterTopicConfig(name, alteration, validateOnly);
  }

  async describeTopicConfigs(name: string): Promise<TopicConfigEntry[] | null> {
    return this.#engine.topics().some((t) => t.name === name) ? this.#engine.describeTopicConfigs(name) : null;
  }

  async createPartitions(name: string, newTotalCount: number, validateOnly: boolean): Promise<void> {
    this.#engine.createPartitions(name, newTotalCount, validateOnly);
  }

  async deleteRecords(topic: string, partition: number, beforeOffset: number): Promise<number> {
    return this.#engine.deleteRecordsLowWatermark(topic, partition, this.#engine.deleteRecords(topic, partition, beforeOffset));
  }

  coordinatorFor(): BrokerAddress {
    return this.#self;
  }

  controllerId(): number {
    return this.#self.nodeId;
  }

  /** A single broker has no replicas. */
  async isReplicaConnection(): Promise<boolean> {
    return false;
  }
}

export class ClusterTopology implements Topology {
  readonly #node: ClusterNode;
  readonly #defaultReplicationFactor: number;
  readonly #addresses: RegisteredAddresses;
  /** Topic ids found deleted: an offset fetch meets each until its offset expires, and need not read the record again. */
  readonly #retiredTopicIds = new Set<Uuid>();
  /** The broker's engine: DeleteRecords moves its log once the partition record holds the new start. Null: a topology for the control records alone. */
  readonly #engine: Engine | null;

  /** The broker's own topic defaults, by Kafka name (its engine's: Ferry.brokerTopicDefaults). */
  readonly #brokerTopicDefaults: () => TopicConfigs;

  /** The listener brokers report progress through: a report must come from the reporting broker's endpoint of it. Null: its first listener's host. */
  readonly #interBrokerListener: string | null;

  constructor(
    node: ClusterNode,
    defaultReplicationFactor: number,
    addresses: RegisteredAddresses,
    brokerTopicDefaults: () => TopicConfigs = () => ({}),
    engine: Engine | null = null,
    interBrokerListener: string | null = null,
  ) {
    this.#interBrokerListener = interBrokerListener;
    this.#brokerTopicDefaults = brokerTopicDefaults;
    this.#node = node;
    this.#defaultReplicationFactor = defaultReplicationFactor;
    this.#addresses = addresses;
    this.#engine = engine;
  }

  async isReplicaConnection(replicaId: number, peer: string): Promise<boolean> {
    const broker = this.#node.liveBrokers().find((b) => b.nodeId === replicaId);
    if (broker === undefined || replicaId === this.#node.nodeId) return false;
    const endpoint = this.#interBrokerListener === null ? broker : endpointFor(broker, this.#interBrokerListener);
    return endpoint !== null && (await this.#addresses.matches(peer, endpoint.host));
  }

  followersOf(topic: string, partition: number): BrokerAddress[] {
    return this.#node.followersOf(topic, partition).map(addressOf);
  }

  brokers(): BrokerAddress[] {
    return this.#node.liveBrokers().map(addressOf);
  }

  topics(): ReadonlyMap<string, number> {
    return new Map([...this.#node.topics()].map(([name, record]) => [name, record.partitions]));
  }

  topicId(topic: string): Uuid | null {
    return this.#node.topics().get(topic)?.topicId ?? null;
  }

  topicName(topicId: Uuid): string | null {
    for (const [name, record] of this.#node.topics()) if (record.topicId === topicId) return name;
    return null;
  }

  async topicIdNow(topic: string): Promise<Uuid | null> {
    return (await this.#node.readTopic(topic))?.topicId ?? null;
  }

  async partitionCount(name: string): Promise<number | null> {
    return (await this.#node.describeTopic(name))?.partitions ?? null;
  }

  async isCurrentIncarnation(topic: string, topicId: Uuid): Promise<boolean> {
    if (this.topicId(topic) === topicId) return true;
    if (this.#retiredTopicIds.has(topicId)) return false;
    if (await this.#node.isCurrentIncarnation(topic, topicId)) return true;
    // Ids are never reused and the record names the newest incarnation: this one is gone for good.
    if (this.#retiredTopicIds.size >= RETIRED_TOPIC_IDS_MAX) this.#retiredTopicIds.clear();
    this.#retiredTopicIds.add(topicId);
    return false;
  }

  leaderOf(topic: string, partition: number): number | null {
    return this.#node.leaderOf(topic, partition)?.broker.nodeId ?? null;
  }

  adoptionOf(topic: string, partition: number): Promise<void> | null {
    return this.#node.adoptionOf(topic, partition);
  }

  /** The epoch in the partition's control record: the one its leader claimed it with [C3]. */
  leaderEpochOf(topic: string, partition: number): number {
    return this.#node.leaderOf(topic, partition)?.record.leaderEpoch ?? NO_LEADER_EPOCH;
  }

  /** Creates the topic's record, then scans at once: this broker leads its share when the create is answered (ClusterNode.scanAfterChange). */
  async createTopic(name: string, partitions: number, replicationFactor = -1, configs: Readonly<Record<string, string | null>> = {}): Promise<boolean> {
    const created = await outcomeUnknownOnStoreError(`the create of topic ${name}`, () =>
      this.#node.createTopic(name, partitions, replicationFactor > 0 ? replicationFactor : this.#defaultReplicationFactor, configs),
    );
    if (created) await this.#node.scanAfterChange(name);
    return created;
  }

  alterTopicConfig(name: string, alteration: ConfigAlteration, validateOnly = false): Promise<TopicConfigs> {
    return outcomeUnknownOnStoreError(`the alteration of topic ${name}'s configs`, () => this.#node.alterTopicConfig(name, alteration, validateOnly));
  }

  /** From the topic record as it is now: an alteration through another broker shows at once. */
  async describeTopicConfigs(name: string): Promise<TopicConfigEntry[] | null> {
    const record = await this.#node.readTopic(name);
    return record === null ? null : describeTopicConfigs(record.configs ?? {}, this.#brokerTopicDefaults());
  }

  async deleteTopic(name: string): Promise<void> {
    if (!(await outcomeUnknownOnStoreError(`the delete of topic ${name}`, () => this.#node.deleteTopic(name)))) throw new FerryError('UnknownTopicOrPartition', `unknown topic ${name}`);
  }

  async createPartitions(name: string, newTotalCount: number, validateOnly: boolean): Promise<void> {
    await outcomeUnknownOnStoreError(`the partition increase of topic ${name}`, () => this.#node.createPartitions(name, newTotalCount, validateOnly));
    if (!validateOnly) await this.#node.scanAfterChange(name); // its share of the new partitions led here when answered
  }

  /**
   * The leader's checks first (its engine), then the new start into the partition record (a
   * takeover starts there), then the leader's own log: a delete acknowledged is one no later
   * leader undoes. A store failure writing the record is an unknown outcome (a retry finds out).
   * Then, as Kafka's DelayedDeleteRecords, it waits up to `timeoutMs` for every in-sync follower
   * to report a log start at or above the offset [R6]: once answered, no replica a consumer may
   * be sent to (KIP-392) serves a deleted record. Past it, OutcomeUnknown (REQUEST_TIMED_OUT).
   */
  async deleteRecords(topic: string, partition: number, beforeOffset: number, timeoutMs = DELETE_RECORDS_TIMEOUT_MS_DEFAULT): Promise<number> {
    const engine = this.#engine;
    if (engine === null) throw new FerryError('InvalidArgument', 'this topology has no engine to delete records from');
    if (!engine.serves(topic, partition)) {
      const count = this.#node.topics().get(topic)?.partitions;
      if (count !== undefined && partition >= 0 && partition < count) throw new FerryError('NotLeader', `Leader not local for partition ${topic}-${partition} on broker ${this.#node.nodeId}`);
      throw new FerryError('UnknownTopicOrPartition', `unknown partition ${topic}-${partition}`);
    }
    const offset = engine.deleteRecordsOffset(topic, partition, beforeOffset);
    if (!regressed('delete-records-not-durable'))
      await outcomeUnknownOnStoreError(`the delete of records of ${topic}-${partition} before ${offset}`, () => this.#node.recordLogStart(topic, partition, offset));
    try {
      const answered = engine.deleteRecords(topic, partition, offset);
      // [R6] Answered once every in-sync follower took the start up; the low watermark is the
      // whole log's (the tier's start counts) and no follower's below it.
      const followers = await engine.waitForLowWatermark(topic, partition, offset, timeoutMs);
      return Math.min(followers, await engine.deleteRecordsLowWatermark(topic, partition, answered));
    } catch (error) {
      // Let go of since the record took the start: the next leader starts there; a retry asks it.
      if (isFerryError(error, 'UnknownTopicOrPartition')) throw new FerryError('NotLeader', `${topic}-${partition} is no longer led here`, { cause: error });
      throw error;
    }
  }

  /**
   * The live broker with the lowest node id: every broker applies this rule to the same records,
   * and the live set is the lease's (this broker itself only while its own lease holds, another
   * until its lease lapses unrenewed), so a paused or dead controller is replaced within a lease
   * and a broker whose own lease lapsed does not take itself for the controller.
   */
  controllerId(): number | null {
    const live = this.#node.liveBrokers().map((broker) => broker.nodeId);
    return live.length === 0 ? null : Math.min(...live);
  }

  /** Every broker computes the same choice: the live brokers by id, picked by a hash of the group. */
  coordinatorFor(group: string): BrokerAddress | null {
    return pickByHash(group, this.brokers());
  }
}

/**
 * A topic change is several control-record writes (a create-if-absent, a mark, removals); a store
 * failure among them, or a write that timed out after it took effect, leaves the change done,
 * half done (a scan finishes a marked delete: StalledDeletes) or not done. The client is told
 * that the outcome is unknown (REQUEST_TIMED_OUT, as Kafka answers when its controller did not
 * finish in time), never that it failed: a failure it would take for "nothing happened".
 */
async function outcomeUnknownOnStoreError<T>(change: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (!isStoreError(error) && !(isFerryError(error) && error.kind === 'Storage')) throw error;
    throw new FerryError('OutcomeUnknown', `${change} may or may not have taken effect: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** A broker record as the handlers see it. */
function addressOf(record: { readonly nodeId: number; readonly host: string; readonly port: number; readonly rack: string | null; readonly endpoints?: readonly ListenerEndpoint[] }): BrokerAddress {
  const { nodeId, host, port, rack, endpoints } = record;
  return { nodeId, host, port, rack, ...(endpoints === undefined ? {} : { endpoints }) };
}
