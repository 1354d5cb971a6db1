import type { HistoryIndex, PartitionHistory } from '../history-index.ts';
import type { ViolationList } from '../violation.ts';

export const IDEMPOTENT_NO_DUPLICATES = 'idempotent-no-duplicates';

/**
 * idempotent-no-duplicates: a value an idempotent producer sent (acknowledged or not) is at most
 * one offset of a partition incarnation: across the final leader's log and every record read.
 * (A follower's copy is the leader's by follower-prefix.) Retention passing the producer's every
 * record changes nothing: Kafka's broker keeps a producer's state until producer.id.expiration.ms
 * (KIP-360), so a retry of a batch retention took is still answered as a duplicate.
 */
export function checkIdempotentNoDuplicates(index: HistoryIndex, out: ViolationList): void {
  for (const partition of index.partitions) checkPartition(index, partition, out);
}

function checkPartition(index: HistoryIndex, partition: PartitionHistory, out: ViolationList): void {
  const offsetOf = new Map<string, { offset: number; source: string }>();
  const reported = new Set<string>();
  const see = (value: string, offset: number, source: string, atMs: number | undefined): void => {
    if (!index.idempotentValues.has(value)) return;
    const first = offsetOf.get(value);
    if (first === undefined) {
      offsetOf.set(value, { offset, source });
    } else if (first.offset !== offset && !reported.has(value)) {
      reported.add(value);
      out.add(IDEMPOTENT_NO_DUPLICATES, partition, 'duplicate', offset, `"${value}" at offset ${first.offset} (${first.source}) and at ${offset} (${source})`, atMs);
    }
  };
  const leader = partition.leader;
  if (leader !== null) for (const record of leader.log.records) see(record.value, record.offset, `final log of node ${leader.log.node}`, undefined);
  for (const op of partition.fetches) {
    for (const record of op.records) see(record.value, record.offset, `read by ${op.client}`, op.endMs);
  }
}
