import type { DeleteRecordsOp } from './history.ts';
import type { HistoryIndex, PartitionHistory } from './history-index.ts';

/** DeleteRecords' "up to the high watermark". */
const TO_HIGH_WATERMARK = -1;
/**
 * Answers after which a DeleteRecords surely did nothing. Any other may follow a start already
 * moved: a cluster's leader records the start before it moves its log, and answers
 * NOT_LEADER_OR_FOLLOWER if it lost the partition between the two.
 */
const SURELY_WITHOUT_EFFECT: ReadonlySet<string> = new Set(['OFFSET_OUT_OF_RANGE', 'UNKNOWN_TOPIC_OR_PARTITION', 'not-sent']);

/**
 * How far DeleteRecords may have moved a partition incarnation's log start: the highest low
 * watermark answered, or offset asked by one whose outcome is unknown (Infinity for an unknown
 * one that asked for the high watermark, and for one that could not be placed in an incarnation
 * and asked for it); null when no DeleteRecords may have touched it.
 */
export function deleteRecordsReach(index: HistoryIndex, partition: PartitionHistory): number | null {
  const unplaced = index.unplacedDeleteRecords.filter((op) => op.topic === partition.topic && op.partition === partition.partition);
  let reach: number | null = null;
  for (const op of [...partition.deleteRecords, ...unplaced]) {
    const moved = reachOf(op);
    if (moved !== null) reach = Math.max(reach ?? moved, moved);
  }
  return reach;
}

/** How far one DeleteRecords may have moved its partition's log start (null: surely nowhere). */
export function reachOf(op: DeleteRecordsOp): number | null {
  if (op.outcome.ok) return op.lowWatermark;
  if (SURELY_WITHOUT_EFFECT.has(op.outcome.error)) return null;
  return op.offset === TO_HIGH_WATERMARK ? Infinity : op.offset;
}
