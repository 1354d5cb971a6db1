import type { ReadOutcomes } from '../wal/store-health.ts';
import { definedOnly } from '../util/defined-only.ts';
import type { ControlStore } from '../control/control-store.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { TierRecords, tieredEnd } from '../tier/tier-record.ts';
import { Tierer, type TierSource } from '../tier/tierer.ts';
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
import { WalCollector } from '../wal-gc/collector.ts';
import type { CoverageSources } from '../wal-gc/coverage.ts';
import { OrphanWriters, type WriterLiveness } from '../wal-gc/orphan-writers.ts';
import type { StreamId } from '../wal/keys.ts';
import { partitionKey, type WalWriter } from '../wal/writer.ts';
import { type FollowedPartitions, type FollowOptions, startEmbeddedFollower } from './embedded-follower.ts';
import { type LostTail, rebuildLostTails } from './lost-tail-rebuild.ts';
import { ALWAYS_LEADS, Partition, type PartitionRole } from './partition.ts';
import { preparePartitionDirectory } from './partition-metadata.ts';
import { ProduceGrouping } from './produce-grouping.ts';
import { type LeaderLink, type LeaderPartitions, type LinkedReplica, type PartitionEnd, ReplicaLinks } from './replica-link.ts';
import { earlierStreamEnds, ShippedCheckpointer } from './shipped-checkpointer.ts';
import { PARTITIONS_PER_TOPIC_MAX, type TopicDescription, type TopicId, TopicRegistry } from './topic-registry.ts';
import { checkPartitionIncrease } from './partition-increase.ts';
import { validateTopicName } from './topic-name.ts';
import { type WalOptions, WalWriterLifecycle } from './wal-writer-lifecycle.ts';

export type { FollowOptions } from './embedded-follower.ts';
export type { WalOptions } from './wal-writer-lifecycle.ts';

/**
 * How long an open waits for room in the WAL's upload buffer to re-ship unshipped suffixes. Room
 * frees as uploads land, so this is how long a store outage may last before the open fails; longer
 * holds a restart hanging, shorter fails opens on a slow store.
 */
const RESHIP_ROOM_WAIT_MS = 60_000;
/** Kafka's log.retention.check.interval.ms. */
const RETENTION_CHECK_INTERVAL_MS = 5 * 60 * 1000;
/** Kafka's fetch.max.bytes default for one fetch when the caller names none. */
const FETCH_BYTES_DEFAULT = 1024 * 1024;
/** ListOffsets' special timestamps. */
const LATEST_TIMESTAMP = -1;
const EARLIEST_TIMESTAMP = -2;
/** KIP-734: the record with the largest timestamp. */
const MAX_TIMESTAMP = -3;
/** KIP-405: the local log's start (the tier's start is EARLIEST). */
const EARLIEST_LOCAL_TIMESTAMP = -4;
/** KIP-1005: the last offset copied to the tier; -1 while none is. */
const LATEST_TIERED_TIMESTAMP = -5;
/** DeleteRecords' offset meaning "up to the high watermark" (Kafka's DeleteRecordsRequest.HIGH_WATERMARK). */
const DELETE_TO_HIGH_WATERMARK = -1;
/** DescribeProducers' fields of transactions, which Ferry does not have (Kafka's -1: none). */
const NO_COORDINATOR_EPOCH = -1;
const NO_TRANSACTION_START_OFFSET = -1;
/** The embedded engine is its partitions' only leader; a cluster assigns real epochs at adoption. */
const EMBEDDED_LEADER_EPOCH = 0;

/** How Ferry.open sets an engine up: only `directory` is required; `wal` ships appends to object storage, `follow` makes a read replica. */
export interface FerryOptions {
  /** Where topics and their partition logs live. */
  readonly directory: string;
  /**
   * Called once with the engine as soon as it exists, before it opens or adopts any partition:
   * lets a test harness watch it while its broker still starts (the simulation records every
   * replica's log end). Nothing in production sets it.
   */
  readonly onOpen?: (engine: Ferry) => void;
  /**
   * Called after each retention pass that deleted segments of a partition, with where its local
   * log started before and after: lets a test harness judge what retention kept (the simulation's
   * retention-kept). Nothing in production sets it.
   */
  readonly onRetention?: (deletion: RetentionDeletion) => void;
  /** Log settings for every topic unless a topic overrides them. */
  readonly log?: Partial<LogConfig>;
  /** How often retention runs (Kafka's log.retention.check.interval.ms); default RETENTION_CHECK_INTERVAL_MS. */
  readonly retentionCheckIntervalMs?: number;
  /** Create a topic with `defaultPartitions` on first produce instead of failing. */
  readonly autoCreateTopics?: boolean;
  /** Partitions of an auto-created topic, and of createTopic without `partitions`; default 1. */
  readonly defaultPartitions?: number;
  /** Time for timers and timestamps: the system's unless a simulation injects its own. */
  readonly clock?: Clock;
  /** Where the engine's files live (its directory, every partition log): node:fs unless a simulation injects its own. */
  readonly disk?: Disk;
  /**
   * Draws the ids of topics created here (docs/design.md contract 10): the operating system's by
   * default. A seeded one replays a simulation; ids never repeat within one directory either way.
   */
  readonly random?: Random;
  /** Ship every append to object storage (KIP-1176); acks 'all' then waits for the WAL object. */
  readonly wal?: WalOptions;
  /** Copy the rolled segments this engine leads to a long-term store (docs/tier-protocol.md). */
  readonly tier?: TierOptions;
  /** With a WAL and a tier: how often this writer's WAL objects are garbage collected [G]; default GC_INTERVAL_MS. */
  readonly walGcIntervalMs?: number;
  /** With a WAL and a tier: the longest the collector skips passes while nothing changed; default GC_IDLE_PASS_MS. */
  readonly walGcIdlePassMs?: number;
  /** acks 'all' also waits until this many replicas, the leader included, applied the records. */
  readonly minInsyncReplicas?: number;
  /** Kafka's replica.lag.time.max.ms: a follower not caught up for this long leaves the in-sync set (default REPLICA_LAG_TIME_MAX_MS). */
  readonly replicaLagTimeMaxMs?: number;
  /** Be a follower (a read replica): rebuild partitions from a leader's WAL streams, serve reads. */
  readonly follow?: FollowOptions;
  /**
   * Partitions are served only once adopted (adoptPartition), as a cluster assigns them
   * (docs/cluster-protocol.md); nothing is opened from the local registry at start.
   */
  readonly managedPartitions?: boolean;
  /** Where the engine's metrics go (WAL upload and durability latency, follower lag, ...). */
  readonly metrics?: MetricsRegistry;
  /**
   * Where the engine says what an operator should know (a disk that fails and recovers, a
   * recovery that cut a torn tail, a store outage, tiering): a Logger (pino's works as is) or a
   * function given each message. Default: warn and above as JSON lines on stderr.
   */
  readonly logger?: LoggerOption;
  /** @deprecated The old name of `logger`, taking a function given each message. */
  readonly report?: (message: string) => void;
}

/** What one retention pass deleted of one partition's local log (FerryOptions.onRetention). */
export interface RetentionDeletion {
  readonly topic: string;
  readonly partition: number;
  /** The log's directory (its segment files). */
  readonly directory: string;
  /** The local log's first offset before the pass, and after it (the new first segment's base). */
  readonly fromOffset: number;
  readonly toOffset: number;
  /** The local log's end during the pass (retention never moves it). */
  readonly logEndOffset: number;
  /** The tiered end the pass deleted below, by local.retention.* (a follower's as last read); null: it went by retention.* (no tier, remote storage off). */
  readonly tieredEnd: number | null;
}

/** Where rolled segments go (docs/tier-protocol.md): the tier store, and the records that say what it holds. */
export interface TierOptions {
  /** The long-term store (S3 Standard in production). */
  readonly store: ObjectStore;
  /** Key prefix in it; default none (keys start with `tier/`). */
  readonly prefix?: string;
  /** Where the tier records live: the cluster's control records, or a single broker's store. */
  readonly control: ControlStore;
  /** How often the leader looks for segments to tier; default TIER_INTERVAL_MS. */
  readonly intervalMs?: number;
  /**
   * The topic ids with a deletion record (DI1, docs/tier-protocol.md): the tier's objects and
   * records of those incarnations are deleted. Default: the deletion records beside the tier
   * records (`control`), where this engine writes its own deletes; a cluster broker passes its
   * cluster's, where the cluster writes them.
   */
  readonly deletedTopicIds?: DeletedTopicIds;
  /** How long a partition's tiered end may stay below its committed end before that is tiered from inside the active segment; default TIER_TAIL_MAX_MS. */
  readonly tailMaxMs?: number;
  /** How many committed bytes above a partition's tiered end are tiered from inside its active segment; default TIER_TAIL_MAX_BYTES. */
  readonly tailMaxBytes?: number;
  /** How often each led partition's tier prefix is swept for orphans [T6]; default TIER_SWEEP_INTERVAL_MS. */
  readonly sweepIntervalMs?: number;
  /** How long an orphan, or a deleted incarnation's tier, stays before it is deleted [T6]; default TIER_ORPHAN_DELAY_MS. */
  readonly orphanDelayMs?: number;
}

/**
 * Managed mode: throws while this engine may not act as leader (acknowledge, serve reads as
 * leader) on a partition of incarnation `topicId` of `topic`.
 */
export type EngineLeadershipGate = (topic: string, topicId: TopicId) => void;

/** Which replicas may count as followers of a leader partition (a cluster's replica sets and leases). */
export interface ReplicaMembership {
  /** The partition's replica set without its leader, only replicas whose broker holds a live lease. */
  followersOf(topic: string, partition: number): ReadonlySet<string>;
}

/** What a new topic is made with. */
export interface CreateTopicOptions {
  /** How many partitions; default the engine's defaultPartitions, else 1. */
  readonly partitions?: number;
  /** Log settings over the engine's `log` defaults. */
  readonly config?: Partial<LogConfig>;
  /** Kafka topic configs by name (retention.ms, ...), checked before anything is created (InvalidConfig). */
  readonly configs?: Readonly<Record<string, string | null>>;
}

/**
 * - `1`: resolve once the records are in the local log (the page cache), as Kafka acks=1.
 * - `'all'`: resolve once they are durable under the log's flush policy (the default).
 */
export type Acks = 1 | 'all';

/** How produce places and acknowledges records. */
export interface ProduceOptions {
  /** Send every record here; otherwise keyed records go by Kafka's murmur2 partitioner. */
  readonly partition?: number;
  /** Compress the batch with this codec; none by default. */
  readonly compression?: BuildCompressionCodec;
  /** When produce resolves (see Acks); default 'all'. */
  readonly acks?: Acks;
}

/** One producer in a DescribeProducers answer (Kafka's ProducerState). */
export interface DescribedProducer extends ActiveProducer {
  /** Always -1: Ferry has no transactions. */
  readonly coordinatorEpoch: number;
  /** Always -1: Ferry has no transactions. */
  readonly currentTxnStartOffset: number;
}

/** One partition of a DescribeLogDirs answer. */
export interface LogDirPartition {
  /** The topic. */
  readonly topic: string;
  /** The partition. */
  readonly partition: number;
  /** Bytes of its segments on local disk. */
  readonly sizeBytes: number;
  /** 0 for a leader; a follower's distance from its leader's high watermark. */
  readonly offsetLag: number;
  /** Always false: Ferry moves no partition between log directories (Kafka's future replicas). */
  readonly isFutureKey: boolean;
}

/** Kafka's DescribeLogDirs result of this engine's one log directory. */
export interface LogDirDescription {
  /** The engine's directory. */
  readonly path: string;
  /** The file system's size and what is free for this process (statfs); null when the disk cannot say. */
  readonly totalBytes: number | null;
  /** See totalBytes. */
  readonly usableBytes: number | null;
  /** Every partition served from it. */
  readonly partitions: LogDirPartition[];
}

/** Where a produced record landed. */
export interface ProducedRecord {
  /** Its partition. */
  readonly partition: number;
  /** Its offset there. */
  readonly offset: number;
}

/** How much a fetch returns. */
export interface FetchOptions {
  /** About this many bytes of batches at most (the first whole batch always); default 1 MiB, Kafka's fetch.max.bytes. */
  readonly maxBytes?: number;
}

/** What a fetch read from one partition. */
export interface FetchResult {
  /** Whole record batches (zero-copy views), the first holding the requested offset. */
  readonly batches: RecordBatch[];
  /** The partition's high watermark: consumers see offsets below it. */
  readonly highWatermark: number;
  /** The first offset still held (locally or in the tier). */
  readonly logStartOffset: number;
}

/** Where a ListOffsets lookup landed (Kafka's ListOffsetsPartitionResponse). */
export interface OffsetLookup {
  /** The offset found; -1 when there is none (a timestamp past every record). */
  readonly offset: number;
  /** The timestamp of the record at `offset` (-1 for the special timestamps' answers that have none). */
  readonly timestamp: number;
  /** The leader epoch the record at `offset` was written in (-1 when unknown). */
  readonly leaderEpoch: number;
}

/** Where a leader epoch ended (OffsetForLeaderEpoch's answer). */
export interface EpochEnd {
  /** The largest epoch at most the one asked for; -1 for none. */
  readonly leaderEpoch: number;
  /** Where it ended: the next epoch's start, or the log end for the current one; -1 for none. */
  readonly endOffset: number;
}

/** Record batches appended by appendBatches (Kafka's Produce answer for a partition). */
export interface AppendedBatches {
  /** The first offset given to them. */
  readonly baseOffset: number;
  /** The last offset given to them. */
  readonly lastOffset: number;
  /** The log start offset after the append. */
  readonly logStartOffset: number;
  /** The time the leader stamped on them (LogAppendTime topics); -1 otherwise. */
  readonly logAppendTimeMs: number;
  /** Resolves once the high watermark passed them: what acks=all waits for. */
  readonly committed: Promise<void>;
}

/** What a partition's tier record says of its range. */
export interface TierRange {
  /** The log start retention or DeleteRecords moved the tier to. */
  readonly startOffset: number;
  /** One past the last offset the tier holds. */
  readonly tieredEnd: number;
}

/** A record as consume yields it: the record and where it came from. */
export interface ConsumedRecord extends KafkaRecord {
  /** Its topic. */
  readonly topic: string;
  /** Its partition. */
  readonly partition: number;
}

/** What consume reads. */
export interface ConsumeOptions {
  /** The partition to read; default 0. */
  readonly partition?: number;
  /** First offset to read; the partition's log start when absent. */
  readonly fromOffset?: number;
  /** Bytes per fetch under the iteration (see FetchOptions). */
  readonly maxBytes?: number;
  /** Ends the iteration when aborted. */
  readonly signal?: AbortSignal;
}

/**
 * The embeddable engine: topics of partitions, each a durable Kafka-format log on local disk.
 *
 *     const ferry = await Ferry.open({ directory: './data' });
 *     ferry.ensureTopic('orders', { partitions: 3 });
 *     const [produced] = await ferry.produce('orders', [{ key: 'k', value: 'v' }]);
 *     for await (const record of ferry.consume('orders', { partition: produced!.partition })) { ... }
 *     await ferry.close();
 *
 * examples/embedded.ts is the same with a WAL store (KIP-1176).
 */
export class Ferry {
  /** The engine's directory (FerryOptions.directory). */
  readonly directory: string;
  readonly #options: FerryOptions;
  readonly #clock: Clock;
  readonly #unlock: () => void;
  readonly #disk: Disk;
  readonly #registry: TopicRegistry;
  readonly #partitions = new Map<string, Partition[]>();
  /**
   * Deletes under way, by topic name: until the old incarnation's logs are closed and their
   * directories removed, the name cannot get a new one here (its directories share the names).
   */
  readonly #deletions = new Map<string, Promise<void>>();
  readonly #grouping = new ProduceGrouping();
  /** With a WAL: the writer of the current epoch, and the next after a fence. */
  readonly #walLifecycle: WalWriterLifecycle | null;
  /** Every partition log's failed and succeeding writes: counted, and logged once per failure spell. */
  readonly #storage: StorageHealth;
  /** At open: partitions whose local log ends below what the WAL holds of them, opened and waiting for #rebuildLostTails. */
  readonly #lostTails: LostTail[] = [];
  /** Every acknowledgement passes it: a cluster closes it while its lease may have lapsed, or its sighting of the topic [L8]. */
  #gate: EngineLeadershipGate = ALWAYS_LEADS;
  #follower: Follower | null = null;
  /** Leader side of attachReplica: the replicas linked to this engine in this process. */
  readonly #replicaLinks: ReplicaLinks;
  /** Replica side of attachReplica: this engine as its leader sees it, and the leader it reports to. */
  readonly #linkedReplica: LinkedReplica;
  #leaderLink: LeaderLink | null = null;
  /** Who may count as a leader partition's follower: the cluster's replica sets, else the attached replicas. */
  #membership: ReplicaMembership | null = null;
  /** A leader that opened its own partitions (not managed) saves what its WAL streams hold. */
  #checkpointer: ShippedCheckpointer | null = null;
  #retentionTimer: Timer | null = null;
  /** With a tier store: copies what this engine leads to it. */
  readonly #tierer: Tierer | null;
  /** With a tier store: serves offsets below the local log start from it [D2]. */
  readonly #remote: RemoteReader | null;
  /** The incarnations this engine deleted: what the tier holds of them is swept, and WAL GC passes again after each (their frames are covered). */
  readonly #deletedTopicIds = new Set<TopicId>();
  /** With a tier store: the tier records the tierer, the reads and rebuilds [K2] share. */
  readonly #tierRecords: TierRecords | null;
  /** With a WAL and a tier: deletes this writer's WAL objects once the tier covers them [G]. */
  readonly #walCollector: WalCollector | null;
  /** What a cluster's records say of a topic incarnation (DI1); see useIncarnationCheck. */
  #incarnationState: ((topic: string, topicId: TopicId) => Promise<IncarnationState>) | null = null;
  /** With a tier, alone: the deletion records of the incarnations this engine deletes (DI1), beside its tier records. */
  readonly #deletionRecords: DeletedIncarnations | null;
  /**
   * Managed mode: each topic's Kafka configs as the cluster's topic record has them (applyTopicConfigs),
   * by name, kept across a delete: the node hands a name's configs over only when they change, and a
   * new incarnation's may equal the old one's. One small entry per topic name seen.
   */
  readonly #clusterConfigs = new Map<string, TopicConfigs>();
  /** Where lines go: each component binds its own name (engine, storage, wal, tier, follower). */
  readonly #logger: Logger;
  /** Managed mode: the replication factor each led partition was adopted with (min.insync.replicas is capped by it). */
  readonly #replicationFactors = new Map<string, number>();
  #closed = false;
  /** Stops the scrape-time gauges reading this engine (at close). */
  readonly #stopGauges: () => void;

  private constructor(options: FerryOptions, unlock: () => void, registry: TopicRegistry, epochFloor: number) {
    this.directory = options.directory;
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#logger = loggerOf(options.logger ?? options.report, defaultLogger(this.#clock));
    this.#unlock = unlock;
    this.#disk = options.disk ?? systemDisk;
    this.#registry = registry;
    this.#storage = new StorageHealth(options.metrics, this.#logger);
    this.#replicaLinks = new ReplicaLinks(this.#asLeaderPartitions());
    this.#linkedReplica = this.#asLinkedReplica();
    const walDeps = { clock: this.#clock, disk: this.#disk, metrics: options.metrics, report: this.#logger, durable: () => this.#replicaLinks.notifyDurable() };
    this.#walLifecycle = options.wal === undefined ? null : new WalWriterLifecycle(this.directory, options.wal, epochFloor, walDeps);
    this.#tierRecords = options.tier === undefined ? null : new TierRecords(options.tier.control);
    this.#deletionRecords = options.tier === undefined ? null : new DeletedIncarnations(options.tier.control);
    this.#tierer = options.tier === undefined ? null : this.#newTierer(options.tier, this.#tierRecords!);
    this.#remote = options.tier === undefined ? null : new RemoteReader({ store: options.tier.store, prefix: options.tier.prefix ?? '', records: this.#tierRecords!, clock: this.#clock });
    this.#walCollector = options.wal === undefined || this.#tierRecords === null ? null : this.#newWalCollector(options.wal, this.#tierRecords);
    const gaugeSources = { partitions: () => [...this.#partitions.values()].flat().filter((partition) => partition !== undefined), directory: this.directory, disk: this.#disk };
    this.#stopGauges = options.metrics === undefined ? () => {} : registerEngineGauges(options.metrics, gaugeSources);
  }

  /** [G1] This engine collects its own writer id's streams: the current epoch and its earlier (sealed) ones. */
  #newWalCollector(wal: WalOptions, records: TierRecords): WalCollector {
    return new WalCollector({
      store: wal.store,
      prefix: wal.prefix ?? '',
      writerId: wal.writerId,
      currentEpoch: () => this.#wal?.config.stream.epoch ?? null,
      coverage: this.#walCoverage(records),
      // What can free an object: new objects durable (the highest may go), the tier moving, a topic deleted.
      progress: () => `${this.#wal?.config.stream.epoch ?? -1}:${this.#wal?.durableSequence ?? -1}:${this.#tierer?.recordChanges ?? 0}:${this.#deletedTopicIds.size}`,
      clock: this.#clock,
      random: this.#options.random ?? systemRandom,
      ...definedOnly({ intervalMs: this.#options.walGcIntervalMs, idlePassMs: this.#options.walGcIdlePassMs, log: this.#logger, metrics: this.#options.metrics }),
    });
  }

  /** GI1's reads: the tier records, the topic incarnations, and the in-sync followers of what this engine leads. */
  #walCoverage(records: TierRecords): CoverageSources {
    return {
      readTierRecord: (topicId, partition) => records.read(topicId, partition),
      incarnationState: async (topic, topicId) => {
        if (this.#incarnationState !== null) return this.#incarnationState(topic, topicId);
        // Managed without the cluster's word: every incarnation counts as live (kept).
        if (this.#options.managedPartitions === true) return 'live';
        if (regressed('lone-broker-disk-is-truth')) return this.#registry.get(topic)?.id === topicId ? 'live' : 'deleted';
        // DI1: only a deletion record deletes; the registry knows what lives here, not what was deleted.
        if (await this.#deletionRecords!.isDeleted(topicId)) return 'deleted';
        return this.#registry.get(topic)?.id === topicId ? 'live' : 'unknown';
      },
      // KIP-405's remote.storage.enable of the topic (a cluster's topics take the engine's log config).
      tieringEnabled: (topic) => ({ ...DEFAULT_LOG_CONFIG, ...this.#topicLogConfig(topic) }).remoteStorageEnable,
      inSyncFollowersEnd: (topicId, index) => {
        for (const partitions of this.#partitions.values()) {
          const partition = partitions[index];
          if (partition?.topicId === topicId && partition.role.kind === 'leader') return partition.lowestInSyncFollowerEnd();
        }
        return null;
      },
    };
  }

  /** The WAL collector, when this engine writes a WAL and tiers (tests drive its passes). */
  get walCollector(): WalCollector | null {
    return this.#walCollector;
  }

  /**
   * Managed mode: how the WAL collector learns what the cluster's records say of a topic
   * incarnation (DI1: deleted only by its deletion record; live while its topic record names it).
   */
  useIncarnationCheck(state: (topic: string, topicId: TopicId) => Promise<IncarnationState>): void {
    this.#incarnationState = state;
  }

  /** Managed mode: the WAL collector also collects the writer ids no live broker writes as, that the hash gives this broker [G1]. */
  useWalWriterLiveness(liveness: WriterLiveness): void {
    const wal = this.#options.wal;
    if (wal === undefined) return;
    this.#walCollector?.collectOrphans(new OrphanWriters({ store: wal.store, prefix: wal.prefix ?? '', liveness, clock: this.#clock }));
  }

  #newTierer(tier: TierOptions, records: TierRecords): Tierer {
    return new Tierer({
      store: tier.store,
      prefix: tier.prefix ?? '',
      records,
      clock: this.#clock,
      random: this.#options.random ?? systemRandom,
      partitions: () => this.#tierSources(),
      ...definedOnly({
        intervalMs: tier.intervalMs,
        log: this.#logger,
        metrics: this.#options.metrics,
        deletedTopicIds: tier.deletedTopicIds ?? (() => this.#deletionRecords!.list()),
        tailMaxMs: tier.tailMaxMs,
        tailMaxBytes: tier.tailMaxBytes,
        sweepIntervalMs: tier.sweepIntervalMs,
        orphanDelayMs: tier.orphanDelayMs,
      }),
    });
  }

  /** The partitions this engine leads, as the tierer sees them. */
  *#tierSources(): Iterable<TierSource> {
    for (const partition of [...this.#partitions.values()].flat()) {
      if (partition?.role.kind !== 'leader') continue;
      yield { topic: partition.topic, topicId: partition.topicId, partition: partition.index, leaderEpoch: partition.leaderEpoch, log: partition.log, highWatermark: partition.highWatermark };
    }
  }

  /** The tierer, when this engine tiers (tests drive its rounds). */
  get tierer(): Tierer | null {
    return this.#tierer;
  }

  /** The log start the partition's tier record holds (retention moved it there); 0 without a tier. */
  async tierLogStartOf(topicId: TopicId, partition: number): Promise<number> {
    return (await this.tierRecordRange(topicId, partition)).startOffset;
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
      return PartitionLog.open(directory, { config: this.#topicLogConfig(topic), clock: this.#clock, storage: this.#storage, disk: this.#disk });
    } catch (error) {
      // As much room as the registry's rewrite took: a probe that finds less leaves the spell on (a page would end it, and the claims would start again).
      if (isOsError(error)) this.#storage.writeFailed(directory, error, this.#registry.lastWriteBytes);
      throw error;
    }
  }

  /** The tier record's start (retention's) and tiered end; both 0 without a tier. */
  async tierRecordRange(topicId: TopicId, partition: number): Promise<TierRange> {
    if (this.#tierRecords === null) return { startOffset: 0, tieredEnd: 0 };
    const record = await this.#tierRecords.read(topicId, partition);
    return { startOffset: record.startOffset, tieredEnd: tieredEnd(record) };
  }

  /**
   * [K2] Where a rebuild of the partition starts: the tier's end and what it knows there; null without a tier or with nothing tiered.
   * Every rebuild from the tier asks here (takeovers, the embedded follower, a lost tail), so a producer state lost here is reported here.
   */
  async tierStartOf(topicId: TopicId, partition: number): Promise<TierStart | null> {
    const tier = this.#options.tier;
    if (tier === undefined || this.#tierRecords === null) return null;
    const start = await tierStartOf(this.#tierRecords, tier.store, tier.prefix ?? '', topicId, partition);
    if (start?.producersLost !== undefined) {
      const topic = this.#registry.list().find((described) => described.id === topicId)?.name ?? `topic id ${topicId}`;
      reportProducerStateLost({ logger: this.#logger, metrics: this.#options.metrics }, topic, partition, start);
    }
    return start;
  }

  /**
   * At open: every partition's local suffix its earlier streams never got goes to the new stream
   * first. Room in the upload buffer frees only as uploads land, so during a store outage the open
   * gives up after RESHIP_ROOM_WAIT_MS with one line instead of hanging (a supervisor retries it).
   */
  async #reshipUnshipped(): Promise<void> {
    const giveUp = new AbortController();
    const timer = this.#clock.setTimer(RESHIP_ROOM_WAIT_MS, () => giveUp.abort(), true);
    try {
      for (const partition of [...this.#partitions.values()].flat()) {
        await partition.reshipUnshipped(giveUp.signal).catch((error: unknown) => {
          if (!giveUp.signal.aborted) throw error;
          throw new FerryError('Storage', `${partition.topic}-${partition.index}: its unshipped suffix could not be re-shipped: the WAL store took no upload for ${RESHIP_ROOM_WAIT_MS} ms`);
        });
      }
    } finally {
      timer.cancel();
    }
  }

  get #wal(): WalWriter | null {
    return this.#walLifecycle?.writer ?? null;
  }

  /** The WAL writer when the engine ships to object storage; its stats and failure state. */
  get wal(): WalWriter | null {
    return this.#wal;
  }

  /** Whether the last write to the local disk failed (a full disk, an I/O error) and none succeeded since. */
  get storageFailing(): boolean {
    return this.#storage.failing;
  }

  /**
   * While writes fail: tries one (see probeStorage) so that an engine with no write of its own
   * (a cluster broker that handed its partitions off) finds out when the disk takes them again.
   * Returns whether writes still fail. While WAL writes fail, a probe of the WAL store starts too
   * (its outcome shows in walStoreFailingForMs later).
   */
  recheckStorage(): boolean {
    this.#walLifecycle?.health.recheck();
    if (!this.#storage.failing) return false;
    return !probeStorage(this.#disk, this.directory, this.#storage, this.#storage.failedWriteBytes);
  }

  /** [C1] Where a cluster's followers report whether the WAL store answered each of their reads (WalStoreHealth's read track). */
  readonly walReadOutcomes: ReadOutcomes = {
    answered: (startedMs) => this.#walLifecycle?.health.readAnswered(startedMs),
    unanswered: (startedMs) => this.#walLifecycle?.health.readUnanswered(startedMs),
  };

  /** How long writes to the WAL store have failed with none landing, or a follower's reads with none answered, across writer epochs; 0 while they land or without a WAL. */
  walStoreFailingForMs(): number {
    return this.#walLifecycle?.health.failingForMs() ?? 0;
  }

  /**
   * Opens the engine in `options.directory`, recovering every partition's log. With a WAL,
   * earlier epochs of this writer's streams are sealed first (docs/wal-protocol.md [F]).
   */
  static async open(options: FerryOptions): Promise<Ferry> {
    resolveLogConfig(options.log); // reject bad settings before touching the disk
    const retentionCheck = options.retentionCheckIntervalMs;
    if (retentionCheck !== undefined && !(Number.isSafeInteger(retentionCheck) && retentionCheck > 0))
      throw new FerryError('InvalidArgument', `retentionCheckIntervalMs must be a positive integer, got ${retentionCheck}`);
    const disk = options.disk ?? systemDisk;
    makeDirectoriesSync(options.directory, disk); // durably: a power loss must not take the new directory's name
    const unlock = disk.lockSync(options.directory);
    let ferry: Ferry | undefined;
    try {
      if (options.wal !== undefined && options.follow !== undefined) throw new FerryError('InvalidArgument', 'an engine either writes a WAL (leader) or follows one, not both');
      const storedEpochs = options.wal === undefined ? [] : await listEpochs(options.wal.store, options.wal.prefix ?? '', options.wal.writerId);
      ferry = new Ferry(options, unlock, TopicRegistry.open(options.directory, options.random ?? systemRandom, disk), (storedEpochs.at(-1) ?? -1) + 1);
      options.onOpen?.(ferry);
      const shipped = options.wal === undefined ? null : await ferry.#closeEarlierStreams(options.wal, storedEpochs);
      if (options.managedPartitions !== true) {
        for (const topic of ferry.#registry.list()) ferry.#openTopic(topic, shipped);
        if (shipped !== null) await ferry.#rebuildLostTails(options.wal!);
        await ferry.#reshipUnshipped();
      }
      if (options.follow !== undefined) ferry.#startFollowing(options.follow);
      ferry.#scheduleRetention();
      ferry.#tierer?.start();
      ferry.#walCollector?.start();
      return ferry;
    } catch (error) {
      if (ferry !== undefined) await ferry.close();
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
    await this.#deletions.get(topic); // an older incarnation's directories go first
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
    log.reconfigure(this.#topicLogConfig(topic));
    const partitions = this.#partitions.get(topic) ?? [];
    this.#replicationFactors.set(`${topic}/${index}`, replicationFactor);
    const requiredFollowers = this.#requiredFollowers(topic, index);
    const role: PartitionRole = as === 'leader' ? { kind: 'leader', requiredFollowers, isr: this.#inSyncReplicas(topic, index) } : { kind: 'follower' };
    // A partition let go of ([C6], [C7]) acknowledges nothing more, whatever its waiters' durability.
    const gate = () => {
      this.#gate(topic, topicId);
      if (this.#partitions.get(topic)?.[index] !== partition) throw new FerryError('NotLeader', `${topic}-${index} is no longer led here`);
    };
    const partition: Partition = new Partition(topic, topicId, index, log, as === 'leader' ? this.#wal : null, role, log.logEndOffset, log.logEndOffset, { leaderEpoch, gate });
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

  /** The cluster decides who follows what (replica sets, leases); without it, the attached replicas follow everything. */
  useReplicaMembership(membership: ReplicaMembership): void {
    this.#membership = membership;
  }

  /** The replica sets or the brokers' leases changed (a cluster scan): leader partitions re-check their in-sync sets. */
  replicasChanged(): void {
    for (const partition of [...this.#partitions.values()].flat()) if (partition?.role.kind === 'leader') partition.replicasChanged();
  }

  /**
   * Managed mode: every act as a partition's leader passes `gate`, which throws while this engine
   * may not act as one (its cluster lease may have lapsed, [C1], L5): acknowledgements (new appends
   * and acks=all waiters) and the reads a leader serves (fetch, fetchWithTier, offsetForWithTier).
   */
  gateLeadership(gate: EngineLeadershipGate): void {
    this.#gate = gate;
  }

  /**
   * Managed mode, after the WAL writer was fenced or failed ([C7]): fences the old writer (its
   * waiters are rejected, never resolved), releases every partition this engine leads (they
   * appended through it) and starts a writer in a new epoch. Followed partitions stay. Resolves
   * with the new stream; the caller re-adopts what it still leads through [C3]-[C5].
   */
  async startNewWalEpoch(): Promise<StreamId> {
    this.#checkOpen();
    const lifecycle = this.#walLifecycle;
    if (lifecycle === null || this.#options.managedPartitions !== true) throw new FerryError('InvalidArgument', 'only a managed engine with a WAL starts a new writer epoch while it runs');
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
    return this.#partition(topic, index).leaderEpoch;
  }

  /**
   * KIP-320's fencing of a request's current_leader_epoch against the partition's: -1 passes,
   * older throws FencedLeaderEpoch, newer UnknownLeaderEpoch.
   */
  checkLeaderEpoch(topic: string, index: number, currentLeaderEpoch: number): void {
    this.#partition(topic, index).checkLeaderEpoch(currentLeaderEpoch);
  }

  /**
   * OffsetForLeaderEpoch from the log's leader-epoch cache: the largest epoch <= `epoch` and where
   * it ended (the start of the next larger epoch; the log end offset for the current epoch);
   * -1 and -1 for an epoch newer than any, or -1.
   */
  endOffsetForLeaderEpoch(topic: string, index: number, epoch: number): EpochEnd {
    return this.#partition(topic, index).endOffsetForLeaderEpoch(epoch);
  }

  /** Stops serving a partition (managed mode, [C6]): another broker leads it now. */
  async releasePartition(topic: string, index: number): Promise<void> {
    const partitions = this.#partitions.get(topic);
    const partition = partitions?.[index];
    if (partition === undefined) return;
    delete partitions![index];
    this.#replicationFactors.delete(`${topic}/${index}`);
    partition.abandon(new FerryError('NotLeader', `${topic}-${index} is no longer led here`));
    await partition.log.close();
  }

  /** The end of the partition's local log: past the high watermark while records wait to be committed. */
  logEndOffset(topic: string, index: number): number {
    return this.#partition(topic, index).log.logEndOffset;
  }

  /** Whether this engine serves `topic`-`index` (managed mode: adopted and not released). */
  serves(topic: string, index: number): boolean {
    return this.#partitions.get(topic)?.[index] !== undefined;
  }

  /** Creates a topic; TopicAlreadyExists if it exists (or is still being deleted), InvalidArgument for a bad name or count. */
  createTopic(name: string, options: CreateTopicOptions = {}): TopicDescription {
    this.#checkOpen();
    validateTopicName(name);
    if (this.#deletions.has(name)) throw new FerryError('TopicAlreadyExists', `topic ${name} is being deleted`);
    const partitions = options.partitions ?? this.#options.defaultPartitions ?? 1;
    if (!Number.isSafeInteger(partitions) || partitions < 1 || partitions > PARTITIONS_PER_TOPIC_MAX) {
      throw new FerryError('InvalidArgument', `partitions must be an integer in [1, ${PARTITIONS_PER_TOPIC_MAX}], got ${partitions}`);
    }
    const config = options.config ?? {};
    resolveLogConfig({ ...this.#options.log, ...config });
    const configs = parseTopicConfigs(Object.entries(options.configs ?? {}));
    this.#checkTopicConfigs(config, configs);
    const topic = this.#registry.add({ name, partitions, config, ...(Object.keys(configs).length === 0 ? {} : { configs }) });
    try {
      // A new incarnation: whatever lies on disk under its name (a delete that crashed midway) is not of it.
      for (let index = 0; index < partitions; index++) this.#disk.rmSync(join(this.directory, `${name}-${index}`), { recursive: true, force: true });
      this.#openTopic(topic); // every partition, or the topic is not registered at all
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
    const existing = this.#deletions.has(name) ? undefined : this.#registry.get(name);
    return existing ?? this.createTopic(name, options);
  }

  /** Every topic of this engine, as its registry holds it. */
  topics(): TopicDescription[] {
    return this.#registry.list();
  }

  /** The Kafka configs set on a topic (managed mode: as the cluster's record has them); UnknownTopicOrPartition if it is not here. */
  topicConfigs(name: string): TopicConfigs {
    const managed = this.#clusterConfigs.get(name);
    if (managed !== undefined) return managed;
    const topic = this.#registry.get(name);
    if (topic === undefined) throw unknownTopic(name);
    return topic.configs ?? {};
  }

  /**
   * IncrementalAlterConfigs on a topic of this (unmanaged) engine: `changes` applied in order and
   * checked whole first (a bad one changes nothing, InvalidConfig); unless `validateOnly`, stored
   * durably and taken at once by every open partition of the topic. Returns the topic's configs
   * after. A cluster broker alters the topic record instead (ClusterNode.alterTopicConfig).
   */
  alterTopicConfig(name: string, alteration: ConfigAlteration, validateOnly = false): TopicConfigs {
    this.#checkOpen();
    if (this.#options.managedPartitions === true) throw new FerryError('InvalidArgument', `topic ${name} is the cluster's: alter it through its topic record`);
    const topic = this.#registry.get(name);
    if (topic === undefined || this.#deletions.has(name)) throw unknownTopic(name);
    const configs = applyConfigAlteration(topic.configs ?? {}, alteration);
    this.#checkTopicConfigs(topic.config, configs, topic.configs ?? {});
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
    const unchanged = sameConfigs(this.#clusterConfigs.get(name) ?? {}, parsed);
    this.#clusterConfigs.set(name, parsed);
    if (!unchanged) this.#reconfigureOpen(name);
    const registered = this.#registry.get(name);
    // The registry is written only for a change: a scan hands every topic's configs over once at start.
    if (registered !== undefined && !sameConfigs(registered.configs ?? {}, parsed)) this.#registry.reconfigure(name, parsed);
  }

  /** The broker's own topic defaults, by Kafka topic config name, where they differ from the catalog's (DescribeConfigs' STATIC_BROKER_CONFIG). */
  brokerTopicDefaults(): TopicConfigs {
    const log = resolveLogConfig(this.#options.log);
    const defaults: Record<string, string> = {};
    for (const definition of TOPIC_CONFIGS.values()) {
      const value = definition.name === 'min.insync.replicas' ? String(this.#options.minInsyncReplicas ?? 1) : configValueOfLogSetting(definition.name, log);
      if (value !== null && value !== definition.defaultValue) defaults[definition.name] = value;
    }
    return defaults;
  }

  /** DescribeConfigs of a topic here: every known config with its value, source and synonyms (src/log/topic-config-describe.ts). */
  describeTopicConfigs(name: string): TopicConfigEntry[] {
    const topic = this.#registry.get(name);
    const configs = this.topicConfigs(name);
    // The embedded API's LogConfig overrides count as set on the topic too.
    const own: Record<string, string> = {};
    const legacy = resolveLogConfig({ ...this.#options.log, ...topic?.config });
    for (const field of Object.keys(topic?.config ?? {})) {
      const kafkaName = kafkaNameOfLogField(field);
      if (kafkaName !== null) own[kafkaName] = configValueOfLogSetting(kafkaName, legacy)!;
    }
    return describeTopicConfigs({ ...own, ...configs }, this.brokerTopicDefaults());
  }

  /** The log settings of `topic`'s partitions: the engine's, the topic's own overrides, then its Kafka configs. */
  #topicLogConfig(name: string): Partial<LogConfig> {
    const managed = this.#clusterConfigs.get(name);
    const topic = this.#registry.get(name);
    return { ...this.#options.log, ...topic?.config, ...topicSettingsOf(managed ?? topic?.configs ?? {}).log };
  }

  /** acks=all's followers: min.insync.replicas (the topic's, else the engine's) less the leader, capped by the replicas a cluster gave the partition. */
  #requiredFollowers(name: string, index: number): number {
    const configs = this.#clusterConfigs.get(name) ?? this.#registry.get(name)?.configs ?? {};
    const minInsync = topicSettingsOf(configs).minInsyncReplicas ?? this.#options.minInsyncReplicas ?? 1;
    const replicas = this.#replicationFactors.get(`${name}/${index}`) ?? Infinity;
    return Math.min(minInsync, replicas) - 1;
  }

  /**
   * Kafka configs (each already parsed) checked as a whole over this engine's defaults: InvalidConfig
   * when they clash (local.retention.* above retention.*), or, given the configs `before` an
   * alteration, when they change what may not change (remote.storage.enable turned off).
   */
  checkTopicConfigs(configs: TopicConfigs, before?: TopicConfigs): void {
    this.#checkTopicConfigs({}, configs, before);
  }

  /** Configs that are each valid may still clash (local.retention.* above retention.*): InvalidConfig then. */
  #checkTopicConfigs(config: Partial<LogConfig>, configs: TopicConfigs, before?: TopicConfigs): void {
    try {
      const settingsOf = (kafkaConfigs: TopicConfigs) => ({ ...this.#options.log, ...config, ...topicSettingsOf(kafkaConfigs).log });
      const settings = settingsOf(configs);
      checkTopicSettingsTogether({ ...DEFAULT_LOG_CONFIG, ...settings }); // Kafka's words first
      // Without a tier nothing was ever copied: remote.storage.enable may be turned off freely.
      if (before !== undefined && this.#options.tier !== undefined) checkTopicSettingsChange({ ...DEFAULT_LOG_CONFIG, ...settingsOf(before) }, { ...DEFAULT_LOG_CONFIG, ...settings });
      resolveLogConfig(settings);
    } catch (error) {
      if (error instanceof FerryError && error.kind === 'InvalidArgument') throw new FerryError('InvalidConfig', `Invalid topic configs: ${error.message}`);
      throw error;
    }
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
    if (this.#options.managedPartitions === true || this.#options.follow !== undefined)
      throw new FerryError('InvalidArgument', `${name}: partitions are added to a managed engine's or a read replica's topics by what manages it`);
    const topic = this.#registry.get(name);
    if (topic === undefined || this.#deletions.has(name)) throw unknownTopic(name);
    checkPartitionIncrease(name, topic.partitions, newTotalCount);
    const grown = { ...topic, partitions: newTotalCount };
    if (validateOnly) return grown;
    // A new partition's directory holds nothing of this topic yet: whatever lies there (a grow that crashed before its registry write) goes.
    for (let index = topic.partitions; index < newTotalCount; index++) this.#disk.rmSync(join(this.directory, `${name}-${index}`), { recursive: true, force: true });
    try {
      this.#openTopic(grown); // opens the new partitions only
      return this.#registry.grow(name, newTotalCount);
    } catch (error) {
      this.#abandonPartitionsFrom(name, topic.partitions); // all of them or none: a retry adds them again
      throw error;
    }
  }

  /** Every open partition of `name` takes its topic's settings now. */
  #reconfigureOpen(name: string): void {
    const config = this.#topicLogConfig(name);
    this.#partitions.get(name)?.forEach((partition, index) => {
      partition.log.reconfigure(config);
      if (partition.role.kind === 'leader' && !regressed('config-min-insync-stale')) partition.requireFollowers(this.#requiredFollowers(name, index));
    });
  }

  /** Undoes a createPartitions that failed: closes and removes the partitions from `first` on. */
  #abandonPartitionsFrom(name: string, first: number): void {
    const partitions = this.#partitions.get(name);
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
    const opened = this.#partitions.get(name) ?? [];
    this.#partitions.delete(name);
    for (const partition of opened) {
      void partition.log
        .close()
        .catch(() => {})
        .finally(() => this.#disk.rmSync(partition.log.directory, { recursive: true, force: true }));
    }
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

  /**
   * Reads whole batches from `offset` up to the high watermark. `maxBytes` 0 reads nothing and
   * only answers the partition's state (a fetch whose response is already full).
   */
  fetch(topic: string, partition: number, offset: number, options: FetchOptions = {}): FetchResult {
    this.#checkOpen();
    const target = this.#partition(topic, partition);
    target.checkServesAsLeader();
    return this.#readLocal(target, topic, partition, offset, options);
  }

  /**
   * fetch() without the leadership gate: what this engine's local log holds from `offset` below its
   * high watermark, whatever its lease says. For audits of what a broker stores (the simulation's
   * final logs), never for answers to clients, which the gate guards (docs/cluster-protocol.md L5).
   */
  readStored(topic: string, partition: number, offset: number, options: FetchOptions = {}): FetchResult {
    this.#checkOpen();
    return this.#readLocal(this.#partition(topic, partition), topic, partition, offset, options);
  }

  #readLocal(target: Partition, topic: string, partition: number, offset: number, options: FetchOptions): FetchResult {
    target.checkReadable(offset);
    checkNotDeleted(target, offset);
    const highWatermark = target.highWatermark;
    const maxBytes = options.maxBytes ?? FETCH_BYTES_DEFAULT;
    if (maxBytes === 0) {
      if (offset < target.log.logStartOffset) throw new FerryError('OffsetOutOfRange', `offset ${offset} is before the log start ${target.log.logStartOffset} of ${topic}-${partition}`);
      return { batches: [], highWatermark, logStartOffset: this.#logStartOffset(target) };
    }
    const { batches } = target.log.read(offset, maxBytes);
    // Regression: a read from the last offset below the high watermark was taken for one at it, whose batches need no cut.
    if (regressed('fetch-past-high-watermark') && offset + 1 === highWatermark) return { batches, highWatermark, logStartOffset: this.#logStartOffset(target) };
    return { batches: batches.filter((batch) => batch.baseOffset < highWatermark), highWatermark, logStartOffset: this.#logStartOffset(target) };
  }

  /**
   * LS (docs/tier-protocol.md): the tier's start once it holds copied segments, else the local
   * log's. A local read answers at once, so the tier's start is the one last read (refreshed in
   * the background); until a first read lands, the local start.
   */
  #logStartOffset(target: Partition): number {
    const local = target.log.logStartOffset;
    const tierStart = this.#remote?.peekLogStartOffset(target.topicId, target.index) ?? null;
    return Math.max(target.log.deletedBeforeOffset, tierStart === null ? local : Math.min(tierStart, local)); // DeleteRecords' start hides what either still holds
  }

  /** Yields records from `fromOffset` on, waiting for new ones at the end, until `signal` aborts. */
  async *consume(topic: string, options: ConsumeOptions = {}): AsyncGenerator<ConsumedRecord> {
    const partitionIndex = options.partition ?? 0;
    const target = this.#partition(topic, partitionIndex);
    let offset = options.fromOffset ?? localStartFor(target);
    while (!this.#closed && !options.signal?.aborted) {
      if (offset >= target.highWatermark) {
        await target.waitForData(offset, options.signal);
        continue;
      }
      const { batches } = await this.fetchWithTier(topic, partitionIndex, offset, { maxBytes: options.maxBytes ?? FETCH_BYTES_DEFAULT });
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
    return this.#partition(topic, partition).waitForData(offset, signal);
  }

  /**
   * Kafka's ListOffsets: -2 the earliest offset, -1 the latest (high watermark), else the first at
   * or after a time; with the leader epoch of the answer, as Kafka gives it: the current one for
   * the latest, else the one that wrote the offset.
   */
  /**
   * Kafka's log start offset of a partition served here, as its reads see it (LS): DeleteRecords'
   * start, or the tier's or the local log's where those start later. What a follower reports, for
   * its leader's DeleteRecords to wait on [R6].
   */
  logStartOffset(topic: string, partition: number): number {
    return this.#logStartOffset(this.#partition(topic, partition));
  }

  /**
   * The log start DeleteRecords moved a partition served here to (0 before any): what a leader's
   * answers to its followers' reports carry [R6]. Not the start retention moved: a follower's own
   * log and the tier keep what retention took from the leader's disk, as a rebuild would.
   */
  deletedBeforeOffset(topic: string, partition: number): number {
    return this.#partition(topic, partition).log.deletedBeforeOffset;
  }

  /** The first offset the local log holds (below it, only the tier may: fetchWithTier). */
  localLogStartOffset(topic: string, partition: number): number {
    return this.#partition(topic, partition).log.logStartOffset;
  }

  /**
   * fetch(), and below the local log start from the tier (docs/tier-protocol.md [D2]): the whole
   * batches from the one holding `offset`, up to the end of its tiered segment, below the high
   * watermark. OffsetOutOfRange when neither the local log nor the tier holds `offset`.
   */
  async fetchWithTier(topic: string, partition: number, offset: number, options: FetchOptions = {}): Promise<FetchResult> {
    this.#checkOpen();
    const target = this.#partition(topic, partition);
    if (this.#remote === null || offset >= target.log.logStartOffset) return this.fetch(topic, partition, offset, options);
    target.checkServesAsLeader();
    checkNotDeleted(target, offset); // the tier still holds what DeleteRecords deleted until its retention passes it
    const { batches, logStartOffset } = await this.#remote.read(target.topicId, partition, offset, options.maxBytes ?? FETCH_BYTES_DEFAULT);
    this.#checkStillServed(topic, partition, target);
    const highWatermark = target.highWatermark;
    return { batches: batches.filter((batch) => batch.baseOffset < highWatermark), highWatermark, logStartOffset: Math.max(logStartOffset, target.log.deletedBeforeOffset) };
  }

  /** offsetFor(), counting the tier [D3]: the earliest offset is the tier's start, and a timestamp below the local log is looked up in the tier. */
  async offsetForWithTier(topic: string, partition: number, timestamp: number): Promise<OffsetLookup> {
    this.#partition(topic, partition).checkServesAsLeader();
    const local = this.offsetFor(topic, partition, timestamp);
    if (this.#remote === null || timestamp === LATEST_TIMESTAMP || timestamp === MAX_TIMESTAMP || timestamp === EARLIEST_LOCAL_TIMESTAMP) return local;
    const target = this.#partition(topic, partition);
    if (timestamp === LATEST_TIERED_TIMESTAMP) {
      const end = await this.#remote.tieredEndOffset(target.topicId, partition);
      this.#checkStillServed(topic, partition, target);
      return end === null ? local : { offset: end - 1, timestamp: -1, leaderEpoch: target.epochAt(end - 1) };
    }
    if (timestamp === EARLIEST_TIMESTAMP) {
      const tierStart = await this.#remote.logStartOffset(target.topicId, partition);
      this.#checkStillServed(topic, partition, target);
      // The tier's start counts only at or above DeleteRecords' (local.offset is never below that).
      const start = tierStart === null ? local.offset : Math.max(target.log.deletedBeforeOffset, Math.min(tierStart, local.offset));
      return start === local.offset ? local : { offset: start, timestamp: -1, leaderEpoch: -1 };
    }
    const tiered = await this.#remote.offsetForTimestamp(target.topicId, partition, timestamp, target.log.deletedBeforeOffset);
    this.#checkStillServed(topic, partition, target);
    return tiered === null ? local : { offset: tiered.offset, timestamp: tiered.timestamp, leaderEpoch: -1 };
  }

  /**
   * After a read of the tier (I/O): the partition may have been deleted and created again
   * meanwhile, and the answer is its old incarnation's (docs/design.md contract 10); a leader's lease may have
   * lapsed meanwhile (L5).
   */
  #checkStillServed(topic: string, partition: number, target: Partition): void {
    if (this.#partitions.get(topic)?.[partition] !== target) throw new FerryError('NotLeader', `${topic}-${partition} changed while its tier was read; ask again`);
    target.checkServesAsLeader();
  }

  /**
   * ListOffsets on the local log: for a timestamp, the first record at or after it; for Kafka's
   * special timestamps (-1 latest, -2 earliest, -3 max timestamp, -4 earliest local, -5 latest
   * tiered), what each names. offsetForWithTier also looks in the tier.
   */
  offsetFor(topic: string, partition: number, timestamp: number): OffsetLookup {
    const target = this.#partition(topic, partition);
    if (timestamp === LATEST_TIMESTAMP) return { offset: target.highWatermark, timestamp: -1, leaderEpoch: target.leaderEpoch };
    const start = localStartFor(target);
    if (timestamp === EARLIEST_TIMESTAMP || timestamp === EARLIEST_LOCAL_TIMESTAMP) return { offset: start, timestamp: -1, leaderEpoch: target.epochAt(start) };
    if (timestamp === LATEST_TIERED_TIMESTAMP) return { offset: -1, timestamp: -1, leaderEpoch: -1 }; // no tier: nothing tiered
    if (timestamp < 0 && timestamp !== MAX_TIMESTAMP) throw new FerryError('InvalidArgument', `timestamp ${timestamp} is not a time nor one of ListOffsets' special values`);
    // As Kafka: a lookup starts at the log start (PartitionLog's floor is DeleteRecords' start too).
    const found = timestamp === MAX_TIMESTAMP ? target.log.maxTimestampRecord() : target.log.offsetForTimestamp(timestamp);
    if (found === null || found.offset >= target.highWatermark) return { offset: -1, timestamp: -1, leaderEpoch: -1 };
    return { offset: found.offset, timestamp: found.timestamp, leaderEpoch: target.epochAt(found.offset) };
  }

  /**
   * DeleteRecords' checks on the leader, before anything changes: the offset the log start is to
   * move to (-1: the high watermark). NotLeader on a follower; OffsetOutOfRange for an offset
   * below -1 or above the high watermark, with Kafka's messages.
   */
  deleteRecordsOffset(topic: string, index: number, beforeOffset: number): number {
    const target = this.#partition(topic, index);
    if (target.role.kind !== 'leader') throw new FerryError('NotLeader', `Leader not local for partition ${topic}-${index}: it is a follower here`);
    return resolveDeleteRecordsOffset(`${topic}-${index}`, beforeOffset, target.highWatermark);
  }

  /**
   * Kafka's DeleteRecords on the leader: the partition's log start moves up to `beforeOffset`
   * (-1: the high watermark; never down), durably (the log's checkpoint: it holds across a
   * restart), and the segments wholly below it are deleted (with a tier, only those tiered
   * already). Reads below it are OffsetOutOfRange from then on, and ListOffsets EARLIEST answers
   * it. Returns the low watermark: the log start after the delete. A cluster's leader first
   * records the new start in the partition's control record (ClusterNode.recordLogStart), so a
   * takeover starts there too.
   */
  deleteRecords(topic: string, index: number, beforeOffset: number): number {
    const offset = this.deleteRecordsOffset(topic, index, beforeOffset);
    const target = this.#partition(topic, index);
    target.log.deleteRecordsBefore(offset, this.#tieredEndForDeletes(target));
    return this.#logStartOffset(target);
  }

  /**
   * DeleteRecords' low watermark as the whole log has it, for its answer: deleteRecords answers
   * from the tier's start as last read, unknown until this leader read the tier record, so a
   * tiering leader answered its local start (issue 12's simulation, seed 29: 251, while reads
   * from the 54 asked for were still served from the tier). Reads the tier's record afresh (one
   * cached from before a copy said nothing was tiered while the local log had let the copied
   * segment go: seed 30209 answered its local start, 269, and 112 was read from the tier after); if
   * that read fails, the start DeleteRecords set, below which nothing is served.
   */
  async deleteRecordsLowWatermark(topic: string, index: number, answered: number): Promise<number> {
    if (this.#remote === null) return answered;
    const target = this.#partition(topic, index);
    let tierStart: number | null;
    try {
      tierStart = await this.#remote.logStartOffset(target.topicId, target.index, true);
    } catch {
      return target.log.deletedBeforeOffset;
    }
    const local = target.log.logStartOffset;
    return Math.max(target.log.deletedBeforeOffset, tierStart === null ? local : Math.min(tierStart, local));
  }

  /**
   * Kafka's DelayedDeleteRecords ([R6] of docs/cluster-protocol.md), after `deleteRecords` moved
   * this leader's log start to `offset`: resolves with the low watermark once every in-sync
   * follower reported a log start at or above `offset`, so no replica a consumer may be sent to
   * (KIP-392) still serves below it; at once without followers. Past `timeoutMs`, OutcomeUnknown
   * (REQUEST_TIMED_OUT): the delete stands here and the followers take it up all the same (their
   * reports' answers and scans), it is only not confirmed. NotLeader when the partition is let go of meanwhile.
   */
  async waitForLowWatermark(topic: string, index: number, offset: number, timeoutMs: number): Promise<number> {
    const target = this.#partition(topic, index);
    if (target.role.kind !== 'leader') throw new FerryError('NotLeader', `Leader not local for partition ${topic}-${index}: it is a follower here`);
    const timedOut = new AbortController();
    const timer = this.#clock.setTimer(Math.max(0, timeoutMs), () =>
      timedOut.abort(
        new FerryError(
          'OutcomeUnknown',
          `${topic}-${index}: not every in-sync replica reported a log start at or above ${offset} within ${timeoutMs} ms; the delete stands and completes as they catch up`,
        ),
      ),
    );
    try {
      await target.waitForFollowerStarts(offset, timedOut.signal);
    } finally {
      timer.cancel();
    }
    return Math.min(this.#logStartOffset(target), target.lowestInSyncFollowerStart() ?? Infinity);
  }

  /**
   * A followed partition learns its leader's log start (a cluster's partition record): it serves
   * nothing below it, as far as its log reaches (the rest once the tail brings it: the caller
   * says it again). No segment is deleted: a promoted follower's log must still reach the tier's end.
   */
  followLogStart(topic: string, index: number, logStartOffset: number): void {
    const partition = this.#partitions.get(topic)?.[index];
    if (partition?.role.kind !== 'follower') return;
    const { log } = partition;
    log.deleteRecordsBefore(Math.min(logStartOffset, log.logEndOffset), log.logStartOffset);
  }

  /** Where local segments may go for a tiering leader: below the tiered end only (0 until the tierer read it); null without a tier. */
  #tieredEndForDeletes(target: Partition): number | null {
    if (this.#tierer === null || !target.log.config.remoteStorageEnable) return null;
    return this.#tierer.localDeletableEndOf(target.topicId, target.index, target.log) ?? target.log.logStartOffset;
  }

  /**
   * Kafka's DescribeProducers of a partition led here: its idempotent producers from the log's
   * producer state. Ferry has no transactions: coordinatorEpoch and currentTxnStartOffset are -1.
   * NotLeader on a follower.
   */
  describeProducers(topic: string, index: number): DescribedProducer[] {
    const target = this.#partition(topic, index);
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

  /** The incarnation of `topic` held here (its registry entry, or its partitions'), null for none. */
  incarnationOf(topic: string): TopicId | null {
    return this.#registry.get(topic)?.id ?? this.#partitions.get(topic)?.find((partition) => partition !== undefined)?.topicId ?? null;
  }

  /** Removes a topic and its partitions' logs; its id is retired, never served again. */
  async deleteTopic(topic: string): Promise<void> {
    this.#checkOpen();
    const partitions = this.#partitions.get(topic) ?? [];
    if (this.#deletions.has(topic) || (!this.#partitions.has(topic) && this.#registry.get(topic) === undefined)) throw unknownTopic(topic);
    // The registry first: an embedded engine's delete whose write fails (a full disk) leaves the topic
    // whole, registered and served. A managed engine lets go whatever its disk says: the cluster deleted
    // the topic already, and the adoption of a later incarnation replaces the registry entry.
    let unregistered: unknown = null;
    const deletedId = this.#registry.get(topic)?.id ?? partitions.find((partition) => partition !== undefined)?.topicId;
    try {
      if (this.#registry.get(topic) !== undefined) this.#registry.remove(topic);
    } catch (error) {
      if (this.#options.managedPartitions !== true) throw error;
      unregistered = error;
    }
    // Only once the delete holds: a failed one leaves the topic registered and served, its tier kept.
    if (deletedId !== undefined) this.#deletedTopicIds.add(deletedId);
    this.#partitions.delete(topic);
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
      if (deletedId !== undefined && this.#options.managedPartitions !== true && this.#options.follow === undefined) await this.#recordDeletion(topic, deletedId);
      if (failure !== null) throw failure;
    })();
    this.#deletions.set(
      topic,
      deletion.catch(() => {}),
    );
    try {
      await deletion;
    } finally {
      this.#deletions.delete(topic);
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

  /** Applies retention now (it also runs every five minutes); returns the segments deleted. */
  enforceRetention(): number {
    this.#checkOpen();
    let deleted = 0;
    for (const partition of [...this.#partitions.values()].flat()) {
      const tieredEnd = this.#localRetentionBound(partition); // flat() skips managed mode's holes
      const fromOffset = partition.log.logStartOffset;
      const segments = partition.log.enforceRetention(tieredEnd);
      deleted += segments;
      if (segments > 0) {
        const { logStartOffset: toOffset, logEndOffset } = partition.log;
        this.#options.onRetention?.({ topic: partition.topic, partition: partition.index, directory: partition.log.directory, fromOffset, toOffset, logEndOffset, tieredEnd });
      }
    }
    return deleted;
  }

  /**
   * [D1] Where local retention may delete below in a tiered partition, null without a tier (a topic
   * with remote.storage.enable off keeps retention.* alone). Until the tier record is read nothing
   * counts as tiered: a segment goes only once it is (as Kafka with remote storage). A leader that
   * tiers goes by the record its tierer holds; a follower by the record as last read (Kafka's
   * followers read the remote metadata too): its log is what a promotion keeps [K3], so it must
   * still reach the tier's end.
   */
  #localRetentionBound(partition: Partition): number | null {
    if (!partition.log.config.remoteStorageEnable) return null;
    if (partition.role.kind === 'leader') return this.#tierer === null ? null : (this.#tierer.localDeletableEndOf(partition.topicId, partition.index, partition.log) ?? partition.log.logStartOffset);
    if (this.#remote === null) return null;
    return this.#remote.peekTieredEnd(partition.topicId, partition.index) ?? partition.log.logStartOffset;
  }

  /** The follower applying WAL objects, when this engine follows a leader. */
  get follower(): Follower | null {
    return this.#follower;
  }

  /**
   * Links a follower engine in this process to this leader (the broker uses the network): the
   * follower is hinted whenever a WAL object becomes durable, reports what it applied (acks=all
   * and the high watermark count it), and learns the high watermark.
   */
  attachReplica(replica: Ferry, replicaId: string): void {
    this.#checkOpen();
    if (this.#wal === null) throw new FerryError('InvalidArgument', 'only an engine that writes a WAL can have replicas');
    // The one place an engine reads another's private state: it asks for the replica's side of the link.
    const linked = replica.#linkedReplica;
    if (!linked.follows) throw new FerryError('InvalidArgument', 'the replica must be opened with `follow`');
    this.#replicaLinks.attach(linked, replicaId);
  }

  /** Flushes and closes every log and releases the directory. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopGauges();
    this.#checkpointer?.stop();
    this.#retentionTimer?.cancel();
    this.#tierer?.stop();
    this.#walCollector?.stop();
    await this.#follower?.stop();
    const all = [...this.#partitions.values()].flat();
    await this.#walLifecycle?.flushForClose();
    this.#checkpointer?.checkpoint();
    for (const partition of all) partition.abandon(new FerryError('Closed', `the engine at ${this.directory} is closed`));
    await Promise.all([...all.map((partition) => partition.log.close()), ...this.#lostTails.splice(0).map(({ log }) => log.close())]);
    this.#unlock();
  }

  /** At open, after a power loss: see rebuildLostTails. */
  async #rebuildLostTails(options: WalOptions): Promise<void> {
    const { prefix, stream } = this.#wal!.config;
    const tierStartOf = (topicId: TopicId, partition: number) => this.tierStartOf(topicId, partition);
    const deps = { store: options.store, prefix, stream, clock: this.#clock, random: this.#options.random ?? systemRandom, report: this.#logger, tierStartOf };
    await rebuildLostTails(this.#lostTails.splice(0), deps, ({ topic, index, log, durableEnd }) => {
      this.#partitions.get(topic.name)![index] = this.#leaderOrFollower(topic, index, log, durableEnd);
    });
  }

  /** `shipped`: with a WAL, each partition's end in the earlier streams (absent: nothing shipped). */
  #openTopic(topic: TopicDescription, shipped: ReadonlyMap<string, number> | null = null): void {
    const partitions = this.#partitions.get(topic.name) ?? [];
    const config = this.#topicLogConfig(topic.name);
    for (let index = partitions.length; index < topic.partitions; index++) {
      const directory = join(this.directory, `${topic.name}-${index}`);
      preparePartitionDirectory(directory, topic.id, this.#disk);
      const log = PartitionLog.open(directory, { config, clock: this.#clock, storage: this.#storage, disk: this.#disk });
      logRecovery(this.#logger, topic.name, index, log);
      const durableEnd = this.#wal === null ? log.logEndOffset : (shipped?.get(partitionKey(topic.id, index)) ?? 0);
      if (durableEnd > log.logEndOffset)
        this.#lostTails.push({ topic, index, log, durableEnd }); // its place stays empty until #rebuildLostTails
      else partitions[index] = this.#leaderOrFollower(topic, index, log, durableEnd);
    }
    this.#partitions.set(topic.name, partitions);
  }

  /** The Partition of a log this engine opened itself (not managed): led here, or followed when the engine follows. */
  #leaderOrFollower(topic: TopicDescription, index: number, log: PartitionLog, durableEnd: number): Partition {
    const role: PartitionRole =
      this.#options.follow !== undefined ? { kind: 'follower' } : { kind: 'leader', requiredFollowers: this.#requiredFollowers(topic.name, index), isr: this.#inSyncReplicas(topic.name, index) };
    return new Partition(topic.name, topic.id, index, log, this.#wal, role, durableEnd);
  }

  /**
   * A leader starting a new WAL epoch: seals the earlier ones (docs/wal-protocol.md [F]) and
   * learns what they hold, from the shipped checkpoint plus the objects written after it.
   */
  async #closeEarlierStreams(options: WalOptions, storedEpochs: readonly number[]): Promise<Map<string, number>> {
    await this.#walLifecycle!.sealEarlierEpochs(storedEpochs);
    const { prefix, stream } = this.#wal!.config;
    // Managed partitions are rebuilt from their chains when adopted: what the old streams hold
    // per partition is not needed, so neither the footer reads nor the periodic checkpoint are.
    if (this.#options.managedPartitions === true) return new Map();
    const ends = await earlierStreamEnds(options.store, prefix, stream, this.directory, this.#clock, this.#disk, this.#options.random ?? systemRandom);
    this.#checkpointer = new ShippedCheckpointer(this.directory, ends, () => this.#wal, { clock: this.#clock, storage: this.#storage, disk: this.#disk, metrics: this.#options.metrics });
    this.#checkpointer.start();
    return ends;
  }

  #startFollowing(options: FollowOptions): void {
    const partitions: FollowedPartitions = {
      partitionFor: (topic, index, topicId) => this.#followerPartition(topic, index, topicId),
      served: (topic, index) => this.#partitions.get(topic)![index]!,
      reportApplied: (topic, topicId, index, logEndOffset) => {
        const link = this.#leaderLink;
        if (link !== null && !link.leader.closed) link.leader.replicaApplied(link.replicaId, topic, topicId, index, logEndOffset);
      },
      tierStartOf: (topicId, index) => this.tierStartOf(topicId, index),
    };
    this.#follower = startEmbeddedFollower(options, partitions, { clock: this.#clock, directory: this.directory, disk: this.#disk, metrics: this.#options.metrics });
  }

  /**
   * A follower's partition of topic incarnation `topicId`, created when the WAL first names it
   * (topic or partition count grows). A new id for a known name means the leader deleted the
   * topic and created it again: the old incarnation is dropped here too. Null for a deleted one.
   */
  async #followerPartition(topic: string, index: number, topicId: TopicId): Promise<Partition | null> {
    const known = this.#registry.get(topic);
    if (known !== undefined && known.id !== topicId) {
      if (this.#registry.isRetired(topicId)) return null;
      await this.deleteTopic(topic);
    }
    const existing = this.#partitions.get(topic)?.[index];
    if (existing !== undefined) return existing;
    const description = this.#registry.get(topic) === undefined ? this.#registry.add({ name: topic, partitions: index + 1, config: {} }, topicId) : this.#registry.grow(topic, index + 1);
    this.#openTopic(description);
    const created = this.#partitions.get(topic)![index]!;
    // Linked to a leader: serve nothing until it says what is committed.
    if (this.#leaderLink !== null) created.noteLeaderHighWatermark(this.#leaderLink.leader.highWatermarkOf(topic, topicId, index) ?? 0);
    return created;
  }

  /** The partition when it is of incarnation `topicId`: progress of another never counts for it. */
  #partitionOf(topic: string, topicId: TopicId, index: number): Partition | undefined {
    const partition = this.#partitions.get(topic)?.[index];
    return partition?.topicId === topicId ? partition : undefined;
  }

  /** This engine's partitions as the replicas linked to it see them (leader side of attachReplica). */
  #asLeaderPartitions(): LeaderPartitions {
    const ferry = this;
    return {
      get closed() {
        return ferry.#closed;
      },
      highWatermarks: () => this.#partitionEnds((partition) => partition.highWatermark),
      highWatermarkOf: (topic, topicId, index) => this.#partitionOf(topic, topicId, index)?.highWatermark,
      noteFollowerApplied: (topic, topicId, index, replicaId, logEndOffset) => void this.#partitionOf(topic, topicId, index)?.noteFollowerApplied(replicaId, logEndOffset),
    };
  }

  /** This engine as the leader it is linked to sees it (replica side of attachReplica). */
  #asLinkedReplica(): LinkedReplica {
    const ferry = this;
    return {
      get closed() {
        return ferry.#closed;
      },
      get follows() {
        return ferry.#follower !== null;
      },
      linkTo: (leader, replicaId) => void (this.#leaderLink = { leader, replicaId }),
      hint: () => this.#follower?.hint(),
      noteLeaderHighWatermark: (topic, topicId, index, highWatermark) => this.#partitionOf(topic, topicId, index)?.noteLeaderHighWatermark(highWatermark),
      logEnds: () => this.#partitionEnds((partition) => partition.log.logEndOffset),
    };
  }

  /** Each served partition (managed mode's holes skipped) with an offset of it. */
  #partitionEnds(offsetOf: (partition: Partition) => number): PartitionEnd[] {
    const ends: PartitionEnd[] = [];
    for (const [topic, partitions] of this.#partitions) {
      partitions.forEach((partition, index) => ends.push({ topic, topicId: partition.topicId, index, offset: offsetOf(partition) }));
    }
    return ends;
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
    const followers = () => this.#membership?.followersOf(topic, index) ?? this.#replicaLinks.replicaIds;
    return new InSyncReplicas(this.#clock, { followers }, this.#options.replicaLagTimeMaxMs ?? REPLICA_LAG_TIME_MAX_MS);
  }

  #partitionsForProduce(topic: string): Partition[] {
    const existing = this.#partitions.get(topic);
    if (existing !== undefined) return existing;
    if (this.#options.autoCreateTopics !== true || this.#deletions.has(topic)) throw unknownTopic(topic);
    this.createTopic(topic);
    return this.#partitions.get(topic)!;
  }

  #partition(topic: string, index: number): Partition {
    this.#checkOpen();
    const partitions = this.#partitions.get(topic);
    if (partitions === undefined) throw unknownTopic(topic);
    const partition = partitions[index];
    if (partition === undefined) throw new FerryError('UnknownTopicOrPartition', `partition ${index} does not exist: ${topic} has ${partitions.length}`);
    return partition;
  }

  #scheduleRetention(): void {
    this.#retentionTimer = this.#clock.setTimer(
      this.#options.retentionCheckIntervalMs ?? RETENTION_CHECK_INTERVAL_MS,
      () => {
        if (this.#closed) return;
        try {
          this.enforceRetention();
        } catch (error) {
          // An OS failure (EMFILE) postpones retention to the next round; it must not end the process.
          this.#options.metrics?.counter('ferry_engine_retention_failures_total', 'Retention rounds that failed (retried at the next interval)').add();
          if (!isOsError(error)) throw error;
        }
        this.#scheduleRetention();
      },
      true,
    );
  }

  #checkOpen(): void {
    if (this.#closed) throw new FerryError('Closed', `the engine at ${this.directory} is closed`);
  }
}

function sameConfigs(a: TopicConfigs, b: TopicConfigs): boolean {
  const names = Object.keys(a);
  return names.length === Object.keys(b).length && names.every((name) => a[name] === b[name]);
}

/** The first offset clients may read from the local log: its first segment's, or above it where DeleteRecords moved the log start. */
function localStartFor(target: Partition): number {
  return Math.max(target.log.logStartOffset, target.log.deletedBeforeOffset);
}

/** Kafka's DeleteRecords offset checks (ReplicaManager, UnifiedLog.maybeIncrementLogStartOffset): -1 is the high watermark. */
function resolveDeleteRecordsOffset(partition: string, beforeOffset: number, highWatermark: number): number {
  const offset = beforeOffset === DELETE_TO_HIGH_WATERMARK ? highWatermark : beforeOffset;
  if (!Number.isSafeInteger(offset) || offset < 0) throw new FerryError('OffsetOutOfRange', `The offset ${offset} for partition ${partition} is not valid`);
  if (offset > highWatermark)
    throw new FerryError('OffsetOutOfRange', `Cannot increment the log start offset to ${offset} of partition ${partition} since it is larger than the high watermark ${highWatermark}`);
  return offset;
}

/** Kafka's answer to a read below the log start DeleteRecords set, wherever those records still lie. */
function checkNotDeleted(target: Partition, offset: number): void {
  const start = target.log.deletedBeforeOffset;
  if (offset < start) throw new FerryError('OffsetOutOfRange', `offset ${offset} is before the log start ${start} of ${target.topic}-${target.index}: its records were deleted`);
}

function unknownTopic(topic: string): FerryError {
  return new FerryError('UnknownTopicOrPartition', `unknown topic ${topic}`);
}
