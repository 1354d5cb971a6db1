import type { WalRecord } from '../history.ts';
import { type HistoryIndex, isAckedAll } from '../history-index.ts';
import type { ViolationList } from '../violation.ts';

export const ACK_AFTER_DURABLE = 'ack-after-durable';

/**
 * ack-after-durable (docs/design.md contract 6): a record is acknowledged with acks=all only once a WAL
 * object holding it is in the object store, so a write of that object came back from the store
 * before the acknowledgement. Judged against every WAL object the store holds at the end: a record
 * acknowledged but in none, or only in objects whose first write came back from the store after
 * its acknowledgement (no writer could know it durable sooner), was
 * acknowledged on a durability it did not have. Stronger than acked-durable: it catches an ack
 * that a lucky run never lost.
 */
export function checkAckAfterDurable(index: HistoryIndex, out: ViolationList): void {
  const walRecords = index.history.walRecords;
  if (walRecords === null) return;
  const byValue = new Map<string, WalRecord[]>();
  for (const record of walRecords) {
    const list = byValue.get(record.value);
    if (list === undefined) byValue.set(record.value, [record]);
    else list.push(record);
  }
  for (const partition of index.partitions) {
    for (const op of partition.produces) {
      if (!isAckedAll(op) || op.baseOffset === null) continue;
      op.values.forEach((value, i) => {
        const offset = op.baseOffset! + i;
        const found = (byValue.get(value) ?? []).filter((record) => record.topic === partition.topic && record.partition === partition.partition && record.offset === offset);
        if (found.some((record) => record.settledMs <= op.endMs)) return;
        const why = found.length === 0 ? 'in no WAL object' : `in a WAL object first written ${Math.round(Math.min(...found.map((r) => r.settledMs)) - op.endMs)} ms after the ack`;
        out.add(ACK_AFTER_DURABLE, partition, 'acknowledged before it was durable', offset, `"${value}" acknowledged to ${op.client} by node ${op.node} at offset ${offset}, ${why}`, op.endMs);
      });
    }
  }
}
