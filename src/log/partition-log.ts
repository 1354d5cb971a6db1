import { firstRecordAtOrAfter, type TimestampAndOffset } from '../format/timestamp-lookup.ts';
import { join } from 'node:path';
import { FerryError, isFerryError } from '../errors.ts';
import { parseBatchAt, splitBatches } from '../format/batch-parse.ts';
import { LOG_OVERHEAD_BYTES, RecordBatch } from '../format/record-batch.ts';
import { assert } from '../util/assert.ts';
import { type Clock, systemClock } from '../util/clock.ts';
import { type Disk, readTextFileSync, systemDisk } from '../util/disk.ts';
import { makeDirectoriesSync, writeFileAtomicSync } from '../util/files.ts';
import { isOsError } from '../util/os-error.ts';
import { LOCAL_RETENTION_AS_RETENTION, type LogConfig, resolveLogConfig } from './config.ts';
import { GroupCommit } from './group-commit.ts';
import { type EpochEntry, LEADER_EPOCH_CHECKPOINT_FILE, LeaderEpochCache } from './leader-epoch-cache.ts';
import { scanSegment } from './recovery.ts';
import { readLogStartCheckpoint, writeLogStartCheckpoint } from './log-start-checkpoint.ts';
import { regressed } from '../util/regressions.ts';
import { type ActiveProducer, checkedSnapshot, type ProducerBatch, ProducerStateManager } from './producer-state.ts';
import { LogSegment, parseSegmentFileName } from './segment.ts';
import type { StorageObserver } from './storage-health.ts';

/** Written at a clean close, removed at open: its absence means the last run crashed. */
export const CLEAN_SHUTDOWN_FILE = 'clean-shutdown';
/** Batch header bytes needed to skip a batch: baseOffset, batchLength, ..., lastOffsetDelta. */
const SKIP_HEADER_BYTES = 27;
const LAST_OFFSET_DELTA_POSITION = 23;
/**
 * Bytes read at once while skipping from an index entry to a fetch's first batch: one read
 * covers a whole index interval of small batches instead of a read per batch header.
 */
const SKIP_WINDOW_BYTES_MIN = 8 * 1024;
/**
 * Kafka's log.message.timestamp.after.max.ms (1 hour, its default since 4.0): a leader refuses a
 * batch whose CreateTime is further ahead of its clock. Batch timestamps are the log's time, by
 * which producers expire: one bogus future timestamp would otherwise expire every other producer,
 * and their retries would land twice. Costs clients whose clock runs an hour fast INVALID_TIMESTAMP.
 */
export const TIMESTAMP_AFTER_MAX_MS = 60 * 60 * 1000;
/** Bytes of log read per step when replaying batches into the producer state. */
const REPLAY_READ_BYTES = 1024 * 1024;
/**
 * The largest batch a replica append or a recovery scan takes: a batch already in a log was taken by
 * a leader under the max.message.bytes of its day, and a limit lowered since must not make it
 * unreadable (Kafka applies max.message.bytes to a leader's appends only). Segment positions are
 * int32, so no batch is larger; recovery still finds a torn length by the file's end.
 */
const STORED_BATCH_BYTES_MAX = 2 ** 31 - 1;
/** AppendResult.logAppendTimeMs of a CreateTime topic (Kafka's -1). */
const NO_LOG_APPEND_TIME = -1;

export interface PartitionLogOptions {
  readonly config?: Partial<LogConfig>;
  readonly clock?: Clock;
  /** Where the log's files live and how they are synced and locked: node:fs unless a simulation or a power-loss test injects its own. */
  readonly disk?: Disk;
  /** Told of every failed write and of the writes that succeed (the engine logs and counts them). */
  readonly storage?: StorageObserver;
}

export interface AppendResult {
  readonly baseOffset: number;
  readonly lastOffset: number;
  /** The appended batches, as views of the caller's buffer with offsets and epoch assigned. */
  readonly batches: readonly RecordBatch[];
  readonly sizeBytes: number;
  /**
   * The batch was a retry of one the log already holds (same producer, epoch and sequences):
   * nothing was written, and the offsets are the original's.
   */
  readonly duplicate: boolean;
  /** message.timestamp.type=LogAppendTime: the time the leader stamped on the batches (a duplicate: on the original); -1 otherwise. */
  readonly logAppendTimeMs: number;
}

export interface ReadResult {
  /** Whole batches, starting with the one that holds the requested offset; views of one buffer per segment. */
  readonly batches: RecordBatch[];
  readonly logStartOffset: number;
  readonly logEndOffset: number;
}

export interface RecoveryReport {
  readonly cleanShutdown: boolean;
  readonly segmentsScanned: number;
  readonly truncatedBytes: number;
  readonly stopReason: string | null;
}

interface CleanShutdownState {
  readonly logEndOffset: number;
  readonly activeSizeBytes: number;
  readonly activeMaxTimestamp: number;
  readonly activeFirstBatchTimestamp: number;
  readonly activeLastBatchBaseOffset: number;
}

/**
 * One partition's log on local disk (Kafka's UnifiedLog, local part): segments in offset order,
 * the last one active. Leaders `append` (offsets assigned here), followers `appendReplica`
 * (offsets kept, gaps and overlaps refused). All file writes are synchronous and happen inside
 * one call, so appends never interleave; only fdatasync runs in the background (GroupCommit).
 * Invariants: segments are contiguous (each base offset is its predecessor's next offset);
 * logStartOffset <= flushedOffset <= logEndOffset.
 * A failed write (a full disk, an I/O error) leaves the log as it was before it and is answered
 * as Storage; a failed fdatasync keeps the batches written (their requests failed, their retries
 * are duplicates) and the log refuses writes until the next write attempt has written the unsynced
 * bytes again and synced them. Either way the log recovers by itself once the disk does.
 */
export class PartitionLog {
  readonly directory: string;
  readonly recovery: RecoveryReport;
  readonly #clock: Clock;
  readonly #unlock: () => void;
  readonly #epochs: LeaderEpochCache;
  readonly #segments: LogSegment[];
  readonly #commit: GroupCommit;
  readonly #disk: Disk;
  readonly #producers: ProducerStateManager;
  readonly #storage: StorageObserver | null;
  /** The log's settings now: a topic's config change replaces them while it runs (reconfigure). */
  #config: LogConfig;
  #closed = false;
  /** Set when unsynced bytes read back damaged after a failed fdatasync: writes fail until a restart. */
  #damaged: FerryError | null = null;
  /** The log start DeleteRecords set (its checkpoint): only ever rises. */
  #deletedBefore: number;

  private constructor(
    directory: string,
    config: LogConfig,
    clock: Clock,
    unlock: () => void,
    epochs: LeaderEpochCache,
    segments: LogSegment[],
    recovery: RecoveryReport,
    disk: Disk,
    storage: StorageObserver | null,
  ) {
    this.#disk = disk;
    this.directory = directory;
    this.#config = config;
    this.#clock = clock;
    this.#unlock = unlock;
    this.#epochs = epochs;
    this.#segments = segments;
    this.recovery = recovery;
    this.#storage = storage;
    this.#deletedBefore = readLogStartCheckpoint(directory, disk);
    this.#commit = new GroupCommit(config.flush, clock, this.logEndOffset, () =>
      this.#activeSegment()
        .flush()
        .catch((error: unknown) => {
          this.#storage?.writeFailed(this.directory, error);
          throw error;
        }),
    );
    this.#producers = new ProducerStateManager(directory, undefined, disk);
    this.#rebuildProducerState();
  }

  /** Opens (creating if needed) the log in `directory`, recovering it after a crash. */
  static open(directory: string, options: PartitionLogOptions = {}): PartitionLog {
    const config = resolveLogConfig(options.config);
    const disk = options.disk ?? systemDisk;
    makeDirectoriesSync(directory, disk);
    const unlock = disk.lockSync(directory);
    try {
      const learnEpochs = !disk.existsSync(join(directory, LEADER_EPOCH_CHECKPOINT_FILE));
      const epochs = LeaderEpochCache.open(directory, disk);
      const { segments, report } = openSegments(directory, config, epochs, learnEpochs, disk);
      const log = new PartitionLog(directory, config, options.clock ?? systemClock, unlock, epochs, segments, report, disk, options.storage ?? null);
      // A crash took the log below the start DeleteRecords set (its segments unsynced, the checkpoint synced): it starts there, as Kafka's does.
      if (log.#deletedBefore > log.logEndOffset) log.startAt(log.#deletedBefore, log.leaderEpochs, null);
      return log;
    } catch (error) {
      unlock();
      throw error;
    }
  }

  /** The first offset the local segments hold (what retention and rebuilds move); see deletedBeforeOffset for what clients may read. */
  get logStartOffset(): number {
    return this.#segments[0]!.baseOffset;
  }

  get config(): LogConfig {
    return this.#config;
  }

  /**
   * A topic's configs changed: the log takes `overrides` (over the defaults, as at open) from now
   * on: the next append, roll and retention pass go by them. The flush policy is the broker's and
   * stays (its group commit is running). InvalidArgument for settings resolveLogConfig rejects.
   */
  reconfigure(overrides: Partial<LogConfig>): void {
    this.#checkOpen();
    this.#config = { ...resolveLogConfig(overrides), flush: this.#config.flush };
  }

  /**
   * Kafka's log start as DeleteRecords moved it (its log-start-offset checkpoint; 0: never):
   * offsets below it are gone for clients even where a segment still holds them. It may lie
   * inside a segment, or below logStartOffset once retention passed it.
   */
  get deletedBeforeOffset(): number {
    return this.#deletedBefore;
  }

  /**
   * DeleteRecords' effect on the local log: the log start rises to `offset` (never falls), durably
   * before anything else, and the sealed segments wholly below it are deleted. With a tier
   * (`tieredEnd` given) only those wholly below the tiered end too: the others are still to be
   * tiered ([D1]: local disk is the tier's source). The caller checked `offset` against the high
   * watermark. Returns the segments deleted.
   */
  deleteRecordsBefore(offset: number, tieredEnd: number | null = null): number {
    this.#checkOpen();
    assert(Number.isSafeInteger(offset) && offset >= 0 && offset <= this.logEndOffset, `records before ${offset} are deleted from a log ending at ${this.logEndOffset}`);
    if (offset > this.#deletedBefore) {
      try {
        if (!regressed('delete-records-not-durable')) writeLogStartCheckpoint(this.directory, offset, this.#disk);
      } catch (error) {
        throw this.#failedWrite(error);
      }
      this.#deletedBefore = offset;
    }
    const deletableEnd = Math.min(this.#deletedBefore, tieredEnd ?? Number.POSITIVE_INFINITY);
    let deleted = 0;
    while (this.#segments.length > 1 && this.#segments[1]!.baseOffset <= deletableEnd) {
      this.#segments.shift()!.delete(); // oldest first: what is left stays contiguous
      deleted++;
    }
    if (deleted > 0) this.#producers.deleteSnapshotsBefore(this.logStartOffset);
    return deleted;
  }

  /** The idempotent producers the log's producer state holds (DescribeProducers). */
  activeProducers(): ActiveProducer[] {
    return this.#producers.activeProducers();
  }

  get logEndOffset(): number {
    return this.#activeSegment().nextOffset;
  }

  /** Offsets below this are on disk (fdatasync'd). */
  get flushedOffset(): number {
    return this.#commit.flushedOffset;
  }

  get latestEpoch(): number {
    return this.#epochs.latestEpoch;
  }

  /** Which leader epoch wrote from which offset on, oldest first (the leader-epoch checkpoint). */
  get leaderEpochs(): readonly EpochEntry[] {
    return this.#epochs.entries;
  }

  get sizeBytes(): number {
    return this.#segments.reduce((sum, segment) => sum + segment.sizeBytes, 0);
  }

  /** Bytes of the segments that start at or after `offset` (a segment holding `offset` inside it is not counted). */
  sizeBytesFrom(offset: number): number {
    return this.#segments.reduce((sum, segment) => sum + (segment.baseOffset >= offset ? segment.sizeBytes : 0), 0);
  }

  /** Bytes from the batch holding `offset` (clamped to the log start) to the log end. */
  bytesFrom(offset: number): number {
    this.#checkOpen();
    if (offset >= this.logEndOffset) return 0;
    const from = Math.max(offset, this.logStartOffset);
    const index = this.#segmentIndexFor(from);
    const holding = this.#segments[index]!;
    const later = this.#segments.slice(index + 1).reduce((sum, segment) => sum + segment.sizeBytes, 0);
    return holding.sizeBytes - this.#positionOf(holding, from) + later;
  }

  /** The base offset of the batch holding `offset`; the log end for `offset` at or past it. */
  batchBaseOf(offset: number): number {
    if (offset >= this.logEndOffset) return this.logEndOffset;
    return this.read(offset, 1).batches[0]!.baseOffset;
  }

  get segmentBaseOffsets(): number[] {
    return this.#segments.map((segment) => segment.baseOffset);
  }

  /** The last batches the log holds of an idempotent producer (oldest first); empty if unknown. */
  producerBatches(producerId: number): readonly ProducerBatch[] {
    return this.#producers.batchesOf(producerId);
  }

  /**
   * Appends a producer's batches (whole v2 batches, concatenated) as leader in `leaderEpoch`:
   * offsets from the log end are written into the batches in place, with the epoch. Everything
   * is validated before anything is written, so a rejected append leaves the log unchanged.
   * Idempotent producers' sequences are checked here, in the same synchronous call as the write:
   * a retry of a batch the log holds is answered with the original's offsets (`duplicate`).
   */
  append(records: Uint8Array, leaderEpoch: number): AppendResult {
    this.#checkWritable();
    const batches = splitBatches(records, this.config.maxBatchBytes);
    if (leaderEpoch < this.#epochs.latestEpoch || !Number.isSafeInteger(leaderEpoch) || leaderEpoch > 0x7fffffff) {
      throw new FerryError('InvalidArgument', `leader epoch ${leaderEpoch} is invalid; the log is at epoch ${this.#epochs.latestEpoch}`);
    }
    const appendTimeMs = this.config.messageTimestampType === 'LogAppendTime' && !regressed('log-append-time-ignored') ? this.#clock.nowMs() : NO_LOG_APPEND_TIME;
    if (appendTimeMs === NO_LOG_APPEND_TIME) this.#checkTimestamps(batches); // a producer's clock is ignored under LogAppendTime
    const original = this.#producers.check(batches);
    // A retry answers the time its original was stamped with, as Kafka's duplicate answers its batch's timestamp.
    if (original !== null)
      return {
        baseOffset: original.baseOffset,
        lastOffset: original.lastOffset,
        batches: [],
        sizeBytes: 0,
        duplicate: true,
        logAppendTimeMs: appendTimeMs === NO_LOG_APPEND_TIME ? NO_LOG_APPEND_TIME : original.maxTimestamp,
      };
    let nextOffset = this.logEndOffset;
    for (const batch of batches) {
      batch.setBaseOffset(nextOffset);
      batch.setPartitionLeaderEpoch(leaderEpoch);
      if (appendTimeMs !== NO_LOG_APPEND_TIME) batch.setLogAppendTime(appendTimeMs); // last: it recomputes the CRC
      nextOffset = batch.nextOffset;
    }
    return { ...this.#write(batches), logAppendTimeMs: appendTimeMs };
  }

  /** Leader only: a replica takes what its leader took, or it would not hold the same log. */
  #checkTimestamps(batches: readonly RecordBatch[]): void {
    const latestMs = this.#clock.nowMs() + TIMESTAMP_AFTER_MAX_MS;
    for (const batch of batches) {
      if (batch.timestampType === 'CreateTime' && batch.maxTimestamp > latestMs) {
        throw new FerryError('InvalidTimestamp', `batch timestamp ${batch.maxTimestamp} is more than ${TIMESTAMP_AFTER_MAX_MS} ms ahead of the broker's clock (${this.#clock.nowMs()})`);
      }
    }
  }

  /**
   * Appends batches copied from the leader, keeping their offsets and epochs. The first batch
   * must start exactly at the log end and each must follow the previous: no gap, no overlap.
   */
  appendReplica(records: Uint8Array): AppendResult {
    this.#checkWritable();
    const batches = splitBatches(records, STORED_BATCH_BYTES_MAX);
    let expected = this.logEndOffset;
    let epoch = this.#epochs.latestEpoch;
    for (const batch of batches) {
      if (batch.baseOffset !== expected) {
        const what = batch.baseOffset > expected ? 'a gap' : 'an overlap';
        throw new FerryError('InvalidOffsets', `replica batch at offset ${batch.baseOffset} would leave ${what}: the log ends at ${expected}`);
      }
      if (batch.partitionLeaderEpoch < epoch) {
        throw new FerryError('InvalidOffsets', `replica batch at offset ${batch.baseOffset} has leader epoch ${batch.partitionLeaderEpoch}, below ${epoch}`);
      }
      epoch = batch.partitionLeaderEpoch;
      expected = batch.nextOffset;
    }
    return this.#write(batches);
  }

  /** Resolves once every offset up to and including `offset` is on disk per the flush policy. */
  waitForFlush(offset: number): Promise<void> {
    return this.#commit.waitFor(offset);
  }

  /**
   * Reads whole batches from `offset` on: the first holds `offset` and is returned even when
   * larger than `maxBytes`; later ones only while the total stays within `maxBytes`.
   */
  read(offset: number, maxBytes: number): ReadResult {
    this.#checkOpen();
    const result: ReadResult = { batches: [], logStartOffset: this.logStartOffset, logEndOffset: this.logEndOffset };
    if (offset < result.logStartOffset || offset > result.logEndOffset || !Number.isSafeInteger(offset)) {
      throw new FerryError('OffsetOutOfRange', `offset ${offset} is outside the log [${result.logStartOffset}, ${result.logEndOffset}]`);
    }
    let budgetBytes = maxBytes;
    let segmentIndex = this.#segmentIndexFor(offset);
    let position = this.#positionOf(this.#segments[segmentIndex]!, offset);
    while (segmentIndex < this.#segments.length) {
      const segment = this.#segments[segmentIndex]!;
      const mustReturnOne = result.batches.length === 0;
      const taken = readWholeBatches(segment, position, budgetBytes, mustReturnOne, result.batches);
      budgetBytes -= taken;
      if (budgetBytes <= 0 || position + taken < segment.sizeBytes) break;
      segmentIndex++;
      position = 0;
    }
    return result;
  }

  /** The first record at or above the log start (DeleteRecords' included) whose timestamp is at or after `timestamp`, and that timestamp; null if none. */
  offsetForTimestamp(timestamp: number): TimestampAndOffset | null {
    this.#checkOpen();
    for (const segment of this.#segments) {
      if (segment.maxTimestamp < timestamp) continue;
      const found = this.#firstRecordAt(segment, timestamp);
      if (found !== null) return found; // none in it at or above the log start: look further
    }
    return null;
  }

  /**
   * KIP-734's MAX_TIMESTAMP: the record with the largest timestamp in the log (the first of them
   * if several share it), and that timestamp; null for an empty log. Only the segment holding it
   * is scanned (each segment knows its largest batch timestamp).
   */
  maxTimestampRecord(): TimestampAndOffset | null {
    this.#checkOpen();
    let latest: LogSegment | undefined;
    for (const segment of this.#segments) if (segment.maxTimestamp >= 0 && (latest === undefined || segment.maxTimestamp > latest.maxTimestamp)) latest = segment;
    if (latest === undefined) return null;
    return this.#firstRecordAt(latest, latest.maxTimestamp);
  }

  #firstRecordAt(segment: LogSegment, timestamp: number): TimestampAndOffset | null {
    let position = this.#positionOf(segment, segment.timeIndex.lookup(timestamp));
    while (position < segment.sizeBytes) {
      const batches: RecordBatch[] = [];
      position += readWholeBatches(segment, position, this.config.maxBatchBytes, true, batches);
      for (const batch of batches) {
        const found = firstRecordAtOrAfter(batch, timestamp, Math.max(this.logStartOffset, this.#deletedBefore));
        if (found !== null) return found;
      }
    }
    return null;
  }

  /** Seals the active segment and starts a new one at the log end; a no-op when it is empty. */
  roll(): void {
    this.#checkWritable();
    try {
      this.#roll();
    } catch (error) {
      throw this.#failedWrite(error);
    }
  }

  /** A failed roll leaves the active segment active: the next append that needs it rolls again. */
  #roll(): void {
    const active = this.#activeSegment();
    if (active.isEmpty) return;
    this.#syncOrFail(active); // a sealed segment is always on disk: recovery scans only the active one
    active.writeIndexes();
    this.#segments.push(LogSegment.create(this.directory, active.nextOffset, this.config.indexIntervalBytes, this.#disk));
    this.#snapshotProducers();
  }

  /**
   * Deletes the oldest sealed segments beyond retention.bytes or retention.ms; returns how many.
   * With a tier (`tieredEnd` given, docs/tier-protocol.md [D1]), local disk is a cache: only
   * segments wholly below the tiered end go, by local.retention.bytes / local.retention.ms (the
   * tier's own retention is the tierer's, [T7]).
   */
  enforceRetention(tieredEnd: number | null = null): number {
    this.#checkOpen();
    const { bytes: retentionBytes, ms: retentionMs } = tieredEnd === null ? { bytes: this.config.retentionBytes, ms: this.config.retentionMs } : localRetention(this.config);
    let totalBytes = this.sizeBytes;
    let deleted = 0;
    while (this.#segments.length > 1) {
      const oldest = this.#segments[0]!;
      if (tieredEnd !== null && this.#segments[1]!.baseOffset > tieredEnd) break; // not wholly tiered yet
      const overSize = retentionBytes >= 0 && (regressed('retention-bytes-off-by-segment') ? totalBytes > retentionBytes : totalBytes - oldest.sizeBytes >= retentionBytes);
      const expired = retentionMs >= 0 && oldest.maxTimestamp < this.#clock.nowMs() - retentionMs;
      if (!overSize && !expired) break;
      this.#segments.shift();
      oldest.delete();
      totalBytes -= oldest.sizeBytes;
      deleted++;
    }
    if (deleted > 0) this.#producers.deleteSnapshotsBefore(this.logStartOffset);
    return deleted;
  }

  /**
   * Empties the log and starts it over at `offset` (Kafka's truncateFullyAndStartAt): a rebuild
   * from the tier (docs/tier-protocol.md [K2]), whose offsets below `offset` live in tiered
   * segments. `epochs` are the leader epochs in effect up to there and `producers` the producer
   * state there (a tiered segment's snapshot; null: none, the state starts empty). A crash part
   * way leaves a valid log, a suffix of the old one or the empty one, for the rebuild to redo.
   */
  startAt(offset: number, epochs: readonly EpochEntry[], producers: Uint8Array | null): void {
    this.#checkOpen();
    assert(Number.isSafeInteger(offset) && offset >= 0, `a log starts at offset ${offset}`);
    if (producers !== null) checkedSnapshot(producers, offset); // refused before anything changes
    try {
      while (this.#segments.length > 1) this.#segments.shift()!.delete(); // oldest first: what is left stays contiguous
      const old = this.#activeSegment();
      if (old.baseOffset === offset) {
        old.delete();
        // Its files are gone: until the new one exists, this log is nothing a write may use (an open finds no segment, and starts empty).
        this.#damaged = new FerryError('Storage', `log ${this.directory}: starting over at offset ${offset} failed part way; restart to recover`);
      }
      const fresh = LogSegment.create(this.directory, offset, this.config.indexIntervalBytes, this.#disk);
      if (old.baseOffset !== offset) old.delete();
      this.#segments.splice(0, 1, fresh);
      this.#damaged = null;
      this.#epochs.reset(epochs.filter((entry) => entry.startOffset < offset));
      this.#producers.startAt(offset, producers);
      this.#commit.restartAt(offset, new FerryError('Closed', `log ${this.directory} started over at offset ${offset}`));
      this.#storage?.writeSucceeded();
    } catch (error) {
      throw this.#failedWrite(error);
    }
  }

  /** The producer state at `offset` (between the log start and end) as snapshot bytes: what a tiered segment ending there carries. */
  producerSnapshotAt(offset: number): Uint8Array {
    this.#checkOpen();
    if (offset < this.logStartOffset || offset > this.logEndOffset)
      throw new FerryError('OffsetOutOfRange', `no producer state at offset ${offset}: the log holds ${this.logStartOffset}..${this.logEndOffset}`);
    const holdingBase = this.#segments[this.#segmentIndexFor(offset)]!.baseOffset; // its roll snapshot stays
    return this.#producers.snapshotAt(
      offset,
      this.logStartOffset,
      (from, to, apply) => {
        for (let at = from; at < to; ) {
          const { batches } = this.read(at, REPLAY_READ_BYTES);
          for (const batch of batches) if (batch.baseOffset >= at && batch.baseOffset < to) apply(batch);
          at = batches.at(-1)!.nextOffset;
        }
      },
      holdingBase,
    );
  }

  /** Removes every batch at or after `offset` (a follower diverged from its leader). */
  truncateTo(offset: number): void {
    this.#checkWritable();
    try {
      this.#truncate(offset);
    } catch (error) {
      throw this.#failedWrite(error);
    }
  }

  #truncate(offset: number): void {
    if (offset >= this.logEndOffset) return;
    if (offset < this.logStartOffset) throw new FerryError('OffsetOutOfRange', `cannot truncate to ${offset}, before the log start ${this.logStartOffset}`);
    while (this.#segments.length > 1 && this.#activeSegment().baseOffset >= offset) this.#segments.pop()!.delete();
    const active = this.#activeSegment();
    if (active.nextOffset > offset) {
      scanSegment(active, { maxBatchBytes: STORED_BATCH_BYTES_MAX, epochs: this.#epochs, learnEpochs: false, endOffset: offset });
    }
    this.#epochs.truncateFromEnd(this.logEndOffset);
    this.#commit.noteTruncated(this.logEndOffset);
    this.#rebuildProducerState();
  }

  /** Flushes everything written so far. */
  flush(): Promise<void> {
    this.#checkOpen();
    return this.#commit.flushNow();
  }

  /**
   * Flushes, writes the indexes and the clean-shutdown marker, releases the lock. Idempotent.
   * The indexes and the marker only spare the next start a recovery scan: if the OS refuses them
   * (EMFILE, ENOSPC) the log still closes, without the marker, and the next start recovers. A
   * flush that fails closes it too (then throws): an open log would keep the directory locked.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    let failure = this.#commit.failure;
    let flushFailure: unknown = null;
    if (failure === null) await this.#commit.flushNow().catch((error: unknown) => void (flushFailure = error));
    if (flushFailure !== null) failure = flushFailure instanceof Error ? flushFailure : new Error(String(flushFailure));
    this.#closed = true;
    this.#commit.abort(new FerryError('Closed', `log ${this.directory} is closed`));
    const active = this.#activeSegment();
    try {
      if (failure === null) {
        active.flushSync();
        try {
          active.writeIndexes();
          this.#snapshotProducers(); // before the marker: a clean shutdown finds everything in place
          writeCleanShutdown(this.directory, active, this.logEndOffset, this.#disk);
        } catch (error) {
          if (!isOsError(error)) throw error; // without the marker, the next open recovers (EMFILE at the fd limit)
        }
      }
    } finally {
      for (const segment of this.#segments) segment.close();
      this.#unlock();
    }
    if (flushFailure !== null) throw flushFailure;
  }

  #write(batches: RecordBatch[]): AppendResult {
    try {
      const result = this.#writeBatches(batches);
      this.#storage?.writeSucceeded();
      return result;
    } catch (error) {
      throw this.#failedWrite(
        error,
        batches.reduce((sum, batch) => sum + batch.sizeInBytes, 0),
      );
    }
  }

  #writeBatches(batches: RecordBatch[]): AppendResult {
    const first = batches[0]!;
    const last = batches.at(-1)!;
    const sizeBytes = batches.reduce((sum, batch) => sum + batch.sizeInBytes, 0);
    this.#maybeRoll(sizeBytes, last.maxTimestamp);
    const endBefore = this.logEndOffset;
    for (const batch of batches) this.#epochs.assign(batch.partitionLeaderEpoch, batch.baseOffset);
    const active = this.#activeSegment();
    try {
      active.append(batches); // cuts its file back itself when the write fails
    } catch (error) {
      this.#forgetEpochsFrom(endBefore);
      throw error;
    }
    for (const batch of batches) this.#producers.apply(batch); // the one path every batch takes [docs/design.md contract 11]
    const perAppend = this.config.flush.kind === 'per-append';
    if (perAppend) {
      try {
        active.flushSync();
      } catch (error) {
        // The batches stay, whole and in the producer state: this request fails, a retry is a duplicate.
        this.#commit.noteWritten(active.nextOffset, sizeBytes, false);
        this.#commit.fail(error);
        throw this.#commit.failure;
      }
    }
    this.#commit.noteWritten(active.nextOffset, sizeBytes, perAppend);
    return { baseOffset: first.baseOffset, lastOffset: last.lastOffset, batches, sizeBytes, duplicate: false, logAppendTimeMs: NO_LOG_APPEND_TIME };
  }

  /** Undoes the epoch entries of an append whose write failed (best effort: one at the log end is harmless). */
  #forgetEpochsFrom(endOffset: number): void {
    try {
      this.#epochs.truncateFromEnd(endOffset);
    } catch {
      // Recovery drops entries at or past the log end at the next open; the next epoch replaces it.
    }
  }

  /** A failed write as the Storage error the caller gets, told to the observer; bugs and bad input pass through. */
  #failedWrite(error: unknown, bytes = 0): unknown {
    const system = error as { code?: unknown; syscall?: unknown } | null;
    const fromDisk = isFerryError(error, 'Storage') || (typeof system?.code === 'string' && typeof system.syscall === 'string');
    if (!fromDisk) return error;
    this.#storage?.writeFailed(this.directory, error, bytes);
    if (isFerryError(error)) return error;
    return new FerryError('Storage', `log ${this.directory}: write failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }

  /**
   * After a failed fdatasync: the kernel may have marked the unsynced pages clean, so a second
   * fdatasync alone could report success for bytes that never reached the disk. The active
   * segment's bytes since the last good sync are written again and synced; then the log takes
   * writes again. A roll syncs the segment it seals, so only the active segment can hold them.
   */
  #recoverFromFailedSync(): void {
    const active = this.#activeSegment();
    const flushed = this.#commit.flushedOffset;
    const from = flushed <= active.baseOffset ? 0 : this.#positionOf(active, flushed);
    this.#checkReadBack(active, from, Math.max(flushed, active.baseOffset));
    active.rewriteFrom(from);
    this.#commit.recovered(this.logEndOffset);
  }

  /**
   * The unsynced bytes read back must be the batches written: a failed writeback may leave their
   * pages clean, and once evicted they read as what the disk held before ("fsyncgate"). Synced
   * again as read, they would be acknowledged garbage. Then nothing here can make them durable:
   * the log stays failed (Storage) until a restart, whose recovery cuts the log where the bytes go
   * bad (they were never acknowledged through this log; a WAL engine rebuilds them from its WAL).
   */
  #checkReadBack(segment: LogSegment, from: number, fromOffset: number): void {
    let position = from;
    let expected = fromOffset;
    while (position < segment.sizeBytes) {
      const header = segment.read(position, LOG_OVERHEAD_BYTES);
      const size = header.length === LOG_OVERHEAD_BYTES ? batchSizeAt(header, 0) : 0;
      const bytes = size > LOG_OVERHEAD_BYTES && position + size <= segment.sizeBytes ? segment.read(position, size) : header;
      let batch: RecordBatch | null = null;
      try {
        batch = parseBatchAt(bytes, 0, Number.MAX_SAFE_INTEGER);
      } catch {
        batch = null;
      }
      if (batch === null || batch.baseOffset !== expected) {
        this.#damaged = new FerryError(
          'Storage',
          `log ${this.directory}: after a failed fdatasync the unsynced batch at offset ${expected} reads back damaged (its pages were dropped); restart to recover`,
        );
        throw this.#damaged;
      }
      expected = batch.nextOffset;
      position += size;
    }
  }

  /**
   * Producer state from the newest snapshot at or below the log end, then the batches after it
   * replayed through the same `apply` as appends (after a crash or a truncation only the tail).
   */
  #rebuildProducerState(): void {
    const producers = this.#producers;
    const logEnd = this.logEndOffset;
    let offset = Math.max(producers.loadSnapshot(logEnd), this.logStartOffset);
    producers.skipTo(offset);
    while (offset < logEnd) {
      const { batches } = this.read(offset, REPLAY_READ_BYTES);
      for (const batch of batches) if (batch.baseOffset >= offset) producers.apply(batch);
      offset = batches.at(-1)!.nextOffset;
    }
  }

  /** Kafka's `<offset>.snapshot` at a roll and a clean close, so recovery replays only what came after. */
  #snapshotProducers(): void {
    try {
      this.#producers.writeSnapshot();
    } catch {
      // Only a shortcut is lost: recovery replays from an older snapshot or from the log start.
    }
  }

  #syncOrFail(segment: LogSegment): void {
    try {
      segment.flushSync();
    } catch (error) {
      this.#commit.fail(error);
      throw this.#commit.failure;
    }
  }

  #maybeRoll(incomingBytes: number, incomingMaxTimestamp: number): void {
    const active = this.#activeSegment();
    if (active.isEmpty) return;
    const full = active.sizeBytes + incomingBytes > this.config.segmentBytes;
    const old = incomingMaxTimestamp - active.firstBatchTimestamp >= this.config.segmentMs;
    if (full || old) this.#roll();
  }

  #activeSegment(): LogSegment {
    return this.#segments.at(-1)!;
  }

  /** Index of the last segment whose base offset is at or below `offset`. */
  #segmentIndexFor(offset: number): number {
    let low = 0;
    let high = this.#segments.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if (this.#segments[middle]!.baseOffset <= offset) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  /** File position of the batch holding `offset` in `segment`: index lookup, then skip headers. */
  #positionOf(segment: LogSegment, offset: number): number {
    let position = segment.offsetIndex.lookup(offset);
    const windowBytes = Math.max(SKIP_WINDOW_BYTES_MIN, this.config.indexIntervalBytes + SKIP_HEADER_BYTES);
    while (position < segment.sizeBytes) {
      const window = segment.read(position, windowBytes);
      let at = 0;
      while (at + SKIP_HEADER_BYTES <= window.length) {
        if (readInt64At(window, at) + readInt32At(window, at + LAST_OFFSET_DELTA_POSITION) >= offset) return position + at;
        at += LOG_OVERHEAD_BYTES + readInt32At(window, at + LOG_OVERHEAD_BYTES - 4);
      }
      if (at === 0) break; // the window ends inside the batch's header: impossible for whole batches
      position += at;
    }
    return position;
  }

  #checkOpen(): void {
    if (this.#closed) throw new FerryError('Closed', `log ${this.directory} is closed`);
  }

  /** Open, and any failed sync recovered from first (or the Storage error of why not). */
  #checkWritable(): void {
    this.#checkOpen();
    if (this.#commit.failure === null) return;
    if (this.#damaged !== null) throw this.#damaged; // read back once: told once, then refused at once
    try {
      this.#recoverFromFailedSync();
    } catch (error) {
      throw this.#failedWrite(error);
    }
  }
}

/**
 * Appends to `out` the whole batches found from `position`, up to `budgetBytes` (at least one
 * when `mustReturnOne`), all views of one read buffer. Returns the bytes taken.
 */
function readWholeBatches(segment: LogSegment, position: number, budgetBytes: number, mustReturnOne: boolean, out: RecordBatch[]): number {
  if (position >= segment.sizeBytes || (budgetBytes <= 0 && !mustReturnOne)) return 0;
  let chunk = segment.read(position, Math.max(budgetBytes, LOG_OVERHEAD_BYTES));
  const firstSize = batchSizeAt(chunk, 0);
  if (firstSize > chunk.length) {
    if (!mustReturnOne) return 0;
    chunk = segment.read(position, firstSize);
  }
  let at = 0;
  while (at + LOG_OVERHEAD_BYTES <= chunk.length) {
    const size = batchSizeAt(chunk, at);
    if (at + size > chunk.length) break;
    out.push(new RecordBatch(chunk.subarray(at, at + size)));
    at += size;
  }
  assert(at > 0 || !mustReturnOne, `no whole batch at position ${position} of segment ${segment.baseOffset}`);
  return at;
}

/** What local disk keeps of a tiered log: local.retention.*, or retention.* where those are -2. */
function localRetention(config: LogConfig): { bytes: number; ms: number } {
  return {
    bytes: config.localRetentionBytes === LOCAL_RETENTION_AS_RETENTION ? config.retentionBytes : config.localRetentionBytes,
    ms: config.localRetentionMs === LOCAL_RETENTION_AS_RETENTION ? config.retentionMs : config.localRetentionMs,
  };
}

function batchSizeAt(chunk: Uint8Array, at: number): number {
  return LOG_OVERHEAD_BYTES + readInt32At(chunk, at + LOG_OVERHEAD_BYTES - 4);
}

/** Big-endian reads by byte arithmetic: cheaper than a DataView per batch on the read path. */
function readInt32At(bytes: Uint8Array, at: number): number {
  return (bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!;
}

function readInt64At(bytes: Uint8Array, at: number): number {
  return readInt32At(bytes, at) * 0x1_0000_0000 + (readInt32At(bytes, at + 4) >>> 0);
}

/** Lists, opens and (after a crash) recovers the segments of `directory`. */
function openSegments(directory: string, config: LogConfig, epochs: LeaderEpochCache, learnEpochs: boolean, disk: Disk): { segments: LogSegment[]; report: RecoveryReport } {
  const baseOffsets = disk
    .readdirSync(directory)
    .map(parseSegmentFileName)
    .filter((offset) => offset !== null)
    .sort((a, b) => a - b);
  if (baseOffsets.length === 0) {
    return { segments: [LogSegment.create(directory, 0, config.indexIntervalBytes, disk)], report: { cleanShutdown: true, segmentsScanned: 0, truncatedBytes: 0, stopReason: null } };
  }
  const segments = baseOffsets.map((baseOffset) => LogSegment.open(directory, baseOffset, config.indexIntervalBytes, disk));
  const clean = readCleanShutdown(directory, disk);
  const scanOptions = { maxBatchBytes: STORED_BATCH_BYTES_MAX, epochs, learnEpochs, endOffset: Infinity };
  let scanned = 0;
  let truncatedBytes = 0;
  let stopReason: string | null = null;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const isActive = i === segments.length - 1;
    const restored = isActive ? clean !== null && restoreActive(segment, clean) : !learnEpochs && segment.restoreIndexes(segments[i + 1]!.baseOffset);
    if (restored) continue;
    const result = scanSegment(segment, scanOptions);
    scanned++;
    truncatedBytes += result.truncatedBytes;
    stopReason ??= result.stopReason;
    const next = segments[i + 1];
    if (next !== undefined && segment.nextOffset !== next.baseOffset) {
      throw new FerryError('Storage', `segment ${segment.baseOffset} ends at offset ${segment.nextOffset} but the next starts at ${next.baseOffset}: ${result.stopReason ?? 'gap'}`);
    }
  }
  epochs.truncateFromEnd(segments.at(-1)!.nextOffset);
  // What survived a crash may sit only in the page cache; sync so flushedOffset = logEndOffset holds.
  segments.at(-1)!.flushSync();
  return { segments, report: { cleanShutdown: clean !== null, segmentsScanned: scanned, truncatedBytes, stopReason } };
}

function writeCleanShutdown(directory: string, active: LogSegment, logEndOffset: number, disk: Disk): void {
  const state: CleanShutdownState = {
    logEndOffset,
    activeSizeBytes: active.sizeBytes,
    activeMaxTimestamp: active.maxTimestamp,
    activeFirstBatchTimestamp: active.firstBatchTimestamp,
    activeLastBatchBaseOffset: active.state.lastBatchBaseOffset,
  };
  writeFileAtomicSync(join(directory, CLEAN_SHUTDOWN_FILE), new TextEncoder().encode(JSON.stringify(state)), disk);
}

/** Reads and removes the marker: from here on, a crash must trigger recovery. */
function readCleanShutdown(directory: string, disk: Disk): CleanShutdownState | null {
  const path = join(directory, CLEAN_SHUTDOWN_FILE);
  if (!disk.existsSync(path)) return null;
  let state: CleanShutdownState | null = null;
  try {
    state = JSON.parse(readTextFileSync(disk, path)) as CleanShutdownState;
  } catch {
    state = null; // unreadable: recover as after a crash
  }
  disk.unlinkSync(path);
  // Durably gone: a marker back from the dead after a power loss would vouch for a changed file.
  disk.syncDirectorySync(directory);
  return state;
}

function restoreActive(segment: LogSegment, clean: CleanShutdownState): boolean {
  if (segment.fileSizeBytes() !== clean.activeSizeBytes || !segment.restoreIndexes(clean.logEndOffset)) return false;
  segment.restoreState({
    sizeBytes: clean.activeSizeBytes,
    nextOffset: clean.logEndOffset,
    maxTimestamp: clean.activeMaxTimestamp,
    firstBatchTimestamp: clean.activeFirstBatchTimestamp,
    lastBatchBaseOffset: clean.activeLastBatchBaseOffset,
  });
  return true;
}
