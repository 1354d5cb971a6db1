import type { FetchOp, LeaseHistory, LeaseRenewal, PartitionRecordWrite, ProduceOp } from '../history.ts';
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
 * One answer a process gave as a partition's leader: an acknowledgement, or a read served with
 * records or a high watermark.
 */
interface LeaderAct {
  readonly process: string;
  /** When it was decided: no sooner than its request was sent, no later than its broker wrote the answer. */
  readonly fromMs: number;
  readonly atMs: number;
  readonly topic: string;
  readonly partition: number;
  /** The offset the violation lists (the batch acknowledged, the offset fetched). */
  readonly offset: number | null;
  /** 'acknowledged' or 'served a read' (the violation's reason starts with it). */
  readonly verb: string;
  /** What it did, for the message. */
  readonly what: string;
  /** The leader epoch it acted at, when the answer proves one (a fetch's current_leader_epoch); null: its latest claim's. */
  readonly leaderEpoch: number | null;
}

/**
 * leader-within-lease (docs/cluster-protocol.md [C1], L5): no broker process acts as a
 * partition's leader outside the lease it holds, or as a leader it no longer is. Its acts: it
 * acknowledges a produce (acks 1 or all), and it serves a Fetch with records or a high watermark.
 *
 * The lease, as the control store took it: a process holds its lease from the moment it SENT a
 * write of its broker record that the store took (others see a renewal no sooner than it was
 * sent) until `leaseMs` later on its own clock, which runs at most its recorded rate error slow
 * (real time `leaseMs / (1 - error)`); a resignation the store took ends it there. An act
 * was decided no sooner than its request was sent and no later than its broker wrote the answer
 * (AnswerOrigin): it breaks the rule only when that whole window lies outside every held stretch
 * of the process that answered, so a lease computed from a later instant than the send (the
 * answer's arrival) shows, and network delay or a pause between decision and answer never does.
 *
 * The leader: the process must have claimed the partition (a partition record write naming its
 * node, by it) before its answer. And a process whose lease lapsed and came back acts as leader
 * again only after a scan saw what others took meanwhile ([C1] confirm, [C6]): so no process
 * acts in a held stretch that began after another's write of the partition record at a higher
 * leader epoch than the one it acts at (a fetch's current_leader_epoch, which a broker serves
 * only at its own; else its latest claim in the store). Within one unbroken stretch a takeover
 * is fenced by the seal instead ([C4], which the data invariants judge); a read there may be
 * stale, as a Kafka leader's is until it learns of its successor.
 */
export function checkLeaderWithinLease(index: HistoryIndex, out: ViolationList): void {
  const leases = index.history.leases;
  if (leases === undefined) return;
  const judge = new LeaseJudge(leases);
  for (const partition of index.partitions) {
    for (const op of partition.produces) if (op.outcome.ok && op.acks !== 0 && op.answeredBy !== undefined) judge.check(partition, acknowledgement(op), out);
    for (const op of partition.fetches) if (servedAsLeader(op)) judge.check(partition, read(op), out);
  }
}

/** A fetch answered ok that named the partition with records or a high watermark (a throttled empty answer names none). */
function servedAsLeader(op: FetchOp): boolean {
  if (!op.outcome.ok || op.answeredBy === undefined || op.throttledEmpty !== undefined) return false;
  return op.records.length > 0 || (op.highWatermark !== null && op.highWatermark >= 0);
}

function acknowledgement(op: ProduceOp): LeaderAct {
  const { process, atMs } = op.answeredBy!;
  const what = `${process} acknowledged ${describe(op)} (acks ${op.acks === -1 ? 'all' : op.acks}), decided between ${ms(op.startMs)} and ${ms(atMs)}`;
  return { process, fromMs: op.startMs, atMs, topic: op.topic, partition: op.partition, offset: op.baseOffset, verb: 'acknowledged', what, leaderEpoch: null };
}

function read(op: FetchOp): LeaderAct {
  const { process, atMs } = op.answeredBy!;
  const served = op.records.length === 0 ? 'no records' : `${op.records.length} records from ${op.records[0]!.offset}`;
  const epoch = op.leaderEpoch >= 0 ? `at leader epoch ${op.leaderEpoch}` : 'at no leader epoch named';
  const what = `${process} served a fetch from ${op.fetchOffset} ${epoch} (${served}, high watermark ${op.highWatermark}), decided between ${ms(op.startMs)} and ${ms(atMs)}`;
  return { process, fromMs: op.startMs, atMs, topic: op.topic, partition: op.partition, offset: op.fetchOffset, verb: 'served a read', what, leaderEpoch: op.leaderEpoch >= 0 ? op.leaderEpoch : null };
}

/** The leases and claims of a run, indexed once; judges one act at a time. */
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

  check(partition: PartitionHistory, act: LeaderAct, out: ViolationList): void {
    const { process, atMs, what, verb } = act;
    const stretches = this.#stretches.get(process) ?? [];
    const held = firstHeldIn(stretches, act.fromMs, atMs);
    if (held === null) {
      out.add(LEADER_WITHIN_LEASE, partition, `${verb} outside its lease`, act.offset, `${what}; ${leaseAround(stretches, act.fromMs)}`, atMs);
      return;
    }
    const claim = this.#latestClaim(act.topic, act.partition, process, atMs);
    if (claim === null) {
      out.add(LEADER_WITHIN_LEASE, partition, `${verb} without a claim`, act.offset, `${what}; no write of ${act.topic}/${act.partition}'s record by it named it leader before`, atMs);
      return;
    }
    const epoch = act.leaderEpoch ?? claim.leaderEpoch;
    const taken = this.#takenBefore(act.topic, act.partition, held.startMs);
    if (taken !== null && taken.leaderEpoch > epoch) {
      out.add(
        LEADER_WITHIN_LEASE,
        partition,
        `${verb} after its lease came back over a takeover`,
        act.offset,
        `${what} as leader at epoch ${epoch}; ${taken.process} had written the record at epoch ${taken.leaderEpoch} (leader ${taken.leader}) at ${ms(taken.takenMs)}, before the lease stretch this answer lies in began (renewal sent at ${ms(held.startMs)})`,
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
