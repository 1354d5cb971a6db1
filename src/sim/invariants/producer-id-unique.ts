import type { ProduceOp } from '../history.ts';
import type { HistoryIndex } from '../history-index.ts';
import type { ViolationList } from '../violation.ts';

export const PRODUCER_ID_UNIQUE = 'producer-id-unique';

/**
 * producer-id-unique: no producer id and epoch is used by two clients. InitProducerId hands each
 * id out once, from blocks reserved in the control records (the cluster's producer-id blocks,
 * compare-and-swap judged by authorship: docs/cluster-protocol.md CW1); two producers sharing an
 * id and epoch share one sequence space, so one's batch can be answered as the other's duplicate,
 * acknowledged at the other's offset and never written. Judged on every idempotent produce sent,
 * whatever its answer: the id was handed out either way.
 */
export function checkProducerIdUnique(index: HistoryIndex, out: ViolationList): void {
  const firstUser = new Map<string, ProduceOp>();
  const reported = new Set<string>();
  const produces = index.partitions.flatMap((partition) => partition.produces.map((op) => ({ partition, op })));
  produces.sort((a, b) => a.op.startMs - b.op.startMs);
  for (const { partition, op } of produces) {
    if (op.idempotence === null) continue;
    const key = `${op.idempotence.producerId}/${op.idempotence.producerEpoch}`;
    const first = firstUser.get(key);
    if (first === undefined) firstUser.set(key, op);
    else if (first.client !== op.client && !reported.has(key)) {
      reported.add(key);
      const detail = `producer id ${op.idempotence.producerId} epoch ${op.idempotence.producerEpoch} used by ${first.client} (its first produce under it sent to node ${first.node}) and by ${op.client} (to node ${op.node})`;
      out.add(PRODUCER_ID_UNIQUE, partition, 'shared producer id', null, detail, op.startMs);
    }
  }
}
