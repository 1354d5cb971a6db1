import { join } from 'node:path';
import { stageTimers } from '../metrics/stage-timers.ts';
import { FerryError } from '../errors.ts';
import { splitBatches } from '../format/batch-parse.ts';
import type { RecordBatch } from '../format/record-batch.ts';
import type { TimestampAndOffset } from '../format/timestamp-lookup.ts';
import { assert } from '../util/assert.ts';
import { type Clock, systemClock } from '../util/clock.ts';
import { type Disk, systemDisk } from '../util/disk.ts';
import { makeDirectoriesSync } from '../util/files.ts';
import { isOsError } from '../util/os-error.ts';
import { regressed } from '../util/regressions.ts';
import { writeCleanShutdown } from './clean-shutdown.ts';
import { type LogConfig, resolveLogConfig } from './config.ts';
import { GroupCommit } from './group-commit.ts';
import { type EpochEntry, LEADER_EPOCH_CHECKPOINT_FILE, LeaderEpochCache } from './leader-epoch-cache.ts';
import {
  type AppendResult,
  checkLeaderEpoch,
  checkReplicaBatches,
  checkTimestamps,
  duplicateResult,
  logAppendTimeOf,
  NO_LOG_APPEND_TIME,
  STORED_BATCH_BYTES_MAX,
  stampLeaderBatches,
} from './log-append.ts';
import { openSegments, type RecoveryReport, rebuildProducerState, replayBatches, snapshotProducers } from './log-open.ts';
import { bytesFrom, maxTimestampRecord, offsetForTimestamp, type ReadResult, readBatches, segmentIndexFor } from './log-read.ts';
import { deleteBeyondRetention, deleteSegmentsBelow, replaceSegments, rollDue, rollSegment, truncateSegments } from './log-segments.ts';
import { readLogStartCheckpoint, writeLogStartCheckpoint } from './log-start-checkpoint.ts';
import { type ActiveProducer, checkedSnapshot, type ProducerBatch, ProducerStateManager, type ProducerStateReplay } from './producer-state.ts';
import { LogSegment, type ReadAllocator } from './segment.ts';
import type { StorageObserver } from './storage-health.ts';
import { failedWriteError, recoverFromFailedSync } from './write-failures.ts';

// The log's jobs live in files of their own (append checks, reads, segment changes, open and
// recovery, the clean-shutdown file, write failures); callers import all of it from here.
export { CLEAN_SHUTDOWN_FILE } from './clean-shutdown.ts';
export { type AppendResult, TIMESTAMP_AFTER_MAX_MS } from './log-append.ts';
export type { RecoveryReport } from './log-open.ts';
export type { ReadResult } from './log-read.ts';

export interface PartitionLogOptions {
  readonly config?: Partial<LogConfig>;
  readonly clock?: Clock;
  /** Where the log's files live and how they are synced and locked: node:fs unless a simulation or a power-loss test injects its own. */
  readonly disk?: Disk;
  /** Told of every failed write and of the writes that succeed (the engine logs and counts them). */
  readonly storage?: StorageObserver;
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
 * The class owns the log's state and orders the steps; the files beside it do the jobs: the
 * append checks (log-append.ts), reads and lookups (log-read.ts), roll, retention and truncation
 * (log-segments.ts), open and recovery (log-open.ts, clean-shutdown.ts), failed writes
 * (write-failures.ts).
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
    rebuildProducerState(this.#producers, this.#segments, this.config.indexIntervalBytes);
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
    const deleted = deleteSegmentsBelow(this.#segments, Math.min(this.#deletedBefore, tieredEnd ?? Number.POSITIVE_INFINITY));
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
    return bytesFrom(this.#segments, offset, this.config.indexIntervalBytes);
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
    const batches = stageTimers.time('validate', () => splitBatches(records, this.config.maxBatchBytes));
    checkLeaderEpoch(leaderEpoch, this.#epochs.latestEpoch);
    const appendTimeMs = logAppendTimeOf(this.config, this.#clock);
    if (appendTimeMs === NO_LOG_APPEND_TIME) checkTimestamps(batches, this.#clock); // a producer's clock is ignored under LogAppendTime
    const original = stageTimers.time('producer-state', () => this.#producers.check(batches));
    if (original !== null) return duplicateResult(original, appendTimeMs);
    stampLeaderBatches(batches, this.logEndOffset, leaderEpoch, appendTimeMs);
    return { ...this.#write(batches), logAppendTimeMs: appendTimeMs };
  }

  /**
   * Appends batches copied from the leader, keeping their offsets and epochs. The first batch
   * must start exactly at the log end and each must follow the previous: no gap, no overlap.
   */
  appendReplica(records: Uint8Array): AppendResult {
    this.#checkWritable();
    const batches = splitBatches(records, STORED_BATCH_BYTES_MAX);
    checkReplicaBatches(batches, this.logEndOffset, this.#epochs.latestEpoch);
    return this.#write(batches);
  }

  /** Resolves once every offset up to and including `offset` is on disk per the flush policy. */
  waitForFlush(offset: number): Promise<void> {
    return this.#commit.waitFor(offset);
  }

  /**
   * Reads whole batches from `offset` on: the first holds `offset` and is returned even when
   * larger than `maxBytes`; later ones only while the total stays within `maxBytes`. They are
   * views of memory from `allocate` (fresh buffers unless given).
   */
  read(offset: number, maxBytes: number, allocate?: ReadAllocator): ReadResult {
    this.#checkOpen();
    return readBatches(this.#segments, offset, maxBytes, this.config.indexIntervalBytes, allocate);
  }

  /** The first record at or above the log start (DeleteRecords' included) whose timestamp is at or after `timestamp`, and that timestamp; null if none. */
  offsetForTimestamp(timestamp: number): TimestampAndOffset | null {
    this.#checkOpen();
    return offsetForTimestamp(this.#segments, timestamp, this.#readableStart(), this.config);
  }

  /**
   * KIP-734's MAX_TIMESTAMP: the record with the largest timestamp in the log (the first of them
   * if several share it), and that timestamp; null for an empty log.
   */
  maxTimestampRecord(): TimestampAndOffset | null {
    this.#checkOpen();
    return maxTimestampRecord(this.#segments, this.#readableStart(), this.config);
  }

  /** The first offset clients may read: the log start, or DeleteRecords' above it. */
  #readableStart(): number {
    return Math.max(this.logStartOffset, this.#deletedBefore);
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

  #roll(): void {
    rollSegment(this.#segments, this.#commit, this.#producers, (baseOffset) => this.#createSegment(baseOffset));
  }

  /**
   * Deletes the oldest sealed segments beyond retention.bytes or retention.ms; returns how many.
   * With a tier (`tieredEnd` given, docs/tier-protocol.md [D1]), local disk is a cache: only
   * segments wholly below the tiered end go, by local.retention.bytes / local.retention.ms (the
   * tier's own retention is the tierer's, [T7]).
   */
  enforceRetention(tieredEnd: number | null = null): number {
    this.#checkOpen();
    const deleted = deleteBeyondRetention(this.#segments, this.config, tieredEnd, this.#clock);
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
      replaceSegments(
        this.#segments,
        offset,
        (baseOffset) => this.#createSegment(baseOffset),
        () => {
          // Its files are gone: until the new one exists, this log is nothing a write may use (an open finds no segment, and starts empty).
          this.#damaged = new FerryError('Storage', `log ${this.directory}: starting over at offset ${offset} failed part way; restart to recover`);
        },
      );
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
    return this.producerReplayFrom(offset).snapshotAt(offset);
  }

  /**
   * The producer state at `offset` (between the log start and end), for a caller that reads the
   * batches after it (the tierer) and applies each in order: `snapshotAt(end)` then gives what a
   * tiered segment ending at `end` carries, without reading the batches a second time.
   */
  producerReplayFrom(offset: number): ProducerStateReplay {
    this.#checkOpen();
    this.#checkProducerStateOffset(offset);
    const replay = this.#producers.replayFrom(offset, this.logStartOffset, (from, to, apply) => replayBatches(this.#segments, from, to, this.config.indexIntervalBytes, apply));
    return {
      apply: (batch) => replay.apply(batch),
      snapshotAt: (end) => {
        // An upload may outlive its log (a lost leadership, a stop): the directory may hold another log by now.
        this.#checkOpen();
        this.#checkProducerStateOffset(end);
        const holdingBase = this.#segments[segmentIndexFor(this.#segments, end)]!.baseOffset; // its roll snapshot stays
        return replay.snapshotAt(end, holdingBase);
      },
    };
  }

  #checkProducerStateOffset(offset: number): void {
    if (offset < this.logStartOffset || offset > this.logEndOffset)
      throw new FerryError('OffsetOutOfRange', `no producer state at offset ${offset}: the log holds ${this.logStartOffset}..${this.logEndOffset}`);
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
    truncateSegments(this.#segments, offset, this.#epochs);
    this.#commit.noteTruncated(this.logEndOffset);
    rebuildProducerState(this.#producers, this.#segments, this.config.indexIntervalBytes);
  }

  /** Flushes everything written so far. */
  flush(): Promise<void> {
    this.#checkOpen();
    return this.#commit.flushNow();
  }

  /** The leader-epoch checkpoint changes in memory only until writeEpochCheckpoint: an adopted log's rebuild (LeaderEpochCache.holdWrites). */
  holdEpochCheckpoint(): void {
    this.#checkOpen();
    this.#epochs.holdWrites();
  }

  /**
   * A leader's epoch starts at the log end before it appends anything (Kafka's
   * maybeAssignEpochStartOffset when a replica becomes leader): OffsetForLeaderEpoch knows it at
   * once, and an adopted log's first append finds it there instead of writing the checkpoint again.
   */
  startLeaderEpoch(leaderEpoch: number): void {
    this.#checkWritable();
    checkLeaderEpoch(leaderEpoch, this.#epochs.latestEpoch);
    try {
      this.#epochs.assign(leaderEpoch, this.logEndOffset);
    } catch (error) {
      throw this.#failedWrite(error);
    }
  }

  /** Writes the leader-epoch checkpoint held since holdEpochCheckpoint, and every change from now on. */
  writeEpochCheckpoint(): void {
    this.#checkOpen();
    try {
      this.#epochs.writeHeld();
    } catch (error) {
      throw this.#failedWrite(error);
    }
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
          this.#epochs.writeHeld(); // before the marker: a clean shutdown finds everything in place
          snapshotProducers(this.#producers);
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
    if (rollDue(this.#activeSegment(), sizeBytes, last.maxTimestamp, this.config)) this.#roll();
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
    return failedWriteError(error, this.directory, this.#storage, bytes);
  }

  #createSegment(baseOffset: number): LogSegment {
    return LogSegment.create(this.directory, baseOffset, this.config.indexIntervalBytes, this.#disk);
  }

  #activeSegment(): LogSegment {
    return this.#segments.at(-1)!;
  }

  #checkOpen(): void {
    if (this.#closed) throw new FerryError('Closed', `log ${this.directory} is closed`);
  }

  /**
   * Open, and any failed sync recovered from first: the unsynced bytes written again and synced.
   * A Storage error if that fails, and for every write from then on once they read back damaged.
   */
  #checkWritable(): void {
    this.#checkOpen();
    if (this.#commit.failure === null) return;
    if (this.#damaged !== null) throw this.#damaged; // read back once: told once, then refused at once
    try {
      this.#damaged = recoverFromFailedSync(this.#activeSegment(), this.#commit, this.config.indexIntervalBytes, this.directory);
      if (this.#damaged !== null) throw this.#damaged;
    } catch (error) {
      throw this.#failedWrite(error);
    }
  }
}
