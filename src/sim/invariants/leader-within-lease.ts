import type { LeaseHistory, LeaseRenewal, PartitionRecordWrite, ProduceOp } from '../history.ts';
import type { HistoryIndex, PartitionHistory } from '../history-index.ts';
import type { ViolationList } from '../violation.ts';

export const LEADER_WITHIN_LEASE = 'leader-within-lease';

/** A process's name is `broker-<node id>#<start>` (SimBrokerHost's gates). */
const PROCESS_NODE = /^broker-(\d+)#/;

/** A stretch of time over which a process held its lease without a gap: from a renewal's send to the end of the last one's lease. */
interface HeldStretch {
  readonly startMs: number;
  /** Exclusive. */
  readonly endMs: number;
  /** The renewal whose lease ends the stretch (for the message). */
  readonly last: LeaseRenewal;
}

/**
 * leader-within-lease (docs/cluster-protocol.md [C1], L5): no broker process acknowledges a
 * produce (acks 1 or all) outside the lease it holds, or as a leader it no longer is.
 *
 * The lease, as the control store took it: a process holds its lease from the moment it SENT a
 * write of its broker record that the store took (others see a renewal no sooner than it was
 * sent) until `leaseMs` later on its own clock, which runs at most its recorded rate error slow
 * (real time `leaseMs / (1 - error)`); a resignation the store took ends it there. An acknowledgement
 * was decided no sooner than its request was sent and no later than its broker wrote the answer
 * (AnswerOrigin): it breaks the rule only when that whole window lies outside every held stretch
 * of the process that answered, so a lease computed from a later instant than the send (the
 * answer's arrival) shows, and network delay or a pause between decision and answer never does.
 *
 * The leader: the process must have claimed the partition (a partition record write naming its
 * node, by it) before its answer. And a process whose lease lapsed and came back acknowledges
 * again only after a scan saw what others took meanwhile ([C1] confirm, [C6]): so no process
 * acknowledges in a held stretch that began after another's write of the partition record at a
 * higher leader epoch than its own latest claim was in the store. (Within one unbroken stretch a
 * takeover is fenced by the seal instead, [C4], which the data invariants judge.)
 */
export function checkLeaderWithinLease(index: HistoryIndex, out: ViolationList): void {
  const leases = index.history.leases;
  if (leases === undefined) return;
  const judge = new LeaseJudge(leases);
  for (const partition of index.partitions) {
    for (const op of partition.produces) if (op.outcome.ok && op.acks !== 0 && op.answeredBy !== undefined) judge.check(partition, op, out);
  }
}

/** The leases and claims of a run, indexed once; judges one acknowledgement at a time. */
class LeaseJudge {
  /** Process → its held stretches, in time order. */
  readonly #stretches: ReadonlyMap<string, readonly HeldStretch[]>;
  /** `topic/partition` → every write of its record, in the store's order, and which of the first i+1 has the highest leader epoch. */
  readonly #writes = new Map<string, { writes: PartitionRecordWrite[]; highest: PartitionRecordWrite[] }>();

  constructor(leases: LeaseHistory) {
    this.#stretches = heldStretches(leases);
    for (const write of leases.partitionWrites) {
      const key = partitionKey(write.topic, write.partition);
      let entry = this.#writes.get(key);
      if (entry === undefined) this.#writes.set(key, (entry = { writes: [], highest: [] }));
      const highest = entry.highest.at(-1);
      entry.highest.push(highest !== undefined && highest.leaderEpoch >= write.leaderEpoch ? highest : write);
      entry.writes.push(write);
    }
  }

  check(partition: PartitionHistory, op: ProduceOp, out: ViolationList): void {
    const { process, atMs } = op.answeredBy!;
    const what = `${process} acknowledged ${describe(op)} (acks ${op.acks === -1 ? 'all' : op.acks}), decided between ${ms(op.startMs)} and ${ms(atMs)}`;
    const stretches = this.#stretches.get(process) ?? [];
    const held = firstHeldIn(stretches, op.startMs, atMs);
    if (held === null) {
      out.add(LEADER_WITHIN_LEASE, partition, 'acknowledged outside its lease', op.baseOffset, `${what}; ${leaseAround(stretches, op.startMs)}`, atMs);
      return;
    }
    const claim = this.#latestClaim(op.topic, op.partition, process, atMs);
    if (claim === null) {
      out.add(LEADER_WITHIN_LEASE, partition, 'acknowledged without a claim', op.baseOffset, `${what}; no write of ${op.topic}/${op.partition}'s record by it named it leader before`, atMs);
      return;
    }
    const taken = this.#takenBefore(op.topic, op.partition, held.startMs);
    if (taken !== null && taken.leaderEpoch > claim.leaderEpoch) {
      out.add(
        LEADER_WITHIN_LEASE,
        partition,
        'acknowledged after its lease came back over a takeover',
        op.baseOffset,
        `${what} as leader at epoch ${claim.leaderEpoch}; ${taken.process} had written the record at epoch ${taken.leaderEpoch} (leader ${taken.leader}) at ${ms(taken.takenMs)}, before the lease stretch this answer lies in began (renewal sent at ${ms(held.startMs)})`,
        atMs,
      );
    }
  }

  /** The process's latest write naming its own node leader of the partition, taken at or before `atMs`. */
  #latestClaim(topic: string, partition: number, process: string, atMs: number): PartitionRecordWrite | null {
    const node = Number(PROCESS_NODE.exec(process)?.[1] ?? Number.NaN);
    const writes = this.#writes.get(partitionKey(topic, partition))?.writes ?? [];
    for (let i = countTakenBy(writes, atMs, true) - 1; i >= 0; i--) {
      const write = writes[i]!;
      if (write.process === process && write.leader === node) return write;
    }
    return null;
  }

  /** The write with the highest leader epoch among those the store took strictly before `beforeMs`. */
  #takenBefore(topic: string, partition: number, beforeMs: number): PartitionRecordWrite | null {
    const entry = this.#writes.get(partitionKey(topic, partition));
    if (entry === undefined) return null;
    const count = countTakenBy(entry.writes, beforeMs, false);
    return count === 0 ? null : entry.highest[count - 1]!;
  }
}

/**
 * Each process's held stretches: every renewal it sent that the store took holds from its send for
 * `leaseMs / (1 - error)`; overlapping ones join; a resignation the store took ends them.
 */
function heldStretches(leases: LeaseHistory): Map<string, HeldStretch[]> {
  const byProcess = new Map<string, LeaseRenewal[]>();
  for (const renewal of leases.renewals) {
    if (!byProcess.has(renewal.process)) byProcess.set(renewal.process, []);
    byProcess.get(renewal.process)!.push(renewal);
  }
  const stretches = new Map<string, HeldStretch[]>();
  for (const [process, renewals] of byProcess) {
    const error = leases.clockRateErrors[process] ?? 0;
    const resignedMs = Math.min(...renewals.filter((renewal) => renewal.resigned).map((renewal) => renewal.takenMs));
    const held = renewals.filter((renewal) => !renewal.resigned && renewal.sentMs < resignedMs).sort((a, b) => a.sentMs - b.sentMs);
    const joined: HeldStretch[] = [];
    for (const renewal of held) {
      const endMs = Math.min(resignedMs, renewal.sentMs + renewal.leaseMs / (1 - error));
      const last = joined.at(-1);
      if (last !== undefined && renewal.sentMs < last.endMs) {
        if (endMs > last.endMs) joined[joined.length - 1] = { startMs: last.startMs, endMs, last: renewal };
      } else {
        joined.push({ startMs: renewal.sentMs, endMs, last: renewal });
      }
    }
    stretches.set(process, joined);
  }
  return stretches;
}

/** The first stretch (disjoint, in time order) that meets [fromMs, toMs], or null. */
function firstHeldIn(stretches: readonly HeldStretch[], fromMs: number, toMs: number): HeldStretch | null {
  let low = 0;
  let high = stretches.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (stretches[middle]!.endMs > fromMs) high = middle;
    else low = middle + 1;
  }
  const stretch = stretches[low];
  return stretch !== undefined && stretch.startMs <= toMs ? stretch : null;
}

/** How many of `writes` (in the store's order) the store took by `atMs` (inclusive) or before it. */
function countTakenBy(writes: readonly PartitionRecordWrite[], atMs: number, inclusive: boolean): number {
  let low = 0;
  let high = writes.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    const takenMs = writes[middle]!.takenMs;
    if (takenMs < atMs || (inclusive && takenMs === atMs)) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The lease before `atMs` and the next one, for a violation's message. */
function leaseAround(stretches: readonly HeldStretch[], atMs: number): string {
  const before = stretches.filter((stretch) => stretch.endMs <= atMs).at(-1);
  const after = stretches.find((stretch) => stretch.startMs > atMs);
  const ended =
    before === undefined
      ? 'it held no lease before'
      : `its lease ended at ${ms(before.endMs)} (the last renewal the store took was sent at ${ms(before.last.sentMs)}, taken at ${ms(before.last.takenMs)}, lease ${before.last.leaseMs} ms)`;
  return `${ended}; ${after === undefined ? 'no later renewal of it was taken' : `the next renewal it sent that was taken left at ${ms(after.startMs)}`}`;
}

function describe(op: ProduceOp): string {
  return op.values.length === 1 ? op.values[0]! : `${op.values[0]} and ${op.values.length - 1} more`;
}

function ms(value: number): string {
  return `${value.toFixed(1)} ms`;
}

function partitionKey(topic: string, partition: number): string {
  return `${topic}/${partition}`;
}
