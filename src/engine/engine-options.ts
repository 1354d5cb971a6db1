import type { ControlStore } from '../control/control-store.ts';
import type { BuildCompressionCodec, Record as KafkaRecord, RecordBatch } from '../format/index.ts';
import type { LogConfig } from '../log/config.ts';
import type { ActiveProducer } from '../log/producer-state.ts';
import type { ReadAllocator } from '../log/segment.ts';
import type { MetricsRegistry } from '../metrics/index.ts';
import type { LoggerOption } from '../observability/logger.ts';
import type { ObjectStore } from '../store/object-store.ts';
import type { DeletedTopicIds } from '../tier/retired-sweeper.ts';
import type { Clock } from '../util/clock.ts';
import type { Disk } from '../util/disk.ts';
import type { Random } from '../util/random.ts';
import type { FollowOptions } from './embedded-follower.ts';
import type { ClusterPolicy } from './cluster-policy.ts';
import type { WalOptions } from './wal-writer-lifecycle.ts';

/** How Engine.open sets an engine up: only `directory` is required; `wal` ships appends to object storage, `follow` makes a read replica. */
export interface EngineOptions {
  /** Where topics and their partition logs live. */
  readonly directory: string;
  /**
   * Called once with the engine as soon as it exists, before it opens or adopts any partition:
   * lets a test harness watch it while its broker still starts (the simulation records every
   * replica's log end). Nothing in production sets it.
   */
  readonly onOpen?: (engine: OpenedEngine) => void;
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
  /**
   * Ship every append to object storage (KIP-1176); acks 'all' then waits for the WAL object, and
   * the local log's flush policy defaults to 'none' (withWalFlushDefault).
   */
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
   * Managed mode: a cluster assigns the partitions (adoptPartition, docs/cluster-protocol.md), and
   * nothing is opened from the local registry at start; the policy answers what only the
   * cluster's records know (leadership, followers, incarnations, live writers). Absent: the
   * engine is alone and decides all of that itself.
   */
  readonly cluster?: ClusterPolicy;
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

/** What one retention pass deleted of one partition's local log (EngineOptions.onRetention). */
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
  /**
   * The memory a local read lands in (the batches are views of it): a Fetch response's reused
   * buffers (src/broker/read-buffer-pool.ts); fresh buffers unless given. Reads from the tier
   * do not use it.
   */
  readonly allocate?: ReadAllocator;
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

/** What a harness watching an engine from its open reads of it (EngineOptions.onOpen). */
export interface OpenedEngine {
  /** Whether the engine serves `topic`-`index` (Engine.serves). */
  serves(topic: string, index: number): boolean;
  /** Where the partition's local log ends (Engine.logEndOffset). */
  logEndOffset(topic: string, index: number): number;
}

/**
 * With a WAL, acks 'all' waits for the WAL object, never for the local disk: an fdatasync of the
 * local log would buy no durability an acknowledgement relies on (a lost local tail is rebuilt
 * from the WAL on open) and would cost a sync per group of appends. So, as `ferry broker` does,
 * the local log's flush policy defaults to 'none' with a WAL; a `log.flush` given is kept.
 * Without a WAL the local log is the durability, and the group commit default stays.
 */
export function withWalFlushDefault(options: EngineOptions): EngineOptions {
  if (options.wal === undefined || options.log?.flush !== undefined) return options;
  return { ...options, log: { ...options.log, flush: WAL_LOCAL_FLUSH } };
}

const WAL_LOCAL_FLUSH = { kind: 'none' } as const;
