import type { ReadOutcomes } from '../wal/store-health.ts';
import { definedOnly } from '../util/defined-only.ts';
import { TierRecords, tieredEnd } from '../tier/tier-record.ts';
import { Tierer, type TierSource } from '../tier/tierer.ts';
import { RemoteReader } from '../tier/remote-reader.ts';
import { reportProducerStateLost, type TierStart, tierStartOf } from '../tier/tier-start.ts';
import { DeletedIncarnations } from '../tier/deleted-incarnations.ts';
import { regressed } from '../util/regressions.ts';
import { DEFAULT_LOG_CONFIG } from '../log/config.ts';
import { StorageHealth } from '../log/storage-health.ts';
import { probeStorage } from '../log/storage-probe.ts';
import type { Logger } from '../observability/logger.ts';
import type { Clock } from '../util/clock.ts';
import type { Disk } from '../util/disk.ts';
import { systemRandom } from '../util/random.ts';
import { WalCollector } from '../wal-gc/collector.ts';
import type { CoverageSources } from '../wal-gc/coverage.ts';
import { OrphanWriters } from '../wal-gc/orphan-writers.ts';
import type { WalWriter } from '../wal/writer.ts';
import type { ClusterPolicy } from './cluster-policy.ts';
import type { EngineOptions, TierOptions, TierRange } from './engine-options.ts';
import type { PartitionTable } from './partition-table.ts';
import type { TopicId } from '../format/topic-id.ts';
import type { TopicRegistry } from './topic-registry.ts';
import type { TopicSettings } from './topic-settings.ts';
import { type WalOptions, WalWriterLifecycle } from './wal-writer-lifecycle.ts';

/** What an engine's services read of it: its options, where it lives, its partitions and topics. */
export interface NodeServicesDeps {
  readonly options: EngineOptions;
  readonly directory: string;
  readonly clock: Clock;
  readonly disk: Disk;
  readonly logger: Logger;
  /** The first WAL writer epoch this open may take (above every stored one). */
  readonly epochFloor: number;
  /** Called as each WAL object becomes durable (the attached replicas are hinted). */
  readonly durable: () => void;
  readonly table: PartitionTable;
  readonly settings: TopicSettings;
  readonly registry: TopicRegistry;
  readonly cluster: ClusterPolicy | null;
  /** The incarnations this engine deleted (WAL GC passes again after each). */
  readonly deletedTopicIds: ReadonlySet<TopicId>;
}

/**
 * One node's services beside its partitions: the local disk's health, the WAL writer (and the
 * next after a fence), and with a tier the tier records, the tierer, the remote reader and WAL GC
 * [G]. Made at the engine's open, in this order, and stopped at its close.
 */
export class NodeServices {
  readonly #directory: string;
  readonly #options: EngineOptions;
  readonly #clock: Clock;
  readonly #disk: Disk;
  readonly #logger: Logger;
  readonly #partitions: PartitionTable;
  readonly #settings: TopicSettings;
  readonly #registry: TopicRegistry;
  readonly #cluster: ClusterPolicy | null;
  readonly #deletedTopicIds: ReadonlySet<TopicId>;
  /** Every partition log's failed and succeeding writes: counted, and logged once per failure spell. */
  readonly storage: StorageHealth;
  /** With a WAL: the writer of the current epoch, and the next after a fence. */
  readonly walLifecycle: WalWriterLifecycle | null;
  /** With a tier store: the tier records the tierer, the reads and rebuilds [K2] share. */
  readonly tierRecords: TierRecords | null;
  /** With a tier, alone: the deletion records of the incarnations this engine deletes (DI1), beside its tier records. */
  readonly deletionRecords: DeletedIncarnations | null;
  /** With a tier store: copies what this engine leads to it. */
  readonly tierer: Tierer | null;
  /** With a tier store: serves offsets below the local log start from it [D2]. */
  readonly remote: RemoteReader | null;
  /** With a WAL and a tier: deletes this writer's WAL objects once the tier covers them [G]. */
  readonly walCollector: WalCollector | null;

  constructor(deps: NodeServicesDeps) {
    const { options } = deps;
    this.#directory = deps.directory;
    this.#options = options;
    this.#clock = deps.clock;
    this.#disk = deps.disk;
    this.#logger = deps.logger;
    this.#partitions = deps.table;
    this.#settings = deps.settings;
    this.#registry = deps.registry;
    this.#cluster = deps.cluster;
    this.#deletedTopicIds = deps.deletedTopicIds;
    this.storage = new StorageHealth(options.metrics, this.#logger);
    const walDeps = { clock: this.#clock, disk: this.#disk, metrics: options.metrics, report: this.#logger, durable: deps.durable };
    this.walLifecycle = options.wal === undefined ? null : new WalWriterLifecycle(this.#directory, options.wal, deps.epochFloor, walDeps);
    this.tierRecords = options.tier === undefined ? null : new TierRecords(options.tier.control);
    this.deletionRecords = options.tier === undefined ? null : new DeletedIncarnations(options.tier.control);
    this.tierer = options.tier === undefined ? null : this.#newTierer(options.tier, this.tierRecords!);
    this.remote = options.tier === undefined ? null : new RemoteReader({ store: options.tier.store, prefix: options.tier.prefix ?? '', records: this.tierRecords!, clock: this.#clock });
    this.walCollector = options.wal === undefined || this.tierRecords === null ? null : this.#newWalCollector(options.wal, this.tierRecords);
  }

  /** [G1] This engine collects its own writer id's streams: the current epoch and its earlier (sealed) ones. */
  #newWalCollector(wal: WalOptions, records: TierRecords): WalCollector {
    return new WalCollector({
      store: wal.store,
      prefix: wal.prefix ?? '',
      writerId: wal.writerId,
      currentEpoch: () => this.wal?.config.stream.epoch ?? null,
      coverage: this.#walCoverage(records),
      ...(this.#cluster === null ? {} : { orphans: new OrphanWriters({ store: wal.store, prefix: wal.prefix ?? '', liveness: this.#cluster.writerLiveness, clock: this.#clock }) }),
      // What can free an object: new objects durable (the highest may go), the tier moving, a topic deleted.
      progress: () => `${this.wal?.config.stream.epoch ?? -1}:${this.wal?.durableSequence ?? -1}:${this.tierer?.recordChanges ?? 0}:${this.#deletedTopicIds.size}`,
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
        if (this.#cluster !== null) return this.#cluster.incarnationState(topic, topicId);
        if (regressed('lone-broker-disk-is-truth')) return this.#registry.get(topic)?.id === topicId ? 'live' : 'deleted';
        // DI1: only a deletion record deletes; the registry knows what lives here, not what was deleted.
        if (await this.deletionRecords!.isDeleted(topicId)) return 'deleted';
        return this.#registry.get(topic)?.id === topicId ? 'live' : 'unknown';
      },
      // KIP-405's remote.storage.enable of the topic (a cluster's topics take the engine's log config).
      tieringEnabled: (topic) => ({ ...DEFAULT_LOG_CONFIG, ...this.#settings.logConfigOf(topic) }).remoteStorageEnable,
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

  #newTierer(tier: TierOptions, records: TierRecords): Tierer {
    return new Tierer({
      store: tier.store,
      prefix: tier.prefix ?? '',
      records,
      clock: this.#clock,
      random: this.#options.random ?? systemRandom,
      partitions: () => this.#tierSources(),
      holdWhile: () => this.#cluster?.adopting() ?? false,
      ...definedOnly({
        intervalMs: tier.intervalMs,
        log: this.#logger,
        metrics: this.#options.metrics,
        deletedTopicIds: tier.deletedTopicIds ?? (() => this.deletionRecords!.list()),
        tailMaxMs: tier.tailMaxMs,
        tailMaxBytes: tier.tailMaxBytes,
        sweepIntervalMs: tier.sweepIntervalMs,
        orphanDelayMs: tier.orphanDelayMs,
      }),
    });
  }

  /** The partitions this engine leads, as the tierer sees them. */
  *#tierSources(): Iterable<TierSource> {
    for (const partition of this.#partitions.all()) {
      if (partition?.role.kind !== 'leader') continue;
      yield { topic: partition.topic, topicId: partition.topicId, partition: partition.index, leaderEpoch: partition.leaderEpoch, log: partition.log, highWatermark: partition.highWatermark };
    }
  }

  /** The log start the partition's tier record holds (retention moved it there); 0 without a tier. */
  async tierLogStartOf(topicId: TopicId, partition: number): Promise<number> {
    return (await this.tierRecordRange(topicId, partition)).startOffset;
  }

  /** The tier record's start (retention's) and tiered end; both 0 without a tier. */
  async tierRecordRange(topicId: TopicId, partition: number): Promise<TierRange> {
    if (this.tierRecords === null) return { startOffset: 0, tieredEnd: 0 };
    const record = await this.tierRecords.read(topicId, partition);
    return { startOffset: record.startOffset, tieredEnd: tieredEnd(record) };
  }

  /**
   * [K2] Where a rebuild of the partition starts: the tier's end and what it knows there; null without a tier or with nothing tiered.
   * Every rebuild from the tier asks here (takeovers, the embedded follower, a lost tail), so a producer state lost here is reported here.
   */
  async tierStartOf(topicId: TopicId, partition: number): Promise<TierStart | null> {
    const tier = this.#options.tier;
    if (tier === undefined || this.tierRecords === null) return null;
    const start = await tierStartOf(this.tierRecords, tier.store, tier.prefix ?? '', topicId, partition);
    if (start?.producersLost !== undefined) {
      const topic = this.#registry.list().find((described) => described.id === topicId)?.name ?? `topic id ${topicId}`;
      reportProducerStateLost({ logger: this.#logger, metrics: this.#options.metrics }, topic, partition, start);
    }
    return start;
  }

  /** The WAL writer of the current epoch when the engine ships to object storage; its stats and failure state. */
  get wal(): WalWriter | null {
    return this.walLifecycle?.writer ?? null;
  }

  /**
   * While writes fail: tries one (see probeStorage) so that an engine with no write of its own
   * (a cluster broker that handed its partitions off) finds out when the disk takes them again.
   * Returns whether writes still fail. While WAL writes fail, a probe of the WAL store starts too
   * (its outcome shows in walStoreFailingForMs later).
   */
  recheckStorage(): boolean {
    this.walLifecycle?.health.recheck();
    if (!this.storage.failing) return false;
    return !probeStorage(this.#disk, this.#directory, this.storage, this.storage.failedWriteBytes);
  }

  /** How long writes to the WAL store have failed with none landing, or a follower's reads with none answered, across writer epochs; 0 while they land or without a WAL. */
  walStoreFailingForMs(): number {
    return this.walLifecycle?.health.failingForMs() ?? 0;
  }

  /** [C1] Where a cluster's followers report whether the WAL store answered each of their reads (WalStoreHealth's read track). */
  readonly walReadOutcomes: ReadOutcomes = {
    answered: (startedMs) => this.walLifecycle?.health.readAnswered(startedMs),
    unanswered: (startedMs) => this.walLifecycle?.health.readUnanswered(startedMs),
  };

  /** Starts the background work (tier rounds, WAL GC passes), once the partitions are open. */
  start(): void {
    this.tierer?.start();
    this.walCollector?.start();
  }

  /** Stops the background work (at close; the WAL writer is flushed by the engine after its follower stops). */
  stop(): void {
    this.tierer?.stop();
    this.walCollector?.stop();
  }
}
