import { reachOf } from '../delete-floors.ts';
import { DeposedLeaders } from '../deposed-leaders.ts';
import type { ProduceOp } from '../history.ts';
import type { HistoryIndex, PartitionHistory } from '../history-index.ts';
import { IdempotentBatches } from '../idempotent-batches.ts';
import { MaxBefore } from '../max-before.ts';
import type { ViolationList } from '../violation.ts';

export const IDEMPOTENT_RETRY_ANSWER = 'idempotent-retry-answer';

/**
 * Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN: a partition's leader remembers the offsets of
 * each producer's last five batches, so a retry of any of them is answered as its original was.
 * The checker's own constant: it judges Kafka's rule, not the broker's copy of it.
 */
const KAFKA_BATCHES_RETAINED = 5;
/**
 * Answers that say the broker's idea of the producer's sequence differs from the retry's: wrong
 * for a batch the broker holds within its window. DUPLICATE_SEQUENCE_NUMBER too: within the window
 * Kafka answers the original's offset (Sender treats the error as a success without one, for
 * brokers that did not remember it).
 */
const SEQUENCE_ERRORS: ReadonlySet<string> = new Set(['OUT_OF_ORDER_SEQUENCE_NUMBER', 'DUPLICATE_SEQUENCE_NUMBER', 'UNKNOWN_PRODUCER_ID', 'INVALID_PRODUCER_EPOCH']);

/**
 * idempotent-retry-answer: an idempotent producer's batch (a first attempt or a retry: same
 * producer id, epoch and base sequence) that reaches its partition's leader when the broker's
 * producer state must hold either the batch itself, within the producer's last five batches there,
 * or the batch just before it, is never answered a sequence error (OUT_OF_ORDER_SEQUENCE_NUMBER,
 * DUPLICATE_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID, INVALID_PRODUCER_EPOCH): Kafka answers a retry of
 * a batch it holds ok at the original base offset, and the next batch ok at a new one. Other errors
 * (a lost leadership, a timeout, a storage error) may answer it as they may any request. An ok at
 * another offset than the original is acked-durable's to report (one batch acknowledged at two
 * offsets, or a record lost at the offset acknowledged) and idempotent-no-duplicates's (written twice).
 *
 * Judged only where the history proves the premises:
 * - the broker's state: the batch was committed on the broker that answered, before the request was
 *   sent (that broker answered an acks=all acknowledgement or a fetch whose high watermark lay past
 *   the batch; its offset from an acknowledgement of it, else the final log, else a read), or the
 *   batch just before it in the producer's sequence was acknowledged before the request was sent
 *   (or it is the first of its producer id and epoch there, and no later one was sent before it
 *   ended: a broker takes an unknown producer at any sequence). A committed batch stays in the log of
 *   whichever broker leads (a restart and a takeover rebuild the producer state with it; a broker
 *   whose lease lapsed refuses before it checks a sequence). Not a predecessor its answerer's
 *   successor acknowledged: a process deposed before its answer, still within its own lease
 *   (deposed-leaders.ts), judges sequences by a log the new leader has written past;
 * - the window: fewer than five later batches of that producer id and epoch on the partition were
 *   first sent before the request ended, and no batch of a later epoch of that id;
 * - no DeleteRecords that started before the request ended may have moved the log start above the
 *   batch that premise rests on: a log rebuilt from a start above a batch no longer holds it in its
 *   producer state, and may then answer OUT_OF_ORDER_SEQUENCE_NUMBER or take the batch again.
 * Time-based retention never reaches a batch within a run (retention.ms is a week; retention.bytes
 * is unbounded); tiering's local retention keeps the producer state in its snapshots.
 */
export function checkIdempotentRetryAnswer(index: HistoryIndex, out: ViolationList): void {
  let batches: IdempotentBatches | null = null; // built only for a run with a sequence error to judge
  let deposed: DeposedLeaders | null = null;
  for (const partition of index.partitions) {
    const refused = partition.produces.filter(isSequenceError);
    if (refused.length === 0) continue;
    batches ??= new IdempotentBatches(index.history.ops);
    deposed ??= new DeposedLeaders(index.history.leases);
    checkPartition(index, partition, refused, batches, deposed, out);
  }
}

function isSequenceError(op: ProduceOp): boolean {
  return op.idempotence !== null && !op.outcome.ok && op.outcome.answered && SEQUENCE_ERRORS.has(op.outcome.error);
}

function checkPartition(index: HistoryIndex, partition: PartitionHistory, refused: readonly ProduceOp[], batches: IdempotentBatches, deposed: DeposedLeaders, out: ViolationList): void {
  const offsets = batchOffsets(partition, refused);
  const committed = committedEnds(partition);
  const predecessors = ackedPredecessors(partition);
  const deleted = deleteRecordsReaches(index, partition);
  for (const op of refused) {
    const baseOffset = offsets.get(batchKey(op)) ?? null;
    // The offset below which no DeleteRecords may have reached for the broker's state to be known.
    let floor = -Infinity;
    if (baseOffset !== null && (committed.get(op.node)?.before(op.startMs) ?? -Infinity) >= baseOffset + op.values.length) floor = baseOffset;
    const predecessor = predecessorFloor(op, predecessors, baseOffset, batches);
    if (predecessor !== null && !(answeredDeposed(op, deposed) && predecessorAckedElsewhere(op, predecessors))) floor = Math.max(floor, predecessor);
    if (floor === -Infinity || deleted.before(op.endMs) > floor) continue;
    if (batches.sentAfter(op, op.endMs, KAFKA_BATCHES_RETAINED) >= KAFKA_BATCHES_RETAINED) continue;
    judge(partition, op, baseOffset, out);
  }
}

/**
 * When the batch just before `op`'s in its producer's sequence was acknowledged before `op` was
 * sent: the offset a DeleteRecords must not pass (that batch's base). For the first batch of its
 * producer id and epoch, when no later one was sent before it ended (a broker that does not know a
 * producer takes any sequence, KIP-360: a later batch taken first puts this one out of order): its
 * own base (-1 when unknown: any DeleteRecords). Null otherwise.
 */
function predecessorFloor(op: ProduceOp, predecessors: Map<string, Map<number, { ackedMs: number; baseOffset: number }>>, baseOffset: number | null, batches: IdempotentBatches): number | null {
  const { producerId, producerEpoch, baseSequence } = op.idempotence!;
  if (baseSequence === 0) return batches.sentAfter(op, op.endMs, 1) === 0 ? (baseOffset ?? -1) : null;
  const acked = predecessors.get(`${producerId}/${producerEpoch}`)?.get(baseSequence);
  return acked !== undefined && acked.ackedMs < op.startMs ? acked.baseOffset : null;
}

/** Per producer id and epoch, each acknowledged batch by the sequence that follows it: when it was first acknowledged, and where. */
function ackedPredecessors(partition: PartitionHistory): Map<string, Map<number, { ackedMs: number; baseOffset: number; process?: string }>> {
  const predecessors = new Map<string, Map<number, { ackedMs: number; baseOffset: number; process?: string }>>();
  for (const op of partition.produces) {
    if (op.idempotence === null || !op.outcome.ok || op.baseOffset === null) continue;
    const session = `${op.idempotence.producerId}/${op.idempotence.producerEpoch}`;
    let bySequence = predecessors.get(session);
    if (bySequence === undefined) predecessors.set(session, (bySequence = new Map()));
    const next = op.idempotence.baseSequence + op.values.length;
    const known = bySequence.get(next);
    if (known === undefined || op.endMs < known.ackedMs)
      bySequence.set(next, { ackedMs: op.endMs, baseOffset: op.baseOffset, ...(op.answeredBy === undefined ? {} : { process: op.answeredBy.process }) });
  }
  return predecessors;
}

/** Whether the batch before `op`'s was first acknowledged by another process than the one that answered `op`. */
function predecessorAckedElsewhere(op: ProduceOp, predecessors: Map<string, Map<number, { ackedMs: number; baseOffset: number; process?: string }>>): boolean {
  const { producerId, producerEpoch, baseSequence } = op.idempotence!;
  const acked = predecessors.get(`${producerId}/${producerEpoch}`)?.get(baseSequence);
  return acked?.process !== op.answeredBy?.process;
}

/** Answered by a process another had deposed (seed 226011): its log need not hold a predecessor its successor acknowledged. */
function answeredDeposed(op: ProduceOp, deposed: DeposedLeaders): boolean {
  return op.answeredBy !== undefined && deposed.deposed(op.topic, op.partition, op.answeredBy.process, op.answeredBy.atMs);
}

function judge(partition: PartitionHistory, op: ProduceOp, baseOffset: number | null, out: ViolationList): void {
  const { producerId, producerEpoch, baseSequence } = op.idempotence!;
  const error = (op.outcome as { error: string }).error;
  const at = baseOffset === null ? '' : `, stored at offset ${baseOffset}`;
  const detail = `a produce of producer ${producerId}/${producerEpoch} sequence ${baseSequence} (${op.client}, "${op.values[0]}"${at}) to node ${op.node}, whose broker held it or the batch before it within the producer's last ${KAFKA_BATCHES_RETAINED} batches, was answered ${error}`;
  out.add(IDEMPOTENT_RETRY_ANSWER, partition, `answered ${error} in sequence`, baseOffset, detail, op.startMs);
}

function batchKey(op: ProduceOp): string {
  const { producerId, producerEpoch, baseSequence } = op.idempotence!;
  return `${producerId}/${producerEpoch}/${baseSequence}`;
}

/**
 * The base offset of each batch of `refused` in the partition: where an acknowledgement of it put
 * it, else where the final log or a read holds its first record; null when two places disagree
 * (other invariants judge that).
 */
function batchOffsets(partition: PartitionHistory, refused: readonly ProduceOp[]): Map<string, number | null> {
  const offsets = new Map<string, number | null>();
  const note = (key: string, offset: number) => offsets.set(key, offsets.has(key) && offsets.get(key) !== offset ? null : offset);
  const wanted = new Set(refused.map(batchKey));
  for (const op of partition.produces) if (op.idempotence !== null && op.outcome.ok && op.baseOffset !== null && wanted.has(batchKey(op))) note(batchKey(op), op.baseOffset);
  const unplaced = new Map<string, string>();
  for (const op of refused) if (!offsets.has(batchKey(op))) unplaced.set(op.values[0]!, batchKey(op));
  if (unplaced.size === 0) return offsets;
  const leader = partition.leader;
  for (const [value, key] of unplaced) {
    const held = leader?.offsetsOf.get(value);
    if (held?.length === 1) note(key, held[0]!);
    else if (held !== undefined) offsets.set(key, null);
  }
  for (const fetch of partition.fetches) {
    for (const record of fetch.records) {
      const key = unplaced.get(record.value);
      if (key !== undefined && leader?.offsetsOf.get(record.value) === undefined) note(key, record.offset);
    }
  }
  return offsets;
}

/**
 * Per broker, how far its log was committed over time: each acks=all acknowledgement it answered
 * (up to the batch's end) and each fetch it answered (up to the high watermark).
 */
function committedEnds(partition: PartitionHistory): Map<number, MaxBefore> {
  const events = new Map<number, { atMs: number; value: number }[]>();
  const add = (node: number, atMs: number, value: number) => {
    let list = events.get(node);
    if (list === undefined) events.set(node, (list = []));
    list.push({ atMs, value });
  };
  for (const op of partition.produces) if (op.outcome.ok && op.acks === -1 && op.baseOffset !== null) add(op.node, op.endMs, op.baseOffset + op.values.length);
  for (const op of partition.fetches) if (op.outcome.ok && op.highWatermark !== null) add(op.node, op.endMs, op.highWatermark);
  return new Map([...events].map(([node, list]) => [node, new MaxBefore(list)]));
}

/** How far DeleteRecords may have moved the partition's log start, by when each started (placed here, or overlapping a create or delete). */
function deleteRecordsReaches(index: HistoryIndex, partition: PartitionHistory): MaxBefore {
  const unplaced = index.unplacedDeleteRecords.filter((op) => op.topic === partition.topic && op.partition === partition.partition);
  const reaches = [...partition.deleteRecords, ...unplaced].flatMap((op) => {
    const reach = reachOf(op);
    return reach === null ? [] : [{ atMs: op.startMs, value: reach }];
  });
  return new MaxBefore(reaches);
}
