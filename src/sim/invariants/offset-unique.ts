import { type HistoryIndex, isAckedAll, type PartitionHistory } from '../history-index.ts';
import type { ViolationList } from '../violation.ts';

export const OFFSET_UNIQUE = 'offset-unique';

interface Sighting {
  readonly value: string;
  readonly source: string;
  readonly atMs: number | undefined;
}

/**
 * offset-unique: no (topic incarnation, partition, offset) was ever seen holding two different
 * values, across every record a fetch returned, every offset acknowledged with acks=all, every
 * final replica log and every copied tiered segment. acks=1 acknowledgements are left out on purpose: acks=1 is acknowledged
 * after the leader's local append (docs/design.md contract 6), so a crash may lose it and the offset
 * may then hold another record; what a reader sees of it is still checked.
 */
export function checkOffsetUnique(index: HistoryIndex, out: ViolationList): void {
  for (const partition of index.partitions) checkPartition(partition, out);
}

function checkPartition(partition: PartitionHistory, out: ViolationList): void {
  const seen = new Map<number, Sighting>();
  const reported = new Set<number>();
  const see = (offset: number, sighting: Sighting): void => {
    const first = seen.get(offset);
    if (first === undefined) {
      seen.set(offset, sighting);
    } else if (first.value !== sighting.value && !reported.has(offset)) {
      reported.add(offset);
      const detail = `offset ${offset} held "${first.value}" (${first.source}) and "${sighting.value}" (${sighting.source})`;
      out.add(OFFSET_UNIQUE, partition, 'two values at one offset', offset, detail, sighting.atMs ?? first.atMs);
    }
  };
  for (const op of partition.produces) {
    if (!isAckedAll(op) || op.baseOffset === null) continue;
    const base = op.baseOffset;
    op.values.forEach((value, i) => see(base + i, { value, source: `acknowledged to ${op.client}`, atMs: op.endMs }));
  }
  for (const op of partition.fetches) {
    for (const record of op.records) see(record.offset, { value: record.value, source: `read by ${op.client} from node ${op.node}`, atMs: op.endMs });
  }
  for (const log of partition.replicaLogs) {
    for (const record of log.records) see(record.offset, { value: record.value, source: `final log of node ${log.node}`, atMs: undefined });
  }
  for (const segment of partition.tier?.segments ?? []) {
    for (const record of segment.records) see(record.offset, { value: record.value, source: `tiered segment ${segment.baseOffset}..${segment.endOffset}`, atMs: undefined });
  }
}
