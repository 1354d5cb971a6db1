import { join } from 'node:path';
import { FerryError } from '../errors.ts';
import { PartitionLog } from '../log/partition-log.ts';
import type { Logger } from '../observability/logger.ts';
import type { InSyncReplicas } from '../partition/isr.ts';
import type { Clock } from '../util/clock.ts';
import { type Disk, diskWithSync } from '../util/disk.ts';
import { BarriersOnceArmed } from '../util/file-sync.ts';
import { regressed } from '../util/regressions.ts';
import { isOsError } from '../util/os-error.ts';
import type { StreamId } from '../wal/keys.ts';
import type { ClusterPolicy } from './cluster-policy.ts';
import type { NodeServices } from './node-services.ts';
import { Partition, type PartitionRole } from '../partition/partition.ts';
import { preparePartitionDirectory } from './partition-metadata.ts';
import type { PartitionTable } from './partition-table.ts';
import { logRecovery } from './recovery-log.ts';
import { validateTopicName } from './topic-name.ts';
import type { TopicId } from '../format/topic-id.ts';
import type { TopicRegistry } from './topic-registry.ts';
import type { TopicSettings } from './topic-settings.ts';

/** The embedded engine is its partitions' only leader; a cluster assigns real epochs at adoption. */
export const EMBEDDED_LEADER_EPOCH = 0;

/** What AdoptedPartitions works with. */
export interface AdoptedPartitionsDeps {
  readonly directory: string;
  readonly clock: Clock;
  readonly disk: Disk;
  readonly logger: Logger;
  readonly registry: TopicRegistry;
  readonly table: PartitionTable;
  readonly settings: TopicSettings;
  readonly services: NodeServices;
  readonly cluster: ClusterPolicy | null;
  /** The topic deletes under way (TopicAdmin.deletions): an adoption waits for its name's. */
  readonly deletions: ReadonlyMap<string, Promise<void>>;
  readonly inSyncReplicas: (topic: string, index: number) => InSyncReplicas;
  readonly checkOpen: () => void;
}

/**
 * The partitions a cluster assigns an engine (docs/cluster-protocol.md [C5], [C6], [C7]): each
 * adopted as leader or follower, its log rebuilt from the WAL chain (or kept, a promoted
 * follower's [K3]), every act as its leader passing the cluster's leadership check; released
 * when another broker leads it; all the led ones released when the WAL writer is fenced and a
 * new epoch starts. The counterpart of OwnPartitions, for an engine a cluster manages.
 */
export class AdoptedPartitions {
  readonly #directory: string;
  readonly #clock: Clock;
  readonly #disk: Disk;
  readonly #logger: Logger;
  readonly #registry: TopicRegistry;
  readonly #table: PartitionTable;
  readonly #settings: TopicSettings;
  readonly #services: NodeServices;
  readonly #cluster: ClusterPolicy | null;
  readonly #deletions: ReadonlyMap<string, Promise<void>>;
  readonly #inSyncReplicas: (topic: string, index: number) => InSyncReplicas;
  readonly #checkOpen: () => void;
  /** The new writer epoch being started, which a call that overlaps it shares. */
  #newEpoch: Promise<StreamId> | null = null;

  constructor(deps: AdoptedPartitionsDeps) {
    this.#directory = deps.directory;
    this.#clock = deps.clock;
    this.#disk = deps.disk;
    this.#logger = deps.logger;
    this.#registry = deps.registry;
    this.#table = deps.table;
    this.#settings = deps.settings;
    this.#services = deps.services;
    this.#cluster = deps.cluster;
    this.#deletions = deps.deletions;
    this.#inSyncReplicas = deps.inSyncReplicas;
    this.#checkOpen = deps.checkOpen;
  }

  /**
   * The local log an adoption rebuilds into (the topic registered, a fresh directory unless kept). A disk that refuses
   * it (full, read-only, failing) counts as a failed write: the engine then reports its storage
   * failing, and a cluster broker stops claiming partitions it could not serve (sim seed 90063: a
   * full disk claimed one partition again every scan, and no healthy broker took it over).
   */
  #openAdoptedLog(topic: string, topicId: TopicId, partitionCount: number, directory: string, keepLocalLog: boolean, logDisk: Disk): PartitionLog {
    try {
      this.#registerIncarnation(topic, topicId, partitionCount);
      // The chain is the truth; stale local data is not (nor synced while it was rebuilt: adopt).
      if (!keepLocalLog && !regressed('adoption-keeps-local-log')) this.#disk.rmSync(directory, { recursive: true, force: true });
      preparePartitionDirectory(directory, topicId, logDisk); // another incarnation's directory is removed here, kept or not
      return PartitionLog.open(directory, { config: this.#settings.logConfigOf(topic), clock: this.#clock, storage: this.#services.storage, disk: logDisk });
    } catch (error) {
      // As much room as the registry's rewrite took: a probe that finds less leaves the spell on (a page would end it, and the claims would start again).
      if (isOsError(error)) this.#services.storage.writeFailed(directory, error, this.#registry.lastWriteBytes);
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
  async adopt(
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
    if (this.#table.get(topic)?.[index] !== undefined) throw new FerryError('InvalidArgument', `${topic}-${index} is already served here`);
    const directory = join(this.#directory, `${topic}-${index}`);
    // [C5] An adopted log is a cache of its chain: each adoption starts from an empty directory (or,
    // promoted in this process [K3], from the log it followed), so no crash leaves a log that is read
    // again, and what it acknowledges is durable in the WAL. The fsyncs of its preparation and
    // rebuild (~10 an adoption, each blocking the event loop: the top of a profile of a broker
    // adopting 500 partitions, issue 28) buy nothing; once it serves they run again, where a failing disk shows [C1].
    const barriers = new BarriersOnceArmed(this.#disk);
    const log = this.#openAdoptedLog(topic, topicId, partitionCount, directory, keepLocalLog, diskWithSync(this.#disk, barriers));
    logRecovery(this.#logger, topic, index, log);
    try {
      log.holdEpochCheckpoint(); // written once when the rebuild ended, not at each epoch it met (LeaderEpochCache.holdWrites)
      await rebuild(log);
      // Its first produce then finds its epoch in place: one checkpoint written, not two (an older epoch is refused at that produce, as before).
      if (as === 'leader' && leaderEpoch > log.latestEpoch) log.startLeaderEpoch(leaderEpoch);
      log.writeEpochCheckpoint();
      // The engine may have closed during the rebuild (a broker's stop during a takeover): its
      // close let go of every partition it held, so this log would stay open, locked, served by nothing.
      this.#checkOpen();
    } catch (error) {
      await log.close();
      throw error;
    }
    // The topic's configs as they are now: applyTopicConfigs reaches only the partitions served, and
    // a rebuild takes a while (sim seed 30174: an alter answered mid-rebuild never reached this one).
    log.reconfigure(this.#settings.logConfigOf(topic));
    const partitions = this.#table.get(topic) ?? [];
    this.#settings.noteReplicationFactor(topic, index, replicationFactor);
    const requiredFollowers = this.#settings.requiredFollowers(topic, index);
    const role: PartitionRole = as === 'leader' ? { kind: 'leader', requiredFollowers, isr: this.#inSyncReplicas(topic, index) } : { kind: 'follower' };
    // A partition let go of ([C6], [C7]) acknowledges nothing more, whatever its waiters' durability.
    const gate = () => {
      this.#cluster?.checkLeadership(topic, topicId);
      if (this.#table.get(topic)?.[index] !== partition) throw new FerryError('NotLeader', `${topic}-${index} is no longer led here`);
    };
    const partition: Partition = new Partition(topic, topicId, index, log, as === 'leader' ? this.#services.wal : null, role, log.logEndOffset, log.logEndOffset, { leaderEpoch, gate });
    // A follower serves what the chain's sealed streams hold (committed by whoever sealed them), and
    // past that only what its leader says is committed (noteLeaderHighWatermark), never its own log end.
    if (as === 'follower') partition.noteLeaderHighWatermark(log.logEndOffset);
    partitions[index] = partition;
    this.#table.set(topic, partitions);
    barriers.arm(); // it serves: from here on its fsyncs run
    return partition;
  }
  /**
   * Managed mode, after the WAL writer was fenced or failed ([C7]): fences the old writer (its
   * waiters are rejected, never resolved), releases every partition this engine leads (they
   * appended through it) and starts a writer in a new epoch. Followed partitions stay. Resolves
   * with the new stream; the caller re-adopts what it still leads through [C3]-[C5]. Throws
   * Storage when the store cannot say which epochs its writer id used: the partitions are
   * released and the old writer fenced all the same, and a retry picks up from there. Calls that
   * overlap share one new epoch; one that outlives the engine's close fails Closed, writing nothing.
   */
  startNewWalEpoch(): Promise<StreamId> {
    this.#newEpoch ??= this.#startNewWalEpoch().finally(() => {
      this.#newEpoch = null;
    });
    return this.#newEpoch;
  }

  async #startNewWalEpoch(): Promise<StreamId> {
    this.#checkOpen();
    const lifecycle = this.#services.walLifecycle;
    if (lifecycle === null || this.#cluster === null) throw new FerryError('InvalidArgument', 'only a managed engine with a WAL starts a new writer epoch while it runs');
    lifecycle.retire('a new writer epoch replaces this one');
    for (const [topic, partitions] of this.#table) {
      for (const [index, partition] of partitions.entries()) if (partition?.role.kind === 'leader') await this.release(topic, index);
    }
    return (await lifecycle.renew(this.#checkOpen)).config.stream;
  }
  /** Stops serving a partition (managed mode, [C6]): another broker leads it now. */
  async release(topic: string, index: number): Promise<void> {
    const partitions = this.#table.get(topic);
    const partition = partitions?.[index];
    if (partition === undefined) return;
    delete partitions![index];
    this.#settings.noteReplicationFactor(topic, index, null);
    partition.abandon(new FerryError('NotLeader', `${topic}-${index} is no longer led here`));
    await partition.log.close();
  }
  /** Registers `topicId` as the topic's incarnation here (managed mode), dropping an older one that nothing serves any more. */
  #registerIncarnation(topic: string, topicId: TopicId, partitionCount: number): void {
    const known = this.#registry.get(topic);
    if (known !== undefined && known.id !== topicId) {
      if (this.#table.get(topic)?.some((p) => p !== undefined))
        throw new FerryError('InvalidArgument', `${topic} is served here as topic id ${known.id}; let it go before adopting topic id ${topicId}`);
      this.#registry.remove(topic);
      this.#table.delete(topic);
    }
    if (this.#registry.get(topic) === undefined) this.#registry.add({ name: topic, partitions: partitionCount, config: {} }, topicId);
    else this.#registry.grow(topic, partitionCount);
  }
}
