import { FerryError } from '../errors.ts';
import { splitBatches } from '../format/batch-parse.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import type { Uuid } from '../util/uuid.ts';
import { regressed } from '../util/regressions.ts';
import type { ReadFrame } from '../wal/reader.ts';

/**
 * Applies one verified WAL frame to a log at the leader's offsets. The log is one incarnation of
 * its topic, `topicId` (docs/design.md contract 10): a frame of another incarnation of the same name is
 * never part of it and is skipped, wherever it lies in the streams. Of the rest, a frame the log
 * already has is skipped (re-reading after a restart is idempotent), one that overlaps its end is
 * applied from the first new batch, and one that would leave a gap is refused. Returns the bytes
 * applied.
 */
export function applyFrame(log: PartitionLog, frame: ReadFrame, topicId: Uuid): number {
  const { entry } = frame;
  if (entry.topicId !== topicId && !regressed('topic-incarnations-mixed')) return 0;
  const logEnd = log.logEndOffset;
  if (entry.lastOffset < logEnd) return 0;
  if (entry.baseOffset > logEnd) {
    throw new FerryError(
      'InvalidOffsets',
      `${entry.topic}-${entry.partition}: the WAL continues at offset ${entry.baseOffset} but the local log ends at ${logEnd}; the missing offsets are not in these WAL streams`,
    );
  }
  const data = entry.baseOffset < logEnd ? suffixFrom(frame.data, logEnd, log) : frame.data;
  log.appendReplica(data);
  return data.length;
}

/**
 * Whether the log holds nothing and starts at or below DeleteRecords' start: it opened there after
 * a power loss took its segments below it (PartitionLog.open), and that start may lie inside a
 * batch, which a frame can only give back whole.
 */
function isEmptyFromDeletedStart(log: PartitionLog): boolean {
  return log.logStartOffset === log.logEndOffset && log.logEndOffset <= log.deletedBeforeOffset;
}

/**
 * The batches of `data` from `offset` on (a frame partly applied before a restart). An empty log
 * started at DeleteRecords' start inside a batch (seed 5 of issue 12's simulation: the broker
 * never started again) starts over at that batch's base and takes it whole: offsets below the
 * start stay hidden from clients by the start itself (PartitionLog.deletedBeforeOffset).
 */
function suffixFrom(data: Uint8Array, offset: number, log: PartitionLog): Uint8Array {
  const batches = splitBatches(data, Number.MAX_SAFE_INTEGER);
  const holding = batches.find((batch) => batch.baseOffset < offset && batch.lastOffset >= offset);
  if (holding !== undefined && isEmptyFromDeletedStart(log)) {
    log.startAt(holding.baseOffset, log.leaderEpochs, null);
    return data.subarray(holding.position);
  }
  const first = batches.find((batch) => batch.baseOffset >= offset);
  if (first === undefined || first.baseOffset !== offset) throw new FerryError('InvalidOffsets', `no batch of the frame starts at offset ${offset}`);
  return data.subarray(first.position);
}
