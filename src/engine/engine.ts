import type { ReadOutcomes } from '../wal/store-health.ts';
import type { Tierer } from '../tier/tierer.ts';
import type { TierStart } from '../tier/tier-start.ts';
import { FerryError } from '../errors.ts';
import type { ProducerRecord } from '../format/index.ts';
import { resolveLogConfig } from '../log/config.ts';
import type { TopicConfigs } from '../log/topic-config.ts';
import type { ConfigAlteration } from '../log/topic-config-changes.ts';
import type { TopicConfigEntry } from '../log/topic-config-describe.ts';
import { type Logger, loggerOf } from '../observability/logger.ts';
import { defaultLogger } from '../observability/record-logger.ts';
import { registerEngineGauges } from './engine-gauges.ts';
import { type Clock, systemClock } from '../util/clock.ts';
import { type Disk, systemDisk } from '../util/disk.ts';
import { makeDirectoriesSync } from '../util/files.ts';
import { systemRandom } from '../util/random.ts';
import type { Follower } from '../partition/follower.ts';
import { InSyncReplicas, REPLICA_LAG_TIME_MAX_MS, UNKNOWN_LOG_START } from '../partition/isr.ts';
import { listEpochs } from '../wal/seal.ts';
import type { WalCollector } from '../wal-gc/collector.ts';
import type { StreamId } from '../wal/keys.ts';
import type { WalWriter } from '../wal/writer.ts';
import type { DurableEnd } from './replica-link.ts';
import type { ClusterPolicy } from './cluster-policy.ts';
import { NodeServices } from './node-services.ts';
import { OwnPartitions } from './own-partitions.ts';
import { EmbeddedReplication } from './embedded-replication.ts';
import { TopicAdmin } from './topic-admin.ts';
import { ProducePath } from './produce-path.ts';
import { describeLogDir, describeProducers } from './partition-descriptions.ts';
import { AdoptedPartitions } from './adopted-partitions.ts';
import { PartitionTable } from './partition-table.ts';
import { TopicSettings } from './topic-settings.ts';
import { RecordDeletion } from './record-deletion.ts';
import { PartitionReads } from './partition-reads.ts';
import type { Partition } from '../partition/partition.ts';
import type { TopicId } from '../format/topic-id.ts';
import { type TopicDescription, TopicRegistry } from './topic-registry.ts';

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
  OffsetLookup,
  ProduceOptions,
  ProducedRecord,
  TierRange,
} from './engine-options.ts';
import { withWalFlushDefault } from './engine-options.ts';

/**
 * One node's storage engine: the partitions it serves, each a durable Kafka-format log on local
 * disk, and the services beside them (NodeServices). Alone, it opens its registry's topics
 * (OwnPartitions); managed by a cluster (EngineOptions.cluster, fixed at open), it serves what
 * the cluster assigns (AdoptedPartitions). Each job lives in its own file (README.md); this class
 * makes them at open, routes the requests to them and closes them. Embedding services use Ferry.
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
  /** The partitions a cluster assigns this engine: adopted, released, let go of at a new WAL epoch. */
  readonly #adopted: AdoptedPartitions;
  /** Create, grow, reconfigure and delete topics (and the deletes under way). */
  readonly #topics: TopicAdmin;
  /** Appends: the embedded API's records and a client's whole batches. */
  readonly #produce: ProducePath;
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
      durable: () => this.#replication.links.notifyDurable(this.#durableEnd()),
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
    this.#adopted = new AdoptedPartitions({
      directory: this.directory,
      clock: this.#clock,
      disk: this.#disk,
      logger: this.#logger,
      registry,
      table: this.#partitions,
      settings: this.#settings,
      services: this.#services,
      cluster: this.#cluster,
      deletions: this.#topics.deletions,
      inSyncReplicas: (topic, index) => this.#inSyncReplicas(topic, index),
      checkOpen: () => this.#checkOpen(),
    });
    this.#produce = new ProducePath(this.#partitions, this.#topics, this.#clock, options.autoCreateTopics === true, () => this.#checkOpen());
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

  /** The WAL writer when the engine ships to object storage; its stats and failure state. */
  get wal(): WalWriter | null {
    return this.#services.wal;
  }

  /** The WAL writer's durable end, which the hints to linked replicas carry (ST4); undefined before a writer runs. */
  #durableEnd(): DurableEnd | undefined {
    const wal = this.#services?.wal ?? null;
    return wal === null || wal.durableSequence < 0 ? undefined : { stream: wal.config.stream, sequence: wal.durableSequence };
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
  static async open(given: EngineOptions): Promise<Engine> {
    const options = withWalFlushDefault(given);
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
      if (engine.#cluster === null) await engine.#own.openAll(engine.#registry.list());
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
   * Starts serving one partition (managed mode, [C5]) as its leader or as a follower; `rebuild`
   * fills its fresh (or kept, [K3]) local log from the WAL chain (AdoptedPartitions.adopt).
   */
  adoptPartition(...adoption: Parameters<AdoptedPartitions['adopt']>): Promise<Partition> {
    return this.#adopted.adopt(...adoption);
  }

  /** Stops serving a partition (managed mode, [C6]): another broker leads it now. */
  releasePartition(topic: string, index: number): Promise<void> {
    return this.#adopted.release(topic, index);
  }

  /** Managed mode, after the WAL writer was fenced or failed ([C7]): lets go of the led partitions and starts a new writer epoch. */
  startNewWalEpoch(): Promise<StreamId> {
    return this.#adopted.startNewWalEpoch();
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
  produce(topic: string, records: readonly ProducerRecord[], options: ProduceOptions = {}): Promise<ProducedRecord[]> {
    return this.#produce.produce(topic, records, options);
  }

  /** Appends whole record batches as a Kafka client sent them (the broker's Produce path; ProducePath.appendBatches). */
  appendBatches(topic: string, partition: number, records: Uint8Array, signal?: AbortSignal): Promise<AppendedBatches> {
    return this.#produce.appendBatches(topic, partition, records, signal);
  }

  /** Yields records from `fromOffset` on, waiting for new ones at the end, until `signal` aborts (PartitionReads.consume). */
  consume(topic: string, options: ConsumeOptions = {}): AsyncGenerator<ConsumedRecord> {
    return this.#reads.consume(topic, options, () => this.#closed);
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

  /** Kafka's DescribeProducers of a partition led here (describeProducers in partition-descriptions.ts). */
  describeProducers(topic: string, index: number): DescribedProducer[] {
    return describeProducers(this.#partitions.partition(topic, index));
  }

  /** Kafka's DescribeLogDirs of this engine's one log directory (describeLogDir in partition-descriptions.ts). */
  describeLogDir(): LogDirDescription {
    this.#checkOpen();
    return describeLogDir(this.#partitions, this.directory, this.#disk);
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

  #inSyncReplicas(topic: string, index: number): InSyncReplicas {
    const followers = () => this.#cluster?.followersOf(topic, index) ?? this.#replication.links.replicaIds;
    return new InSyncReplicas(this.#clock, { followers }, this.#options.replicaLagTimeMaxMs ?? REPLICA_LAG_TIME_MAX_MS);
  }

  #checkOpen(): void {
    if (this.#closed) throw new FerryError('Closed', `the engine at ${this.directory} is closed`);
  }
}
