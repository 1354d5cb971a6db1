import { join } from 'node:path';
import { FerryError, isFerryError } from '../errors.ts';
import { resolveLogConfig } from '../log/config.ts';
import { parseTopicConfig, parseTopicConfigs, type TopicConfigs } from '../log/topic-config.ts';
import { applyConfigAlteration, type ConfigAlteration } from '../log/topic-config-changes.ts';
import type { Logger } from '../observability/logger.ts';
import type { DeletedIncarnations } from '../tier/deleted-incarnations.ts';
import type { Disk } from '../util/disk.ts';
import { regressed } from '../util/regressions.ts';
import type { CreateTopicOptions, EngineOptions } from './engine-options.ts';
import type { OwnPartitions } from './own-partitions.ts';
import { checkPartitionIncrease } from './partition-increase.ts';
import { type PartitionTable, unknownTopic } from './partition-table.ts';
import { validateTopicName } from './topic-name.ts';
import type { TopicId } from '../format/topic-id.ts';
import { PARTITIONS_PER_TOPIC_MAX, type TopicDescription, type TopicRegistry } from './topic-registry.ts';
import { sameConfigs, type TopicSettings } from './topic-settings.ts';

/** What TopicAdmin changes: the registry, the partition table and the disk under them. */
export interface TopicAdminDeps {
  readonly options: EngineOptions;
  readonly directory: string;
  readonly disk: Disk;
  readonly logger: Logger;
  readonly registry: TopicRegistry;
  readonly table: PartitionTable;
  readonly settings: TopicSettings;
  readonly own: OwnPartitions;
  /** With a tier, alone: where this engine records the incarnations it deletes (DI1). */
  readonly deletionRecords: DeletedIncarnations | null;
  /** The incarnations deleted here (their tier is swept, WAL GC passes again). */
  readonly deletedTopicIds: Set<TopicId>;
  readonly checkOpen: () => void;
}

/**
 * The topics of an engine: create (all partitions or none), grow, reconfigure and delete, with
 * the registry written first so that a failed write leaves the topic as it was. A cluster's
 * engine takes its topics' configs from the cluster's records (applyTopicConfigs) and lets go of
 * a deleted topic whatever its disk says; it neither creates, grows nor alters them itself.
 */
export class TopicAdmin {
  readonly #options: EngineOptions;
  readonly #directory: string;
  readonly #disk: Disk;
  readonly #logger: Logger;
  readonly #registry: TopicRegistry;
  readonly #table: PartitionTable;
  readonly #settings: TopicSettings;
  readonly #own: OwnPartitions;
  readonly #deletionRecords: DeletedIncarnations | null;
  readonly #deletedTopicIds: Set<TopicId>;
  readonly #checkOpen: () => void;
  /** Managed by a cluster (EngineOptions.cluster). */
  readonly #managed: boolean;
  /**
   * Deletes under way, by topic name: until the old incarnation's logs are closed and their
   * directories removed, the name cannot get a new one here (its directories share the names).
   */
  readonly deletions = new Map<string, Promise<void>>();

  constructor(deps: TopicAdminDeps) {
    this.#options = deps.options;
    this.#directory = deps.directory;
    this.#disk = deps.disk;
    this.#logger = deps.logger;
    this.#registry = deps.registry;
    this.#table = deps.table;
    this.#settings = deps.settings;
    this.#own = deps.own;
    this.#deletionRecords = deps.deletionRecords;
    this.#deletedTopicIds = deps.deletedTopicIds;
    this.#checkOpen = deps.checkOpen;
    this.#managed = (deps.options.cluster ?? null) !== null;
  }

  /** Creates a topic; TopicAlreadyExists if it exists (or is still being deleted), InvalidArgument for a bad name or count. */
  createTopic(name: string, options: CreateTopicOptions = {}): TopicDescription {
    this.#checkOpen();
    validateTopicName(name);
    if (this.deletions.has(name)) throw new FerryError('TopicAlreadyExists', `topic ${name} is being deleted`);
    const partitions = options.partitions ?? this.#options.defaultPartitions ?? 1;
    if (!Number.isSafeInteger(partitions) || partitions < 1 || partitions > PARTITIONS_PER_TOPIC_MAX) {
      throw new FerryError('InvalidArgument', `partitions must be an integer in [1, ${PARTITIONS_PER_TOPIC_MAX}], got ${partitions}`);
    }
    const config = options.config ?? {};
    resolveLogConfig({ ...this.#options.log, ...config });
    const configs = parseTopicConfigs(Object.entries(options.configs ?? {}));
    this.#settings.check(config, configs);
    const topic = this.#registry.add({ name, partitions, config, ...(Object.keys(configs).length === 0 ? {} : { configs }) });
    try {
      // A new incarnation: whatever lies on disk under its name (a delete that crashed midway) is not of it.
      for (let index = 0; index < partitions; index++) this.#disk.rmSync(join(this.#directory, `${name}-${index}`), { recursive: true, force: true });
      this.#own.openTopic(topic); // every partition, or the topic is not registered at all
    } catch (error) {
      this.#abandonTopic(name); // e.g. out of file descriptors: the topic is not half there, and a retry can create it
      this.#registry.remove(name);
      throw error;
    }
    return topic;
  }
  /**
   * Creates the topic unless it exists, so that a service can say at every start what it needs:
   * returns the topic as it is then. An existing topic is returned unchanged (`options` apply only
   * to a creation: compare `partitions` if it matters; createPartitions and alterTopicConfig change
   * one). A topic still being deleted is TopicAlreadyExists, as in createTopic.
   */
  ensureTopic(name: string, options: CreateTopicOptions = {}): TopicDescription {
    this.#checkOpen();
    const existing = this.deletions.has(name) ? undefined : this.#registry.get(name);
    return existing ?? this.createTopic(name, options);
  }
  /** Every topic of this engine, as its registry holds it. */
  topics(): TopicDescription[] {
    return this.#registry.list();
  }
  /**
   * IncrementalAlterConfigs on a topic of this (unmanaged) engine: `changes` applied in order and
   * checked whole first (a bad one changes nothing, InvalidConfig); unless `validateOnly`, stored
   * durably and taken at once by every open partition of the topic. Returns the topic's configs
   * after. A cluster broker alters the topic record instead (ClusterNode.alterTopicConfig).
   */
  alterTopicConfig(name: string, alteration: ConfigAlteration, validateOnly = false): TopicConfigs {
    this.#checkOpen();
    if (this.#managed) throw new FerryError('InvalidArgument', `topic ${name} is the cluster's: alter it through its topic record`);
    const topic = this.#registry.get(name);
    if (topic === undefined || this.deletions.has(name)) throw unknownTopic(name);
    const configs = applyConfigAlteration(topic.configs ?? {}, alteration);
    this.#settings.check(topic.config, configs, topic.configs ?? {});
    if (validateOnly) return configs;
    this.#registry.reconfigure(name, configs);
    this.#reconfigureOpen(name);
    return configs;
  }
  /**
   * Managed mode: the cluster's topic record holds `configs` for `name` now (read by a scan, or
   * written by this broker): they are kept for its adoptions and taken at once by its open partitions.
   */
  applyTopicConfigs(name: string, configs: TopicConfigs): void {
    this.#checkOpen();
    // The record was checked by its writer. A name or value this broker does not take (written by a
    // newer version) is left out, with a line, rather than keep the topic's other configs from applying.
    const parsed: Record<string, string> = {};
    for (const [config, value] of Object.entries(configs)) {
      try {
        parsed[config] = parseTopicConfig(config, value);
      } catch (error) {
        if (!isFerryError(error, 'InvalidConfig')) throw error;
        this.#logger.warn({ component: 'engine', topic: name, config, value }, `topic ${name}: its config ${config}=${value} is not applied here: ${error.message}`);
      }
    }
    // The partitions take them first: the registry is a cache here, and a full disk that refuses its
    // write must not leave them appending by the configs before (sim seed 120459: LogAppendTime
    // unapplied for a scan after the disk had room again). A refused write throws after: the next scan hands them over again.
    if (this.#settings.takeClusterConfigs(name, parsed)) this.#reconfigureOpen(name);
    const registered = this.#registry.get(name);
    // The registry is written only for a change: a scan hands every topic's configs over once at start.
    if (registered !== undefined && !sameConfigs(registered.configs ?? {}, parsed)) this.#registry.reconfigure(name, parsed);
  }
  /**
   * Kafka's CreatePartitions: the topic grows to `newTotalCount` partitions (never shrinks), the
   * new ones empty and served at once; the old ones do not change. `validateOnly`: every check,
   * nothing changed. UnknownTopicOrPartition for an unknown topic (or one being deleted),
   * InvalidPartitions for a count that is no increase or past PARTITIONS_PER_TOPIC_MAX. Returns the
   * topic as it is (or would be) after the change. A cluster grows its topics through their
   * control records instead (ClusterNode.createPartitions); so does a read replica, from its leader's WAL.
   */
  createPartitions(name: string, newTotalCount: number, validateOnly = false): TopicDescription {
    this.#checkOpen();
    if (this.#managed || this.#options.follow !== undefined)
      throw new FerryError('InvalidArgument', `${name}: partitions are added to a managed engine's or a read replica's topics by what manages it`);
    const topic = this.#registry.get(name);
    if (topic === undefined || this.deletions.has(name)) throw unknownTopic(name);
    checkPartitionIncrease(name, topic.partitions, newTotalCount);
    const grown = { ...topic, partitions: newTotalCount };
    if (validateOnly) return grown;
    // A new partition's directory holds nothing of this topic yet: whatever lies there (a grow that crashed before its registry write) goes.
    for (let index = topic.partitions; index < newTotalCount; index++) this.#disk.rmSync(join(this.#directory, `${name}-${index}`), { recursive: true, force: true });
    try {
      this.#own.openTopic(grown); // opens the new partitions only
      return this.#registry.grow(name, newTotalCount);
    } catch (error) {
      this.#abandonPartitionsFrom(name, topic.partitions); // all of them or none: a retry adds them again
      throw error;
    }
  }
  /** Every open partition of `name` takes its topic's settings now. */
  #reconfigureOpen(name: string): void {
    const config = this.#settings.logConfigOf(name);
    this.#table.get(name)?.forEach((partition, index) => {
      partition.log.reconfigure(config);
      if (partition.role.kind === 'leader' && !regressed('config-min-insync-stale')) partition.requireFollowers(this.#settings.requiredFollowers(name, index));
    });
  }
  /** Undoes a createPartitions that failed: closes and removes the partitions from `first` on. */
  #abandonPartitionsFrom(name: string, first: number): void {
    const partitions = this.#table.get(name);
    if (partitions === undefined) return;
    for (const partition of partitions.splice(first)) {
      if (partition === undefined) continue;
      partition.abandon(new FerryError('UnknownTopicOrPartition', `${name}-${partition.index} was not added`));
      void partition.log
        .close()
        .catch(() => {})
        .finally(() => this.#disk.rmSync(partition.log.directory, { recursive: true, force: true }));
    }
  }
  /** Undoes a createTopic that failed before registering the topic: closes and removes the partitions that opened. */
  #abandonTopic(name: string): void {
    const opened = this.#table.get(name) ?? [];
    this.#table.delete(name);
    for (const partition of opened) {
      void partition.log
        .close()
        .catch(() => {})
        .finally(() => this.#disk.rmSync(partition.log.directory, { recursive: true, force: true }));
    }
  }
  /** The incarnation of `topic` held here (its registry entry, or its partitions'), null for none. */
  incarnationOf(topic: string): TopicId | null {
    return this.#registry.get(topic)?.id ?? this.#table.get(topic)?.find((partition) => partition !== undefined)?.topicId ?? null;
  }
  /** Removes a topic and its partitions' logs; its id is retired, never served again. */
  async deleteTopic(topic: string): Promise<void> {
    this.#checkOpen();
    const partitions = this.#table.get(topic) ?? [];
    if (this.deletions.has(topic) || (!this.#table.has(topic) && this.#registry.get(topic) === undefined)) throw unknownTopic(topic);
    // The registry first: an embedded engine's delete whose write fails (a full disk) leaves the topic
    // whole, registered and served. A managed engine lets go whatever its disk says: the cluster deleted
    // the topic already, and the adoption of a later incarnation replaces the registry entry.
    let unregistered: unknown = null;
    const deletedId = this.#registry.get(topic)?.id ?? partitions.find((partition) => partition !== undefined)?.topicId;
    try {
      if (this.#registry.get(topic) !== undefined) this.#registry.remove(topic);
    } catch (error) {
      if (!this.#managed) throw error;
      unregistered = error;
    }
    // Only once the delete holds: a failed one leaves the topic registered and served, its tier kept.
    if (deletedId !== undefined) this.#deletedTopicIds.add(deletedId);
    this.#table.delete(topic);
    // The logs are closed whatever fails (a close's flush): a log left open keeps its directory locked for good.
    let failure: unknown = null;
    const deletion = (async () => {
      for (const partition of partitions.filter((p) => p !== undefined)) {
        // managed mode leaves holes
        partition.abandon(unknownTopic(topic));
        await partition.log.close().catch((error: unknown) => void (failure ??= error));
        this.#disk.rmSync(partition.log.directory, { recursive: true, force: true });
      }
      // Within the delete's promise: nothing awaits between the registry letting go and the delete being under way.
      // DI1: only the incarnation's owner records its deletion. A read replica's delete lets go of its
      // copy alone; the leader serves the incarnation still, and a record would hand it to every sweeper.
      if (deletedId !== undefined && !this.#managed && this.#options.follow === undefined) await this.#recordDeletion(topic, deletedId);
      if (failure !== null) throw failure;
    })();
    this.deletions.set(
      topic,
      deletion.catch(() => {}),
    );
    try {
      await deletion;
    } finally {
      this.deletions.delete(topic);
    }
    if (unregistered !== null) throw unregistered;
  }
  /**
   * DI1: alone, this engine writes the deletion record of an incarnation it deleted, after its
   * registry let go of it (a record before would let the sweepers take a topic whose delete then
   * failed). One that cannot be written leaves the incarnation's objects in the stores for good,
   * never a loss: said in one line.
   */
  async #recordDeletion(topic: string, topicId: TopicId): Promise<void> {
    await this.#deletionRecords?.record(topic, topicId).catch((error: unknown) => {
      this.#logger.warn(
        { component: 'engine', topic, topicId, err: error },
        `topic ${topic}: its deletion record could not be written, so its WAL frames and tiered segments stay in the stores: ${String(error)}`,
      );
    });
  }
}
