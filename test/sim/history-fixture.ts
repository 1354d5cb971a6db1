// Hand-built histories for the checker's tests: a small valid run and helpers to break it.
import type {
  AdminOp,
  ClientOp,
  CommitOp,
  FaultEvent,
  FetchOp,
  GroupMemberOp,
  HealthChange,
  JoinGroupOp,
  History,
  OffsetFetchOp,
  Outcome,
  ProbeResult,
  ProduceOp,
  ReplicaEnd,
  ReplicaLog,
  RunShape,
  WalRecord,
} from '../../src/sim/history.ts';

export const OK: Outcome = { ok: true };
export const NO_ANSWER: Outcome = { ok: false, error: 'DISCONNECTED', answered: false };
export const LIVENESS_BOUND_MS = 10_000;

type Span = { startMs: number; endMs: number };
const common = (client: string, span: Span, outcome: Outcome = OK) => ({ client, node: 1, ...span, outcome });

export function produce(client: string, span: Span, values: string[], baseOffset: number | null, options: Partial<ProduceOp> = {}): ProduceOp {
  return { ...common(client, span), kind: 'produce', topic: 't', partition: 0, acks: -1, idempotence: null, values, baseOffset, ...options };
}

export function idempotent(producerId: number, baseSequence: number): ProduceOp['idempotence'] {
  return { producerId: BigInt(producerId), producerEpoch: 0, baseSequence };
}

/** A fetch returning `values` from `fetchOffset` on. */
export function fetch(client: string, span: Span, fetchOffset: number, values: string[], highWatermark: number, options: Partial<FetchOp> = {}): FetchOp {
  const records = values.map((value, i) => ({ offset: fetchOffset + i, value }));
  return { ...common(client, span), kind: 'fetch', topic: 't', partition: 0, fetchOffset, leaderEpoch: 0, highWatermark, records, ...options };
}

export function commit(span: Span, offset: number, options: Partial<CommitOp> = {}): CommitOp {
  return { ...common('c1', span), kind: 'commit', group: 'g', topic: 't', partition: 0, offset, reset: false, generationId: -1, memberId: '', ...options };
}

export function offsetFetch(span: Span, offset: number, options: Partial<OffsetFetchOp> = {}): OffsetFetchOp {
  return { ...common('c1', span), kind: 'offset-fetch', group: 'g', topic: 't', partition: 0, offset, ...options };
}

/** A JoinGroup of group g answered ok: `memberId` in generation `generationId` led by `leader` (the leader is answered every member). */
export function joinGroup(span: Span, memberId: string, generationId: number, leader: string, options: Partial<JoinGroupOp> = {}): JoinGroupOp {
  return { ...common('c1', span), kind: 'join-group', group: 'g', askedMemberId: memberId, memberId, generationId, leader, members: memberId === leader ? [leader] : [], ...options };
}

/** A SyncGroup, Heartbeat or LeaveGroup of group g answered ok. */
export function groupMember(kind: GroupMemberOp['kind'], span: Span, memberId: string, generationId: number, options: Partial<GroupMemberOp> = {}): GroupMemberOp {
  return { ...common('c1', span), kind, group: 'g', generationId, memberId, ...options };
}

export function admin(kind: AdminOp['kind'], span: Span, outcome: Outcome = OK, topic = 't'): AdminOp {
  return { ...common('admin', span, outcome), kind, topic, partitions: 1, replicationFactor: 2 };
}

/** A replica's final log holding `values` from `logStartOffset` on, one batch per BATCH_RECORDS records. */
export function replica(node: number, leader: boolean, values: string[], logStartOffset = 0, topic = 't'): ReplicaLog {
  const BATCH_RECORDS = 2;
  const records = values.map((value, i) => ({ offset: logStartOffset + i, value }));
  const batches: ReplicaLog['batches'][number][] = [];
  for (let i = 0; i < records.length; i += BATCH_RECORDS) {
    const slice = records.slice(i, i + BATCH_RECORDS);
    batches.push({ baseOffset: slice[0]!.offset, lastOffset: slice.at(-1)!.offset, bytes: new TextEncoder().encode(slice.map((r) => r.value).join(',')) });
  }
  const logEndOffset = logStartOffset + values.length;
  return { node, topic, partition: 0, leader, logStartOffset, logEndOffset, highWatermark: logEndOffset, batches, records };
}

export function probe(writeAfterMs: number | null = 50, readAfterMs: number | null = 60, topic = 't'): ProbeResult {
  return { topic, partition: 0, writeAfterMs, readAfterMs };
}

/** The fixture's cluster: nodes 1 and 2 hold t/0 (RF 2), min.insync 1, so one broker may be down. Resume bound: 2×1000 + 3×100 + 3000 = 5300 ms. */
export const SHAPE: RunShape = { brokers: 2, cluster: true, replicationFactor: 2, minInsyncReplicas: 1, leaseMs: 1_000, scanIntervalMs: 100 };

/** Every node of `shape` healthy from 0 on. */
export function allHealthy(shape: RunShape = SHAPE): HealthChange[] {
  return Array.from({ length: shape.brokers }, (_, i) => ({ node: i + 1, atMs: 0, healthy: true }));
}

/** `node` unhealthy over [fromMs, toMs). */
export function spell(node: number, fromMs: number, toMs: number): HealthChange[] {
  return [
    { node, atMs: fromMs, healthy: false },
    { node, atMs: toMs, healthy: true },
  ];
}

export function history(parts: {
  ops: ClientOp[];
  replicaLogs: ReplicaLog[];
  probes?: ProbeResult[];
  faults?: FaultEvent[];
  shape?: RunShape;
  health?: HealthChange[];
  walRecords?: WalRecord[];
  replicaEnds?: ReplicaEnd[];
}): History {
  const shape = parts.shape ?? SHAPE;
  return {
    seed: 42,
    startMs: 0,
    ops: parts.ops,
    faults: parts.faults ?? [],
    replicaLogs: parts.replicaLogs,
    probes: parts.probes ?? [probe()],
    quietFromMs: 5_000,
    livenessBoundMs: LIVENESS_BOUND_MS,
    shape,
    health: parts.health ?? allHealthy(shape),
    walRecords: parts.walRecords ?? null,
    replicaEnds: parts.replicaEnds ?? null,
  };
}

/**
 * A valid run on t/0 (RF 2, node 1 leads): idempotent producer p1 writes a0,a1 (seq 0) then a2
 * (seq 2) with acks=all, plain p2 writes b0 with acks=1; c1 reads them and commits 4.
 */
export function validOps(): ClientOp[] {
  return [
    produce('p1', { startMs: 100, endMs: 110 }, ['a0', 'a1'], 0, { idempotence: idempotent(7, 0) }),
    produce('p1', { startMs: 120, endMs: 130 }, ['a2'], 2, { idempotence: idempotent(7, 2) }),
    produce('p2', { startMs: 140, endMs: 150 }, ['b0'], 3, { acks: 1 }),
    fetch('c1', { startMs: 200, endMs: 210 }, 0, ['a0', 'a1', 'a2', 'b0'], 4),
    fetch('c1', { startMs: 220, endMs: 230 }, 4, [], 4),
    commit({ startMs: 240, endMs: 250 }, 4),
    offsetFetch({ startMs: 260, endMs: 270 }, 4),
  ];
}

export const VALID_LOG = ['a0', 'a1', 'a2', 'b0'];

export function validHistory(ops: ClientOp[] = validOps(), leaderLog: string[] = VALID_LOG, followerLog: string[] = VALID_LOG.slice(0, 2)): History {
  return history({ ops, replicaLogs: [replica(1, true, leaderLog), replica(2, false, followerLog)] });
}
