import { type HistoryIndex, isAckedAll, isSingleCopy, partitionKey, wasSentTo } from '../history-index.ts';
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
 *
 * A value also sent to the incarnation it is read in may be stored there too: an idempotent
 * producer's sequence guards one partition log (its state lives in that log, docs/design.md contract 11),
 * and a topic deleted and created again is a new log (contract 10) with no state for the producer,
 * from which Kafka's broker takes any sequence. A batch whose first attempt timed out yet landed in
 * the old incarnation, retried into the new one and acknowledged there, is one copy in each: the
 * old one was never acknowledged. A value read in an incarnation it was never sent to still counts.
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
        if (ack.key !== key && wasSentTo(index, record.value, partition)) continue; // its own copy in that incarnation
        const detail = `"${record.value}" acknowledged to ${ack.client} at ${ack.where} offset ${ack.offset}, read by ${op.client} at offset ${record.offset}`;
        out.add(ACKED_READABLE, partition, 'read at another offset than acknowledged', record.offset, detail, op.endMs);
      }
    }
  }
}
