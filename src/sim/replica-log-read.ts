import type { Engine } from '../engine/index.ts';
import { batchValues } from './batch-values.ts';
import type { ReplicaLog } from './history.ts';

/** A replica's whole log of a partition at the end of a run, read from its engine as stored (the history's ReplicaLog). */
export function readReplicaLog(node: number, engine: Engine, topic: string, partition: number): ReplicaLog {
  const batches: ReplicaLog['batches'][number][] = [];
  const records: { offset: number; value: string }[] = [];
  const logEndOffset = engine.logEndOffset(topic, partition);
  // As stored, whatever the broker's lease says now: a leader whose gate closed at the end holds its log all the same.
  const first = engine.readStored(topic, partition, logEndOffset, { maxBytes: 0 });
  // The local log, from where clients may read it: a fetch's log start is the whole log's (the
  // tier's, or DeleteRecords' start, which may lie above the local segments' first offset).
  const clientStartOffset = first.logStartOffset;
  const logStartOffset = Math.max(engine.localLogStartOffset(topic, partition), clientStartOffset);
  let offset = logStartOffset;
  let highWatermark = first.highWatermark;
  while (offset < logEndOffset) {
    const result = engine.readStored(topic, partition, offset);
    highWatermark = result.highWatermark;
    if (result.batches.length === 0) break;
    for (const batch of result.batches) {
      if (batch.lastOffset < offset) continue;
      batches.push({ baseOffset: batch.baseOffset, lastOffset: batch.lastOffset, bytes: batch.bytes });
      for (const { offset, value } of batchValues(batch)) records.push({ offset, value });
      offset = batch.lastOffset + 1;
    }
  }
  return { node, topic, partition, leader: engine.leads(topic, partition), logStartOffset, clientStartOffset, logEndOffset, highWatermark, batches, records };
}
