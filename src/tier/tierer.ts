import { FerryError } from '../errors.ts';
import { stageTimers } from '../metrics/stage-timers.ts';
import type { EpochEntry } from '../log/leader-epoch-cache.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import type { ProducerStateReplay } from '../log/producer-state.ts';
import { isStoreError } from '../store/errors.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { StreamingUpload } from '../store/streaming-upload.ts';
import { assert } from '../util/assert.ts';
import type { Clock, Timer } from '../util/clock.ts';
import type { Random } from '../util/random.ts';
import { mapLimited } from '../util/map-limited.ts';
import { randomUuid, type Uuid } from '../util/uuid.ts';
import type { MetricsRegistry } from '../metrics/index.ts';
import { componentLogger, type Logger, type LoggerOption } from '../observability/logger.ts';
import { ProgressLines } from '../observability/progress.ts';
import { loadXxh64Stream } from '../wal/bytes.ts';
import { tieredSegmentKey } from './keys.ts';
import { decodeTieredSegment, parseFooter, TIERED_TAIL_BYTES, TieredSegmentBuilder, type TieredSegmentSummary } from './segment-object.ts';
import { OrphanSweeper, TIER_ORPHAN_DELAY_MS, TIER_SWEEP_INTERVAL_MS } from './orphan-sweeper.ts';
import { type DeletedTopicIds, RetiredIncarnationSweeper } from './retired-sweeper.ts';
import { type CopiedSegment, copiedSegments, type TierRecord, type TierRecords, tieredEnd, tilingSegments } from './tier-record.ts';
import { retainedStart } from './tier-retention.ts';
import { dueLocalMerge, dueMerge, TIER_LOCAL_MERGE_BYTES_MAX } from './merge-plan.ts';
import { Semaphore } from './semaphore.ts';

/** How often the tierer looks for rolled segments below the high watermark (each look reads no store unless one is due). */
export const TIER_INTERVAL_MS = 1000;
/**
 * [T2] How long a partition's tiered end may stay put below its committed end before what is
 * committed is tiered from inside the active segment, however little. Kafka tiers only rolled
 * segments, and a quiet partition's segment rolls at segment.bytes or segment.ms (7 days): until
 * then its frames keep every later object of its broker's WAL stream (GC deletes in order, review
 * finding 5), and a takeover reads all of them. A takeover's rebuild reads every WAL object of the
 * stream above its floor, so this bounds it in time: a stream writing 130 objects a second (one
 * acks=all producer) kept 10 min of them, 78,000 objects, when this was 10 min. The cost: a
 * partition written now and then tiers a small piece at most this often (a PUT and three
 * control-record writes, ~$2 a month per partition written all the time), merged later [T8].
 */
export const TIER_TAIL_MAX_MS = 10_000;
/**
 * [T2] The most a partition's log may hold above its tiered end, committed, before that much is
 * tiered from inside the active segment: what a new leader reads from the WAL to take over [K2],
 * and what each partition keeps in the WAL store. Kafka tiers only rolled segments, and a
 * segment.bytes of 1 GiB made a takeover rebuild up to 1 GiB from the WAL (~5 s at the ~200 MB/s
 * one rebuild applies here); 32 MiB is ~0.15 s. The cost: a tiered piece (one multipart upload,
 * three control-record writes) per 32 MiB, merged later [T8], and the producer state replayed to
 * each end (ProducerStateManager.snapshotAt keeps the newest).
 */
export const TIER_TAIL_MAX_BYTES = 32 * 1024 * 1024;
/**
 * Partitions a tier round steps through at once per broker [T3]. A step mostly waits on the
 * stores (a record read and three record writes, a put, a footer read back), so partitions step
 * side by side: two at a time, a new leader took ~12 s to tier the 500 tails it inherited ([T2]),
 * longer than the 5-10 s between takeovers in the failover bench, and each takeover then read
 * more streams than the one before (issue 28).
 */
export const TIER_PARTITIONS_IN_FLIGHT = 16;
/** Uploads of more than TIER_SMALL_RANGE_BYTES at once per broker [T3]: each holds up to a streaming upload's parts in memory. */
export const TIER_UPLOADS_IN_FLIGHT = 2;
/**
 * A range of at most this many bytes uploads without one of the TIER_UPLOADS_IN_FLIGHT permits:
 * it holds no more than itself in memory. Tails of quiet partitions and inherited tails [T2] are
 * mostly this small.
 */
export const TIER_SMALL_RANGE_BYTES = 1024 * 1024;
/**
 * [T2] How long rounds may wait for this broker's adoptions to end (TiererOptions.holdWhile): a
 * takeover's adoptions go first, as produces wait on them [K5] and the tails they inherit are
 * tiered right after; an adoption that takes longer does not stop tiering for longer.
 */
export const TIER_HOLD_FOR_ADOPTIONS_MAX_MS = 10_000;
/** Bytes of log read per step of an upload: the batches of one read stream out as one chunk of views. */
const TIER_READ_BYTES = 1024 * 1024;

/** What the tierer needs of a partition this broker leads. */
export interface TierSource {
  readonly topic: string;
  readonly topicId: Uuid;
  readonly partition: number;
  /** The epoch it leads in: the tier record is taken and written in it (TI2). */
  readonly leaderEpoch: number;
  readonly log: PartitionLog;
  /** Offsets below are committed (TI1): the same bytes in every replica's log. */
  readonly highWatermark: number;
}

export interface TiererOptions {
  /** The long-term store (S3 Standard in production). */
  readonly store: ObjectStore;
  readonly prefix: string;
  readonly records: TierRecords;
  readonly clock: Clock;
  readonly random: Random;
  /** The partitions this broker leads now (asked at every round). */
  readonly partitions: () => Iterable<TierSource>;
  readonly intervalMs?: number;
  /** How often each partition's tier prefix is swept for orphans; default TIER_SWEEP_INTERVAL_MS. */
  readonly sweepIntervalMs?: number;
  /** How long an orphan stays before it is deleted; default TIER_ORPHAN_DELAY_MS. */
  readonly orphanDelayMs?: number;
  /** How long a tiered end may stay put below the committed end before that is tiered from inside the active segment; default TIER_TAIL_MAX_MS. */
  readonly tailMaxMs?: number;
  /** How many committed bytes above the tiered end are tiered from inside the active segment; default TIER_TAIL_MAX_BYTES. */
  readonly tailMaxBytes?: number;
  /** The most bytes one merge of pieces inside a local segment takes before it rolls; default TIER_LOCAL_MERGE_BYTES_MAX. */
  readonly localMergeBytesMax?: number;
  /**
   * The topic ids with a deletion record (DI1): what the tier holds of them is deleted, every sweep
   * interval (RetiredIncarnationSweeper). Absent: never.
   */
  readonly deletedTopicIds?: DeletedTopicIds;
  /**
   * While true (this broker adopts partitions), scheduled rounds wait, at most
   * TIER_HOLD_FOR_ADOPTIONS_MAX_MS in a row: they competed with the adoptions for the CPU and the
   * stores (kill to every partition served took 6-10 s instead of 4-6 s in the failover bench).
   * Absent: never.
   */
  readonly holdWhile?: () => boolean;
  readonly metrics?: MetricsRegistry;
  readonly log?: LoggerOption;
}

/** What this broker knows of one partition's tier record: taken in `leaderEpoch`, as last written here. */
interface Held {
  readonly leaderEpoch: number;
  record: TierRecord;
}

/**
 * The leader side of tiering (docs/tier-protocol.md [T1]-[T5]): for every partition it leads,
 * once the segment holding the tiered end is rolled and below the high watermark, copy its
 * batches from the tiered end to the segment's end into one tiered segment object and count it
 * in the tier record. One range per partition at a time, TIER_PARTITIONS_IN_FLIGHT partitions at
 * once, of which TIER_UPLOADS_IN_FLIGHT upload more than TIER_SMALL_RANGE_BYTES.
 */
export class Tierer {
  readonly #options: TiererOptions;
  readonly #log: Logger;
  /** A partition whose tier is more than one range behind says how far the backlog got, now and then. */
  readonly #progress: ProgressLines;
  readonly #held = new Map<string, Held>();
  readonly #uploading = new Set<string>();
  /** Uploads of more than TIER_SMALL_RANGE_BYTES under way. */
  readonly #largeUploads = new Semaphore(TIER_UPLOADS_IN_FLIGHT);
  /** Partitions whose last step failed: their failures are said once, and their recovery. */
  readonly #failing = new Set<string>();
  readonly #sweeper: OrphanSweeper;
  /** When each partition was last swept for orphans (monotonic ms). */
  readonly #sweptMs = new Map<string, number>();
  /** Per partition: the tiered end last seen below its log end, and since when (monotonic ms). */
  readonly #tailSince = new Map<string, { readonly tieredEnd: number; readonly sinceMs: number }>();
  /** Per partition: the committed end when this broker took its record from an earlier leader, until the tier reaches it ([T2]: tiered at once). */
  readonly #inheritedEnds = new Map<string, number>();
  readonly #retiredSweeper: RetiredIncarnationSweeper | null;
  /** When deleted incarnations were last swept (monotonic ms); null: not yet. */
  #retiredSweptMs: number | null = null;
  /** The last sweep of deleted incarnations failed (said once, and its recovery). */
  #retiredFailing = false;
  #timer: Timer | null = null;
  #round: Promise<number> | null = null;
  /** Since when scheduled rounds have waited for adoptions (monotonic ms); null: they are not waiting. */
  #heldSinceMs: number | null = null;
  #recordChanges = 0;
  #stopped = false;

  constructor(options: TiererOptions) {
    this.#options = options;
    this.#log = componentLogger(options.log, 'tier');
    this.#progress = new ProgressLines(this.#log, options.clock);
    this.#sweeper = new OrphanSweeper({ store: options.store, prefix: options.prefix, clock: options.clock, ...(options.orphanDelayMs === undefined ? {} : { delayMs: options.orphanDelayMs }) });
    const { store, prefix, records, clock, deletedTopicIds } = options;
    this.#retiredSweeper =
      deletedTopicIds === undefined ? null : new RetiredIncarnationSweeper({ store, prefix, records, clock, deletedTopicIds, delayMs: options.orphanDelayMs ?? TIER_ORPHAN_DELAY_MS });
  }

  start(): void {
    this.#schedule();
  }

  /** Stops the rounds; an upload under way finishes or fails on its own (its entry stays `copying`, dropped by the next taker [T1]). */
  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
  }

  /** Tier record changes this broker made that move a tiered end or a log start (commits, retention): WAL GC passes again after one. */
  get recordChanges(): number {
    return this.#recordChanges;
  }

  /** The tiered end of a partition as this broker last wrote or took its record; null if not held here. */
  tieredEndOf(topicId: Uuid, partition: number): number | null {
    const held = this.#held.get(heldKey(topicId, partition));
    return held === undefined ? null : tieredEnd(held.record);
  }

  /**
   * [D1] with [T8]: below which offset `log`'s segments may leave the local disk, as far as the
   * tier is concerned: the tiered end, or the base of the oldest local segment still tiered in
   * pieces (it stays until its merge, else the pieces would stay in the record for good). Null if
   * the record is not held here.
   */
  localDeletableEndOf(topicId: Uuid, partition: number, log: PartitionLog): number | null {
    const held = this.#held.get(heldKey(topicId, partition));
    if (held === undefined) return null;
    return dueLocalMerge(log, held.record, this.#localMergeBytesMax)?.baseOffset ?? tieredEnd(held.record);
  }

  get #localMergeBytesMax(): number {
    return this.#options.localMergeBytesMax ?? TIER_LOCAL_MERGE_BYTES_MAX;
  }

  /** One round over the led partitions: each tiers at most one due range. Returns the ranges tiered. */
  tierDue(): Promise<number> {
    this.#round ??= this.#tierDue().finally(() => (this.#round = null));
    return this.#round;
  }

  async #tierDue(): Promise<number> {
    await loadXxh64Stream(); // else every upload would hold its whole range until its checksum at the end
    const due = [...this.#options.partitions()].filter((source) => source.log.config.remoteStorageEnable); // KIP-405: off, never tiered
    this.#forgetOthers(due);
    const outcomes = await mapLimited(due, TIER_PARTITIONS_IN_FLIGHT, (source) => this.#tierOne(source)); // #tierOne catches its steps' failures
    await this.#sweepRetiredWhenDue();
    return outcomes.filter(Boolean).length;
  }

  /** What the tier holds of deleted topic incarnations goes, every sweep interval; a failure is said once and tried next time. */
  async #sweepRetiredWhenDue(): Promise<void> {
    const nowMs = this.#options.clock.monotonicMs();
    if (this.#retiredSweeper === null || (this.#retiredSweptMs !== null && nowMs - this.#retiredSweptMs < (this.#options.sweepIntervalMs ?? TIER_SWEEP_INTERVAL_MS))) return;
    this.#retiredSweptMs = nowMs;
    try {
      const deleted = await this.#retiredSweeper.sweep();
      if (deleted > 0) this.#log.info({ deleted }, `deleted ${deleted} tiered objects of deleted topics`);
      if (this.#retiredFailing) this.#log.info({}, "the sweep of deleted topics' tiered objects works again");
      this.#retiredFailing = false;
    } catch (error) {
      if (!this.#retiredFailing)
        this.#log.error({ err: error }, `the sweep of deleted topics' tiered objects failed (retried every sweep interval; said once): ${error instanceof Error ? error.message : String(error)}`);
      this.#retiredFailing = true;
      this.#options.metrics?.counter('ferry_tier_failures_total', 'Tiering steps that failed (retried at the next round)').add();
    }
  }

  /** Partitions no longer led here: their records are someone else's now (or theirs again at a later epoch). */
  #forgetOthers(led: readonly TierSource[]): void {
    const keys = new Set(led.map((source) => heldKey(source.topicId, source.partition)));
    for (const key of this.#held.keys()) if (!keys.has(key)) this.#held.delete(key);
    for (const key of this.#sweptMs.keys()) if (!keys.has(key)) this.#sweptMs.delete(key);
    for (const key of this.#tailSince.keys()) if (!keys.has(key)) this.#tailSince.delete(key);
    for (const key of this.#inheritedEnds.keys()) if (!keys.has(key)) this.#inheritedEnds.delete(key);
    for (const key of this.#failing) if (!keys.has(key)) this.#failing.delete(key);
  }

  /**
   * One round of one partition: retention first (it makes room in a record that is full), then
   * tiering, then the orphan sweep, each going ahead whatever the others did (an upload that keeps
   * failing stops neither retention nor the sweep).
   */
  async #tierOne(source: TierSource): Promise<boolean> {
    const key = heldKey(source.topicId, source.partition);
    if (this.#uploading.has(key)) return false;
    this.#uploading.add(key);
    let failed = false;
    const step = async <T>(what: string, run: () => Promise<T>): Promise<T | null> => {
      const outcome = await this.#step(source, key, what, run);
      failed ||= outcome === null;
      return outcome;
    };
    try {
      const held = await step('reading its tier record', () => this.#take(source));
      if (held === null) return false;
      await step('retention', () => this.#expire(source, held));
      const tiered = await step('tiering', async () => {
        const end = tieredEnd(held.record);
        const range = dueRange(source.log, end, source.highWatermark, this.#tailAged(source, key, end) ? 0 : (this.#options.tailMaxBytes ?? TIER_TAIL_MAX_BYTES));
        if (range !== null) await this.#tierRange(source, held, range);
        return range !== null;
      });
      await step('merging', () => this.#mergeWhenDue(source, held)); // every round: at a piece a round, merges must keep up
      await step('the orphan sweep', () => this.#sweepWhenDue(source, key));
      if (!failed && this.#failing.delete(key)) this.#log.info({ topic: source.topic, partition: source.partition }, `tiering ${source.topic}-${source.partition} works again`);
      return tiered === true;
    } finally {
      this.#uploading.delete(key);
    }
  }

  /** `run`, or null when it failed (said once per spell of failures of the partition). */
  async #step<T>(source: TierSource, key: string, what: string, run: () => Promise<T>): Promise<T | null> {
    try {
      return await run();
    } catch (error) {
      // The record is read again next round, whatever failed: a write whose answer was lost may have
      // landed (the cached record would be behind it for good), and a deposed leader finds out [T1].
      this.#held.delete(key);
      if (!this.#failing.has(key))
        this.#log.error(
          { topic: source.topic, partition: source.partition, step: what, err: error },
          `${what} of ${source.topic}-${source.partition} failed (retried every round; said once): ${error instanceof Error ? error.message : String(error)}`,
        );
      this.#failing.add(key);
      this.#options.metrics?.counter('ferry_tier_failures_total', 'Tiering steps that failed (retried at the next round)').add();
      return null;
    }
  }

  /** [T1] The record as taken in the source's epoch (once per epoch). */
  async #take(source: TierSource): Promise<Held> {
    const key = heldKey(source.topicId, source.partition);
    const held = this.#held.get(key);
    if (held !== undefined && held.leaderEpoch === source.leaderEpoch) return held;
    const { record, fromEarlierLeader } = await this.#options.records.takeOver(source.topicId, source.partition, source.leaderEpoch);
    const taken: Held = { leaderEpoch: source.leaderEpoch, record };
    this.#held.set(key, taken);
    // [T2] A leader that took the record from an earlier one tiers the tail it inherited at once: the WAL objects of the
    // streams before its own are then GC's to take, and the next takeover reads only what came
    // after. Else each takeover restarted TIER_TAIL_MAX_MS, and with leaders changing faster than
    // that the tail grew with every takeover (3,491 objects after 40 kills 5 s apart).
    if (fromEarlierLeader) this.#inheritedEnds.set(key, Math.min(source.highWatermark, source.log.logEndOffset));
    return taken;
  }

  /** Whether the partition's tail tiers however small: it was inherited in this epoch, or the tiered end stayed put TIER_TAIL_MAX_MS below the committed end. */
  #tailAged(source: TierSource, key: string, end: number): boolean {
    const inherited = this.#inheritedEnds.get(key);
    if (inherited !== undefined && end < inherited) return true; // [T2] a new leader's inherited tail goes at once
    this.#inheritedEnds.delete(key);
    const nowMs = this.#options.clock.monotonicMs();
    const since = this.#tailSince.get(key);
    if (Math.min(source.highWatermark, source.log.logEndOffset) <= end) {
      this.#tailSince.delete(key);
      return false;
    }
    if (since === undefined || since.tieredEnd !== end) {
      this.#tailSince.set(key, { tieredEnd: end, sinceMs: nowMs });
      return false;
    }
    return nowMs - since.sinceMs >= (this.#options.tailMaxMs ?? TIER_TAIL_MAX_MS);
  }

  /** [T3]-[T5] Announce, upload, read back, commit. */
  async #tierRange(source: TierSource, held: Held, range: { baseOffset: number; endOffset: number }): Promise<void> {
    const { records, random } = this.#options;
    const uploadId = randomUuid(random);
    held.record = await records.announce(source.topicId, source.partition, source.leaderEpoch, { ...range, uploadId });
    const epochs = epochsIn(source.log.leaderEpochs, range.baseOffset, range.endOffset);
    const summary = await this.#withUploadMemory(localBytes(source.log, range), () => this.#upload(source, range, uploadId, epochs, localBatches(source, range)));
    held.record = await records.commit(source.topicId, source.partition, source.leaderEpoch, uploadId, {
      bytes: summary.bytes,
      maxTimestamp: summary.maxTimestamp,
      epochs,
      sections: summary.sections,
    });
    this.#recordChanges++;
    this.#log.debug(
      { topic: source.topic, partition: source.partition, baseOffset: range.baseOffset, endOffset: range.endOffset, bytes: summary.bytes },
      `tiered ${source.topic}-${source.partition} offsets ${range.baseOffset}..${range.endOffset} (${summary.bytes} bytes)`,
    );
    this.#sayBacklog(source, range.endOffset);
  }

  /** Progress of a tier backlog (a partition more than one range behind its committed end): rate-limited lines; its end is said once. */
  #sayBacklog(source: TierSource, tieredTo: number): void {
    const key = heldKey(source.topicId, source.partition);
    const fields = { topic: source.topic, partition: source.partition };
    // More than a tail left above what was just tiered: another range is due at once, a backlog.
    if (source.log.bytesFrom(tieredTo) <= (this.#options.tailMaxBytes ?? TIER_TAIL_MAX_BYTES)) {
      if (this.#progress.finish(key)) this.#log.info({ ...fields, tieredEnd: tieredTo }, `tiering ${source.topic}-${source.partition} caught up at offset ${tieredTo}`);
      return;
    }
    const target = Math.min(source.highWatermark, source.log.logEndOffset);
    this.#progress.update(key, fields, tieredTo, target, `tiering ${source.topic}-${source.partition}: offset ${tieredTo} of ${target}`);
  }

  /** [T8] The merge due (dueMerge) becomes one tiered segment in place of its pieces: announce, upload, read back, commit. */
  async #mergeWhenDue(source: TierSource, held: Held): Promise<void> {
    const range = dueMerge(source.log, held.record, this.#localMergeBytesMax);
    if (range === null) return;
    const { records, random } = this.#options;
    const uploadId = randomUuid(random);
    const pieces = tilingSegments(held.record, range.baseOffset, range.endOffset)!;
    const span = { baseOffset: range.baseOffset, endOffset: range.endOffset };
    held.record = await records.announceMerge(source.topicId, source.partition, source.leaderEpoch, { ...span, uploadId });
    const epochs = range.fromTier
      ? epochsIn(sortedEpochs(pieces.flatMap((piece) => piece.epochs)), span.baseOffset, span.endOffset)
      : epochsIn(source.log.leaderEpochs, span.baseOffset, span.endOffset);
    const batches = range.fromTier ? this.#tieredBatches(source, pieces) : localBatches(source, span);
    const bytes = range.fromTier ? pieces.reduce((sum, piece) => sum + piece.bytes, 0) : localBytes(source.log, span);
    const summary = await this.#withUploadMemory(bytes, () => this.#upload(source, span, uploadId, epochs, batches));
    held.record = await records.commitMerge(source.topicId, source.partition, source.leaderEpoch, uploadId, {
      bytes: summary.bytes,
      maxTimestamp: summary.maxTimestamp,
      epochs,
      sections: summary.sections,
    });
    this.#log.debug(
      { topic: source.topic, partition: source.partition, pieces: pieces.length, baseOffset: span.baseOffset, endOffset: span.endOffset, bytes: summary.bytes },
      `merged ${pieces.length} tiered segments of ${source.topic}-${source.partition} into one${range.fromTier ? ', read back from the tier' : ''}, offsets ${span.baseOffset}..${span.endOffset} (${summary.bytes} bytes)`,
    );
  }

  /** [T8] The batches of tiered pieces, each object read whole and verified, and the producer state at the last one's end. */
  #tieredBatches(source: TierSource, pieces: readonly CopiedSegment[]): RangeBatches {
    const { store, prefix } = this.#options;
    let producers: Uint8Array | null = null;
    async function* chunks(): AsyncGenerator<Uint8Array[]> {
      for (const piece of pieces) {
        const object = await store.get(tieredSegmentKey(prefix, source.topicId, source.partition, piece.baseOffset, piece.endOffset, piece.uploadId));
        const decoded = decodeTieredSegment(object.body);
        producers = decoded.producers;
        yield decoded.batches.map((batch) => batch.bytes);
      }
    }
    return { chunks: chunks(), producers: () => producers! };
  }

  /**
   * [T7] Retention over the whole log: the oldest tiered segments it says go leave the record (their
   * objects are orphans, [T6]). So do those below the log start DeleteRecords set, as far as the
   * tier reaches (as Kafka's remote log manager deletes remote segments below the log start). Never
   * the last copied one: it holds the producer state at the tier's end.
   */
  async #expire(source: TierSource, held: Held): Promise<void> {
    const localBytesAboveTier = source.log.bytesFrom(tieredEnd(held.record)); // the tiered end may lie inside a segment [T2]
    const retained = retainedStart(held.record, source.log.config, localBytesAboveTier, this.#options.clock.nowMs());
    const deleted = Math.min(source.log.deletedBeforeOffset, tieredEnd(held.record));
    // The last copied segment stays, whatever retention or DeleteRecords say: its producer state is the state at TE that a
    // rebuild starts from [K2], and Kafka keeps a producer's state when the log start passes its records (KIP-360), so a
    // retry of its batch is still known. Reads below DeleteRecords' start are refused all the same.
    const lastCopiedBase = copiedSegments(held.record).at(-1)?.baseOffset ?? 0;
    const start = Math.min(Math.max(retained ?? 0, deleted), lastCopiedBase);
    if (start <= held.record.startOffset) return;
    held.record = await this.#options.records.expireBefore(source.topicId, source.partition, source.leaderEpoch, start);
    this.#recordChanges++;
    this.#log.info({ topic: source.topic, partition: source.partition, startOffset: start }, `retention: ${source.topic}-${source.partition} starts at offset ${start} now`);
  }

  /** [T6] Every TIER_SWEEP_INTERVAL_MS per partition. */
  async #sweepWhenDue(source: TierSource, key: string): Promise<void> {
    const nowMs = this.#options.clock.monotonicMs();
    const last = this.#sweptMs.get(key);
    if (last !== undefined && nowMs - last < (this.#options.sweepIntervalMs ?? TIER_SWEEP_INTERVAL_MS)) return;
    this.#sweptMs.set(key, nowMs);
    const deleted = await this.#sweeper.sweep(this.#options.records, source.topicId, source.partition);
    if (deleted > 0) this.#log.info({ topic: source.topic, partition: source.partition, deleted }, `deleted ${deleted} orphaned tiered objects of ${source.topic}-${source.partition}`);
  }

  /** Runs an upload of a range of `bytes`: one of more than TIER_SMALL_RANGE_BYTES waits for one of the TIER_UPLOADS_IN_FLIGHT permits. */
  #withUploadMemory<T>(bytes: number, upload: () => Promise<T>): Promise<T> {
    return bytes <= TIER_SMALL_RANGE_BYTES ? upload() : this.#largeUploads.run(upload);
  }

  /** [T4] Streams the range's batches into the object (put-if-absent), then reads its footer back [T5]. */
  async #upload(source: TierSource, range: { baseOffset: number; endOffset: number }, uploadId: Uuid, epochs: readonly EpochEntry[], from: RangeBatches): Promise<TieredSegmentSummary> {
    const { store, prefix } = this.#options;
    const { log, topicId, partition } = source;
    const key = tieredSegmentKey(prefix, topicId, partition, range.baseOffset, range.endOffset, uploadId);
    const builder = new TieredSegmentBuilder({ topicId, partition, baseOffset: range.baseOffset, uploadId, indexIntervalBytes: log.config.indexIntervalBytes });
    const upload = new StreamingUpload(store, key, { ifNoneMatch: '*' });
    let summary: TieredSegmentSummary | null = null;
    try {
      for await (const batches of from.chunks) {
        const chunks = stageTimers.time('tier', () => {
          for (const batch of batches) builder.add(batch);
          return builder.drain();
        });
        for (const chunk of chunks) await upload.write(chunk);
      }
      assert(builder.nextOffset === range.endOffset, `${source.topic}-${partition}: the batches of ${range.baseOffset}..${range.endOffset} end at ${builder.nextOffset}`);
      const finished = builder.finish({ epochs, producers: from.producers() });
      summary = finished.summary;
      for (const chunk of finished.chunks) await upload.write(chunk);
      await upload.finish();
    } catch (error) {
      await upload.abort();
      // An earlier attempt of this upload id landed (its answer was lost): it is ours if it reads back the same.
      if (!isStoreError(error, 'PreconditionFailed') || summary === null) throw error;
    }
    await this.#readBack(key, summary);
    return summary;
  }

  /** [T5] The object's footer, read back, must be the one built: the object is whole and ours. */
  async #readBack(key: string, built: TieredSegmentSummary): Promise<void> {
    const tail = await this.#options.store.get(key, { range: { start: Math.max(0, built.bytes - TIERED_TAIL_BYTES) } });
    if (tail.size !== built.bytes) throw new FerryError('CorruptObject', `tiered segment ${key} is ${tail.size} bytes, not the ${built.bytes} written`);
    const read = parseFooter(tail.body);
    if (JSON.stringify(read.sections) !== JSON.stringify(built.sections) || read.endOffset !== built.endOffset)
      throw new FerryError('CorruptObject', `tiered segment ${key} reads back with another footer than the one written`);
  }

  /** Whether a scheduled round waits for this broker's adoptions (TiererOptions.holdWhile), at most TIER_HOLD_FOR_ADOPTIONS_MAX_MS in a row. */
  #holdsForAdoptions(): boolean {
    const nowMs = this.#options.clock.monotonicMs();
    if (this.#options.holdWhile?.() !== true || (this.#heldSinceMs !== null && nowMs - this.#heldSinceMs >= TIER_HOLD_FOR_ADOPTIONS_MAX_MS)) {
      this.#heldSinceMs = null;
      return false;
    }
    this.#heldSinceMs ??= nowMs;
    return true;
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = this.#options.clock.setTimer(
      this.#options.intervalMs ?? TIER_INTERVAL_MS,
      () => {
        if (this.#holdsForAdoptions()) this.#schedule();
        else void this.tierDue().finally(() => this.#schedule());
      },
      true,
    );
  }
}

/**
 * [T2] The next range to tier: from the tiered end to the end of the local segment holding it,
 * once that segment is rolled (a later one exists) and its end is at or below the high
 * watermark; inside the active segment, up to the last batch boundary at or below the high
 * watermark once that range holds `tailMaxBytes`; null when none is due. A tiered end below the
 * local log start is a gap the local log cannot fill (its offsets are neither here nor tiered):
 * reported, never papered over.
 */
export function dueRange(log: PartitionLog, tieredEndOffset: number, highWatermark: number, tailMaxBytes = TIER_TAIL_MAX_BYTES): { baseOffset: number; endOffset: number } | null {
  if (tieredEndOffset < log.logStartOffset)
    throw new FerryError('InvalidOffsets', `the tier ends at ${tieredEndOffset} but the local log starts at ${log.logStartOffset}: offsets in between are in neither`);
  const bases = log.segmentBaseOffsets;
  let holding = 0;
  while (holding + 1 < bases.length && bases[holding + 1]! <= tieredEndOffset) holding++;
  if (holding === bases.length - 1) return dueTail(log, tieredEndOffset, highWatermark, tailMaxBytes);
  const endOffset = bases[holding + 1]!;
  return endOffset <= highWatermark ? { baseOffset: tieredEndOffset, endOffset } : null;
}

/** [T2] The committed part of the active segment above the tiered end, once it holds `tailMaxBytes` (0: whatever it holds). */
function dueTail(log: PartitionLog, tieredEndOffset: number, highWatermark: number, tailMaxBytes: number): { baseOffset: number; endOffset: number } | null {
  if (log.bytesFrom(tieredEndOffset) < tailMaxBytes) return null; // cheap, and the usual answer
  const endOffset = log.batchBaseOf(Math.min(highWatermark, log.logEndOffset)); // a tiered segment holds whole batches
  if (endOffset <= tieredEndOffset || localBytes(log, { baseOffset: tieredEndOffset, endOffset }) < tailMaxBytes) return null;
  return { baseOffset: tieredEndOffset, endOffset };
}

/** The bytes of the local log's batches in [base, end). */
function localBytes(log: PartitionLog, range: { baseOffset: number; endOffset: number }): number {
  return log.bytesFrom(range.baseOffset) - log.bytesFrom(range.endOffset);
}

/** Where an upload's batches come from: chunks of whole batches in offset order, then the producer state at the range's end. */
interface RangeBatches {
  readonly chunks: AsyncIterable<Uint8Array[]>;
  producers(): Uint8Array;
}

/**
 * [T4] The batches of [base, end) from the local log, TIER_READ_BYTES at a time, and the producer
 * state at the end, brought forward from the base by the same batches as they are read: replayed
 * at the end instead, it read every batch header of the range again in one synchronous step (a
 * 30 MB range of small batches held the event loop 45 ms, acks=all p99 with it).
 */
function localBatches(source: TierSource, range: { baseOffset: number; endOffset: number }): RangeBatches {
  const { log, topic, partition } = source;
  let producers: ProducerStateReplay | null = null;
  async function* chunks(): AsyncGenerator<Uint8Array[]> {
    producers = log.producerReplayFrom(range.baseOffset);
    for (let at = range.baseOffset; at < range.endOffset; ) {
      const batches = stageTimers.time('tier', () => log.read(at, TIER_READ_BYTES)).batches.filter((batch) => batch.baseOffset >= at && batch.baseOffset < range.endOffset);
      assert(batches.length > 0 && batches[0]!.baseOffset === at, `${topic}-${partition}: no batch at offset ${at} to tier`);
      for (const batch of batches) producers.apply(batch);
      yield batches.map((batch) => batch.bytes);
      at = batches.at(-1)!.nextOffset;
    }
  }
  return {
    chunks: chunks(),
    producers: () => {
      assert(producers !== null, `${topic}-${partition}: the producer state is asked for before the batches were read`);
      return producers.snapshotAt(range.endOffset);
    },
  };
}

/** Leader epoch entries by start offset, each start once. */
function sortedEpochs(entries: readonly EpochEntry[]): EpochEntry[] {
  const byStart = new Map<number, EpochEntry>();
  for (const entry of entries) if (!byStart.has(entry.startOffset)) byStart.set(entry.startOffset, entry);
  return [...byStart.values()].sort((a, b) => a.startOffset - b.startOffset);
}

/** The leader epochs in effect in [base, end): the one at `base`, then those that start inside. */
export function epochsIn(entries: readonly EpochEntry[], baseOffset: number, endOffset: number): EpochEntry[] {
  const atBase = entries.filter((entry) => entry.startOffset <= baseOffset).at(-1);
  return [...(atBase === undefined ? [] : [atBase]), ...entries.filter((entry) => entry.startOffset > baseOffset && entry.startOffset < endOffset)];
}

function heldKey(topicId: Uuid, partition: number): string {
  return `${topicId}\u0000${partition}`;
}
