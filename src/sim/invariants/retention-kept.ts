import { ClockSkews } from '../clock-skews.ts';
import { ConfigTimeline } from '../config-timeline.ts';
import { deleteRecordsReach } from '../delete-floors.ts';
import type { RetentionDefaults, RetentionDelete } from '../history.ts';
import { type HistoryIndex, metadataPropagationMs, partitionKey, type PartitionHistory } from '../history-index.ts';
import { StoredBatches } from '../stored-batches.ts';
import type { ViolationList } from '../violation.ts';

export const RETENTION_KEPT = 'retention-kept';

/** Kafka's defaults (retention.ms 7 days, retention.bytes unlimited, local.retention.* as retention.*): a history that does not say. */
const RETENTION_DEFAULTS: RetentionDefaults = { bytes: -1, ms: 7 * 24 * 60 * 60 * 1000, localBytes: -2, localMs: -2 };
/** local.retention.* set to this goes by retention.* (KIP-405). */
const AS_RETENTION = -2;
/** A broker's wall clock reads whole ms (SimClock floors): its now may lie this much past the simulated instant's floor. */
const CLOCK_READ_MS = 1;

/**
 * retention-kept (Kafka's retention.bytes and retention.ms; KIP-405's local.retention.* with a
 * tier): retention deletes a log's oldest segment only while the log without it still holds at
 * least retention.bytes, or when its newest record is older than retention.ms. So every retention
 * pass that moved a replica's local log start up to `s` (leader or follower, `RetentionDelete`)
 * either left at least retention.bytes in [s, log end), or deleted a last segment whose newest
 * record, at least as new as the batch that ends at s - 1, was older than retention.ms by the
 * deleting broker's wall clock.
 *
 * - Limits: the least that may have held on that broker then (config-timeline.ts, taking every
 *   value set before, a DELETE's or a create's default included: a broker cut from the control
 *   store acts on what it last read); a pass below a tiered end goes by local.retention.*
 *   (-2: retention.*). -1 or none: that rule deletes nothing.
 * - Sizes are the batches as logs store them (`StoredBatches`: final replica logs, the tier,
 *   acks=all batches' sizes); a pass whose kept bytes the data does not show whole is not judged
 *   (nothing proves it kept too little), nor is one whose ending batch's timestamp is unknown while a
 *   retention.ms may hold.
 * - Clocks: retention.ms reads the broker's wall clock, which a clock-skew fault sets up to an hour
 *   ahead: "older" is judged at the largest skew that may have held on that broker then. Record
 *   timestamps are the batches' own (CreateTime from the clients, or the leader's LogAppendTime stamp,
 *   skewed as it was).
 * - Not judged: a pass up to where DeleteRecords may have moved the log start (segments wholly
 *   below it may go, as Kafka's log-start retention), and passes outside the final incarnation (its
 *   data is what sizes the batches).
 */
export function checkRetentionKept(index: HistoryIndex, out: ViolationList): void {
  const deletes = index.history.retentionDeletes ?? [];
  if (deletes.length === 0) return;
  const partitions = new Map(index.partitions.filter((partition) => partition.isFinal).map((partition) => [partitionKey(partition.topic, partition.incarnation, partition.partition), partition]));
  const judges = new Map<PartitionHistory, PartitionJudge>();
  const skews = new ClockSkews(index.history.faults);
  for (const deletion of deletes) {
    const incarnation = index.incarnations.attribute(deletion.topic, deletion.atMs, deletion.atMs);
    const partition = incarnation === null ? undefined : partitions.get(partitionKey(deletion.topic, incarnation, deletion.partition));
    if (partition === undefined) continue;
    let judge = judges.get(partition);
    if (judge === undefined) judges.set(partition, (judge = new PartitionJudge(index, partition)));
    judge.judge(deletion, skews, out);
  }
}

/** What one partition's passes are judged by, built once per partition. */
class PartitionJudge {
  readonly #index: HistoryIndex;
  readonly #partition: PartitionHistory;
  readonly #batches: StoredBatches;
  readonly #deletedUpTo: number;
  readonly #defaults: RetentionDefaults;
  readonly #bytes: ConfigTimeline;
  readonly #ms: ConfigTimeline;

  constructor(index: HistoryIndex, partition: PartitionHistory) {
    this.#index = index;
    this.#partition = partition;
    this.#batches = new StoredBatches(partition);
    this.#deletedUpTo = deleteRecordsReach(index, partition) ?? 0;
    this.#defaults = index.history.retentionDefaults ?? RETENTION_DEFAULTS;
    const propagationMs = metadataPropagationMs(index.history);
    this.#bytes = new ConfigTimeline(index.history.ops, partition.topic, 'retention.bytes', String(this.#defaults.bytes), propagationMs);
    this.#ms = new ConfigTimeline(index.history.ops, partition.topic, 'retention.ms', String(this.#defaults.ms), propagationMs);
  }

  judge(deletion: RetentionDelete, skews: ClockSkews, out: ViolationList): void {
    const kept = deletion.toOffset;
    if (kept <= this.#deletedUpTo) return;
    const local = deletion.tieredEnd !== null;
    const bytesLimit = local && this.#defaults.localBytes !== AS_RETENTION ? this.#defaults.localBytes : leastLimit(this.#bytes, deletion.atMs);
    const msLimit = local && this.#defaults.localMs !== AS_RETENTION ? this.#defaults.localMs : leastLimit(this.#ms, deletion.atMs);
    const keptBytes = deletion.keptBytes ?? this.#batches.bytesBetween(kept, deletion.logEndOffset, bytesLimit);
    if (keptBytes === null || keptBytes >= bytesLimit) return;
    const wallAtZeroMs = this.#index.history.wallClockAtZeroMs ?? 0;
    // The newest record of the last segment deleted is at least as new as the batch ending at kept - 1, and no record of the run is older than its start on the most lagging clock.
    const known = this.#batches.endingAt(kept - 1)?.maxTimestampMs ?? null;
    const newestMs = known ?? wallAtZeroMs - skews.behindMaxMs() - CLOCK_READ_MS;
    const brokerNowMs = wallAtZeroMs + deletion.atMs + skews.aheadMaxMs(deletion.node, deletion.atMs) + CLOCK_READ_MS;
    if (newestMs < brokerNowMs - msLimit) return;
    const limits = `${local ? 'local.retention' : 'retention'}.bytes ${describe(bytesLimit)}, .ms ${describe(msLimit)}`;
    const age = `; the batch ending at ${kept - 1} was at most ${Math.round(brokerNowMs - newestMs)} ms old by node ${deletion.node}'s clock${known === null ? ' (not at hand: as old as the run)' : ''}`;
    out.add(
      RETENTION_KEPT,
      this.#partition,
      'retention deleted what it must keep',
      kept - 1,
      `node ${deletion.node} deleted [${deletion.fromOffset}, ${kept}) and kept ${keptBytes} bytes in [${kept}, ${deletion.logEndOffset}) under ${limits}${age}`,
      deletion.atMs,
    );
  }
}

function describe(limit: number): string {
  return Number.isFinite(limit) ? String(limit) : 'unlimited';
}

/** The least limit (a value 0 or above) one retention config may have had on any broker by `atMs`; Infinity: none (-1 only). */
function leastLimit(timeline: ConfigTimeline, atMs: number): number {
  const limits = timeline
    .possibleValues(atMs, atMs, Infinity)
    .map(Number)
    .filter((value) => value >= 0);
  return limits.length === 0 ? Infinity : Math.min(...limits);
}
