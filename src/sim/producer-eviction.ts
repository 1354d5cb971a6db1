import type { ProduceOp } from './history.ts';
import type { PartitionHistory } from './history-index.ts';

/**
 * Whether a second copy of an idempotent producer's value, acknowledged at `laterOffset`, is a
 * retry Kafka's broker takes after it forgot the producer. Kafka keeps an idempotent producer's
 * state only while the log holds one of its records: once retention or DeleteRecords moves the log
 * start past the producer's last record, the entry goes (ProducerStateManager, on the log start's
 * increment; KIP-360), and the next batch of an unknown producer id is taken at any sequence
 * (ProducerAppendInfo's sequence check). So a batch whose first attempt landed but was never
 * answered, retried after retention took its first copy and every later record of its producer, is
 * written again: idempotence spans the retained log only.
 *
 * Judged from evidence, never assumed: some answer in this partition incarnation (a Fetch's log
 * start, a ListOffsets earliest) showed a start S above `firstOffset` before the acknowledged
 * attempt was sent, and no record of the same producer id lies in [S, laterOffset) in the final log,
 * any read or its acknowledgements, but for retries like this one.
 */
export function retriedAfterEviction(partition: PartitionHistory, value: string, firstOffset: number, laterOffset: number): boolean {
  const acknowledged = acknowledgedAt(partition, value, laterOffset);
  if (acknowledged === undefined || acknowledged.idempotence === null) return false;
  const start = startSeenBefore(partition, acknowledged.startMs);
  if (start === null || firstOffset >= start) return false;
  return !holdsProducerBetween(partition, acknowledged.idempotence.producerId, start, laterOffset);
}

function acknowledgedAt(partition: PartitionHistory, value: string, offset: number): ProduceOp | undefined {
  return partition.produces.find((op) => op.outcome.ok && op.baseOffset !== null && op.values[offset - op.baseOffset] === value);
}

/** The highest log start an answer ending by `beforeMs` showed, or null. */
function startSeenBefore(partition: PartitionHistory, beforeMs: number): number | null {
  let start: number | null = null;
  for (const op of partition.fetches) {
    if (op.outcome.ok && op.logStartOffset !== undefined && op.endMs <= beforeMs) start = Math.max(start ?? 0, op.logStartOffset);
  }
  for (const op of partition.listOffsets) {
    if (op.outcome.ok && op.timestamp === EARLIEST_TIMESTAMP && op.offset !== null && op.endMs <= beforeMs) start = Math.max(start ?? 0, op.offset);
  }
  return start;
}

/** Kafka's ListOffsets timestamp for the log start. */
const EARLIEST_TIMESTAMP = -2;

/**
 * Whether a record of the producer lies in [from, to) other than a second copy of a value it has
 * below `from` (the retries after the eviction: the first made the entry anew, the rest follow it).
 */
function holdsProducerBetween(partition: PartitionHistory, producerId: bigint, from: number, to: number): boolean {
  const producerOf = new Map<string, bigint>();
  for (const op of partition.produces) if (op.idempotence !== null) for (const value of op.values) producerOf.set(value, op.idempotence.producerId);
  const records = [...(partition.leader?.log.records ?? []), ...partition.fetches.flatMap((op) => op.records)];
  // Its acknowledgements say where its records lay too, though retention may have taken them before anyone read them.
  for (const op of partition.produces) {
    if (!op.outcome.ok || op.baseOffset === null || op.idempotence?.producerId !== producerId) continue;
    op.values.forEach((value, i) => records.push({ offset: op.baseOffset! + i, value }));
  }
  const copiedBelow = new Set(records.filter((record) => record.offset < from).map((record) => record.value));
  return records.some((record) => record.offset >= from && record.offset < to && producerOf.get(record.value) === producerId && !copiedBelow.has(record.value));
}
