import type { ProduceOp, ReplicaEnd } from '../history.ts';
import { type HistoryIndex, isAckedAll, metadataPropagationMs } from '../history-index.ts';
import { ConfigTimeline, MIN_INSYNC_REPLICAS } from '../config-timeline.ts';
import { healthySinceOf } from '../health-since.ts';
import { countAtMost, countBelow } from '../incarnations.ts';
import { RangeMax } from '../range-max.ts';
import type { ViolationList } from '../violation.ts';

export const ACKS_ALL_MIN_INSYNC = 'acks-all-min-insync';

/**
 * acks-all-min-insync (Kafka's acks=all with min.insync.replicas; finding 7 of issue 9): a record
 * is acknowledged with acks=all only once at least min.insync.replicas replicas, the leader
 * included, hold it. Judged from every replica's log end over the run (`replicaEnds`, recorded
 * by the harness): a node held a batch if, after the first request carrying it started and
 * before its acknowledgement arrived, its log of the partition ended past the batch's last
 * offset. Before that first request no log can hold it, so a log that ended past it then (an
 * older incarnation, a diverged tail) does not count; one that reached past it only afterwards
 * counts even if it held other records there, so the rule only ever lets an acknowledgement
 * pass that Kafka's semantics would reject, never the reverse. Judged in a cluster with
 * min.insync.replicas above 1 (with 1 the leader alone suffices, and it holds what it appended).
 *
 * min.insync.replicas is the topic's, which may change during the run (IncrementalAlterConfigs,
 * issue 25): an acknowledgement is held to the least value that may have been in effect on its
 * broker while it was under way (config-timeline.ts: a change is sure once answered, propagated
 * and its broker healthy as long; until then the value before it may still apply).
 */
export function checkAcksAllMinInsync(index: HistoryIndex, out: ViolationList): void {
  const { replicaEnds, shape } = index.history;
  if (replicaEnds === null || !shape.cluster) return;
  const required = requiredReplicas(index);
  const replicas = replicaTimelines(replicaEnds);
  const firstSentMs = firstSends(index);
  for (const partition of index.partitions) {
    const timelines = replicas.get(`${partition.topic}\u0000${partition.partition}`) ?? [];
    for (const op of partition.produces) {
      if (!isAckedAll(op) || op.baseOffset === null || op.values.length === 0) continue;
      const minInsync = required(op);
      if (minInsync <= 1) continue;
      const lastOffset = op.baseOffset + op.values.length - 1;
      const fromMs = firstSentMs.get(op.values[0]!) ?? op.startMs;
      const holders = timelines.filter((timeline) => timeline.reachedPast(lastOffset, fromMs, op.endMs)).map((timeline) => timeline.node);
      if (holders.length >= minInsync) continue;
      const held = holders.length === 0 ? 'no replica' : `only node${holders.length > 1 ? 's' : ''} ${holders.join(', ')}`;
      out.add(
        ACKS_ALL_MIN_INSYNC,
        partition,
        'acknowledged before min.insync replicas held it',
        op.baseOffset,
        `"${op.values[0]}" acknowledged to ${op.client} by node ${op.node} at offsets ${op.baseOffset}..${lastOffset}, held by ${held} (min.insync.replicas ${minInsync})`,
        op.endMs,
      );
    }
  }
}

/** The least min.insync.replicas that may have held for each acknowledgement: its topic's, as altered, on its broker. */
function requiredReplicas(index: HistoryIndex): (op: ProduceOp) => number {
  const { history } = index;
  const propagationMs = metadataPropagationMs(history);
  const healthySince = healthySinceOf(history.health);
  const timelines = new Map<string, ConfigTimeline>();
  const defaultValue = String(history.shape.minInsyncReplicas);
  return (op) => {
    let timeline = timelines.get(op.topic);
    if (timeline === undefined) timelines.set(op.topic, (timeline = new ConfigTimeline(history.ops, op.topic, MIN_INSYNC_REPLICAS, defaultValue, propagationMs)));
    if (timeline.constant) return history.shape.minInsyncReplicas;
    return Math.min(...timeline.possibleValues(op.startMs, op.endMs, healthySince(op.node, op.startMs)).map(Number));
  };
}

/** One node's log ends of one partition, by time. */
class ReplicaTimeline {
  readonly node: number;
  readonly #atMs: number[];
  readonly #ends: RangeMax;

  constructor(node: number, changes: readonly ReplicaEnd[]) {
    this.node = node;
    this.#atMs = changes.map((change) => change.atMs);
    this.#ends = new RangeMax(changes.map((change) => change.logEndOffset));
  }

  /** Whether the log ended past `offset` at a change within [fromMs, toMs]. */
  reachedPast(offset: number, fromMs: number, toMs: number): boolean {
    return this.#ends.max(countBelow(this.#atMs, fromMs), countAtMost(this.#atMs, toMs)) > offset;
  }
}

/** Each partition's replica timelines, keyed by topic and partition (incarnations together: the window of each batch keeps them apart). */
function replicaTimelines(ends: readonly ReplicaEnd[]): Map<string, ReplicaTimeline[]> {
  const byReplica = new Map<string, ReplicaEnd[]>();
  for (const end of ends) {
    const key = `${end.topic}\u0000${end.partition}\u0000${end.node}`;
    const list = byReplica.get(key);
    if (list === undefined) byReplica.set(key, [end]);
    else list.push(end);
  }
  const timelines = new Map<string, ReplicaTimeline[]>();
  for (const changes of byReplica.values()) {
    const sorted = [...changes].sort((a, b) => a.atMs - b.atMs);
    const { topic, partition, node } = sorted[0]!;
    const key = `${topic}\u0000${partition}`;
    const list = timelines.get(key) ?? [];
    list.push(new ReplicaTimeline(node, sorted));
    timelines.set(key, list);
  }
  return timelines;
}

/** When the first request carrying each value started: no log holds a record before it was first sent. */
function firstSends(index: HistoryIndex): Map<string, number> {
  const first = new Map<string, number>();
  for (const op of index.history.ops) {
    if (op.kind !== 'produce') continue;
    for (const value of (op as ProduceOp).values) {
      const known = first.get(value);
      if (known === undefined || op.startMs < known) first.set(value, op.startMs);
    }
  }
  return first;
}
