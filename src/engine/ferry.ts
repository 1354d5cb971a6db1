import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { FerryError } from '../errors.ts';
import { type BuildCompressionCodec, buildRecordBatch, type ProducerRecord, type Record as KafkaRecord, type RecordBatch } from '../format/index.ts';
import { type LogConfig, resolveLogConfig } from '../log/config.ts';
import { DirLock } from '../log/dir-lock.ts';
import { PartitionLog } from '../log/partition-log.ts';
import { StorageHealth } from '../log/storage-health.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { type Clock, systemClock, type Timer } from '../util/clock.ts';
import { isOsError } from '../util/os-error.ts';
import { type Random, SeededRandom, systemRandom } from '../util/random.ts';
import type { MetricsRegistry } from '../metrics/index.ts';
import { DEFAULT_FOLLOWER_CONFIG, Follower, type FollowerConfig } from '../replica/follower.ts';
import { InSyncReplicas, REPLICA_LAG_TIME_MAX_MS } from '../replica/isr.ts';
import { FollowerMetrics } from '../replica/metrics.ts';
import { WalMetrics } from '../wal/metrics.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader, type WalReaderConfig } from '../wal/reader.ts';
import { listEpochs, sealEarlierEpochs } from '../wal/seal.ts';
import { readShippedCheckpoint, shippedEnds, writeShippedCheckpoint } from '../wal/shipped.ts';
import type { StreamId } from '../wal/keys.ts';
import { DEFAULT_WAL_WRITER_CONFIG, partitionKey, WalWriter, type WalWriterConfig, type WalWriterObserver } from '../wal/writer.ts';
import { rebuildFromChain } from '../cluster/rebuild.ts';
import { nextWriterEpoch } from './writer-epoch.ts';
import { ALWAYS_ACKNOWLEDGE, type AcknowledgeGate, Partition, type PartitionRole } from './partition.ts';
import { partitionForKey } from './partitioner.ts';
import { preparePartitionDirectory } from './partition-metadata.ts';
import { PARTITIONS_PER_TOPIC_MAX, type TopicDescription, type TopicId, TopicRegistry } from './topic-registry.ts';
import { validateTopicName } from './topic-name.ts';

/** Kafka's log.retention.check.interval.ms. */
const RETENTION_CHECK_INTERVAL_MS = 5 * 60 * 1000;
/** Kafka's fetch.max.bytes default for one fetch when the caller names none. */
const FETCH_BYTES_DEFAULT = 1024 * 1024;
/** ListOffsets' special timestamps. */
const LATEST_TIMESTAMP = -1;
const EARLIEST_TIMESTAMP = -2;
/** How often a leader saves what its WAL streams hold, so a restart reads only what came after. */
const SHIPPED_CHECKPOINT_INTERVAL_MS = 1000;
/** Where a follower engine keeps its position in the leader's WAL streams. */
const FOLLOWER_CHECKPOINT_FILE = 'wal-follower-checkpoint';
/**
 * How long a close waits for the WAL to ship what it holds. Uploads retry a store outage without
 * a bound, so without this a close (a broker's SIGTERM) during one never ends. The cost of giving
 * up: appends not yet shipped fail their acks=all waiters and are shipped again by the next start
 * from the local log (a cluster broker's successor never had them: none was acknowledged).
 */
const CLOSE_WAL_FLUSH_WAIT_MS = 30_000;
/** The embedded engine is its partitions' only leader; a cluster assigns real epochs at adoption. */
const EMBEDDED_LEADER_EPOCH = 0;

export interface FerryOptions {
  /** Where topics and their partition logs live. */
  readonly directory: string;
  /** Log settings for every topic unless a topic overrides them. */
  readonly log?: Partial<LogConfig>;
  /** Create a topic with `defaultPartitions` on first produce instead of failing. */
  readonly autoCreateTopics?: boolean;
  readonly defaultPartitions?: number;
  readonly clock?: Clock;
  /**
   * Draws the ids of topics created here (DESIGN.md contract 10): the operating system's by
   * default. A seeded one replays a simulation; ids never repeat within one directory either way.
   */
  readonly random?: Random;
  /** Ship every append to object storage (KIP-1176); acks 'all' then waits for the WAL object. */
  readonly wal?: WalOptions;
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
  /** Where the engine says what an operator should know (a disk that fails and recovers). */
  readonly report?: (message: string) => void;
}

/** Which replicas may count as followers of a leader partition (a cluster's replica sets and leases). */
export interface ReplicaMembership {
  /** The partition's replica set without its leader, only replicas whose broker holds a live lease. */
  followersOf(topic: string, partition: number): ReadonlySet<string>;
}

export interface FollowOptions {
  readonly store: ObjectStore;
  /** The leader's writer id (its `wal.writerId`). */
  readonly writerId: string;
  readonly prefix?: string;
  /** Which partitions to replicate; all by default. */
  readonly partitions?: (topic: string, partition: number) => boolean;
  readonly reader?: Partial<Omit<WalReaderConfig, 'prefix' | 'wants'>>;
  readonly follower?: Partial<Omit<FollowerConfig, 'writerId'>>;
  readonly seed?: number;
}

export interface WalOptions {
  readonly store: ObjectStore;
  /** This engine's name in WAL keys; each open gets a new epoch, so streams never collide. */
  readonly writerId: string;
  readonly prefix?: string;
  readonly config?: Partial<Omit<WalWriterConfig, 'prefix' | 'stream'>>;
  readonly observer?: WalWriterObserver;
  /** Seed for retry jitter (tests replay runs with a fixed one). */
  readonly seed?: number;
}

/** A partition's log that lost its unsynced tail (a power loss) while its WAL kept it: `durableEnd` is the WAL's end. */
interface LostTail {
  readonly topic: TopicDescription;
  readonly index: number;
  readonly log: PartitionLog;
  readonly durableEnd: number;
}

export interface CreateTopicOptions {
  readonly partitions?: number;
  readonly config?: Partial<LogConfig>;
}

/**
 * - `1`: resolve once the records are in the local log (the page cache), as Kafka acks=1.
 * - `'all'`: resolve once they are durable under the log's flush policy (the default).
 */
export type Acks = 1 | 'all';

export interface ProduceOptions {
  /** Send every record here; otherwise keyed records go by Kafka's murmur2 partitioner. */
  readonly partition?: number;
  readonly compression?: BuildCompressionCodec;
  readonly acks?: Acks;
}

export interface ProducedRecord {
  readonly partition: number;
  readonly offset: number;
}

export interface FetchOptions {
  readonly maxBytes?: number;
}

export interface FetchResult {
  /** Whole record batches (zero-copy views), the first holding the requested offset. */
  readonly batches: RecordBatch[];
  readonly highWatermark: number;
  readonly logStartOffset: number;
}

export interface ConsumedRecord extends KafkaRecord {
  readonly topic: string;
  readonly partition: number;
}

export interface ConsumeOptions {
  readonly partition?: number;
  /** First offset to read; the partition's log start when absent. */
  readonly fromOffset?: number;
  readonly maxBytes?: number;
  /** Ends the iteration when aborted. */
  readonly signal?: AbortSignal;
}

/**
 * The embeddable engine: topics of partitions, each a durable Kafka-format log on local disk.
 *
 *     const ferry = await Ferry.open({ directory: './data' });
 *     ferry.createTopic('orders', { partitions: 3 });
 *     const [{ partition, offset }] = await ferry.produce('orders', [{ key: 'k', value: 'v' }]);
 *     for await (const record of ferry.consume('orders', { partition })) { ... }
 *     await ferry.close();
 */
export class Ferry {
  readonly directory: string;
  readonly #options: FerryOptions;
  readonly #clock: Clock;
  readonly #lock: DirLock;
  readonly #registry: TopicRegistry;
  readonly #partitions = new Map<string, Partition[]>();
  /**
   * Deletes under way, by topic name: until the old incarnation's logs are closed and their
   * directories removed, the name cannot get a new one here (its directories share the names).
   */
  readonly #deletions = new Map<string, Promise<void>>();
  readonly #roundRobin = new Map<string, number>();
  #wal: WalWriter | null;
  /** Every partition log's failed and succeeding writes: counted, and logged once per failure spell. */
  readonly #storage: StorageHealth;
  /** At open: partitions whose local log ends below what the WAL holds of them, opened and waiting for #rebuildLostTails. */
  readonly #lostTails: LostTail[] = [];
  /** Every acknowledgement passes it: a cluster closes it while its lease may have lapsed. */
  #gate: AcknowledgeGate = ALWAYS_ACKNOWLEDGE;
  /** WAL uploads are meeting retriable faults: logged once when it starts and once when it ends. */
  #walOutage = false;
  #follower: Follower | null = null;
  /** In-process links to replicas (attachReplica): hinted on durable objects, told the high watermark. */
  readonly #replicas: Ferry[] = [];
  #leader: { ferry: Ferry; replicaId: string } | null = null;
  /** Who may count as a leader partition's follower: the cluster's replica sets, else the attached replicas. */
  #membership: ReplicaMembership | null = null;
  readonly #attachedIds = new Set<string>();
  /** With a WAL: each partition's end in the earlier streams; the shipped checkpoint adds the current one's. */
  #shippedBase: ReadonlyMap<string, number> | null = null;
  #checkpointTimer: Timer | null = null;
  #notifyQueued = false;
  #retentionTimer: Timer | null = null;
  #closed = false;
  /** The next writer epoch is at least this: one past every epoch of this writer id in the store. */
  #epochFloor: number;

  private constructor(options: FerryOptions, lock: DirLock, registry: TopicRegistry, epochFloor: number) {
    this.directory = options.directory;
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#lock = lock;
    this.#registry = registry;
    this.#storage = new StorageHealth(options.metrics, options.report);
    this.#epochFloor = epochFloor;
    this.#wal = options.wal === undefined ? null : this.#createWalWriter(options.wal);
  }

  /** The WAL writer when the engine ships to object storage; its stats and failure state. */
  get wal(): WalWriter | null {
    return this.#wal;
  }

  /**
   * Opens the engine in `options.directory`, recovering every partition's log. With a WAL,
   * earlier epochs of this writer's streams are sealed first (docs/wal-protocol.md [F]).
   */
  static async open(options: FerryOptions): Promise<Ferry> {
    resolveLogConfig(options.log); // reject bad settings before touching the disk
    mkdirSync(options.directory, { recursive: true });
    const lock = DirLock.acquire(options.directory);
    let ferry: Ferry | undefined;
    try {
      if (options.wal !== undefined && options.follow !== undefined) throw new FerryError('InvalidArgument', 'an engine either writes a WAL (leader) or follows one, not both');
      const storedEpochs = options.wal === undefined ? [] : await listEpochs(options.wal.store, options.wal.prefix ?? '', options.wal.writerId);
      ferry = new Ferry(options, lock, TopicRegistry.open(options.directory, options.random ?? systemRandom), (storedEpochs.at(-1) ?? -1) + 1);
      const shipped = options.wal === undefined ? null : await ferry.#closeEarlierStreams(options.wal, storedEpochs);
      if (options.managedPartitions !== true) {
        for (const topic of ferry.#registry.list()) ferry.#openTopic(topic, shipped);
        if (shipped !== null) await ferry.#rebuildLostTails(options.wal!);
        for (const partition of [...ferry.#partitions.values()].flat()) await partition.reshipUnshipped();
      }
      if (options.follow !== undefined) ferry.#startFollowing(options.follow);
      ferry.#scheduleRetention();
      return ferry;
    } catch (error) {
      if (ferry !== undefined) await ferry.close();
      else lock.release();
      throw error;
    }
  }

  /**
   * Starts serving one partition (managed mode, [C5]) as its leader or as a follower (a read
   * replica fed from the WAL by the caller): its local log is recreated empty and `rebuild` fills
   * it from the WAL chain; what it holds then is durable already. `topicId` is the incarnation the
   * cluster's records name: an older one still registered here is dropped first. `leaderEpoch` is
   * the epoch the cluster assigned (its partition record's): requests are checked against it (KIP-320).
   */
  async adoptPartition(topic: string, topicId: TopicId, index: number, partitionCount: number, rebuild: (log: PartitionLog) => Promise<void>, as: 'leader' | 'follower' = 'leader', replicationFactor = 1, leaderEpoch = EMBEDDED_LEADER_EPOCH): Promise<Partition> {
    this.#checkOpen();
    validateTopicName(topic);
    await this.#deletions.get(topic); // an older incarnation's directories go first
    this.#checkOpen();
    if (this.#partitions.get(topic)?.[index] !== undefined) throw new FerryError('InvalidArgument', `${topic}-${index} is already served here`);
    this.#registerIncarnation(topic, topicId, partitionCount);
    const directory = join(this.directory, `${topic}-${index}`);
    rmSync(directory, { recursive: true, force: true }); // the chain is the truth; stale local data is not
    preparePartitionDirectory(directory, topicId);
    const config = { ...this.#options.log, ...this.#registry.get(topic)!.config };
    const log = PartitionLog.open(directory, { config, clock: this.#clock, storage: this.#storage });
    try {
      await rebuild(log);
    } catch (error) {
      await log.close();
      throw error;
    }
    const partitions = this.#partitions.get(topic) ?? [];
    // min.insync.replicas counts the leader and cannot ask for more replicas than the topic has.
    const requiredFollowers = Math.min(this.#options.minInsyncReplicas ?? 1, replicationFactor) - 1;
    const role: PartitionRole = as === 'leader' ? { kind: 'leader', requiredFollowers, isr: this.#inSyncReplicas(topic, index) } : { kind: 'follower' };
    // A partition let go of ([C6], [C7]) acknowledges nothing more, whatever its waiters' durability.
    const gate = () => {
      this.#gate();
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
   * below `logEndOffset`. Returns whether it counted: only a follower in the partition's replica set
   * does (ReplicaMembership), and only in this leader's epoch (Partition.noteRemoteFollowerApplied throws
   * FencedLeaderEpoch or UnknownLeaderEpoch for another one).
   */
  noteReplicaProgress(topic: string, index: number, replicaId: string, logEndOffset: number, leaderEpoch: number): boolean {
    const partition = this.#partitions.get(topic)?.[index];
    return partition?.role.kind === 'leader' && partition.noteRemoteFollowerApplied(replicaId, logEndOffset, leaderEpoch);
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
   * Managed mode: every acknowledgement (new appends and acks=all waiters) passes `gate`, which
   * throws while this engine may not acknowledge (its cluster lease may have lapsed, [C1]).
   */
  gateAcknowledgements(gate: AcknowledgeGate): void {
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
    const old = this.#wal;
    if (old === null || this.#options.wal === undefined || this.#options.managedPartitions !== true) throw new FerryError('InvalidArgument', 'only a managed engine with a WAL starts a new writer epoch while it runs');
    old.fence('a new writer epoch replaces this one');
    // Past anything in the store too: another process under this writer id (a replacement started
    // while this one was paused) may have written epochs this directory never heard of.
    this.#epochFloor = Math.max(old.config.stream.epoch + 1, await storedEpochFloor(this.#options.wal).catch(() => 0));
    for (const [topic, partitions] of this.#partitions) {
      for (const [index, partition] of partitions.entries()) if (partition?.role.kind === 'leader') await this.releasePartition(topic, index);
    }
    this.#wal = this.#createWalWriter(this.#options.wal);
    return this.#wal.config.stream;
  }

  /** Whether this engine leads `topic`-`index` (and so takes produce requests for it). */
  leads(topic: string, index: number): boolean {
    return this.#partitions.get(topic)?.[index]?.role.kind === 'leader';
  }

  /**
   * The leader epoch `topic`-`index` is served in here (design contract 13: the one its appends
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
  endOffsetForLeaderEpoch(topic: string, index: number, epoch: number): { leaderEpoch: number; endOffset: number } {
    return this.#partition(topic, index).endOffsetForLeaderEpoch(epoch);
  }

  /** Stops serving a partition (managed mode, [C6]): another broker leads it now. */
  async releasePartition(topic: string, index: number): Promise<void> {
    const partitions = this.#partitions.get(topic);
    const partition = partitions?.[index];
    if (partition === undefined) return;
    delete partitions![index];
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
    const topic = this.#registry.add({ name, partitions, config });
    try {
      // A new incarnation: whatever lies on disk under its name (a delete that crashed midway) is not of it.
      for (let index = 0; index < partitions; index++) rmSync(join(this.directory, `${name}-${index}`), { recursive: true, force: true });
      this.#openTopic(topic); // every partition, or the topic is not registered at all
    } catch (error) {
      this.#abandonTopic(name); // e.g. out of file descriptors: the topic is not half there, and a retry can create it
      this.#registry.remove(name);
      throw error;
    }
    return topic;
  }

  topics(): TopicDescription[] {
    return this.#registry.list();
  }

  /** Undoes a createTopic that failed before registering the topic: closes and removes the partitions that opened. */
  #abandonTopic(name: string): void {
    const opened = this.#partitions.get(name) ?? [];
    this.#partitions.delete(name);
    for (const partition of opened) {
      void partition.log.close().catch(() => {}).finally(() => rmSync(partition.log.directory, { recursive: true, force: true }));
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
    const groups = this.#groupByPartition(topic, partitions.length, records, options.partition);
    const results: ProducedRecord[] = new Array(records.length);
    const durables: Promise<void>[] = [];
    for (const [index, members] of groups) {
      const batch = buildRecordBatch(members.map((m) => records[m]!), { nowMs: this.#clock.nowMs(), compression: options.compression ?? 'none' });
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
    target.checkReadable(offset);
    const highWatermark = target.highWatermark;
    const maxBytes = options.maxBytes ?? FETCH_BYTES_DEFAULT;
    if (maxBytes === 0) {
      if (offset < target.log.logStartOffset) throw new FerryError('OffsetOutOfRange', `offset ${offset} is before the log start ${target.log.logStartOffset} of ${topic}-${partition}`);
      return { batches: [], highWatermark, logStartOffset: target.log.logStartOffset };
    }
    const { batches, logStartOffset } = target.log.read(offset, maxBytes);
    return { batches: batches.filter((batch) => batch.baseOffset < highWatermark), highWatermark, logStartOffset };
  }

  /** Yields records from `fromOffset` on, waiting for new ones at the end, until `signal` aborts. */
  async *consume(topic: string, options: ConsumeOptions = {}): AsyncGenerator<ConsumedRecord> {
    const partitionIndex = options.partition ?? 0;
    const target = this.#partition(topic, partitionIndex);
    let offset = options.fromOffset ?? target.log.logStartOffset;
    while (!this.#closed && !options.signal?.aborted) {
      if (offset >= target.highWatermark) {
        await target.waitForData(offset, options.signal);
        continue;
      }
      const { batches } = this.fetch(topic, partitionIndex, offset, { maxBytes: options.maxBytes ?? FETCH_BYTES_DEFAULT });
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
   * resolves once the high watermark passed them (what acks=all waits for).
   */
  /** `signal` gives up waiting for room in the WAL's upload buffer (the request timed out): nothing is appended then. */
  async appendBatches(topic: string, partition: number, records: Uint8Array, signal?: AbortSignal): Promise<{ baseOffset: number; lastOffset: number; logStartOffset: number; committed: Promise<void> }> {
    const target = this.#partitionsForProduce(topic)[partition];
    if (target === undefined) throw new FerryError('UnknownTopicOrPartition', `partition ${partition} does not exist in ${topic}`);
    const { baseOffset, lastOffset, durable } = await target.append(records, signal);
    durable.catch(() => {}); // when nobody awaits it (acks 0 or 1), a failure surfaces in later produces and in `wal.failure`
    return { baseOffset, lastOffset, logStartOffset: target.log.logStartOffset, committed: durable };
  }

  /** Resolves when `offset` of the partition becomes readable, or when `signal` aborts (long-poll Fetch). */
  waitForData(topic: string, partition: number, offset: number, signal?: AbortSignal): Promise<void> {
    return this.#partition(topic, partition).waitForData(offset, signal);
  }

  /** Kafka's ListOffsets: -2 the earliest offset, -1 the latest (high watermark), else the first at or after a time. */
  /** With the leader epoch of the answer, as Kafka gives it: the current one for the latest, else the one that wrote the offset. */
  offsetFor(topic: string, partition: number, timestamp: number): { offset: number; timestamp: number; leaderEpoch: number } {
    const target = this.#partition(topic, partition);
    if (timestamp === LATEST_TIMESTAMP) return { offset: target.highWatermark, timestamp: -1, leaderEpoch: target.leaderEpoch };
    if (timestamp === EARLIEST_TIMESTAMP) return { offset: target.log.logStartOffset, timestamp: -1, leaderEpoch: target.epochAt(target.log.logStartOffset) };
    const offset = target.log.offsetForTimestamp(timestamp);
    if (offset === null || offset >= target.highWatermark) return { offset: -1, timestamp: -1, leaderEpoch: -1 };
    return { offset, timestamp, leaderEpoch: target.epochAt(offset) };
  }

  /** Removes a topic and its partitions' logs; its id is retired, never served again. */
  async deleteTopic(topic: string): Promise<void> {
    this.#checkOpen();
    const partitions = this.#partitions.get(topic) ?? [];
    if (this.#deletions.has(topic) || (!this.#partitions.has(topic) && this.#registry.get(topic) === undefined)) throw unknownTopic(topic);
    this.#partitions.delete(topic);
    if (this.#registry.get(topic) !== undefined) this.#registry.remove(topic);
    const deletion = (async () => {
      for (const partition of partitions.filter((p) => p !== undefined)) { // managed mode leaves holes
        partition.abandon(unknownTopic(topic));
        await partition.log.close();
        rmSync(partition.log.directory, { recursive: true, force: true });
      }
    })();
    this.#deletions.set(topic, deletion.catch(() => {}));
    try {
      await deletion;
    } finally {
      this.#deletions.delete(topic);
    }
  }

  /** Applies retention now (it also runs every five minutes); returns the segments deleted. */
  enforceRetention(): number {
    this.#checkOpen();
    let deleted = 0;
    for (const partition of [...this.#partitions.values()].flat()) deleted += partition.log.enforceRetention(); // flat() skips managed mode's holes
    return deleted;
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
    if (replica.#follower === null) throw new FerryError('InvalidArgument', 'the replica must be opened with `follow`');
    replica.#leader = { ferry: this, replicaId };
    this.#replicas.push(replica);
    this.#attachedIds.add(replicaId);
    for (const [topic, partitions] of replica.#partitions) {
      partitions.forEach((partition, index) => this.#partitionOf(topic, partition.topicId, index)?.noteFollowerApplied(replicaId, partition.log.logEndOffset));
    }
    this.#pushHighWatermarks();
  }

  /** Flushes and closes every log and releases the directory. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#retentionTimer?.cancel();
    await this.#follower?.stop();
    this.#checkpointTimer?.cancel();
    const all = [...this.#partitions.values()].flat();
    if (this.#wal !== null && this.#wal.failure === null) await this.#flushWalForClose(this.#wal);
    if (this.#shippedBase !== null) this.#checkpointShipped(false);
    for (const partition of all) partition.abandon(new FerryError('Closed', `the engine at ${this.directory} is closed`));
    await Promise.all([...all.map((partition) => partition.log.close()), ...this.#lostTails.splice(0).map(({ log }) => log.close())]);
    this.#lock.release();
  }

  /**
   * A local log that ends below what this writer's earlier streams (sealed by now) hold of it: a
   * power loss dropped its unsynced tail (with a WAL the log need not be synced, KIP-1176). The
   * tail is read back from those streams by the same rebuild and apply as a takeover's, so the
   * records acks=all acknowledged are served again and their producers' retries are duplicates.
   * Reads every earlier stream from its start: costly, but only after a power loss.
   */
  async #rebuildLostTails(options: WalOptions): Promise<void> {
    const { prefix, stream } = this.#wal!.config;
    const lost = this.#lostTails.splice(0);
    if (lost.length === 0) return;
    try {
      await this.#rebuildEach(options, lost);
    } catch (error) {
      for (const { log } of lost) await log.close().catch(() => {}); // closing one twice is a no-op
      throw error;
    }
  }

  async #rebuildEach(options: WalOptions, lost: readonly LostTail[]): Promise<void> {
    const { prefix, stream } = this.#wal!.config;
    const chain = (await listEpochs(options.store, prefix, stream.writerId)).filter((epoch) => epoch < stream.epoch).map((epoch) => ({ writerId: stream.writerId, epoch }));
    for (const { topic, index, log, durableEnd } of lost) {
      const wanted = (_name: string, partition: number, topicId: TopicId) => topicId === topic.id && partition === index;
      const reader = new WalReader(options.store, { ...DEFAULT_WAL_READER_CONFIG, prefix, wants: wanted }, { clock: this.#clock, random: new SeededRandom(stream.epoch) });
      const endBefore = log.logEndOffset;
      await rebuildFromChain(reader, log, chain, topic.id);
      this.#options.report?.(`${topic.name}-${index}: the local log ended at ${endBefore}, below the ${durableEnd} its WAL holds (a power loss): rebuilt up to ${log.logEndOffset} from the WAL`);
      // Throws, as before, if the streams did not hold it all (the log is closed by the caller).
      this.#partitions.get(topic.name)![index] = this.#leaderOrFollower(topic, index, log, durableEnd);
    }
  }


  /** Ships what the WAL holds, waiting CLOSE_WAL_FLUSH_WAIT_MS at most; then stops its uploads ([W6]). */
  async #flushWalForClose(wal: WalWriter): Promise<void> {
    let timer: Timer | undefined;
    const gaveUp = new Promise<void>((resolve) => (timer = this.#clock.setTimer(CLOSE_WAL_FLUSH_WAIT_MS, resolve)));
    let settled = false;
    await Promise.race([wal.flush().catch(() => {}).finally(() => (settled = true)), gaveUp]);
    timer?.cancel();
    if (!settled) wal.fence(`the engine closed after waiting ${CLOSE_WAL_FLUSH_WAIT_MS} ms for the object store`);
  }

  /** `shipped`: with a WAL, each partition's end in the earlier streams (absent: nothing shipped). */
  #openTopic(topic: TopicDescription, shipped: ReadonlyMap<string, number> | null = null): void {
    const partitions = this.#partitions.get(topic.name) ?? [];
    const config = { ...this.#options.log, ...topic.config };
    for (let index = partitions.length; index < topic.partitions; index++) {
      const directory = join(this.directory, `${topic.name}-${index}`);
      preparePartitionDirectory(directory, topic.id);
      const log = PartitionLog.open(directory, { config, clock: this.#clock, storage: this.#storage });
      const durableEnd = this.#wal === null ? log.logEndOffset : (shipped?.get(partitionKey(topic.id, index)) ?? 0);
      if (durableEnd > log.logEndOffset) this.#lostTails.push({ topic, index, log, durableEnd }); // its place stays empty until #rebuildLostTails
      else partitions[index] = this.#leaderOrFollower(topic, index, log, durableEnd);
    }
    this.#partitions.set(topic.name, partitions);
  }

  /** The Partition of a log this engine opened itself (not managed): led here, or followed when the engine follows. */
  #leaderOrFollower(topic: TopicDescription, index: number, log: PartitionLog, durableEnd: number): Partition {
    const role: PartitionRole = this.#options.follow !== undefined ? { kind: 'follower' } : { kind: 'leader', requiredFollowers: (this.#options.minInsyncReplicas ?? 1) - 1, isr: this.#inSyncReplicas(topic.name, index) };
    return new Partition(topic.name, topic.id, index, log, this.#wal, role, durableEnd);
  }


  /**
   * A leader starting a new WAL epoch: seals the earlier ones (docs/wal-protocol.md [F]) and
   * learns what they hold, from the shipped checkpoint plus the objects written after it.
   */
  async #closeEarlierStreams(options: WalOptions, storedEpochs: readonly number[]): Promise<Map<string, number>> {
    const { prefix, stream } = this.#wal!.config;
    await sealEarlierEpochs(options.store, prefix, stream.writerId, stream.epoch, this.#clock.nowMs(), storedEpochs);
    // Managed partitions are rebuilt from their chains when adopted: what the old streams hold
    // per partition is not needed, so neither the footer reads nor the periodic checkpoint are.
    if (this.#options.managedPartitions === true) return new Map();
    const reader = new WalReader(options.store, { ...DEFAULT_WAL_READER_CONFIG, prefix, wants: () => false }, { clock: this.#clock, random: new SeededRandom(stream.epoch) });
    const ends = await shippedEnds(reader, stream.writerId, stream.epoch, readShippedCheckpoint(this.directory));
    this.#shippedBase = ends;
    this.#checkpointTimer = this.#clock.setTimer(SHIPPED_CHECKPOINT_INTERVAL_MS, () => this.#checkpointShipped(true), true);
    return ends;
  }

  /** Saves what the streams hold so far (see ShippedCheckpoint); `again` keeps it periodic. */
  #checkpointShipped(again: boolean): void {
    const wal = this.#wal;
    if (wal === null || this.#closed && again) return;
    const ends = new Map(this.#shippedBase);
    for (const [key, end] of wal.durableEnds()) ends.set(key, Math.max(ends.get(key) ?? 0, end));
    const entries = [...ends].map(([key, end]) => {
      const [topicId, partition] = key.split('\u0000');
      return [topicId!, Number(partition), end] as const;
    });
    try {
      writeShippedCheckpoint(this.directory, { epoch: wal.config.stream.epoch, sequence: wal.durableSequence, ends: entries });
    } catch (error) {
      // An OS failure (EMFILE, ENOSPC) costs only recovery time: the previous checkpoint stays and the
      // next start reads more WAL objects; the next interval tries again.
      this.#options.metrics?.counter('ferry_engine_checkpoint_failures_total', 'Shipped-offsets checkpoints that could not be written (the next start reads more WAL objects)').add();
      if (!isOsError(error)) throw error;
      this.#storage.writeFailed(this.directory, error);
    }
    if (again) this.#checkpointTimer = this.#clock.setTimer(SHIPPED_CHECKPOINT_INTERVAL_MS, () => this.#checkpointShipped(true), true);
  }

  #startFollowing(options: FollowOptions): void {
    const prefix = options.prefix ?? '';
    const random = new SeededRandom(options.seed ?? 1);
    const wants = options.partitions ?? (() => true);
    const reader = new WalReader(options.store, { ...DEFAULT_WAL_READER_CONFIG, ...options.reader, prefix, wants }, { clock: this.#clock, random });
    const target = {
      log: async (topic: string, index: number, topicId: TopicId) => (await this.#followerPartition(topic, index, topicId))?.log ?? null,
      applied: (topic: string, index: number, logEndOffset: number) => {
        const partition = this.#partitions.get(topic)![index]!; // the incarnation `log` just gave
        partition.noteApplied();
        const lagOffsets = (partition.leaderHighWatermark ?? logEndOffset) - logEndOffset;
        this.#options.metrics?.gauge('ferry_follower_lag_offsets', 'Offsets the leader has committed that this follower has not applied', { labels: { topic, partition: String(index) } }).set(Math.max(0, lagOffsets));
        const leader = this.#leader;
        if (leader !== null && !leader.ferry.#closed) leader.ferry.#replicaApplied(leader.replicaId, topic, partition.topicId, index, logEndOffset);
      },
    };
    const config = { ...DEFAULT_FOLLOWER_CONFIG, ...options.follower, writerId: options.writerId };
    const observer = this.#options.metrics === undefined ? undefined : new FollowerMetrics(this.#options.metrics, this.#clock);
    this.#follower = new Follower(options.store, reader, target, config, { clock: this.#clock, checkpointPath: join(this.directory, FOLLOWER_CHECKPOINT_FILE), ...(observer === undefined ? {} : { observer }) });
    this.#follower.start();
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
    if (this.#leader !== null) created.noteLeaderHighWatermark(this.#leader.ferry.#partitionOf(topic, topicId, index)?.highWatermark ?? 0);
    return created;
  }

  /** Leader side of attachReplica: a replica applied up to `logEndOffset` (of incarnation `topicId`). */
  #replicaApplied(replicaId: string, topic: string, topicId: TopicId, index: number, logEndOffset: number): void {
    this.#partitionOf(topic, topicId, index)?.noteFollowerApplied(replicaId, logEndOffset);
    this.#pushHighWatermarks();
  }

  /** The partition when it is of incarnation `topicId`: progress of another never counts for it. */
  #partitionOf(topic: string, topicId: TopicId, index: number): Partition | undefined {
    const partition = this.#partitions.get(topic)?.[index];
    return partition?.topicId === topicId ? partition : undefined;
  }

  /** Registers `topicId` as the topic's incarnation here (managed mode), dropping an older one that nothing serves any more. */
  #registerIncarnation(topic: string, topicId: TopicId, partitionCount: number): void {
    const known = this.#registry.get(topic);
    if (known !== undefined && known.id !== topicId) {
      if (this.#partitions.get(topic)?.some((p) => p !== undefined)) throw new FerryError('InvalidArgument', `${topic} is served here as topic id ${known.id}; let it go before adopting topic id ${topicId}`);
      this.#registry.remove(topic);
      this.#partitions.delete(topic);
    }
    if (this.#registry.get(topic) === undefined) this.#registry.add({ name: topic, partitions: partitionCount, config: {} }, topicId);
    else this.#registry.grow(topic, partitionCount);
  }

  /**
   * Leader side of attachReplica: a durable object may interest the replicas at once. Called per
   * partition of each durable object, so the work is coalesced to once per turn.
   */
  #notifyReplicas(): void {
    if (this.#replicas.length === 0 || this.#notifyQueued) return;
    this.#notifyQueued = true;
    queueMicrotask(() => {
      this.#notifyQueued = false;
      for (const replica of this.#replicas) if (!replica.#closed) replica.#follower?.hint();
      this.#pushHighWatermarks();
    });
  }

  #pushHighWatermarks(): void {
    for (const replica of this.#replicas) {
      if (replica.#closed) continue;
      for (const [topic, partitions] of this.#partitions) {
        partitions.forEach((partition, index) => replica.#partitionOf(topic, partition.topicId, index)?.noteLeaderHighWatermark(partition.highWatermark));
      }
    }
  }

  #inSyncReplicas(topic: string, index: number): InSyncReplicas {
    const followers = () => this.#membership?.followersOf(topic, index) ?? this.#attachedIds;
    return new InSyncReplicas(this.#clock, { followers }, this.#options.replicaLagTimeMaxMs ?? REPLICA_LAG_TIME_MAX_MS);
  }

  #createWalWriter(options: WalOptions): WalWriter {
    const epoch = nextWriterEpoch(this.directory, this.#epochFloor);
    const config = { ...DEFAULT_WAL_WRITER_CONFIG, ...options.config, prefix: options.prefix ?? '', stream: { writerId: options.writerId, epoch } };
    const observer: WalWriterObserver = options.observer ?? (this.#options.metrics === undefined ? {} : new WalMetrics(this.#options.metrics));
    // Delegating method by method: a class instance's methods live on its prototype, not in a spread.
    const notifying: WalWriterObserver = {
      uploadLatencyMs: (ms) => observer.uploadLatencyMs?.(ms),
      objectBytes: (bytes) => observer.objectBytes?.(bytes),
      produceToDurableMs: (ms) => observer.produceToDurableMs?.(ms),
      uploadRetry: (key, attempt, error) => {
        observer.uploadRetry?.(key, attempt, error);
        if (!this.#walOutage) this.#options.report?.(`WAL uploads failing, retrying until they succeed (acks=all waits): ${error.message}`);
        this.#walOutage = true;
      },
      uploadRecovered: () => {
        observer.uploadRecovered?.();
        if (this.#walOutage) this.#options.report?.('WAL uploads succeed again');
        this.#walOutage = false;
      },
      durable: (key, endOffset) => {
        observer.durable?.(key, endOffset);
        this.#notifyReplicas();
      },
    };
    return new WalWriter(options.store, config, { clock: this.#clock, random: new SeededRandom(options.seed ?? epoch), observer: notifying });
  }

  #partitionsForProduce(topic: string): Partition[] {
    const existing = this.#partitions.get(topic);
    if (existing !== undefined) return existing;
    if (this.#options.autoCreateTopics !== true || this.#deletions.has(topic)) throw unknownTopic(topic);
    this.createTopic(topic);
    return this.#partitions.get(topic)!;
  }

  /** Record indexes grouped by target partition, in input order within each group. */
  #groupByPartition(topic: string, count: number, records: readonly ProducerRecord[], fixed: number | undefined): Map<number, number[]> {
    if (fixed !== undefined && (!Number.isSafeInteger(fixed) || fixed < 0 || fixed >= count)) {
      throw new FerryError('UnknownTopicOrPartition', `partition ${fixed} does not exist: ${topic} has ${count}`);
    }
    // Keyless records share one partition per call, rotating across calls (a sticky partitioner).
    const sticky = (this.#roundRobin.get(topic) ?? 0) % count;
    this.#roundRobin.set(topic, sticky + 1);
    const groups = new Map<number, number[]>();
    records.forEach((record, i) => {
      const key = typeof record.key === 'string' ? new TextEncoder().encode(record.key) : record.key;
      const index = fixed ?? (key === null || key === undefined ? sticky : partitionForKey(key, count));
      const group = groups.get(index);
      if (group === undefined) groups.set(index, [i]);
      else group.push(i);
    });
    return groups;
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
    this.#retentionTimer = this.#clock.setTimer(RETENTION_CHECK_INTERVAL_MS, () => {
      if (this.#closed) return;
      try {
        this.enforceRetention();
      } catch (error) {
        // An OS failure (EMFILE) postpones retention to the next round; it must not end the process.
        this.#options.metrics?.counter('ferry_engine_retention_failures_total', 'Retention rounds that failed (retried at the next interval)').add();
        if (!isOsError(error)) throw error;
      }
      this.#scheduleRetention();
    }, true);
  }

  #checkOpen(): void {
    if (this.#closed) throw new FerryError('Closed', `the engine at ${this.directory} is closed`);
  }
}

function unknownTopic(topic: string): FerryError {
  return new FerryError('UnknownTopicOrPartition', `unknown topic ${topic}`);
}

/**
 * One past the last epoch of `options.writerId` that has objects in the store (0 when none): the
 * local epoch file alone is lost with the directory, and a reused stream id would be taken for a
 * fresh stream by a takeover (docs/cluster-protocol.md L7). Costs one LIST of the writer's keys
 * (at open, the one that finds the earlier epochs to seal).
 */
async function storedEpochFloor(options: WalOptions): Promise<number> {
  return ((await listEpochs(options.store, options.prefix ?? '', options.writerId)).at(-1) ?? -1) + 1;
}
