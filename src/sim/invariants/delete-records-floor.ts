import type { DeleteRecordsOp } from '../history.ts';
import { healthySinceOf } from '../health-since.ts';
import { type HistoryIndex, metadataPropagationMs, type PartitionHistory } from '../history-index.ts';
import type { ViolationList } from '../violation.ts';

export const DELETE_RECORDS_FLOOR = 'delete-records-floor';

/**
 * delete-records-floor (issue 12): once a DeleteRecords of a partition incarnation was answered
 * with success and low watermark w, the log starts at w or above for good, on every broker and
 * across takeovers and restarts:
 * - no read that started after the answer returns a record below w;
 * - no ListOffsets EARLIEST that started after it answers below w;
 *   (both judged of a broker healthy for the propagation bound before the request: one that just
 *   came back from a pause or a cut answers from what it read last until its next scan, [C1], as
 *   a Kafka broker does until its metadata catches up; sim seed 30293);
 * - the final leader's log start (what a fetch answers: DeleteRecords' start, or the tier's) is
 *   at or above w, in the incarnation the run ends in;
 * - the answer itself is at or above the offset asked for (the start never stops short).
 * That acknowledged records at or above w stay is acked-durable's (which demands, with
 * DeleteRecords in a partition, everything from the highest start they may have set).
 */
export function checkDeleteRecordsFloor(index: HistoryIndex, out: ViolationList): void {
  const healthySince = healthySinceOf(index.history.health);
  const propagationMs = metadataPropagationMs(index.history);
  /** Whether the answering broker had been healthy for the propagation bound when the request started. */
  const settled = (op: { node: number; startMs: number }): boolean => op.startMs > healthySince(op.node, op.startMs) + propagationMs;
  for (const partition of index.partitions) {
    const answered = partition.deleteRecords.filter((op) => op.outcome.ok && op.lowWatermark !== null).sort((a, b) => a.endMs - b.endMs);
    if (answered.length === 0) continue;
    for (const op of answered) {
      if (op.offset >= 0 && op.lowWatermark! < op.offset) {
        out.add(
          DELETE_RECORDS_FLOOR,
          partition,
          'low watermark below the offset asked',
          op.lowWatermark,
          `${op.client}'s DeleteRecords before ${op.offset} was answered by node ${op.node} with low watermark ${op.lowWatermark}`,
          op.endMs,
        );
      }
    }
    checkReads(partition, answered, settled, out);
    checkFinalStart(partition, answered, out);
  }
}

/** The highest low watermark answered before `atMs` (-Infinity: none). `answered` is sorted by end. */
function floorAt(answered: readonly DeleteRecordsOp[], atMs: number): { floor: number; by: DeleteRecordsOp | null } {
  let floor = -Infinity;
  let by: DeleteRecordsOp | null = null;
  for (const op of answered) {
    if (op.endMs >= atMs) break;
    if (op.lowWatermark! > floor) [floor, by] = [op.lowWatermark!, op];
  }
  return { floor, by };
}

function checkReads(partition: PartitionHistory, answered: readonly DeleteRecordsOp[], settled: (op: { node: number; startMs: number }) => boolean, out: ViolationList): void {
  for (const op of partition.fetches) {
    if (!op.outcome.ok || op.records.length === 0 || !settled(op)) continue;
    const { floor, by } = floorAt(answered, op.startMs);
    const below = op.records.find((record) => record.offset < floor);
    if (below !== undefined) {
      out.add(
        DELETE_RECORDS_FLOOR,
        partition,
        'read below the deleted start',
        below.offset,
        `${op.client} read offset ${below.offset} from node ${op.node} (fetch from ${op.fetchOffset} at epoch ${op.leaderEpoch}) after ${by!.client}'s DeleteRecords was answered with low watermark ${floor}`,
        op.endMs,
      );
    }
  }
  for (const op of partition.listOffsets) {
    if (!op.outcome.ok || op.offset === null || !settled(op)) continue;
    const { floor, by } = floorAt(answered, op.startMs);
    if (op.offset < floor) {
      out.add(
        DELETE_RECORDS_FLOOR,
        partition,
        'earliest offset below the deleted start',
        op.offset,
        `ListOffsets ${op.timestamp} by ${op.client} answered ${op.offset} from node ${op.node} after ${by!.client}'s DeleteRecords was answered with low watermark ${floor}`,
        op.endMs,
      );
    }
  }
}

function checkFinalStart(partition: PartitionHistory, answered: readonly DeleteRecordsOp[], out: ViolationList): void {
  const leader = partition.leader;
  if (!partition.isFinal || leader === null) return;
  const { floor, by } = floorAt(answered, Infinity);
  const start = leader.local.clientStartOffset ?? leader.log.logStartOffset;
  if (start < floor) {
    out.add(
      DELETE_RECORDS_FLOOR,
      partition,
      'final log starts below the deleted start',
      start,
      `the final leader (node ${leader.log.node}) serves from ${start}; ${by!.client}'s DeleteRecords was answered with low watermark ${floor}`,
      by!.endMs,
    );
  }
}
