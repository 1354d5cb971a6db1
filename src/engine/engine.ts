import type { ReadOutcomes } from '../wal/store-health.ts';
import { definedOnly } from '../util/defined-only.ts';
import type { ControlStore } from '../control/control-store.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { TierRecords, tieredEnd } from '../tier/tier-record.ts';
import type { Tierer, TierSource } from '../tier/tierer.ts';
import { RemoteReader } from '../tier/remote-reader.ts';
import { reportProducerStateLost, type TierStart, tierStartOf } from '../tier/tier-start.ts';
import type { DeletedTopicIds } from '../tier/retired-sweeper.ts';
import { DeletedIncarnations } from '../tier/deleted-incarnations.ts';
import type { IncarnationState } from '../wal-gc/coverage.ts';
import { join } from 'node:path';
import { FerryError, isFerryError } from '../errors.ts';
import { regressed } from '../util/regressions.ts';
import { type BuildCompressionCodec, buildRecordBatch, type ProducerRecord, type Record as KafkaRecord, type RecordBatch } from '../format/index.ts';
import { DEFAULT_LOG_CONFIG, type LogConfig, resolveLogConfig } from '../log/config.ts';
import { PartitionLog } from '../log/partition-log.ts';
import {
  checkTopicSettingsChange,
  checkTopicSettingsTogether,
  configValueOfLogSetting,
  kafkaNameOfLogField,
  parseTopicConfig,
  parseTopicConfigs,
  TOPIC_CONFIGS,
  type TopicConfigs,
  topicSettingsOf,
} from '../log/topic-config.ts';
import { applyConfigAlteration, type ConfigAlteration } from '../log/topic-config-changes.ts';
import { describeTopicConfigs, type TopicConfigEntry } from '../log/topic-config-describe.ts';
import type { ActiveProducer } from '../log/producer-state.ts';
import { StorageHealth } from '../log/storage-health.ts';
import { type Logger, type LoggerOption, loggerOf } from '../observability/logger.ts';
import { defaultLogger } from '../observability/record-logger.ts';
import { logRecovery } from './recovery-log.ts';
import { registerEngineGauges } from './engine-gauges.ts';
import { probeStorage } from '../log/storage-probe.ts';
import { type Clock, systemClock, type Timer } from '../util/clock.ts';
import { type Disk, systemDisk } from '../util/disk.ts';
import { makeDirectoriesSync } from '../util/files.ts';
import { isOsError } from '../util/os-error.ts';
import { type Random, systemRandom } from '../util/random.ts';
import type { MetricsRegistry } from '../metrics/index.ts';
import type { Follower } from '../replica/follower.ts';
import { InSyncReplicas, REPLICA_LAG_TIME_MAX_MS, UNKNOWN_LOG_START } from '../replica/isr.ts';
import { listEpochs } from '../wal/seal.ts';
import type { WalCollector } from '../wal-gc/collector.ts';
import type { CoverageSources } from '../wal-gc/coverage.ts';
import { OrphanWriters, type WriterLiveness } from '../wal-gc/orphan-writers.ts';
import type { StreamId } from '../wal/keys.ts';
import { partitionKey, type WalWriter } from '../wal/writer.ts';
import { type FollowedPartitions, type FollowOptions, startEmbeddedFollower } from './embedded-follower.ts';
import { type LostTail, rebuildLostTails } from './lost-tail-rebuild.ts';
import type { ClusterPolicy } from './cluster-policy.ts';
import { NodeServices } from './node-services.ts';
import { OwnPartitions } from './own-partitions.ts';
import { EmbeddedReplication } from './embedded-replication.ts';
import { TopicAdmin } from './topic-admin.ts';
import { PartitionTable, unknownTopic } from './partition-table.ts';
import { sameConfigs, TopicSettings } from './topic-settings.ts';
import { RecordDeletion } from './record-deletion.ts';
import { FETCH_BYTES_DEFAULT, localStartFor, PartitionReads } from './partition-reads.ts';
import { Partition, type PartitionRole } from './partition.ts';
import { preparePartitionDirectory } from './partition-metadata.ts';
import { ProduceGrouping } from './produce-grouping.ts';
import { type LeaderLink, type LeaderPartitions, type LinkedReplica, type PartitionEnd, ReplicaLinks } from './replica-link.ts';
import { earlierStreamEnds, ShippedCheckpointer } from './shipped-checkpointer.ts';
import { PARTITIONS_PER_TOPIC_MAX, type TopicDescription, type TopicId, TopicRegistry } from './topic-registry.ts';
import { checkPartitionIncrease } from './partition-increase.ts';
import { validateTopicName } from './topic-name.ts';
import { type WalOptions, WalWriterLifecycle } from './wal-writer-lifecycle.ts';

import type {
  AppendedBatches,
  ConsumeOptions,
  ConsumedRecord,
  CreateTopicOptions,
  DescribedProducer,
  EngineOptions,
  EpochEnd,
  FetchOptions,
  FetchResult,
  LogDirDescription,
  LogDirPartition,
  OffsetLookup,
  ProduceOptions,
  ProducedRecord,
  TierOptions,
  TierRange,
} from './engine-options.ts';
export type {
  AppendedBatches,
  ConsumeOptions,
  ConsumedRecord,
  CreateTopicOptions,
  DescribedProducer,
  EngineOptions,
  EpochEnd,
  FetchOptions,
  FetchResult,
  LogDirDescription,
  LogDirPartition,
  OffsetLookup,
  ProduceOptions,
  ProducedRecord,
  TierOptions,
  TierRange,
  Acks,
  RetentionDeletion,
} from './engine-options.ts';
export type { FollowOptions } from './embedded-follower.ts';
export type { WalOptions } from './wal-writer-lifecycle.ts';

/** DescribeProducers' fields of transactions, which Ferry does not have (Kafka's -1: none). */
const NO_COORDINATOR_EPOCH = -1;
const NO_TRANSACTION_START_OFFSET = -1;
/** The embedded engine is its partitions' only leader; a cluster assigns real epochs at adoption. */
const EMBEDDED_LEADER_EPOCH = 0;

/**
 * The embeddable engine: topics of partitions, each a durable Kafka-format log on local disk.
 *
 *     const ferry = await Engine.open({ directory: './data' });
 *     ferry.ensureTopic('orders', { partitions: 3 });
 *     const [produced] = await ferry.produce('orders', [{ key: 'k', value: 'v' }]);
 *     for await (const record of ferry.consume('orders', { partition: produced!.partition })) { ... }
 *     await ferry.close();
 *
 * examples/embedded.ts is the same with a WAL store (KIP-1176).
 */
export class Engine {
  /** The engine's directory (EngineOptions.directory). */
  readonly directory: string;
  readonly #options: EngineOptions;
  readonly #clock: Clock;
  readonly #unlock: () => void;
  readonly #disk: Disk;
  readonly #registry: TopicRegistry;
  readonly #partitions = new PartitionTable(() => this.#checkOpen());
  /** Create, grow, reconfigure and delete topics (and the deletes under way). */
  readonly #topics: TopicAdmin;
  readonly #grouping = new ProduceGrouping();
  /** Managed mode: what the cluster decides for this engine (leadership [L8], followers, incarnations, live writers); null alone. */
  readonly #cluster: ClusterPolicy | null;
  /** Replication between engines of one process: attached replicas (leader side), the Follower and its leader (replica side). */
  readonly #replication: EmbeddedReplication;
  /** The partitions an engine alone opens itself (its registry's, and the topics created here). */
  readonly #own: OwnPartitions;
  /** The disk's health, the WAL writer, the tier's services and WAL GC. */
  readonly #services: NodeServices;
  /** Fetches, ListOffsets and log starts of the partitions served here, local and tiered. */
  readonly #reads: PartitionReads;
  /** DeleteRecords and retention: what moves the log starts up. */
  readonly #deletion: RecordDeletion;
  /** The incarnations this engine deleted: what the tier holds of them is swept, and WAL GC passes again after each (their frames are covered). */
  readonly #deletedTopicIds = new Set<TopicId>();
  /** Where lines go: each component binds its own name (engine, storage, wal, tier, follower). */
  readonly #logger: Logger;
  /** Each topic's settings as its partitions take them (the engine's, the topic's, the cluster's). */
  readonly #settings: TopicSettings;
  #closed = false;
  /** Stops the scrape-time gauges reading this engine (at close). */
  readonly #stopGauges: () => void;

  private constructor(options: EngineOptions, unlock: () => void, registry: TopicRegistry, epochFloor: number) {
    this.directory = options.directory;
    this.#options = options;
    this.#cluster = options.cluster ?? null;
    this.#clock = options.clock ?? systemClock;
    this.#logger = loggerOf(options.logger ?? options.report, defaultLogger(this.#clock));
    this.#unlock = unlock;
    this.#disk = options.disk ?? systemDisk;
    this.#registry = registry;
    this.#settings = new TopicSettings(registry, { log: options.log, minInsyncReplicas: options.minInsyncReplicas, tiered: options.tier !== undefined });
    this.#replication = new EmbeddedReplication({
      table: this.#partitions,
      registry,
      clock: this.#clock,
      directory: this.directory,
      disk: this.#disk,
      metrics: options.metrics,
      closed: () => this.#closed,
      openTopic: (topic) => this.#own.openTopic(topic),
      deleteTopic: (topic) => this.deleteTopic(topic),
      tierStartOf: (topicId, index) => this.tierStartOf(topicId, index),
    });
    this.#services = new NodeServices({
      options,
      directory: this.directory,
      clock: this.#clock,
      disk: this.#disk,
      logger: this.#logger,
      epochFloor,
      durable: () => this.#replication.links.notifyDurable(),
      table: this.#partitions,
      settings: this.#settings,
      registry,
      cluster: this.#cluster,
      deletedTopicIds: this.#deletedTopicIds,
    });
    this.#own = new OwnPartitions({
      options,
      directory: this.directory,
      clock: this.#clock,
      disk: this.#disk,
      logger: this.#logger,
      table: this.#partitions,
      settings: this.#settings,
      services: this.#services,
      inSyncReplicas: (topic, index) => this.#inSyncReplicas(topic, index),
    });
    this.#topics = new TopicAdmin({
      options,
      directory: this.directory,
      disk: this.#disk,
      logger: this.#logger,
      registry,
      table: this.#partitions,
      settings: this.#settings,
      own: this.#own,
      deletionRecords: this.#services.deletionRecords,
      deletedTopicIds: this.#deletedTopicIds,
      checkOpen: () => this.#checkOpen(),
    });
    this.#reads = new PartitionReads(this.#partitions, this.#services.remote);
    this.#deletion = new RecordDeletion({
      table: this.#partitions,
      reads: this.#reads,
      remote: this.#services.remote,
      tierer: this.#services.tierer,
      clock: this.#clock,
      metrics: options.metrics,
      onRetention: options.onRetention,
      checkIntervalMs: options.retentionCheckIntervalMs,
      closed: () => this.#closed,
      checkOpen: () => this.#checkOpen(),
    });
    const gaugeSources = { partitions: () => this.#partitions.all().filter((partition) => partition !== undefined), directory: this.directory, disk: this.#disk };
    this.#stopGauges = options.metrics === undefined ? () => {} : registerEngineGauges(options.metrics, gaugeSources);
  }

  /**
   * The local log an adoption rebuilds into (the topic registered, a fresh directory unless kept). A disk that refuses
   * it (full, read-only, failing) counts as a failed write: the engine then reports its storage
   * failing, and a cluster broker stops claiming partitions it could not serve (sim seed 90063: a
   * full disk claimed one partition again every scan, and no healthy broker took it over).
   */
  #openAdoptedLog(topic: string, topicId: TopicId, partitionCount: number, directory: string, keepLocalLog: boolean): PartitionLog {
    try {
      this.#registerIncarnation(topic, topicId, partitionCount);
      if (!keepLocalLog) this.#disk.rmSync(directory, { recursive: true, force: true }); // the chain is the truth; stale local data is not
      preparePartitionDirectory(directory, topicId, this.#disk); // another incarnation's directory is removed here, kept or not
      return PartitionLog.open(directory, { config: this.#settings.logConfigOf(topic), clock: this.#clock, storage: this.#services.storage, disk: this.#disk });
    } catch (error) {
      // As much room as the registry's rewrite took: a probe that finds less leaves the spell on (a page would end it, and the claims would start again).
      if (isOsError(error)) this.#services.storage.writeFailed(directory, error, this.#registry.lastWriteBytes);
      throw error;
    }
  }

  /** The WAL writer when the engine ships to object storage; its stats and failure state. */
  get wal(): WalWriter | null {
    return this.#services.wal;
  }

  /** The WAL collector, when this engine writes a WAL and tiers (tests drive its passes). */
  get walCollector(): WalCollector | null {
    return this.#services.walCollector;
  }

  /** The tierer, when this engine tiers (tests drive its rounds). */
  get tierer(): Tierer | null {
    return this.#services.tierer;
  }

  /** Whether the last write to the local disk failed (a full disk, an I/O error) and none succeeded since. */
  get storageFailing(): boolean {
    return this.#services.storage.failing;
  }

  /** While writes fail, tries one; returns whether writes still fail (NodeServices.recheckStorage). */
  recheckStorage(): boolean {
    return this.#services.recheckStorage();
  }

  /** [C1] Where a cluster's followers report whether the WAL store answered each of their reads. */
  get walReadOutcomes(): ReadOutcomes {
    return this.#services.walReadOutcomes;
  }

  /** How long writes to the WAL store have failed with none landing, or a follower's reads with none answered; 0 while they land. */
  walStoreFailingForMs(): number {
    return this.#services.walStoreFailingForMs();
  }

  /** The log start the partition's tier record holds (retention moved it there); 0 without a tier. */
  tierLogStartOf(topicId: TopicId, partition: number): Promise<number> {
    return this.#services.tierLogStartOf(topicId, partition);
  }

  /** The tier record's start (retention's) and tiered end; both 0 without a tier. */
  tierRecordRange(topicId: TopicId, partition: number): Promise<TierRange> {
    return this.#services.tierRecordRange(topicId, partition);
  }

  /** [K2] Where a rebuild of the partition starts: the tier's end and what it knows there (NodeServices.tierStartOf). */
  tierStartOf(topicId: TopicId, partition: number): Promise<TierStart | null> {
    return this.#services.tierStartOf(topicId, partition);
  }

  /**
   * Opens the engine in `options.directory`, recovering every partition's log. With a WAL,
   * earlier epochs of this writer's streams are sealed first (docs/wal-protocol.md [F]).
   */
  static async open(options: EngineOptions): Promise<Engine> {
    resolveLogConfig(options.log); // reject bad settings before touching the disk
    const retentionCheck = options.retentionCheckIntervalMs;
    if (retentionCheck !== undefined && !(Number.isSafeInteger(retentionCheck) && retentionCheck > 0))
      throw new FerryError('InvalidArgument', `retentionCheckIntervalMs must be a positive integer, got ${retentionCheck}`);
    const disk = options.disk ?? systemDisk;
    makeDirectoriesSync(options.directory, disk); // durably: a power loss must not take the new directory's name
    const unlock = disk.lockSync(options.directory);
    let engine: Engine | undefined;
    try {
      if (options.wal !== undefined && options.follow !== undefined) throw new FerryError('InvalidArgument', 'an engine either writes a WAL (leader) or follows one, not both');
      const storedEpochs = options.wal === undefined ? [] : await listEpochs(options.wal.store, options.wal.prefix ?? '', options.wal.writerId);
      engine = new Engine(options, unlock, TopicRegistry.open(options.directory, options.random ?? systemRandom, disk), (storedEpochs.at(-1) ?? -1) + 1);
      options.onOpen?.(engine);
      if (options.wal !== undefined) await engine.#services.walLifecycle!.sealEarlierEpochs(storedEpochs); // [F]
      // A cluster's partitions are rebuilt from their chains when adopted; an engine alone opens its registry's.
      if (options.cluster === undefined) await engine.#own.openAll(engine.#registry.list());
      if (options.follow !== undefined) engine.#replication.startFollowing(options.follow);
      engine.#deletion.scheduleRetention();
      engine.#services.start();
      return engine;
    } catch (error) {
      if (engine !== undefined) await engine.close();
      else unlock();
      throw error;
    }
  }

  /**
   * Starts serving one partition (managed mode, [C5]) as its leader or as a follower (a read
   * replica fed from the WAL by the caller): its local log is recreated empty and `rebuild` fills
   * it from the WAL chain; what it holds then is durable already. `topicId` is the incarnation the
   * cluster's records name: an older one still registered here is dropped first. `leaderEpoch` is
   * the epoch the cluster assigned (its partition record's): requests are checked against it (KIP-320).
   * `keepLocalLog` (docs/tier-protocol.md [K3], a follower promoted here): the local log of the same
   * incarnation is opened as it is and `rebuild` applies only what it lacks; the caller vouches that
   * it holds nothing the chain does not (a follower's log is a copy of a prefix of the chain).
   */
  async adoptPartition(
    topic: string,
    topicId: TopicId,
    index: number,
    partitionCount: number,
    rebuild: (log: PartitionLog) => Promise<void>,
    as: 'leader' | 'follower' = 'leader',
    replicationFactor = 1,
    leaderEpoch = EMBEDDED_LEADER_EPOCH,
    keepLocalLog = false,
  ): Promise<Partition> {
    this.#checkOpen();
    validateTopicName(topic);
    await this.#topics.deletions.get(topic); // an older incarnation's directories go first
    this.#checkOpen();
    if (this.#partitions.get(topic)?.[index] !== undefined) throw new FerryError('InvalidArgument', `${topic}-${index} is already served here`);
    const directory = join(this.directory, `${topic}-${index}`);
    const log = this.#openAdoptedLog(topic, topicId, partitionCount, directory, keepLocalLog);
    logRecovery(this.#logger, topic, index, log);
    try {
      await rebuild(log);
    } catch (error) {
      await log.close();
      throw error;
    }
    // The topic's configs as they are now: applyTopicConfigs reaches only the partitions served, and
    // a rebuild takes a while (sim seed 30174: an alter answered mid-rebuild never reached this one).
    log.reconfigure(this.#settings.logConfigOf(topic));
    const partitions = this.#partitions.get(topic) ?? [];
    this.#settings.noteReplicationFactor(topic, index, replicationFactor);
    const requiredFollowers = this.#settings.requiredFollowers(topic, index);
    const role: PartitionRole = as === 'leader' ? { kind: 'leader', requiredFollowers, isr: this.#inSyncReplicas(topic, index) } : { kind: 'follower' };
    // A partition let go of ([C6], [C7]) acknowledges nothing more, whatever its waiters' durability.
    const gate = () => {
      this.#cluster?.checkLeadership(topic, topicId);
      if (this.#partitions.get(topic)?.[index] !== partition) throw new FerryError('NotLeader', `${topic}-${index} is no longer led here`);
    };
    const partition: Partition = new Partition(topic, topicId, index, log, as === 'leader' ? this.#services.wal : null, role, log.logEndOffset, log.logEndOffset, { leaderEpoch, gate });
    // A follower serves what the chain's sealed streams hold (committed by whoever sealed them), and
    // past that only what its leader says is committed (noteLeaderHighWatermark), never its own log end.
    if (as === 'follower') partition.noteLeaderHighWatermark(log.logEndOffset);
    partitions[index] = partition;
    this.#partitions.set(topic, partitions);
    return partition;
  }

  /**
   * A follower elsewhere (another broker) following in `leaderEpoch` reports it applied everything
   * below `logEndOffset` and that its log starts at `logStartOffset` (-1: it does not say). Returns whether it counted: only a follower in the partition's replica set
   * does (ReplicaMembership), and only in this leader's epoch (Partition.noteRemoteFollowerApplied throws
   * FencedLeaderEpoch or UnknownLeaderEpoch for another one).
   */
  noteReplicaProgress(topic: string, index: number, replicaId: string, logEndOffset: number, leaderEpoch: number, logStartOffset = UNKNOWN_LOG_START): boolean {
    const partition = this.#partitions.get(topic)?.[index];
    return partition?.role.kind === 'leader' && partition.noteRemoteFollowerApplied(replicaId, logEndOffset, leaderEpoch, logStartOffset);
  }

  /** Leader: the log end an in-sync follower reported (null: not in sync, or not led here). */
  inSyncReplicaEnd(topic: string, index: number, replicaId: string): number | null {
    return this.#partitions.get(topic)?.[index]?.inSyncFollowerEnd(replicaId) ?? null;
  }

  /** A followed partition's leader says what it has committed (its answer to a progress report). */
  noteLeaderHighWatermark(topic: string, index: number, highWatermark: number): void {
    const partition = this.#partitions.get(topic)?.[index];
    if (partition?.role.kind === 'follower') partition.noteLeaderHighWatermark(highWatermark);
  }

  /** After a cluster scan: each followed partition serves in the epoch of the leader it follows now (null: none known). */
  followLeaderEpochs(epochOf: (topic: string, index: number) => number | null): void {
    for (const [topic, partitions] of this.#partitions) {
      partitions.forEach((partition, index) => {
        const epoch = partition.role.kind === 'follower' ? epochOf(topic, index) : null;
        if (epoch !== null) partition.followLeaderEpoch(epoch);
      });
    }
  }

  /** The replica sets or the brokers' leases changed (a cluster scan): leader partitions re-check their in-sync sets. */
  replicasChanged(): void {
    for (const partition of this.#partitions.all()) if (partition?.role.kind === 'leader') partition.replicasChanged();
  }

  /**
   * Managed mode, after the WAL writer was fenced or failed ([C7]): fences the old writer (its
   * waiters are rejected, never resolved), releases every partition this engine leads (they
   * appended through it) and starts a writer in a new epoch. Followed partitions stay. Resolves
   * with the new stream; the caller re-adopts what it still leads through [C3]-[C5].
   */
  async startNewWalEpoch(): Promise<StreamId> {
    this.#checkOpen();
    const lifecycle = this.#services.walLifecycle;
    if (lifecycle === null || this.#cluster === null) throw new FerryError('InvalidArgument', 'only a managed engine with a WAL starts a new writer epoch while it runs');
    await lifecycle.retire('a new writer epoch replaces this one');
    for (const [topic, partitions] of this.#partitions) {
      for (const [index, partition] of partitions.entries()) if (partition?.role.kind === 'leader') await this.releasePartition(topic, index);
    }
    return lifecycle.renew().config.stream;
  }

  /** Whether this engine leads `topic`-`index` (and so takes produce requests for it). */
  leads(topic: string, index: number): boolean {
    return this.#partitions.get(topic)?.[index]?.role.kind === 'leader';
  }

  /**
   * The leader epoch `topic`-`index` is served in here (docs/design.md contract 13: the one its appends
   * carry): the cluster's assigned one, 0 in the embedded engine.
   */
  leaderEpoch(topic: string, index: number): number {
    return this.#partitions.partition(topic, index).leaderEpoch;
  }

  /**
   * KIP-320's fencing of a request's current_leader_epoch against the partition's: -1 passes,
   * older throws FencedLeaderEpoch, newer UnknownLeaderEpoch.
   */
  checkLeaderEpoch(topic: string, index: number, currentLeaderEpoch: number): void {
    this.#partitions.partition(topic, index).checkLeaderEpoch(currentLeaderEpoch);
  }

  /**
   * OffsetForLeaderEpoch from the log's leader-epoch cache: the largest epoch <= `epoch` and where
   * it ended (the start of the next larger epoch; the log end offset for the current epoch);
   * -1 and -1 for an epoch newer than any, or -1.
   */
  endOffsetForLeaderEpoch(topic: string, index: number, epoch: number): EpochEnd {
    return this.#partitions.partition(topic, index).endOffsetForLeaderEpoch(epoch);
  }

  /** Stops serving a partition (managed mode, [C6]): another broker leads it now. */
  async releasePartition(topic: string, index: number): Promise<void> {
    const partitions = this.#partitions.get(topic);
    const partition = partitions?.[index];
    if (partition === undefined) return;
    delete partitions![index];
    this.#settings.noteReplicationFactor(topic, index, null);
    partition.abandon(new FerryError('NotLeader', `${topic}-${index} is no longer led here`));
    await partition.log.close();
  }

  /** The end of the partition's local log: past the high watermark while records wait to be committed. */
  logEndOffset(topic: string, index: number): number {
    return this.#partitions.partition(topic, index).log.logEndOffset;
  }

  /** Whether this engine serves `topic`-`index` (managed mode: adopted and not released). */
  serves(topic: string, index: number): boolean {
    return this.#partitions.get(topic)?.[index] !== undefined;
  }

  /** Creates a topic; TopicAlreadyExists if it exists (or is still being deleted), InvalidArgument for a bad name or count. */
  createTopic(name: string, options: CreateTopicOptions = {}): TopicDescription {
    return this.#topics.createTopic(name, options);
  }

  /** Creates the topic unless it exists; an existing one is returned unchanged (TopicAdmin.ensureTopic). */
  ensureTopic(name: string, options: CreateTopicOptions = {}): TopicDescription {
    return this.#topics.ensureTopic(name, options);
  }

  /** Every topic of this engine, as its registry holds it. */
  topics(): TopicDescription[] {
    return this.#topics.topics();
  }

  /** IncrementalAlterConfigs on a topic of this (unmanaged) engine (TopicAdmin.alterTopicConfig). */
  alterTopicConfig(name: string, alteration: ConfigAlteration, validateOnly = false): TopicConfigs {
    return this.#topics.alterTopicConfig(name, alteration, validateOnly);
  }

  /** Managed mode: the cluster's topic record holds `configs` for `name` now (TopicAdmin.applyTopicConfigs). */
  applyTopicConfigs(name: string, configs: TopicConfigs): void {
    this.#topics.applyTopicConfigs(name, configs);
  }

  /** Kafka's CreatePartitions on a topic of this (unmanaged) engine (TopicAdmin.createPartitions). */
  createPartitions(name: string, newTotalCount: number, validateOnly = false): TopicDescription {
    return this.#topics.createPartitions(name, newTotalCount, validateOnly);
  }

  /** The incarnation of `topic` held here (its registry entry, or its partitions'), null for none. */
  incarnationOf(topic: string): TopicId | null {
    return this.#topics.incarnationOf(topic);
  }

  /** Removes a topic and its partitions' logs; its id is retired, never served again (TopicAdmin.deleteTopic). */
  deleteTopic(topic: string): Promise<void> {
    return this.#topics.deleteTopic(topic);
  }

  /** The Kafka configs set on a topic (managed mode: as the cluster's record has them); UnknownTopicOrPartition if it is not here. */
  topicConfigs(name: string): TopicConfigs {
    return this.#settings.topicConfigs(name);
  }

  /** The broker's own topic defaults, by Kafka topic config name, where they differ from the catalog's (DescribeConfigs' STATIC_BROKER_CONFIG). */
  brokerTopicDefaults(): TopicConfigs {
    return this.#settings.brokerTopicDefaults();
  }

  /** DescribeConfigs of a topic here: every known config with its value, source and synonyms. */
  describeTopicConfigs(name: string): TopicConfigEntry[] {
    return this.#settings.describeTopicConfigs(name);
  }

  /** Kafka configs checked as a whole over this engine's defaults, and against the configs `before` an alteration (InvalidConfig). */
  checkTopicConfigs(configs: TopicConfigs, before?: TopicConfigs): void {
    this.#settings.checkTopicConfigs(configs, before);
  }

  /**
   * Appends records and resolves with each one's partition and offset, in input order. Records
   * for one partition go in one batch; with acks 'all' the promise waits until it is durable.
   */
  async produce(topic: string, records: readonly ProducerRecord[], options: ProduceOptions = {}): Promise<ProducedRecord[]> {
    this.#checkOpen();
    if (records.length === 0) throw new FerryError('InvalidArgument', 'produce needs at least one record');
    const partitions = this.#partitionsForProduce(topic);
    const groups = this.#grouping.groupByPartition(topic, partitions.length, records, options.partition);
    const results: ProducedRecord[] = new Array(records.length);
    const durables: Promise<void>[] = [];
    for (const [index, members] of groups) {
      const batch = buildRecordBatch(
        members.map((m) => records[m]!),
        { nowMs: this.#clock.nowMs(), compression: options.compression ?? 'none' },
      );
      const target = partitions[index];
      if (target === undefined) throw new FerryError('UnknownTopicOrPartition', `${topic}-${index} is not served here`);
      const { baseOffset, durable } = await target.append(batch);
      members.forEach((member, i) => (results[member] = { partition: index, offset: baseOffset + i }));
      durables.push(durable);
    }
    if ((options.acks ?? 'all') === 'all') await Promise.all(durables);
    // With acks 1 nobody awaits these; a failure shows in the next produce and in `wal.failure`.
    else for (const durable of durables) durable.catch(() => {});
    return results;
  }

  /** Reads whole batches from `offset` up to the high watermark, as this partition's leader (PartitionReads.fetch). */
  fetch(topic: string, partition: number, offset: number, options: FetchOptions = {}): FetchResult {
    return this.#reads.fetch(topic, partition, offset, options);
  }

  /** fetch() without the leadership gate, for audits of what is stored (PartitionReads.readStored). */
  readStored(topic: string, partition: number, offset: number, options: FetchOptions = {}): FetchResult {
    return this.#reads.readStored(topic, partition, offset, options);
  }

  /** fetch(), and below the local log start from the tier [D2] (PartitionReads.fetchWithTier). */
  fetchWithTier(topic: string, partition: number, offset: number, options: FetchOptions = {}): Promise<FetchResult> {
    return this.#reads.fetchWithTier(topic, partition, offset, options);
  }

  /** ListOffsets on the local log (PartitionReads.offsetFor). */
  offsetFor(topic: string, partition: number, timestamp: number): OffsetLookup {
    return this.#reads.offsetFor(topic, partition, timestamp);
  }

  /** ListOffsets counting the tier [D3] (PartitionReads.offsetForWithTier). */
  offsetForWithTier(topic: string, partition: number, timestamp: number): Promise<OffsetLookup> {
    return this.#reads.offsetForWithTier(topic, partition, timestamp);
  }

  /** Kafka's log start offset of a partition served here, as its reads see it (LS) [R6]. */
  logStartOffset(topic: string, partition: number): number {
    return this.#reads.logStartOffset(topic, partition);
  }

  /** The log start DeleteRecords moved a partition served here to (0 before any) [R6]. */
  deletedBeforeOffset(topic: string, partition: number): number {
    return this.#reads.deletedBeforeOffset(topic, partition);
  }

  /** The first offset the local log holds (below it, only the tier may: fetchWithTier). */
  localLogStartOffset(topic: string, partition: number): number {
    return this.#reads.localLogStartOffset(topic, partition);
  }

  /** Yields records from `fromOffset` on, waiting for new ones at the end, until `signal` aborts. */
  async *consume(topic: string, options: ConsumeOptions = {}): AsyncGenerator<ConsumedRecord> {
    const partitionIndex = options.partition ?? 0;
    const target = this.#partitions.partition(topic, partitionIndex);
    let offset = options.fromOffset ?? localStartFor(target);
    while (!this.#closed && !options.signal?.aborted) {
      if (offset >= target.highWatermark) {
        await target.waitForData(offset, options.signal);
        continue;
      }
      const { batches } = await this.#reads.fetchWithTier(topic, partitionIndex, offset, { maxBytes: options.maxBytes ?? FETCH_BYTES_DEFAULT });
      for (const batch of batches) {
        for (const record of batch.records()) {
          if (record.offset < offset) continue; // the first batch may start before the offset asked for
          yield { ...record, topic, partition: partitionIndex };
          offset = record.offset + 1;
        }
        offset = Math.max(offset, batch.nextOffset);
      }
    }
  }

  /**
   * Appends whole record batches as a Kafka client sent them (the broker's Produce path): they
   * are validated (magic 2, CRC32C, sizes), get their offsets in place, and travel on to the WAL
   * as views of `records`. Resolves once they are in the local log, with `committed`, which
   * resolves once the high watermark passed them (what acks=all waits for). `signal` gives up
   * waiting for room in the WAL's upload buffer (the request timed out): nothing is appended then.
   */
  async appendBatches(topic: string, partition: number, records: Uint8Array, signal?: AbortSignal): Promise<AppendedBatches> {
    const target = this.#partitionsForProduce(topic)[partition];
    if (target === undefined) throw new FerryError('UnknownTopicOrPartition', `partition ${partition} does not exist in ${topic}`);
    const { baseOffset, lastOffset, logAppendTimeMs, durable } = await target.append(records, signal);
    durable.catch(() => {}); // when nobody awaits it (acks 0 or 1), a failure surfaces in later produces and in `wal.failure`
    return { baseOffset, lastOffset, logStartOffset: localStartFor(target), logAppendTimeMs, committed: durable };
  }

  /** Resolves when `offset` of the partition becomes readable, or when `signal` aborts (long-poll Fetch). */
  waitForData(topic: string, partition: number, offset: number, signal?: AbortSignal): Promise<void> {
    return this.#partitions.partition(topic, partition).waitForData(offset, signal);
  }

  /** DeleteRecords' checks on the leader, before anything changes (RecordDeletion.deleteRecordsOffset). */
  deleteRecordsOffset(topic: string, index: number, beforeOffset: number): number {
    return this.#deletion.deleteRecordsOffset(topic, index, beforeOffset);
  }

  /** Kafka's DeleteRecords on the leader: moves the log start up durably; returns the low watermark (RecordDeletion.deleteRecords). */
  deleteRecords(topic: string, index: number, beforeOffset: number): number {
    return this.#deletion.deleteRecords(topic, index, beforeOffset);
  }

  /** DeleteRecords' low watermark as the whole log has it, the tier's record read afresh (RecordDeletion.deleteRecordsLowWatermark). */
  deleteRecordsLowWatermark(topic: string, index: number, answered: number): Promise<number> {
    return this.#deletion.deleteRecordsLowWatermark(topic, index, answered);
  }

  /** Kafka's DelayedDeleteRecords [R6]: resolves once every in-sync follower's log start reached `offset` (RecordDeletion.waitForLowWatermark). */
  waitForLowWatermark(topic: string, index: number, offset: number, timeoutMs: number): Promise<number> {
    return this.#deletion.waitForLowWatermark(topic, index, offset, timeoutMs);
  }

  /** A followed partition learns its leader's log start (RecordDeletion.followLogStart). */
  followLogStart(topic: string, index: number, logStartOffset: number): void {
    this.#deletion.followLogStart(topic, index, logStartOffset);
  }

  /** One retention round over every partition served here; returns the segments deleted (RecordDeletion.enforceRetention). */
  enforceRetention(): number {
    return this.#deletion.enforceRetention();
  }

  /**
   * Kafka's DescribeProducers of a partition led here: its idempotent producers from the log's
   * producer state. Ferry has no transactions: coordinatorEpoch and currentTxnStartOffset are -1.
   * NotLeader on a follower.
   */
  describeProducers(topic: string, index: number): DescribedProducer[] {
    const target = this.#partitions.partition(topic, index);
    if (target.role.kind !== 'leader') throw new FerryError('NotLeader', `Leader not local for partition ${topic}-${index}: it is a follower here`);
    return target.log.activeProducers().map((producer) => ({ ...producer, coordinatorEpoch: NO_COORDINATOR_EPOCH, currentTxnStartOffset: NO_TRANSACTION_START_OFFSET }));
  }

  /**
   * Kafka's DescribeLogDirs of this engine's one log directory: every partition served here (led
   * or followed) with its bytes on local disk and its offset lag (a leader's is 0, a follower's
   * how far its log end is behind its leader's high watermark), and the directory's total and
   * usable bytes as the disk reports them (null when it cannot say).
   */
  describeLogDir(): LogDirDescription {
    this.#checkOpen();
    const partitions: LogDirPartition[] = [];
    for (const [topic, served] of this.#partitions) {
      served.forEach((partition, index) => {
        const lag = partition.role.kind === 'leader' ? 0 : Math.max(0, (partition.leaderHighWatermark ?? 0) - partition.log.logEndOffset);
        partitions.push({ topic, partition: index, sizeBytes: partition.log.sizeBytes, offsetLag: lag, isFutureKey: false });
      });
    }
    const space = this.#disk.statfsSync?.(this.directory) ?? null;
    return { path: this.directory, totalBytes: space?.totalBytes ?? null, usableBytes: space?.usableBytes ?? null, partitions };
  }

  /** The follower applying WAL objects, when this engine follows a leader. */
  get follower(): Follower | null {
    return this.#replication.follower;
  }

  /**
   * Links a follower engine in this process to this leader (the broker uses the network): the
   * follower is hinted whenever a WAL object becomes durable, reports what it applied (acks=all
   * and the high watermark count it), and learns the high watermark.
   */
  attachReplica(replica: Engine, replicaId: string): void {
    this.#checkOpen();
    if (this.#services.wal === null) throw new FerryError('InvalidArgument', 'only an engine that writes a WAL can have replicas');
    // The one place an engine reads another's private state: it asks for the replica's side of the link.
    this.#replication.attach(replica.#replication.linked, replicaId);
  }

  /** Flushes and closes every log and releases the directory. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopGauges();
    this.#own.stop();
    this.#deletion.stop();
    this.#services.stop();
    await this.#replication.stop();
    const all = this.#partitions.all();
    await this.#services.walLifecycle?.flushForClose();
    this.#own.checkpoint();
    for (const partition of all) partition.abandon(new FerryError('Closed', `the engine at ${this.directory} is closed`));
    await Promise.all([...all.map((partition) => partition.log.close()), ...this.#own.closeLostTails()]);
    this.#unlock();
  }

  /** Registers `topicId` as the topic's incarnation here (managed mode), dropping an older one that nothing serves any more. */
  #registerIncarnation(topic: string, topicId: TopicId, partitionCount: number): void {
    const known = this.#registry.get(topic);
    if (known !== undefined && known.id !== topicId) {
      if (this.#partitions.get(topic)?.some((p) => p !== undefined))
        throw new FerryError('InvalidArgument', `${topic} is served here as topic id ${known.id}; let it go before adopting topic id ${topicId}`);
      this.#registry.remove(topic);
      this.#partitions.delete(topic);
    }
    if (this.#registry.get(topic) === undefined) this.#registry.add({ name: topic, partitions: partitionCount, config: {} }, topicId);
    else this.#registry.grow(topic, partitionCount);
  }

  #inSyncReplicas(topic: string, index: number): InSyncReplicas {
    const followers = () => this.#cluster?.followersOf(topic, index) ?? this.#replication.links.replicaIds;
    return new InSyncReplicas(this.#clock, { followers }, this.#options.replicaLagTimeMaxMs ?? REPLICA_LAG_TIME_MAX_MS);
  }

  #partitionsForProduce(topic: string): Partition[] {
    const existing = this.#partitions.get(topic);
    if (existing !== undefined) return existing;
    if (this.#options.autoCreateTopics !== true || this.#topics.deletions.has(topic)) throw unknownTopic(topic);
    this.#topics.createTopic(topic);
    return this.#partitions.get(topic)!;
  }

  #checkOpen(): void {
    if (this.#closed) throw new FerryError('Closed', `the engine at ${this.directory} is closed`);
  }
}
