import { type HistoryIndex, isAckedAll, isSingleCopy, partitionKey } from '../history-index.ts';
import type { ViolationList } from '../violation.ts';

export const ACKED_READABLE = 'acked-readable';

interface Acknowledged {
  readonly key: string;
  readonly where: string;
  readonly offset: number;
  readonly client: string;
}

/**
 * acked-readable: no record acknowledged with acks=all is read back at another offset, or in
 * another partition or incarnation, than the one acknowledged. offset-unique alone misses a read
 * at an offset no one else saw (or a deleted incarnation's), so this is its own check. Only for
 * values that can be stored once (isSingleCopy): a plain producer's retry may store one twice.
 */
export function checkAckedReadable(index: HistoryIndex, out: ViolationList): void {
  const acknowledged = new Map<string, Acknowledged>();
  for (const partition of index.partitions) {
    const key = partitionKey(partition.topic, partition.incarnation, partition.partition);
    const where = `${partition.topic}/${partition.partition} (incarnation ${partition.incarnation})`;
    for (const op of partition.produces) {
      if (!isAckedAll(op) || op.baseOffset === null) continue;
      const base = op.baseOffset;
      op.values.forEach((value, i) => acknowledged.set(value, { key, where, offset: base + i, client: op.client }));
    }
  }
  for (const partition of index.partitions) {
    const key = partitionKey(partition.topic, partition.incarnation, partition.partition);
    for (const op of partition.fetches) {
      for (const record of op.records) {
        const ack = acknowledged.get(record.value);
        if (ack === undefined || (ack.key === key && ack.offset === record.offset) || !isSingleCopy(index, record.value)) continue;
        const detail = `"${record.value}" acknowledged to ${ack.client} at ${ack.where} offset ${ack.offset}, read by ${op.client} at offset ${record.offset}`;
        out.add(ACKED_READABLE, partition, 'read at another offset than acknowledged', record.offset, detail, op.endMs);
      }
    }
  }
}
