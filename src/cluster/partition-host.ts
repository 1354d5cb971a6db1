import { isFerryError } from '../errors.ts';
import { componentLogger, type Logger, type LoggerOption } from '../observability/logger.ts';
import { CatchUpProgress, ProgressLines } from '../observability/progress.ts';
import { isOsError } from '../util/os-error.ts';
import type { Engine } from '../engine/index.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import type { TierStart } from '../tier/tier-start.ts';
import { assert } from '../util/assert.ts';
import { backoffDelayMs, sleep } from '../util/backoff.ts';
import type { Clock } from '../util/clock.ts';
import { type Random, SeededRandom } from '../util/random.ts';
import type { Network } from '../util/network.ts';
import type { InterBrokerConnector } from './inter-broker-connection.ts';
import type { ObjectStore } from '../store/object-store.ts';
import type { StreamId } from '../wal/keys.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../wal/reader.ts';
import { type ChainReader, SharedWalReads } from '../wal/shared-reads.ts';
import { ensureSealed } from '../wal/seal.ts';
import { type ReadOutcomes, reportingReads } from '../wal/store-health.ts';
import { mapLimited } from '../util/map-limited.ts';
import type { MetricsRegistry } from '../metrics/index.ts';
import type { Uuid } from '../util/uuid.ts';
import { regressed } from '../util/regressions.ts';
import { LeaderProgress } from './leader-progress.ts';
import type { SettledPrefix } from '../partition/rebuild.ts';
import type { BrokerRecord, PartitionRecord } from './control-records.ts';
import { type RebuildOutcome, type RebuildVoice, rebuildFromTierAndChain } from '../partition/rebuild.ts';
import { keepOnlyWhatTheChainProves } from './kept-log.ts';
import { applyRecordedLogStart } from './recorded-log-start.ts';
import { StreamTails, TAIL_RETRY } from './stream-tails.ts';
import type { ClaimPlan } from './takeover.ts';

/**
 * How often a follower partition probes the leader's stream for its next object: 5 ms while data
 * flows, backing off to 50 ms while the stream is idle. A probe of a missing object is a billed
 * GET (200/s at 5 ms, 20/s at 50 ms); the cost is up to 50 ms more acks=all latency with
 * min.insync.replicas > 1 after an idle spell.
 */
const REPLICA_POLL_INTERVAL_MS = 5;
const REPLICA_POLL_INTERVAL_MAX_MS = 50;

/** [C4] Streams of one chain sealed at once by an adoption (each a LIST, and a put unless sealed already). */
const SEALS_IN_FLIGHT = 8;

export interface PartitionHostOptions {
  readonly engine: Engine;
  /** Where the WAL streams live. */
  readonly store: ObjectStore;
  readonly prefix: string;
  readonly nodeId: number;
  readonly clock: Clock;
  /** The partition's chain as its control record now has it (a follower moving past a seal). */
  readChain(topic: string, partition: number): Promise<readonly StreamId[]>;
  /** The partition's control record as it is now: a follower that fell behind the WAL floor follows it again from there [D4]. */
  readRecord(topic: string, partition: number): Promise<PartitionRecord | null>;
  replicationFactor(topic: string): number;
  /** The partition's live leader as last scanned, to report a follower's progress to. */
  leaderOf(topic: string, partition: number): BrokerRecord | null;
  /**
   * [C1] Whether each of a follower's reads of the WAL store (its tails' and its rebuilds') was
   * answered: a follower that cannot read its leaders' streams cannot follow, and says so as
   * storageFailing.
   */
  readonly walReadOutcomes?: ReadOutcomes;
  readonly metrics?: MetricsRegistry;
  /** Where followers' progress reports travel; the operating system's sockets by default. */
  readonly network?: Network;
  /** How progress reports reach a leader's inter-broker listener (TLS, SASL); plain TCP by default. */
  readonly connector?: InterBrokerConnector;
  /** Jitters the retries of stream tails and rebuild reads; seeded by the node id by default (the simulation injects its own). */
  readonly random?: Random;
  readonly log?: LoggerOption;
}

/**
 * What a cluster broker does with the partitions the control records give it
 * (docs/cluster-protocol.md): adopt one it won [C4]-[C5], let go of one it lost [C6], follow and
 * unfollow one another broker leads (replication factor > 1), forget a deleted topic.
 */
export class PartitionHost {
  readonly #options: PartitionHostOptions;
  readonly #log: Logger;
  /** Rebuilds of many objects say how far they got, now and then. */
  readonly #rebuildProgress: ProgressLines;
  /** So do followers far behind their leader's high watermark, until they have caught up. */
  readonly #catchUpProgress: CatchUpProgress;
  readonly #tails: StreamTails;
  /** Followers' progress reports, each to its partition's current leader [R1]. */
  readonly #progress: LeaderProgress;

  readonly #random: Random;
  /** The WAL store as this broker's followers read it (tails and rebuilds), each read's outcome reported [C1]. */
  readonly #walStore: ObjectStore;
  /** The partitions followed here, with their partition counts; an entry is replaced by each follow and removed by unfollow. */
  readonly #followed = new Map<string, { readonly partitions: number }>();
  /**
   * [C4] The seals under way, by stream (`made`: found or put), shared by the adoptions of one dead
   * broker's partitions; made ones stay while a scan's adoptions run together (#seal).
   */
  readonly #sealing = new Map<string, { readonly sealed: Promise<number>; made: boolean }>();
  /** Scans whose adoptions run together now: while any does, seals made are kept in #sealing. */
  #adoptingTogether = 0;
  /** [K7] The rebuilds running at once read each WAL object once, whole, and each takes its partition's frames. */
  readonly #sharedReads: SharedWalReads;
  #stopped = false;

  constructor(options: PartitionHostOptions) {
    this.#options = options;
    this.#log = componentLogger(options.log, 'cluster');
    this.#rebuildProgress = new ProgressLines(this.#log, options.clock);
    this.#catchUpProgress = new CatchUpProgress(this.#log, options.clock);
    this.#random = options.random ?? new SeededRandom(options.nodeId);
    this.#walStore = options.walReadOutcomes === undefined ? options.store : reportingReads(options.store, options.clock, options.walReadOutcomes);
    this.#sharedReads = new SharedWalReads((wants) => new WalReader(this.#walStore, { ...DEFAULT_WAL_READER_CONFIG, prefix: options.prefix, wants }, { clock: options.clock, random: this.#random }));
    this.#tails = new StreamTails({
      store: this.#walStore,
      prefix: options.prefix,
      clock: options.clock,
      random: this.#random,
      pollIntervalMs: REPLICA_POLL_INTERVAL_MS,
      pollIntervalMaxMs: REPLICA_POLL_INTERVAL_MAX_MS,
      readChain: (topic, partition) => options.readChain(topic, partition),
      fellBehindFloor: (topic, partition) => void this.#followAgain(topic, partition),
      report: componentLogger(options.log, 'follower'),
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    });
    this.#progress = new LeaderProgress({
      replicaId: options.nodeId,
      clock: options.clock,
      leaderOf: (topic, partition) => options.leaderOf(topic, partition),
      leaderHighWatermark: (topic, partition, highWatermark) => options.engine.noteLeaderHighWatermark(topic, partition, highWatermark),
      leaderLogStart: (topic, partition, logStartOffset) => this.#takeLogStart(topic, partition, logStartOffset), // [R6]
      ...(options.network === undefined ? {} : { network: options.network }),
      ...(options.connector === undefined ? {} : { connector: options.connector }),
    });
  }

  /**
   * [C4]-[C5] After the compare-and-swap of `plan.next` [C3]: seal every other stream of the chain,
   * rebuild the local log from the chain in order, then serve at the plan's leader epoch (L2).
   * `promoted` (docs/tier-protocol.md [K3]): this broker followed the partition until now; its local
   * log is kept and the rebuild applies only what it lacks.
   */
  async adopt(topic: string, partition: number, partitions: number, plan: ClaimPlan, promoted = false): Promise<SettledPrefix | null> {
    const { engine, clock } = this.#options;
    assert(!engine.serves(topic, partition), `${topic}-${partition} is adopted while still served here`);
    const current = plan.next.chain.at(-1)!;
    const startMs = clock.monotonicMs();
    // [C4] Each seal fences one writer, whatever the order: they go at once (a chain of many streams took one LIST and put after another).
    await mapLimited(plan.seal, SEALS_IN_FLIGHT, (stream) => this.#seal(stream, current.writerId));
    const sealedMs = clock.monotonicMs();
    const { topicId } = plan.next;
    const reader = this.#reader(topic, partition, topicId);
    let rebuilt: RebuildOutcome | null = null;
    // The rebuild's appends rebuild the producer state too (src/log/producer-state.ts).
    const rebuild = async (log: PartitionLog) => {
      rebuilt = await this.#rebuild(log, topic, partition, topicId, reader, plan.rebuildFrom, promoted, plan.settled);
      applyRecordedLogStart(log, plan.next.logStartOffset); // what DeleteRecords deleted stays deleted
    };
    await engine.adoptPartition(topic, topicId, partition, partitions, rebuild, 'leader', this.#options.replicationFactor(topic), plan.next.leaderEpoch, promoted); // [C5]
    const took = `sealed ${plan.seal.length} streams in ${Math.round(sealedMs - startMs)} ms, then ${describeRebuild(rebuilt)} in ${Math.round(clock.monotonicMs() - sealedMs)} ms`;
    this.#log.info(
      {
        topic,
        partition,
        leaderEpoch: plan.next.leaderEpoch,
        streamsSealed: plan.seal.length,
        objectsRead: (rebuilt as RebuildOutcome | null)?.objectsRead ?? 0,
        bytesApplied: (rebuilt as RebuildOutcome | null)?.bytesApplied ?? 0,
      },
      `serving ${topic}-${partition} up to offset ${engine.offsetFor(topic, partition, -1).offset} (leader epoch ${plan.next.leaderEpoch}): ${took}`,
    );
    return (rebuilt as RebuildOutcome | null)?.settled ?? null;
  }

  /** [K7] One scan's adoptions: their rebuilds' WAL reads, and the seals they made [C4], are kept until the last of them ended. */
  async adoptTogether<T>(adoptions: () => Promise<T>): Promise<T> {
    this.#adoptingTogether++;
    try {
      return await this.#sharedReads.keep(adoptions);
    } finally {
      if (--this.#adoptingTogether === 0) this.#forgetSeals();
    }
  }

  /** The seals made are forgotten once no adoptions run together; one under way is shared until it ends. */
  #forgetSeals(): void {
    for (const [id, entry] of this.#sealing) if (entry.made) this.#sealing.delete(id);
  }

  /**
   * [C4] ensureSealed, shared by the adoptions under way: the partitions a dead broker led all seal
   * its stream at once, and each sealed it on its own (a LIST of the whole stream each: four
   * adoptions took up to 1.2 s to seal two streams). A seal is the stream's for good, so one
   * finished check answers all who asked meanwhile, and, while a scan's adoptions run together,
   * every adoption of the batch; a later adoption checks again.
   */
  #seal(stream: StreamId, sealerId: string): Promise<number> {
    const { store, prefix, clock } = this.#options;
    const id = `${stream.writerId}/${stream.epoch}`;
    const running = this.#sealing.get(id);
    if (running !== undefined) return running.sealed;
    const entry = { sealed: ensureSealed(store, prefix, stream, { writerId: sealerId, nowMs: clock.nowMs() }), made: false };
    this.#sealing.set(id, entry);
    const forget = () => {
      if (this.#sealing.get(id) === entry) this.#sealing.delete(id);
    };
    // A failed seal is never kept (the next adoption tries again); a made one while adoptions run together.
    entry.sealed.then(() => {
      entry.made = true;
      if (this.#adoptingTogether === 0) forget();
    }, forget);
    return entry.sealed;
  }

  /**
   * A followed partition's record names a log start (DeleteRecords on its leader, read by a scan):
   * it serves nothing below it, and its leader hears of the move at once [R6].
   */
  followLogStart(topic: string, partition: number, logStartOffset: number): void {
    this.#takeLogStart(topic, partition, logStartOffset);
    this.#progress.logStartMoved(topic, partition);
  }

  /**
   * The follower's log takes a DeleteRecords start up (its checkpoint written first). A write that
   * fails (a full disk) leaves the start where it was, said in a line: the next answer or scan
   * brings it again, and the leader's DeleteRecords waits for it meanwhile [R6] (the seed 263 of
   * issue 12's simulation: a follower's full disk threw out of the reporter's answer handler).
   */
  #takeLogStart(topic: string, partition: number, logStartOffset: number): void {
    try {
      this.#options.engine.followLogStart(topic, partition, logStartOffset);
    } catch (error) {
      if (!isFerryError(error, 'Storage') && !isOsError(error)) throw error;
      this.#log.warn(
        { topic, partition, logStartOffset, err: error },
        `${topic}-${partition}: the log start ${logStartOffset} is not taken up yet: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  /** [C6] Another broker leads it now. */
  async release(topic: string, partition: number): Promise<void> {
    await this.#options.engine.releasePartition(topic, partition);
  }

  /** Replication factor > 1: rebuild from the sealed streams, then tail the leader's. */
  async follow(topic: string, partition: number, partitions: number, record: PartitionRecord): Promise<void> {
    const followed = { partitions };
    this.#followed.set(followedKey(topic, partition), followed);
    await this.#startFollowing(topic, partition, partitions, record);
  }

  async #startFollowing(topic: string, partition: number, partitions: number, record: PartitionRecord): Promise<void> {
    const { topicId } = record;
    const reader = this.#reader(topic, partition, topicId);
    const sealed = record.chain.slice(0, -1); // the leader sealed them when it took over
    const rebuild = async (log: PartitionLog) => {
      await this.#rebuild(log, topic, partition, topicId, reader, sealed);
      // A follower serves (KIP-392) nothing a client deleted either, as far as its log reaches: the tail brings the rest, in order.
      applyRecordedLogStart(log, record.logStartOffset === undefined ? undefined : Math.min(record.logStartOffset, log.logEndOffset));
    };
    const follower = await this.#options.engine.adoptPartition(topic, topicId, partition, partitions, rebuild, 'follower', 1, record.leaderEpoch);
    this.#progress.follow(
      topic,
      partition,
      () => follower.log.logEndOffset,
      () => follower.leaderEpoch,
      () => this.#options.engine.logStartOffset(topic, partition),
    ); // reports what the rebuild brought, in the epoch followed
    const applied = () => {
      follower.noteApplied();
      this.#progress.applied(topic, partition);
      this.#catchUpProgress.applied(topic, partition, follower.log.logEndOffset, follower.leaderHighWatermark);
    };
    this.#tails.follow({ topic, topicId, partition, log: follower.log, applied, leaderHighWatermark: () => follower.leaderHighWatermark }, record.chain);
  }

  /**
   * docs/tier-protocol.md [D4]: the follower's next WAL object was collected. Its log is let go of
   * and the partition followed again from scratch, as the control record has it now: a rebuild
   * from the tier's end and the chain's floors, then the tail. Retried with backoff until it
   * works or the partition is unfollowed meanwhile (the scan decides what this broker follows).
   */
  async #followAgain(topic: string, partition: number): Promise<void> {
    const id = followedKey(topic, partition);
    const followed = this.#followed.get(id);
    if (followed === undefined) return;
    this.#stopFollowing(topic, partition);
    for (let failures = 0; this.#followed.get(id) === followed && !this.#stopped; failures++) {
      try {
        await this.#options.engine.releasePartition(topic, partition);
        const record = await this.#options.readRecord(topic, partition);
        if (record === null || this.#followed.get(id) !== followed || this.#stopped) return;
        await this.#startFollowing(topic, partition, followed.partitions, record);
        if (this.#followed.get(id) !== followed || this.#stopped) await this.#letGo(topic, partition); // unfollowed while it rebuilt
        this.#log.info({ topic, partition }, `following ${topic}-${partition} again from the tier's end: it fell behind the WAL floor`);
        return;
      } catch (error) {
        const waitMs = backoffDelayMs(TAIL_RETRY, failures, this.#random);
        this.#log.warn(
          { topic, partition, err: error },
          `could not follow ${topic}-${partition} again yet (retrying in ${Math.round(waitMs)} ms): ${error instanceof Error ? error.message : String(error)}`,
        );
        await sleep(this.#options.clock, waitMs);
      }
    }
  }

  async #letGo(topic: string, partition: number): Promise<void> {
    this.#stopFollowing(topic, partition);
    await this.#options.engine.releasePartition(topic, partition);
  }

  async unfollow(topic: string, partition: number): Promise<void> {
    this.#followed.delete(followedKey(topic, partition));
    this.#stopFollowing(topic, partition);
    await this.#options.engine.releasePartition(topic, partition);
  }

  /**
   * A deleted topic incarnation (`topicId`; null: whichever is here): stop following its partitions
   * and drop its logs. If the engine holds a later incarnation of the name by now (a follower that
   * fell behind the floor followed again [D4], reading the new incarnation's record), its
   * partitions are let go of and the topic kept: deleting it would retire the live incarnation's id
   * in the engine, which then refused every later follow of it (seed 212).
   */
  async forget(topic: string, topicId: Uuid | null = null): Promise<void> {
    const partitions = [...this.#followed.keys()].filter((id) => id.startsWith(`${topic}/`)).map((id) => Number(id.slice(topic.length + 1)));
    for (const partition of partitions) this.#followed.delete(followedKey(topic, partition));
    for (const partition of this.#progress.unfollowTopic(topic)) this.#tails.unfollow(topic, partition);
    const { engine } = this.#options;
    const held = engine.incarnationOf(topic);
    if (topicId !== null && held !== null && held !== topicId) {
      const count = engine.topics().find((described) => described.name === topic)?.partitions ?? 0;
      for (let partition = 0; partition < count; partition++) await engine.releasePartition(topic, partition);
      return;
    }
    // Unknown: nothing of it was served here. Any other failure (a full disk kept the registry from
    // recording the delete) has closed its partitions all the same (Ferry.deleteTopic).
    await engine.deleteTopic(topic).catch(() => {});
  }

  /** After each scan: followers re-target their reports to the partitions' current leaders [R1]. */
  scanned(): void {
    this.#progress.retarget();
  }

  stop(): void {
    this.#stopped = true;
    this.#tails.stopAll();
    this.#progress.close();
  }

  #stopFollowing(topic: string, partition: number): void {
    this.#tails.unfollow(topic, partition);
    this.#progress.unfollow(topic, partition);
  }

  /**
   * [C5] with docs/tier-protocol.md [K2]: the log starts at the tier's end, with the tier's leader
   * epochs and producer state there, and takes from the chain only the frames from there on, each
   * stream from its WAL floor; a GC that races it makes it start over from the newer end.
   */
  async #rebuild(
    log: PartitionLog,
    topic: string,
    partition: number,
    topicId: Uuid,
    reader: ChainReader,
    chain: readonly StreamId[],
    kept = false,
    settled: SettledPrefix | null = null,
  ): Promise<RebuildOutcome> {
    const fields = { topic, partition };
    const key = `${topic}-${partition}`;
    const say: RebuildVoice = Object.assign((message: string) => this.#log.info(fields, `${topic}-${partition}: ${message}`), {
      progress: (read: number, listed: number) => this.#rebuildProgress.update(key, fields, read, listed, `rebuilding ${topic}-${partition}: ${read} of ${listed} WAL objects read`),
    });
    const [keptStart, keptEnd] = [log.logStartOffset, log.logEndOffset];
    const rebuilt = await this.#sharedReads
      .hold(() => rebuildFromTierAndChain(reader, log, chain, topicId, () => this.#tierStart(topic, partition, topicId), say, kept, settled))
      .finally(() => this.#rebuildProgress.finish(key));
    if (!kept) return rebuilt;
    if (!rebuilt.kept) {
      say(`the promoted follower's log [${keptStart}, ${keptEnd}) does not span the tier's end: rebuilt from it`);
      return rebuilt;
    }
    say(`promoted follower keeps its local log [${keptStart}, ${keptEnd})`);
    say(`applied ${rebuilt.bytesApplied} bytes past the kept end ${keptEnd}, up to ${log.logEndOffset}`);
    keepOnlyWhatTheChainProves(log, rebuilt.chainEnd, say); // [K3]
    return rebuilt;
  }

  /** Where a rebuild of the partition starts [K2]: the tier's end, or null (nothing tiered: from 0). */
  async #tierStart(topic: string, partition: number, topicId: Uuid): Promise<TierStart | null> {
    let start: TierStart | null = null;
    try {
      start = await this.#options.engine.tierStartOf(topicId, partition);
    } catch (error) {
      // The tier cannot be read now: rebuild from the chain rather than leave the partition unled,
      // from the start retention left in the tier record, never below (those records are gone for
      // good). Once WAL GC collected a prefix the chain no longer holds it: the rebuild finds its
      // first frame above the log's end and starts over (WalPrefixCollectedError), reading the tier again.
      const range = await this.#options.engine.tierRecordRange(topicId, partition);
      start = { offset: range.startOffset, epochs: [], producers: null, ...(range.tieredEnd > range.startOffset ? { mustReach: range.tieredEnd } : {}) };
      this.#log.warn(
        { topic, partition, fromOffset: start.offset, err: error },
        `rebuilding ${topic}-${partition} from its chain at offset ${start.offset}: the tier cannot be read (${error instanceof Error ? error.message : String(error)})`,
      );
    }
    if (start?.offset === 0 && start.mustReach === undefined) return null; // from 0 with nothing to reach: as before tiering
    if (start !== null) this.#log.info({ topic, partition, fromOffset: start.offset }, `rebuilding ${topic}-${partition} from the tier's end, offset ${start.offset}`);
    return start;
  }

  /** Reads the partition's frames of incarnation `topicId` only (docs/design.md contract 10), from the rebuilds' shared reads [K7]. */
  #reader(topic: string, partition: number, topicId: Uuid): ChainReader {
    return this.#sharedReads.view((t, p, id) => t === topic && p === partition && (id === topicId || regressed('topic-incarnations-mixed')), { topic, partition });
  }
}

function describeRebuild(rebuilt: RebuildOutcome | null): string {
  if (rebuilt === null) return 'no rebuild';
  return `applied ${rebuilt.bytesApplied} bytes from ${rebuilt.objectsRead} WAL objects${rebuilt.restarts > 0 ? ` (${rebuilt.restarts} restarts after racing GC)` : ''}`;
}

function followedKey(topic: string, partition: number): string {
  return `${topic}/${partition}`;
}
