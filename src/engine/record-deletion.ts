import { FerryError } from '../errors.ts';
import type { MetricsRegistry } from '../metrics/index.ts';
import type { RemoteReader } from '../tier/remote-reader.ts';
import type { Tierer } from '../tier/tierer.ts';
import type { Clock, Timer } from '../util/clock.ts';
import { isOsError } from '../util/os-error.ts';
import type { RetentionDeletion } from './engine-options.ts';
import type { Partition } from '../partition/partition.ts';
import type { PartitionReads } from './partition-reads.ts';
import type { PartitionTable } from './partition-table.ts';

/** DeleteRecords' offset meaning "up to the high watermark" (Kafka's DeleteRecordsRequest.HIGH_WATERMARK). */
const DELETE_TO_HIGH_WATERMARK = -1;
/** Kafka's log.retention.check.interval.ms. */
const RETENTION_CHECK_INTERVAL_MS = 5 * 60 * 1000;

/** What RecordDeletion works with: the engine's partitions, reads and tier services. */
export interface RecordDeletionDeps {
  readonly table: PartitionTable;
  readonly reads: PartitionReads;
  readonly remote: RemoteReader | null;
  readonly tierer: Tierer | null;
  readonly clock: Clock;
  readonly metrics: MetricsRegistry | undefined;
  readonly onRetention: ((deletion: RetentionDeletion) => void) | undefined;
  /** EngineOptions.retentionCheckIntervalMs, checked at open. */
  readonly checkIntervalMs: number | undefined;
  readonly closed: () => boolean;
  readonly checkOpen: () => void;
}

/**
 * What moves a partition's log start up: Kafka's DeleteRecords on a leader (and its followers
 * taking it up [R6]), and retention by time and size, every RETENTION_CHECK_INTERVAL_MS. With a
 * tier, local segments go only once tiered [D1].
 */
export class RecordDeletion {
  readonly #table: PartitionTable;
  readonly #reads: PartitionReads;
  readonly #remote: RemoteReader | null;
  readonly #tierer: Tierer | null;
  readonly #clock: Clock;
  readonly #metrics: MetricsRegistry | undefined;
  readonly #onRetention: ((deletion: RetentionDeletion) => void) | undefined;
  readonly #checkIntervalMs: number;
  readonly #closed: () => boolean;
  readonly #checkOpen: () => void;
  #timer: Timer | null = null;

  constructor(deps: RecordDeletionDeps) {
    this.#table = deps.table;
    this.#reads = deps.reads;
    this.#remote = deps.remote;
    this.#tierer = deps.tierer;
    this.#clock = deps.clock;
    this.#metrics = deps.metrics;
    this.#onRetention = deps.onRetention;
    this.#checkIntervalMs = deps.checkIntervalMs ?? RETENTION_CHECK_INTERVAL_MS;
    this.#closed = deps.closed;
    this.#checkOpen = deps.checkOpen;
  }

  /** Stops the retention rounds (at close). */
  stop(): void {
    this.#timer?.cancel();
  }

  /**
   * DeleteRecords' checks on the leader, before anything changes: the offset the log start is to
   * move to (-1: the high watermark). NotLeader on a follower; OffsetOutOfRange for an offset
   * below -1 or above the high watermark, with Kafka's messages.
   */
  deleteRecordsOffset(topic: string, index: number, beforeOffset: number): number {
    const target = this.#table.partition(topic, index);
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
    const target = this.#table.partition(topic, index);
    target.log.deleteRecordsBefore(offset, this.#tieredEndForDeletes(target));
    return this.#reads.logStartOffsetOf(target);
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
    const target = this.#table.partition(topic, index);
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
    const target = this.#table.partition(topic, index);
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
    return Math.min(this.#reads.logStartOffsetOf(target), target.lowestInSyncFollowerStart() ?? Infinity);
  }
  /**
   * A followed partition learns its leader's log start (a cluster's partition record): it serves
   * nothing below it, as far as its log reaches (the rest once the tail brings it: the caller
   * says it again). No segment is deleted: a promoted follower's log must still reach the tier's end.
   */
  followLogStart(topic: string, index: number, logStartOffset: number): void {
    const partition = this.#table.get(topic)?.[index];
    if (partition?.role.kind !== 'follower') return;
    const { log } = partition;
    log.deleteRecordsBefore(Math.min(logStartOffset, log.logEndOffset), log.logStartOffset);
  }
  /** Where local segments may go for a tiering leader: below the tiered end only (0 until the tierer read it); null without a tier. */
  #tieredEndForDeletes(target: Partition): number | null {
    if (this.#tierer === null || !target.log.config.remoteStorageEnable) return null;
    return this.#tierer.localDeletableEndOf(target.topicId, target.index, target.log) ?? target.log.logStartOffset;
  }
  /** Applies retention now (it also runs every five minutes); returns the segments deleted. */
  enforceRetention(): number {
    this.#checkOpen();
    let deleted = 0;
    for (const partition of this.#table.all()) {
      const tieredEnd = this.#localRetentionBound(partition); // flat() skips managed mode's holes
      const fromOffset = partition.log.logStartOffset;
      const segments = partition.log.enforceRetention(tieredEnd);
      deleted += segments;
      if (segments > 0) {
        const { logStartOffset: toOffset, logEndOffset } = partition.log;
        this.#onRetention?.({ topic: partition.topic, partition: partition.index, directory: partition.log.directory, fromOffset, toOffset, logEndOffset, tieredEnd });
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
  scheduleRetention(): void {
    this.#timer = this.#clock.setTimer(
      this.#checkIntervalMs,
      () => {
        if (this.#closed()) return;
        try {
          this.enforceRetention();
        } catch (error) {
          // An OS failure (EMFILE) postpones retention to the next round; it must not end the process.
          this.#metrics?.counter('ferry_engine_retention_failures_total', 'Retention rounds that failed (retried at the next interval)').add();
          if (!isOsError(error)) throw error;
        }
        this.scheduleRetention();
      },
      true,
    );
  }
}

/** Kafka's DeleteRecords offset checks (ReplicaManager, UnifiedLog.maybeIncrementLogStartOffset): -1 is the high watermark. */
function resolveDeleteRecordsOffset(partition: string, beforeOffset: number, highWatermark: number): number {
  const offset = beforeOffset === DELETE_TO_HIGH_WATERMARK ? highWatermark : beforeOffset;
  if (!Number.isSafeInteger(offset) || offset < 0) throw new FerryError('OffsetOutOfRange', `The offset ${offset} for partition ${partition} is not valid`);
  if (offset > highWatermark)
    throw new FerryError('OffsetOutOfRange', `Cannot increment the log start offset to ${offset} of partition ${partition} since it is larger than the high watermark ${highWatermark}`);
  return offset;
}
