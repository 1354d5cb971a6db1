/**
 * The checks a partition's log makes of an append before anything is written (PartitionLog's
 * append side): a leader's epoch and its producers' timestamps, the offsets and epoch it stamps
 * into a leader's batches, and a replica's batches following the log end with no gap or overlap.
 * Idempotent producers' sequences are ProducerStateManager's (producer-state.ts).
 */
import { FerryError } from '../errors.ts';
import type { RecordBatch } from '../format/record-batch.ts';
import type { Clock } from '../util/clock.ts';
import { regressed } from '../util/regressions.ts';
import type { LogConfig } from './config.ts';
import type { ProducerBatch } from './producer-state.ts';

/**
 * Kafka's log.message.timestamp.after.max.ms (1 hour, its default since 4.0): a leader refuses a
 * batch whose CreateTime is further ahead of its clock. Batch timestamps are the log's time, by
 * which producers expire: one bogus future timestamp would otherwise expire every other producer,
 * and their retries would land twice. Costs clients whose clock runs an hour fast INVALID_TIMESTAMP.
 */
export const TIMESTAMP_AFTER_MAX_MS = 60 * 60 * 1000;
/**
 * The largest batch a replica append or a recovery scan takes: a batch already in a log was taken by
 * a leader under the max.message.bytes of its day, and a limit lowered since must not make it
 * unreadable (Kafka applies max.message.bytes to a leader's appends only). Segment positions are
 * int32, so no batch is larger; recovery still finds a torn length by the file's end.
 */
export const STORED_BATCH_BYTES_MAX = 2 ** 31 - 1;
/** AppendResult.logAppendTimeMs of a CreateTime topic (Kafka's -1). */
export const NO_LOG_APPEND_TIME = -1;
/** The largest leader epoch: Kafka's epochs are int32. */
const LEADER_EPOCH_MAX = 0x7fffffff;

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

/** A leader appends in the log's latest epoch or a later one, never an earlier. */
export function checkLeaderEpoch(leaderEpoch: number, latestEpoch: number): void {
  if (leaderEpoch < latestEpoch || !Number.isSafeInteger(leaderEpoch) || leaderEpoch > LEADER_EPOCH_MAX) {
    throw new FerryError('InvalidArgument', `leader epoch ${leaderEpoch} is invalid; the log is at epoch ${latestEpoch}`);
  }
}

/** The time a LogAppendTime topic's leader stamps on its batches now; NO_LOG_APPEND_TIME under CreateTime. */
export function logAppendTimeOf(config: LogConfig, clock: Clock): number {
  return config.messageTimestampType === 'LogAppendTime' && !regressed('log-append-time-ignored') ? clock.nowMs() : NO_LOG_APPEND_TIME;
}

/** Leader only: a replica takes what its leader took, or it would not hold the same log. */
export function checkTimestamps(batches: readonly RecordBatch[], clock: Clock): void {
  const latestMs = clock.nowMs() + TIMESTAMP_AFTER_MAX_MS;
  for (const batch of batches) {
    if (batch.timestampType === 'CreateTime' && batch.maxTimestamp > latestMs) {
      throw new FerryError('InvalidTimestamp', `batch timestamp ${batch.maxTimestamp} is more than ${TIMESTAMP_AFTER_MAX_MS} ms ahead of the broker's clock (${clock.nowMs()})`);
    }
  }
}

/** A retry answers the time its original was stamped with, as Kafka's duplicate answers its batch's timestamp. */
export function duplicateResult(original: ProducerBatch, appendTimeMs: number): AppendResult {
  return {
    baseOffset: original.baseOffset,
    lastOffset: original.lastOffset,
    batches: [],
    sizeBytes: 0,
    duplicate: true,
    logAppendTimeMs: appendTimeMs === NO_LOG_APPEND_TIME ? NO_LOG_APPEND_TIME : original.maxTimestamp,
  };
}

/** Writes into a leader's batches, in place, their offsets from `nextOffset` on, the epoch, and the LogAppendTime if any. */
export function stampLeaderBatches(batches: readonly RecordBatch[], nextOffset: number, leaderEpoch: number, appendTimeMs: number): void {
  let offset = nextOffset;
  for (const batch of batches) {
    batch.setBaseOffset(offset);
    batch.setPartitionLeaderEpoch(leaderEpoch);
    if (appendTimeMs !== NO_LOG_APPEND_TIME) batch.setLogAppendTime(appendTimeMs); // last: it recomputes the CRC
    offset = batch.nextOffset;
  }
}

/**
 * A replica's batches keep their leader's offsets and epochs: the first must start exactly at the
 * log end and each must follow the previous (no gap, no overlap), in an epoch never going back.
 */
export function checkReplicaBatches(batches: readonly RecordBatch[], logEndOffset: number, latestEpoch: number): void {
  let expected = logEndOffset;
  let epoch = latestEpoch;
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
}
