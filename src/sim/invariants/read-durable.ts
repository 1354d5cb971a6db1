import { type HistoryIndex, isRetained } from '../history-index.ts';
import type { ViolationList } from '../violation.ts';

export const READ_DURABLE = 'read-durable';

/**
 * read-durable: a record a fetch returned below its high watermark is committed, so it is in the
 * final leader's log at that offset even if no one saw its acknowledgement (a consumer read it:
 * it must not vanish). Only for the incarnation the run ends in, and at or above the leader's log
 * start.
 */
export function checkReadDurable(index: HistoryIndex, out: ViolationList): void {
  for (const partition of index.partitions) {
    if (!partition.isFinal) continue;
    const leader = partition.leader;
    for (const op of partition.fetches) {
      if (!op.outcome.ok || op.highWatermark === null) continue;
      for (const record of op.records) {
        if (record.offset >= op.highWatermark) continue;
        if (leader === null) {
          out.add(READ_DURABLE, partition, 'no leader at the end', record.offset, `records read by ${op.client} have no final leader log`, op.endMs);
          continue;
        }
        if (!isRetained(leader, record.offset) || leader.valueAt.get(record.offset) === record.value) continue;
        const held = leader.valueAt.get(record.offset);
        const detail = `"${record.value}" read by ${op.client} from node ${op.node} at offset ${record.offset} (high watermark ${op.highWatermark}); the final leader (node ${leader.log.node}) holds ${held === undefined ? 'nothing' : `"${held}"`} there`;
        out.add(READ_DURABLE, partition, 'committed record lost', record.offset, detail, op.endMs);
      }
    }
  }
}
