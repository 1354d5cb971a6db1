import type { ProduceOp } from '../history.ts';
import { deleteRecordsReach } from '../delete-floors.ts';
import { alterMayHaveTakenEffect } from '../config-timeline.ts';
import { type HistoryIndex, isAckedAll, isSingleCopy, type LeaderView, type PartitionHistory } from '../history-index.ts';
import type { ViolationList } from '../violation.ts';

export const ACKED_DURABLE = 'acked-durable';

/**
 * acked-durable: every record acknowledged with acks=all is in the final leader's log at its
 * acknowledged offset (base offset + index in batch), exactly once, in its producer's order.
 *
 * - Presence: only for the incarnation the run ends in (a deleted incarnation's records are gone
 *   by design), and only at or above the leader's log start (retention may remove a prefix). In a
 *   run without a tier, where only DeleteRecords moves a log start unless retention.ms or
 *   retention.bytes of the topic was altered to a limit (issue 25), a partition that had
 *   DeleteRecords must hold everything from the highest start they may have set
 *   (delete-floors.ts): a start moved past it lost acknowledged records.
 * - Exactly once: a plain producer's value is demanded once only if it was sent in one request
 *   (a retry may write it twice); an idempotent producer's duplicates are
 *   idempotent-no-duplicates's to report.
 * - Order: for one idempotent producer (id and epoch) and partition, acknowledged batches lie at
 *   offsets that increase with their sequence numbers, and a batch acknowledged twice (a retried
 *   duplicate) is acknowledged at the same offset. Checked in every incarnation.
 */
export function checkAckedDurable(index: HistoryIndex, out: ViolationList): void {
  const limited = retentionLimitedTopics(index);
  for (const partition of index.partitions) {
    const acked = partition.produces.filter(isAckedAll);
    if (acked.length === 0) continue;
    checkProducerOrder(partition, acked, out);
    if (partition.isFinal) checkPresence(index, partition, acked, limited, out);
  }
}

function checkPresence(index: HistoryIndex, partition: PartitionHistory, acked: readonly ProduceOp[], limited: ReadonlySet<string>, out: ViolationList): void {
  const leader = partition.leader;
  const demandedFrom = leader === null ? 0 : demandedStart(index, partition, leader, limited);
  for (const op of acked) {
    if (op.baseOffset === null) {
      out.add(ACKED_DURABLE, partition, 'acknowledged without an offset', null, `an acks=all produce by ${op.client} answered ok with no base offset`, op.endMs);
      continue;
    }
    if (leader === null) {
      out.add(ACKED_DURABLE, partition, 'no leader at the end', op.baseOffset, `records acknowledged by ${op.client} have no final leader log`, op.endMs);
      continue;
    }
    op.values.forEach((value, i) => {
      const offset = op.baseOffset! + i;
      if (offset < demandedFrom) return;
      const held = leader.valueAt.get(offset);
      if (held !== value) {
        const holds = held === undefined ? 'nothing' : `"${held}"`;
        out.add(
          ACKED_DURABLE,
          partition,
          'acknowledged record lost',
          offset,
          `"${value}" acknowledged to ${op.client} at offset ${offset}; the final leader (node ${leader.log.node}) holds ${holds} there`,
          op.endMs,
        );
      }
      const offsets = leader.offsetsOf.get(value) ?? [];
      if (offsets.length > 1 && op.idempotence === null && isSingleCopy(index, value)) {
        out.add(ACKED_DURABLE, partition, 'acknowledged record stored twice', offset, `"${value}", sent once, is at offsets ${offsets.join(', ')}`, op.endMs);
      }
    });
  }
}

/** Where the final leader's log must hold every acknowledged record from (see the doc above). */
function demandedStart(index: HistoryIndex, partition: PartitionHistory, leader: LeaderView, limited: ReadonlySet<string>): number {
  const reach = index.history.tiered === undefined && !limited.has(partition.topic) ? deleteRecordsReach(index, partition) : null;
  return reach === null ? leader.log.logStartOffset : Math.min(leader.log.logStartOffset, reach);
}

/** The retention configs: set to a limit, retention may move a log start as well as DeleteRecords. */
const RETENTION_CONFIGS: ReadonlySet<string> = new Set(['retention.ms', 'retention.bytes']);
const UNLIMITED = '-1';

/** The topics on which an alter that may have taken effect set a retention limit (a DELETE brings back the default, a limit too). */
function retentionLimitedTopics(index: HistoryIndex): Set<string> {
  const topics = new Set<string>();
  for (const op of index.history.ops) {
    if (op.kind !== 'alter-configs' || !alterMayHaveTakenEffect(op)) continue;
    if (op.configs.some((config) => RETENTION_CONFIGS.has(config.name) && config.value !== UNLIMITED)) topics.add(op.topic);
  }
  return topics;
}

function checkProducerOrder(partition: PartitionHistory, acked: readonly ProduceOp[], out: ViolationList): void {
  const byProducer = new Map<string, ProduceOp[]>();
  for (const op of acked) {
    if (op.idempotence === null || op.baseOffset === null) continue;
    const key = `${op.idempotence.producerId}/${op.idempotence.producerEpoch}`;
    let list = byProducer.get(key);
    if (list === undefined) byProducer.set(key, (list = []));
    list.push(op);
  }
  for (const [producer, batches] of byProducer) {
    batches.sort((a, b) => a.idempotence!.baseSequence - b.idempotence!.baseSequence);
    for (let i = 1; i < batches.length; i++) checkBatchPair(partition, producer, batches[i - 1]!, batches[i]!, out);
  }
}

function checkBatchPair(partition: PartitionHistory, producer: string, earlier: ProduceOp, later: ProduceOp, out: ViolationList): void {
  const earlierBase = earlier.baseOffset!;
  const laterBase = later.baseOffset!;
  const sequences = `sequences ${earlier.idempotence!.baseSequence} and ${later.idempotence!.baseSequence}`;
  if (earlier.idempotence!.baseSequence === later.idempotence!.baseSequence) {
    if (earlierBase !== laterBase) {
      out.add(
        ACKED_DURABLE,
        partition,
        'one batch acknowledged at two offsets',
        laterBase,
        `producer ${producer}, sequence ${later.idempotence!.baseSequence}: offsets ${earlierBase} and ${laterBase}`,
        later.endMs,
      );
    }
  } else if (laterBase < earlierBase + earlier.values.length) {
    out.add(ACKED_DURABLE, partition, 'producer order broken', laterBase, `producer ${producer}, ${sequences} acknowledged at offsets ${earlierBase} and ${laterBase}`, later.endMs);
  }
}
