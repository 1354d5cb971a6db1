import {
  type CommitOp,
  type DeleteRecordsOp,
  type FetchOp,
  type History,
  isPartitionOp,
  type ListOffsetsOp,
  type OffsetFetchOp,
  type ProduceOp,
  type ReplicaLog,
  type TieredPartition,
} from './history.ts';
import { TopicIncarnations } from './incarnations.ts';
import { ReadPlacement } from './read-placement.ts';
import type { PartitionRef } from './violation.ts';

/**
 * The final leader's log of a partition, looked up both ways. With a tier, `log` is the whole log
 * a reader is served (docs/tier-protocol.md KI1): the tier's counted segments from its start,
 * then the leader's local log from where they end (or from its own start, below that); `local`
 * is the leader's local log alone.
 */
export interface LeaderView {
  readonly log: ReplicaLog;
  readonly local: ReplicaLog;
  readonly valueAt: ReadonlyMap<number, string>;
  readonly offsetsOf: ReadonlyMap<string, readonly number[]>;
}

/** Everything the run did to one partition of one topic incarnation. */
export interface PartitionHistory extends PartitionRef {
  /** Whether this is the incarnation the run ended in: only its records are expected in the final logs. */
  readonly isFinal: boolean;
  readonly produces: ProduceOp[];
  readonly fetches: FetchOp[];
  readonly commits: CommitOp[];
  readonly offsetFetches: OffsetFetchOp[];
  /** DeleteRecords placed in this incarnation by their times. */
  readonly deleteRecords: DeleteRecordsOp[];
  readonly listOffsets: ListOffsetsOp[];
  /** The final replica logs (final incarnation only). */
  readonly replicaLogs: ReplicaLog[];
  /** The first replica that leads at the end, or null (none, or not the final incarnation). */
  leader: LeaderView | null;
  /** The final tier of the partition (final incarnation of a run that tiers), or null. */
  tier: TieredPartition | null;
}

/** A history indexed once by partition, so each invariant walks only its partition's ops. */
export interface HistoryIndex {
  readonly history: History;
  readonly incarnations: TopicIncarnations;
  readonly partitions: readonly PartitionHistory[];
  /**
   * Values an idempotent producer sent, every time under the same producer id and epoch: only
   * there does idempotence promise one copy (a new session resending a value may store it again).
   */
  readonly idempotentValues: ReadonlySet<string>;
  /** How many produce requests carried each value (a plain producer's retry sends it again). */
  readonly requestsPerValue: ReadonlyMap<string, number>;
  /**
   * The partition incarnations (partitionKey) the produce requests carrying each value were sent
   * to, by their times; at UNPLACED_INCARNATION for a request that overlaps a create or delete or
   * is sent while the incarnation is unknown (it may have reached either side). A retry across a re-create sends one value to two incarnations.
   */
  readonly sentTo: ReadonlyMap<string, ReadonlySet<string>>;
  /** DeleteRecords that overlap a create or delete of their topic: placed in no incarnation, they may have moved either's start. */
  readonly unplacedDeleteRecords: readonly DeleteRecordsOp[];
}

export function partitionKey(topic: string, incarnation: number, partition: number): string {
  return `${topic}\u0000${incarnation}\u0000${partition}`;
}

/**
 * How long after a create or delete ends brokers may still act on the topic as it was: a broker
 * learns of it at its next scan of the control records (Kafka's brokers, of the next metadata
 * record), and a broker that cannot scan keeps acknowledging under its lease until the lease
 * ends. Ops starting within this are attributed to no incarnation. One broker changes its topics
 * at once.
 */
export function metadataPropagationMs(history: History): number {
  return onBrokerClocksMs(history, metadataPropagationMsOf(history.shape));
}

/**
 * The largest clock-rate error of any broker process in the run (|rate - 1|, LeaseHistory): a
 * broker measures leases, scans and delays on its own clock, which may run this much fast or slow.
 */
export function clockRateErrorMax(history: History): number {
  return Math.max(0, ...Object.values(history.leases?.clockRateErrors ?? {}));
}

/** The longest a span of `ms` on a broker's own clock lasts in simulated time (its clock running slow by the run's largest error). */
export function onBrokerClocksMs(history: History, ms: number): number {
  return ms / (1 - clockRateErrorMax(history));
}

/** metadataPropagationMs for a run's shape (the workload waits it out before it looks at the topics). */
export function metadataPropagationMsOf(shape: Pick<History['shape'], 'cluster' | 'leaseMs' | 'scanIntervalMs'>): number {
  return shape.cluster ? shape.leaseMs + METADATA_PROPAGATION_SCANS * shape.scanIntervalMs : 0;
}

/** Scans of the control records, on top of a lease, within which every broker has seen a change. */
const METADATA_PROPAGATION_SCANS = 2;
/** In HistoryIndex.sentTo: the incarnation of a request that cannot be placed in one. */
const UNPLACED_INCARNATION = -1;

export function indexHistory(history: History): HistoryIndex {
  const incarnations = new TopicIncarnations(history.ops, metadataPropagationMs(history));
  const byKey = new Map<string, PartitionHistory>();
  const partitionOf = (topic: string, incarnation: number, partition: number): PartitionHistory => {
    const key = partitionKey(topic, incarnation, partition);
    let found = byKey.get(key);
    if (found === undefined) {
      const isFinal = incarnation === incarnations.last(topic);
      found = { topic, incarnation, partition, isFinal, produces: [], fetches: [], commits: [], offsetFetches: [], deleteRecords: [], listOffsets: [], replicaLogs: [], leader: null, tier: null };
      byKey.set(key, found);
    }
    return found;
  };
  const sends = new Map<string, Sends>();
  const placement = new ReadPlacement(history, incarnations);
  const sentTo = new Map<string, Set<string>>();
  for (const op of history.ops) {
    if (op.kind !== 'produce') continue;
    const sentKey = partitionKey(op.topic, incarnations.attribute(op.topic, op.startMs, op.endMs) ?? UNPLACED_INCARNATION, op.partition);
    for (const value of op.values) {
      let keys = sentTo.get(value);
      if (keys === undefined) sentTo.set(value, (keys = new Set()));
      keys.add(sentKey);
    }
  }
  const unplacedDeleteRecords: DeleteRecordsOp[] = [];
  for (const op of history.ops) {
    if (op.kind === 'produce') noteSends(op, sends);
    if (!isPartitionOp(op)) continue;
    const incarnation = op.kind === 'fetch' ? placement.incarnationOf(op) : incarnations.attribute(op.topic, op.startMs, op.endMs);
    if (incarnation === null) {
      if (op.kind === 'delete-records') unplacedDeleteRecords.push(op);
      continue;
    }
    const partition = partitionOf(op.topic, incarnation, op.partition);
    if (op.kind === 'produce') partition.produces.push(op);
    else if (op.kind === 'fetch') partition.fetches.push(op);
    else if (op.kind === 'commit') partition.commits.push(op);
    else if (op.kind === 'delete-records') partition.deleteRecords.push(op);
    else if (op.kind === 'list-offsets') partition.listOffsets.push(op);
    else partition.offsetFetches.push(op);
  }
  for (const log of history.replicaLogs) partitionOf(log.topic, incarnations.last(log.topic), log.partition).replicaLogs.push(log);
  for (const tier of history.tiered ?? []) partitionOf(tier.topic, incarnations.last(tier.topic), tier.partition).tier = tier;
  for (const partition of byKey.values()) partition.leader = leaderView(partition.replicaLogs, partition.tier);
  const idempotentValues = new Set<string>();
  const requestsPerValue = new Map<string, number>();
  for (const [value, sent] of sends) {
    requestsPerValue.set(value, sent.requests);
    if (sent.session !== null && sent.session !== MIXED_SESSIONS) idempotentValues.add(value);
  }
  return { history, incarnations, partitions: [...byKey.values()], idempotentValues, requestsPerValue, sentTo, unplacedDeleteRecords };
}

/** How a value was sent: in how many requests, and the idempotent session (producer id/epoch) they all came from. */
interface Sends {
  requests: number;
  /** null: sent by a plain producer at least once; MIXED_SESSIONS: by more than one session. */
  session: string | null;
}

const MIXED_SESSIONS = '(mixed)';

function noteSends(op: ProduceOp, sends: Map<string, Sends>): void {
  const session = op.idempotence === null ? null : `${op.idempotence.producerId}/${op.idempotence.producerEpoch}`;
  for (const value of op.values) {
    const sent = sends.get(value);
    if (sent === undefined) {
      sends.set(value, { requests: 1, session });
    } else {
      sent.requests++;
      if (session === null || sent.session === null) sent.session = null;
      else if (sent.session !== session) sent.session = MIXED_SESSIONS;
    }
  }
}

function leaderView(logs: readonly ReplicaLog[], tier: TieredPartition | null): LeaderView | null {
  const local = logs.find((replica) => replica.leader);
  if (local === undefined) return null;
  const log = tier === null ? local : withTier(local, tier);
  const valueAt = new Map<number, string>();
  const offsetsOf = new Map<string, number[]>();
  for (const record of log.records) {
    valueAt.set(record.offset, record.value);
    const offsets = offsetsOf.get(record.value);
    if (offsets === undefined) offsetsOf.set(record.value, [record.offset]);
    else offsets.push(record.offset);
  }
  return { log, local, valueAt, offsetsOf };
}

/**
 * The tier's counted segments below the local log's start, then the local log. A segment whose
 * object did not read back whole adds nothing (tiered-bytes-match reports it): what it should
 * hold is missing from the whole log, as it would be from a reader's.
 */
function withTier(local: ReplicaLog, tier: TieredPartition): ReplicaLog {
  // DeleteRecords' start hides what the tier still holds below it (the broker serves from there).
  const startOffset = Math.max(tier.startOffset, local.clientStartOffset ?? tier.startOffset);
  if (!tier.segments.some((segment) => segment.counted) || startOffset >= local.logStartOffset) return local;
  const below = tier.segments.filter((segment) => segment.counted && segment.problem === null);
  const batches = below.flatMap((segment) => segment.batches).filter((batch) => batch.lastOffset >= startOffset && batch.lastOffset < local.logStartOffset);
  const records = below.flatMap((segment) => segment.records).filter((record) => record.offset >= startOffset && record.offset < local.logStartOffset);
  return { ...local, logStartOffset: startOffset, batches: [...batches, ...local.batches], records: [...records, ...local.records] };
}

/**
 * Whether a value can legitimately be stored at most once: an idempotent producer's, or one sent
 * in a single request. A plain producer that retries may write a value twice.
 */
export function isSingleCopy(index: HistoryIndex, value: string): boolean {
  return index.idempotentValues.has(value) || index.requestsPerValue.get(value) === 1;
}

/**
 * Whether `value` may have been stored in the partition incarnation `where`: a request carrying it
 * was sent there, or to its partition at a time that cannot be placed in one incarnation.
 */
export function wasSentTo(index: HistoryIndex, value: string, where: PartitionRef): boolean {
  const keys = index.sentTo.get(value);
  if (keys === undefined) return false;
  return keys.has(partitionKey(where.topic, where.incarnation, where.partition)) || keys.has(partitionKey(where.topic, UNPLACED_INCARNATION, where.partition));
}

/** Whether the final leader is expected to hold `offset`: retention may have removed what lies below its log start. */
export function isRetained(leader: LeaderView, offset: number): boolean {
  return offset >= leader.log.logStartOffset;
}

/** A produce acknowledged with acks=all. */
export function isAckedAll(op: ProduceOp): boolean {
  return op.outcome.ok && op.acks === -1;
}
