import { FerryError } from '../errors.ts';
import { stageTimers } from '../metrics/stage-timers.ts';
import type { RecordBatch } from '../format/record-batch.ts';
import { assert } from '../util/assert.ts';
import { regressed } from '../util/regressions.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import { type EpochEndOffset, endOffsetForEpoch, UNDEFINED_EPOCH } from '../log/epoch-end-offset.ts';
import { followerHighWatermark, leaderHighWatermark } from './high-watermark.ts';
import { type InSyncReplicas, UNKNOWN_LOG_START } from './isr.ts';
import type { Timer } from '../util/clock.ts';
import type { WalWriter } from '../wal/writer.ts';
import type { TopicId } from '../format/topic-id.ts';

/** Bytes of local log read per step when re-shipping an unshipped suffix. */
const RESHIP_READ_BYTES = 1024 * 1024;

/**
 * Consecutive batches split into runs that are each one frame: one leader epoch, and one span of
 * memory. A read returns whole batches across segment files, each file's batches views of its own
 * buffer: a run that went on into the next file's buffer would not be the bytes of its batches.
 */
function framesOf(batches: readonly RecordBatch[]): RecordBatch[][] {
  const runs: RecordBatch[][] = [];
  for (const batch of batches) {
    const run = runs.at(-1);
    const previous = run?.at(-1);
    const continues = previous !== undefined && run![0]!.partitionLeaderEpoch === batch.partitionLeaderEpoch && followsInMemory(previous.bytes, batch.bytes);
    if (continues) run!.push(batch);
    else runs.push([batch]);
  }
  return runs;
}

/** Whether `next` starts in the same buffer right where `previous` ends. */
function followsInMemory(previous: Uint8Array, next: Uint8Array): boolean {
  return previous.buffer === next.buffer && previous.byteOffset + previous.byteLength === next.byteOffset;
}

interface DataWaiter {
  readonly offset: number;
  readonly resolve: () => void;
  /** Present for an acknowledgement (acks=all): it fails, never succeeds, when the partition goes away. */
  readonly reject?: (error: FerryError) => void;
}

/** A DeleteRecords waiting for the in-sync followers' log starts (Kafka's DelayedDeleteRecords, [R6]). */
interface LowWatermarkWaiter {
  readonly offset: number;
  readonly resolve: () => void;
  readonly reject: (error: FerryError) => void;
}

/** A leader counts `requiredFollowers` (min.insync.replicas - 1) among the in-sync followers `isr` keeps. */
export type PartitionRole = { readonly kind: 'leader'; readonly requiredFollowers: number; readonly isr: InSyncReplicas } | { readonly kind: 'follower' };

/**
 * Whether this replica may act as the partition's leader now (acknowledge, serve reads and
 * offsets as leader): throws the reason when not (a cluster broker whose lease may have lapsed,
 * docs/cluster-protocol.md [C1], L5). The embedded engine always may.
 */
export type LeadershipGate = () => void;

export const ALWAYS_LEADS: LeadershipGate = () => {};

/**
 * One partition of the embedded engine: its log plus the high watermark that consumers may read
 * up to. A reader never sees a record that a crash could take back:
 * - a leader's high watermark is what is durable (in WAL objects with a WAL, KIP-1176; synced
 *   by the flush policy without one) and, with min.insync.replicas > 1, applied by every in-sync
 *   follower, of which there must be min.insync.replicas - 1 (src/partition/isr.ts);
 * - a follower's is what it applied from durable WAL objects, capped by the leader's it knows.
 */
export class Partition {
  readonly topic: string;
  /** The topic incarnation this partition belongs to: its WAL frames and durability are keyed by it. */
  readonly topicId: TopicId;
  readonly index: number;
  readonly log: PartitionLog;
  /** A leader's required followers change with its topic's min.insync.replicas (requireFollowers). */
  #role: PartitionRole;
  /**
   * The leader epoch this replica serves in (KIP-320) and its appends carry in their batch headers
   * (docs/design.md contract 13): the one the cluster assigned when this broker adopted the partition as
   * leader or follower, and for a follower the epoch of each later leader it goes on following
   * (followLeaderEpoch); 0 in the embedded engine.
   */
  #leaderEpoch: number;
  readonly #wal: WalWriter | null;
  readonly #gate: LeadershipGate;
  #durableEnd: number;
  /**
   * With a WAL: the local appends not yet durable, in offset order, each with the promise of the
   * WAL object that carries it (they resolve in offset order, [W5]). A retried duplicate of a batch
   * among them waits on the one that covers it. Invariant: they cover [durableEnd, logEndOffset).
   */
  #undurable: { lastOffset: number; durable: Promise<void> }[] = [];
  #leaderHighWatermark: number | null = null;
  #highWatermark: number;
  /**
   * Leader: below it an acks=all acknowledgement may go out. With followers required it is what
   * min.insync replicas were seen to hold in this leadership, which a partition rebuilt from the
   * WAL starts without: its high watermark counts the whole rebuilt log as committed (readers may
   * see it, it is durable), but a retried batch in that log is acknowledged only once enough
   * followers hold it, as Kafka's new leader acknowledges only past its followers' fetches. It
   * starts at 0, not at the log start: a log started over at the tier's end [K2] keeps, in the
   * tiered segment's producer snapshot, batches below its start that the leader which tiered them
   * counted committed without its followers (sim seed 40001), and their retries are duplicates too.
   */
  #acknowledgeableEnd: number;
  #waiters: DataWaiter[] = [];
  #lowWatermarkWaiters: LowWatermarkWaiter[] = [];
  /** Why the partition went away (released or closed): later acknowledgements fail with it. */
  #abandoned: FerryError | null = null;
  /** Leader: fires when a lagging in-sync follower falls out of the in-sync set (replica.lag.time.max.ms). */
  #lapseTimer: Timer | null = null;
  #lapseAtMs: number | null = null;

  /**
   * `durableEnd`: where the log is durable from before (the WAL's end for it, or the log end
   * without a WAL). `committedEnd`: where the high watermark may start (a partition rebuilt from
   * sealed WAL streams is committed whole). `leadership`: the leader epoch appends carry and the
   * gate every acknowledgement passes.
   */
  constructor(
    topic: string,
    topicId: TopicId,
    index: number,
    log: PartitionLog,
    wal: WalWriter | null,
    role: PartitionRole,
    durableEnd = log.logEndOffset,
    committedEnd?: number,
    leadership: { leaderEpoch: number; gate: LeadershipGate } = { leaderEpoch: 0, gate: ALWAYS_LEADS },
  ) {
    const { leaderEpoch } = leadership;
    assert(Number.isSafeInteger(leaderEpoch) && leaderEpoch >= 0 && leaderEpoch <= 0x7fffffff, `${topic}-${index}: leader epoch ${leaderEpoch} is not a non-negative int32`);
    this.topic = topic;
    this.topicId = topicId;
    this.index = index;
    this.log = log;
    this.#wal = wal;
    this.#role = role;
    this.#leaderEpoch = leadership.leaderEpoch;
    this.#gate = leadership.gate;
    if (durableEnd > log.logEndOffset) {
      throw new FerryError(
        'Storage',
        `${topic}-${index}: the local log ends at ${log.logEndOffset} but the WAL holds it up to ${durableEnd}; a single engine cannot rebuild its tail from object storage (a cluster broker rebuilds adopted partitions from their chain)`,
      );
    }
    // Below the log's start lies the tier (a log started over at the tier's end [K2]): durable too,
    // and nothing there to ship again (seed 5268: re-shipping from a WAL end below it read outside the log).
    this.#durableEnd = Math.max(durableEnd, log.logStartOffset);
    const committed = committedEnd ?? (role.kind === 'leader' && role.requiredFollowers > 0 ? log.logStartOffset : durableEnd);
    this.#highWatermark = Math.max(log.logStartOffset, committed);
    this.#acknowledgeableEnd = role.kind === 'leader' && role.requiredFollowers > 0 ? 0 : this.#highWatermark;
  }

  /**
   * A restarted leader's local suffix that its earlier WAL streams never got (appended, not yet
   * shipped when it stopped): shipped again in the new stream before any new append, so the
   * WAL has no gap a follower would stop at. Resolves once every frame is handed to the writer.
   * Each step waits for room in the upload buffer (the suffix may be the whole log: a directory
   * first opened with a WAL), until `signal` gives up: during a store outage only an upload frees
   * room, and an open must fail then rather than hang.
   */
  async reshipUnshipped(signal?: AbortSignal): Promise<number> {
    const wal = this.#wal;
    const end = this.log.logEndOffset;
    if (wal === null || this.#durableEnd >= end) return 0;
    let offset = this.#durableEnd;
    let durable: Promise<void> = Promise.resolve();
    while (offset < end) {
      const { batches } = this.log.read(offset, RESHIP_READ_BYTES);
      assert(batches[0]?.baseOffset === offset, `${this.topic}-${this.index}: the WAL ends at ${offset}, inside a local batch`);
      for (const run of framesOf(batches)) {
        const first = run[0]!;
        const last = run.at(-1)!;
        const data = new Uint8Array(first.bytes.buffer, first.bytes.byteOffset, last.bytes.byteOffset + last.bytes.length - first.bytes.byteOffset);
        await wal.reserve(data.length, signal);
        durable = wal.append({
          topic: this.topic,
          topicId: this.topicId,
          partition: this.index,
          leaderEpoch: first.partitionLeaderEpoch,
          baseOffset: first.baseOffset,
          lastOffset: last.lastOffset,
          data,
        });
      }
      offset = batches.at(-1)!.nextOffset;
    }
    // The last frame's object is durable only with every lower sequence [W5]: so is the whole suffix.
    this.#track(end - 1, durable).then(
      () => this.#recompute(),
      () => {},
    ); // a failed writer fails every later produce too
    return end - this.#durableEnd;
  }

  get leaderEpoch(): number {
    return this.#leaderEpoch;
  }

  get role(): PartitionRole {
    return this.#role;
  }

  /**
   * Leader: acks=all now waits for `requiredFollowers` in-sync followers (the topic's
   * min.insync.replicas changed, minus the leader). Fewer releases the waiters the in-sync set
   * already covers; more holds later acknowledgements (and the high watermark) until enough
   * followers hold them. What was acknowledged or committed stays so: neither ever moves back.
   */
  requireFollowers(requiredFollowers: number): void {
    assert(this.#role.kind === 'leader', `${this.topic}-${this.index}: only a leader requires followers`);
    assert(Number.isSafeInteger(requiredFollowers) && requiredFollowers >= 0, `required followers ${requiredFollowers} is not a count`);
    if (requiredFollowers === this.#role.requiredFollowers) return;
    this.#role = { ...this.#role, requiredFollowers };
    this.#recompute();
  }

  /**
   * Follower: the partition has a new leader in `leaderEpoch` and this replica goes on following
   * it ([R3] of docs/cluster-protocol.md): it serves in that epoch from now on, as Kafka's follower
   * does once it learns of the new leader, so consumers naming the epoch are served. Never back.
   */
  followLeaderEpoch(leaderEpoch: number): void {
    assert(this.role.kind === 'follower', `${this.topic}-${this.index}: only a follower moves to another leader's epoch`);
    assert(Number.isSafeInteger(leaderEpoch) && leaderEpoch <= 0x7fffffff, `${this.topic}-${this.index}: leader epoch ${leaderEpoch} is not an int32`);
    this.#leaderEpoch = Math.max(this.#leaderEpoch, leaderEpoch);
  }

  get highWatermark(): number {
    return this.#highWatermark;
  }

  /**
   * Appends as leader at its leader epoch: waits for room in the WAL's upload buffer
   * (backpressure), appends to the local log, hands the same bytes to the WAL [W1], and returns
   * the offsets with a promise that resolves once the high watermark has passed them (acks=all)
   * and the gate still lets it acknowledge. The log checks idempotent producers' sequences in the
   * same synchronous step as the append (no await between them); a retry of a batch the log holds
   * gets the original's offsets and waits for the original's durability, so it answers only what
   * the original attempt's durability answers. `signal` gives up the wait for room (the request's
   * timeout): nothing is appended then.
   */
  async append(records: Uint8Array, signal?: AbortSignal): Promise<{ baseOffset: number; lastOffset: number; logAppendTimeMs: number; durable: Promise<void> }> {
    if (this.role.kind !== 'leader') throw new FerryError('NotLeader', `${this.topic}-${this.index} is a follower here; produce to its leader`);
    this.#gate();
    const wal = this.#wal;
    if (wal !== null) await wal.reserve(records.length, signal);
    this.#gate(); // the wait for room may have outlasted the lease
    const leaderEpoch = this.leaderEpoch;
    const { baseOffset, lastOffset, duplicate, logAppendTimeMs } = this.#appendLocal(records, leaderEpoch);
    let durable: Promise<void>;
    if (duplicate) {
      durable = regressed('duplicate-acked-before-durable') ? Promise.resolve() : this.#durableFor(lastOffset);
    } else if (wal === null) {
      durable = this.log.waitForFlush(lastOffset);
    } else {
      durable = this.#track(lastOffset, wal.append({ topic: this.topic, topicId: this.topicId, partition: this.index, leaderEpoch, baseOffset, lastOffset, data: records })); // [W5] this frame's object
      if (regressed('stale-durable-map') && lastOffset < wal.durableOffset(this.topicId, this.index)) durable = Promise.resolve();
    }
    const committed = durable.then(async () => {
      this.#durableEnd = Math.max(this.#durableEnd, lastOffset + 1);
      stageTimers.time('ack', () => this.#recompute());
      await this.#waitForCommit(lastOffset);
      if (this.#abandoned !== null && regressed('release-wakes-waiters')) return;
      this.#gate(); // [C1] durable, but acknowledged only while the lease is surely held
    });
    return { baseOffset, lastOffset, logAppendTimeMs, durable: committed };
  }

  /**
   * The local append. A failed fdatasync (the per-append policy) fails the request but keeps the
   * batches in the log and in its producer state, so their retries are duplicates: with a WAL they
   * still go to it, as every batch the log holds must ([W1]), or the duplicates would wait on a
   * durability nobody tracks and the stream would skip their offsets.
   */
  #appendLocal(records: Uint8Array, leaderEpoch: number): ReturnType<PartitionLog['append']> {
    const endBefore = this.log.logEndOffset;
    stageTimers.enter('append');
    try {
      return this.log.append(records, leaderEpoch);
    } catch (error) {
      const wal = this.#wal;
      const endAfter = this.log.logEndOffset;
      if (wal !== null && endAfter > endBefore) {
        // Only the whole append can stay (the log cuts back a failed write): `records` holds it, offsets assigned in place.
        this.#track(endAfter - 1, wal.append({ topic: this.topic, topicId: this.topicId, partition: this.index, leaderEpoch, baseOffset: endBefore, lastOffset: endAfter - 1, data: records })).catch(
          () => {},
        );
      }
      throw error;
    } finally {
      stageTimers.exit();
    }
  }

  /** Remembers an append's durability until it is durable, for the duplicates of its batches. */
  #track(lastOffset: number, durable: Promise<void>): Promise<void> {
    this.#undurable.push({ lastOffset, durable });
    durable.then(
      () => {
        this.#durableEnd = Math.max(this.#durableEnd, lastOffset + 1);
        while (this.#undurable.length > 0 && this.#undurable[0]!.lastOffset < this.#durableEnd) this.#undurable.shift();
      },
      () => {},
    ); // a failed one stays: its duplicates fail as it did
    return durable;
  }

  /**
   * The durability of a batch the log already holds (a retried duplicate): at once when it is
   * durable, else the original's: the same outcome, success or failure, as the original attempt.
   */
  #durableFor(lastOffset: number): Promise<void> {
    if (lastOffset < this.#durableEnd) return Promise.resolve();
    if (this.#wal === null) return this.log.waitForFlush(lastOffset);
    const original = this.#undurable.find((append) => append.lastOffset >= lastOffset);
    assert(original !== undefined, `${this.topic}-${this.index}: offset ${lastOffset} is neither durable (below ${this.#durableEnd}) nor on its way to the WAL`);
    return original.durable;
  }

  /**
   * Leader: a follower on another broker, following in `leaderEpoch`, reports its log end
   * (docs/cluster-protocol.md [R2]). Its report names the topic by name only, so the epoch is what
   * tells the incarnation and leadership it follows: it counts only in this leader's epoch (a
   * follower of a deleted incarnation, or of an earlier leader, names an older one, since epochs
   * rise across incarnations [L4]); another epoch throws FencedLeaderEpoch or UnknownLeaderEpoch.
   * -1 (a peer that sends no epoch) cannot be told apart from such a report, so in cluster mode it
   * is not counted either (false), unlike a client's -1, which skips the check ([E2]).
   */
  noteRemoteFollowerApplied(followerId: string, logEndOffset: number, leaderEpoch: number, logStartOffset = UNKNOWN_LOG_START): boolean {
    if (this.role.kind !== 'leader' || leaderEpoch === UNDEFINED_EPOCH) return false;
    this.checkLeaderEpoch(leaderEpoch);
    return this.noteFollowerApplied(followerId, logEndOffset, logStartOffset);
  }

  /**
   * Leader: a follower reports it applied everything below `logEndOffset`. False, and ignored,
   * when it is not one of the partition's followers with a live lease (src/partition/isr.ts I1), or
   * when it claims more than this log holds: a follower applies only what this leader wrote, so such
   * a report is forged or from another incarnation, and counted it would vouch for records the
   * follower never applied (Kafka answers a fetch past the log end OFFSET_OUT_OF_RANGE).
   * `logStartOffset`: where the follower's log starts (-1: it does not say), for DeleteRecords [R6].
   */
  noteFollowerApplied(followerId: string, logEndOffset: number, logStartOffset = UNKNOWN_LOG_START): boolean {
    if (this.role.kind !== 'leader' || logEndOffset > this.log.logEndOffset) return false;
    if (!this.role.isr.noteProgress(followerId, logEndOffset, this.#durableEnd, logStartOffset)) return false;
    this.#recompute();
    this.#wakeLowWatermarkWaiters();
    return true;
  }

  /**
   * Leader: the lowest log start an in-sync follower reported (Infinity with none in sync), or
   * null when not led here. With the leader's own, Kafka's low watermark: below it no replica a
   * consumer may be sent to (KIP-392) still serves records.
   */
  lowestInSyncFollowerStart(): number | null {
    return this.role.kind === 'leader' ? this.role.isr.lowestInSyncLogStart(this.#durableEnd) : null;
  }

  /**
   * Leader, [R6]: resolves once every in-sync follower reported a log start at or above `offset`
   * (at once with none), as Kafka's DelayedDeleteRecords completes once the low watermark reaches
   * it; rejects when the partition goes away first (released, closed) or `signal` aborts (with its
   * reason). The leader's own start is the caller's: DeleteRecords moved it there first.
   */
  waitForFollowerStarts(offset: number, signal: AbortSignal): Promise<void> {
    if (this.#abandoned !== null) return Promise.reject(this.#abandoned);
    if ((this.lowestInSyncFollowerStart() ?? -1) >= offset) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter: LowWatermarkWaiter = { offset, resolve, reject };
      this.#lowWatermarkWaiters.push(waiter);
      signal.addEventListener(
        'abort',
        () => {
          this.#lowWatermarkWaiters = this.#lowWatermarkWaiters.filter((other) => other !== waiter);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }

  /** Reports and in-sync changes may have raised the low watermark: the deletes it reached are answered. */
  #wakeLowWatermarkWaiters(): void {
    if (this.#lowWatermarkWaiters.length === 0) return;
    const followerStart = this.lowestInSyncFollowerStart() ?? -1;
    const reached = this.#lowWatermarkWaiters.filter((waiter) => waiter.offset <= followerStart);
    if (reached.length === 0) return;
    this.#lowWatermarkWaiters = this.#lowWatermarkWaiters.filter((waiter) => waiter.offset > followerStart);
    for (const waiter of reached) waiter.resolve();
  }

  /**
   * Leader: the log end an in-sync follower last reported, or null when it is not in sync. KIP-392
   * sends a consumer only to a follower that holds its fetch offset, as Kafka's replica selector does.
   */
  inSyncFollowerEnd(followerId: string): number | null {
    return this.role.kind === 'leader' ? (this.role.isr.inSync(this.#durableEnd).get(followerId) ?? null) : null;
  }

  /**
   * Leader: the lowest log end any in-sync follower reported (Infinity with none in sync), or null
   * when not led here. WAL garbage collection keeps what an in-sync follower has yet to apply (GI1).
   */
  lowestInSyncFollowerEnd(): number | null {
    return this.role.kind === 'leader' ? Math.min(Infinity, ...this.role.isr.inSync(this.#durableEnd).values()) : null;
  }

  /** Leader: whether fewer followers are in sync than the replica set holds (Kafka's UnderReplicatedPartitions); false on a follower. */
  get underReplicated(): boolean {
    return this.role.kind === 'leader' && this.role.isr.underReplicated(this.#durableEnd);
  }

  /** Leader: each reporting follower's lag, offsets and ms (src/partition/isr.ts `lags`); empty on a follower. */
  followerLags(): Map<string, { readonly offsets: number; readonly ms: number }> {
    return this.role.kind === 'leader' ? this.role.isr.lags(this.#durableEnd) : new Map();
  }

  /** Leader: the replica set or the brokers' leases changed; the in-sync set may have shrunk, so the high watermark may move. */
  replicasChanged(): void {
    this.#recompute();
    this.#wakeLowWatermarkWaiters(); // a follower that left the in-sync set is waited for no more
  }

  /** Follower: it applied more from the WAL, or learnt the leader's high watermark. */
  noteApplied(): void {
    this.#recompute();
  }

  noteLeaderHighWatermark(highWatermark: number): void {
    this.#leaderHighWatermark = Math.max(this.#leaderHighWatermark ?? 0, highWatermark);
    this.#recompute();
  }

  /** Follower: the leader's high watermark as last heard; null when not linked to a leader. */
  get leaderHighWatermark(): number | null {
    return this.#leaderHighWatermark;
  }

  /** Resolves when the high watermark passes `offset` (new data to read), or when `signal` aborts. */
  waitForData(offset: number, signal?: AbortSignal): Promise<void> {
    if (this.#highWatermark > offset || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter = { offset, resolve };
      this.#waiters.push(waiter);
      signal?.addEventListener(
        'abort',
        () => {
          this.#waiters = this.#waiters.filter((other) => other !== waiter);
          resolve();
        },
        { once: true },
      );
    });
  }

  /**
   * The partition goes away (released to another leader, or the engine closes): every waiting
   * acknowledgement fails with `reason`, since nothing here will ever commit it; long-poll reads
   * wake and then fail on their next read.
   */
  abandon(reason: FerryError): void {
    this.#abandoned = reason;
    this.#lapseTimer?.cancel();
    for (const waiter of this.#lowWatermarkWaiters.splice(0)) waiter.reject(reason);
    for (const waiter of this.#waiters.splice(0)) {
      if (waiter.reject !== undefined && !regressed('release-wakes-waiters')) waiter.reject(reason);
      else waiter.resolve();
    }
  }

  /**
   * Kafka's check of a request's current_leader_epoch (KIP-320, docs/cluster-protocol.md [E2]):
   * -1 skips it; an older epoch than this replica's is FencedLeaderEpoch (the client's metadata
   * is stale), a newer one UnknownLeaderEpoch (this replica has not heard of the new leader yet).
   */
  checkLeaderEpoch(currentLeaderEpoch: number): void {
    if (currentLeaderEpoch === UNDEFINED_EPOCH || currentLeaderEpoch === this.leaderEpoch) return;
    const [kind, relation] = currentLeaderEpoch < this.leaderEpoch ? (['FencedLeaderEpoch', 'older than'] as const) : (['UnknownLeaderEpoch', 'newer than'] as const);
    throw new FerryError(kind, `leader epoch ${currentLeaderEpoch} is ${relation} ${this.topic}-${this.index}'s epoch ${this.leaderEpoch}`);
  }

  /**
   * OffsetForLeaderEpoch ([E3]): where `epoch` ended in this log. The current epoch counts as
   * starting at the log end when it wrote nothing yet, as Kafka's leader records it on election.
   */
  endOffsetForLeaderEpoch(epoch: number): EpochEndOffset {
    const written = this.log.leaderEpochs;
    const latest = written.at(-1)?.epoch ?? UNDEFINED_EPOCH;
    const entries = this.leaderEpoch > latest ? [...written, { epoch: this.leaderEpoch, startOffset: this.log.logEndOffset }] : written;
    return endOffsetForEpoch(entries, epoch, this.log);
  }

  /** The epoch that wrote `offset`, the current one from the log end on; -1 when none did. */
  epochAt(offset: number): number {
    if (offset >= this.log.logEndOffset) return this.leaderEpoch;
    let epoch = UNDEFINED_EPOCH;
    for (const entry of this.log.leaderEpochs) if (entry.startOffset <= offset) epoch = entry.epoch;
    return epoch;
  }

  /**
   * L5: a leader serves reads (Fetch, ListOffsets) only while the gate its acknowledgements pass
   * is open; otherwise it throws NotLeader, so the client asks Metadata again and goes to the
   * partition's leader, as from a broker that does not lead it. A follower serves what it applied,
   * up to the leader's high watermark it knows (KIP-392): no lease makes that stale data unsafe.
   */
  checkServesAsLeader(): void {
    if (this.#role.kind === 'leader') this.#gate();
  }

  /**
   * Kafka's range check of a fetch: past the log end is out of range; between the high watermark
   * and the log end is in range and reads nothing yet (the caller filters at the high watermark).
   * A follower's high watermark lags its leader's, so a consumer sent there (KIP-392) at a
   * committed offset often lands between the two, and must wait there, not reset its position.
   */
  checkReadable(offset: number): void {
    if (offset > this.log.logEndOffset) {
      throw new FerryError('OffsetOutOfRange', `offset ${offset} is past the log end ${this.log.logEndOffset} of ${this.topic}-${this.index}`);
    }
  }

  /** Resolves once `offset` may be acknowledged (acknowledgeableEnd passed it); rejects if the partition goes away first. */
  #waitForCommit(offset: number): Promise<void> {
    if (this.#abandoned !== null) return Promise.reject(this.#abandoned);
    if (this.#acknowledgeableEnd > offset) return Promise.resolve();
    return new Promise((resolve, reject) => void this.#waiters.push({ offset, resolve, reject }));
  }

  #recompute(): void {
    if (this.#abandoned !== null) return;
    const next = this.role.kind === 'leader' ? this.#leaderCommitted() : followerHighWatermark(this.log.logEndOffset, this.#leaderHighWatermark);
    const acknowledgeableMoved = this.role.kind === 'leader' && next > this.#acknowledgeableEnd;
    if (acknowledgeableMoved) this.#acknowledgeableEnd = next;
    const highWatermarkMoved = next > this.#highWatermark;
    if (highWatermarkMoved) this.#highWatermark = next;
    if (!acknowledgeableMoved && !highWatermarkMoved) return;
    const still: DataWaiter[] = [];
    for (const waiter of this.#waiters) {
      // An acknowledgement waits for what min.insync replicas hold; a reader for the high watermark.
      if (waiter.offset < (waiter.reject === undefined ? this.#highWatermark : this.#acknowledgeableEnd)) waiter.resolve();
      else still.push(waiter);
    }
    this.#waiters = still;
  }

  /** The leader's high watermark from the in-sync set now ([R5]); re-checked when a lagging follower would fall out of it. */
  #leaderCommitted(): number {
    assert(this.role.kind === 'leader', 'only a leader counts followers');
    const { isr, requiredFollowers } = this.role;
    if (requiredFollowers <= 0) return this.#durableEnd;
    const next = leaderHighWatermark(this.#durableEnd, isr.inSync(this.#durableEnd).values(), requiredFollowers);
    const lapseMs = next < this.#durableEnd ? isr.nextLapseMs(this.#durableEnd) : null;
    if (lapseMs !== this.#lapseAtMs) {
      // most recomputes keep the same deadline: no timer churn on the hot path
      this.#lapseTimer?.cancel();
      this.#lapseTimer =
        lapseMs === null
          ? null
          : isr.atMonotonic(lapseMs + 1, () => {
              this.#lapseAtMs = null;
              this.#recompute();
              this.#wakeLowWatermarkWaiters(); // the follower that fell out is waited for no more
            });
      this.#lapseAtMs = lapseMs;
    }
    return next;
  }
}
