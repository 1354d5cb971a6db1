import { healthySinceOf } from '../health-since.ts';
import type { CreatePartitionsOp, MetadataOp } from '../history.ts';
import { type HistoryIndex, metadataPropagationMs, partitionKey } from '../history-index.ts';
import type { ViolationList } from '../violation.ts';

export const PARTITION_COUNT_MONOTONIC = 'partition-count-monotonic';

/**
 * partition-count-monotonic (issue 12): once a CreatePartitions of a topic incarnation to n
 * partitions was answered with success, the count never goes below n again:
 * - every Metadata answer of that incarnation names at least n partitions if the broker that gave
 *   it had been healthy for the propagation bound (it sees the topic record at its next scan;
 *   metadataPropagationMs) both after the CreatePartitions was answered and before it answered.
 *   A broker cut from the control store answers from the topic records it last read, as Kafka's
 *   broker cut from its controller does: not judged until it has had the time to read again.
 * - in the incarnation the run ends in, every partition below n was probed after the quiet and
 *   has a leader at the end (liveness-after-quiet judges whether the probe's write and read succeeded).
 */
export function checkPartitionCountMonotonic(index: HistoryIndex, out: ViolationList): void {
  const grown = index.history.ops.filter((op): op is CreatePartitionsOp => op.kind === 'create-partitions' && op.outcome.ok);
  if (grown.length === 0) return;
  const metadata = index.history.ops.filter((op): op is MetadataOp => op.kind === 'metadata');
  const propagationMs = metadataPropagationMs(index.history);
  const healthySince = healthySinceOf(index.history.health);
  for (const op of grown) {
    const incarnation = index.incarnations.attribute(op.topic, op.startMs, op.endMs);
    if (incarnation === null) continue;
    const where = { topic: op.topic, incarnation, partition: -1 };
    for (const answer of metadata) {
      if (answer.startMs <= Math.max(op.endMs, healthySince(answer.node, answer.startMs)) + propagationMs) continue;
      const shown = answer.topics.find((topic) => topic.name === op.topic);
      if (shown === undefined || shown.partitions >= op.count) continue;
      if (index.incarnations.attribute(op.topic, answer.startMs, answer.endMs) !== incarnation) continue;
      out.add(
        PARTITION_COUNT_MONOTONIC,
        where,
        'partition count went down',
        null,
        `Metadata from node ${answer.node} to ${answer.client} named ${shown.partitions} partitions after ${op.client}'s CreatePartitions to ${op.count} was answered`,
        answer.endMs,
      );
    }
    if (incarnation === index.incarnations.last(op.topic)) checkFinalPartitions(index, op, out);
  }
}

function checkFinalPartitions(index: HistoryIndex, op: CreatePartitionsOp, out: ViolationList): void {
  const incarnation = index.incarnations.last(op.topic);
  const byKey = new Map(index.partitions.map((partition) => [partitionKey(partition.topic, partition.incarnation, partition.partition), partition]));
  const probed = new Set(index.history.probes.filter((probe) => probe.topic === op.topic).map((probe) => probe.partition));
  for (let partition = 0; partition < op.count; partition++) {
    const where = { topic: op.topic, incarnation, partition };
    if (!probed.has(partition))
      out.add(
        PARTITION_COUNT_MONOTONIC,
        where,
        'added partition not probed',
        null,
        `${op.client}'s CreatePartitions to ${op.count} was answered, but no probe wrote to partition ${partition}`,
        op.endMs,
      );
    if (byKey.get(partitionKey(op.topic, incarnation, partition))?.leader == null) {
      out.add(
        PARTITION_COUNT_MONOTONIC,
        where,
        'added partition without a leader',
        null,
        `${op.client}'s CreatePartitions to ${op.count} was answered, but partition ${partition} has no leader at the end`,
        op.endMs,
      );
    }
  }
}
