import type { HistoryIndex } from '../history-index.ts';
import type { ViolationList } from '../violation.ts';

export const STALE_INCARNATION_READ = 'stale-incarnation-read';

/**
 * stale-incarnation-read: once a delete or a create of a topic has taken effect everywhere (its
 * end plus the metadata propagation bound), no broker serves records of the incarnation before
 * it (design contract 10). Reads are placed in the incarnation their records were produced in, so
 * a read of an old log served after the bound shows here; within the bound a broker that has not
 * yet seen the change may serve what it has, as Kafka's do.
 */
export function checkStaleIncarnationRead(index: HistoryIndex, out: ViolationList): void {
  for (const partition of index.partitions) {
    const overMs = index.incarnations.surelyOverMs(partition.topic, partition.incarnation);
    if (overMs === Infinity) continue;
    for (const op of partition.fetches) {
      if (op.records.length === 0 || op.startMs <= overMs) continue;
      const detail = `${op.client} read ${op.records.length} record(s) from offset ${op.records[0]!.offset} of incarnation ${partition.incarnation} from node ${op.node}, ${Math.round(op.startMs - overMs)} ms after that incarnation ended everywhere`;
      out.add(STALE_INCARNATION_READ, partition, 'records of an ended incarnation served', op.records[0]!.offset, detail, op.startMs);
    }
  }
}
