import type { MetricsRegistry } from '../metrics/index.ts';
import { componentLogger, type Logger, type LoggerOption } from '../observability/logger.ts';
import { isStoreError } from '../store/errors.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { assert } from '../util/assert.ts';
import type { Clock, Timer } from '../util/clock.ts';
import type { Random } from '../util/random.ts';
import { type StreamId, walObjectKey } from '../wal/keys.ts';
import { dropFloorMarksBelow, markFloor } from '../wal/floor.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../wal/reader.ts';
import { listEpochs } from '../wal/seal.ts';
import { AboveSealClock } from './above-seal.ts';
import { CoverageRound, type CoverageSources } from './coverage.ts';
import { IndexCache, type ObjectIndex } from './index-cache.ts';
import { WalGcMetrics } from './metrics.ts';
import { UnknownIncarnations } from './unknown-incarnations.ts';
import type { OrphanWriters } from './orphan-writers.ts';
import { listStream, type StreamListing } from './stream-listing.ts';

/**
 * How often the collector passes over this broker's streams [G3]. Each pass costs a LIST per
 * stream plus a tier record GET per partition in the objects it judges; objects are 8 MiB or
 * 250 ms of appends, so a few seconds keeps the WAL store at a few seconds of history beyond TE.
 */
export const GC_INTERVAL_MS = 5_000;
/**
 * A scheduled pass is skipped while nothing that could free an object has changed since the last
 * pass that failed nowhere (WalCollectorOptions.progress), but runs at least this often all the
 * same (another broker's tiering can cover frames of this broker's sealed streams). An idle
 * broker's passes were its WAL store's main bill: a LIST per stream every 5 s, ~$14 a month per
 * broker at S3 Express prices (bench/failover.bench.ts's idle window at 8c03420).
 */
export const GC_IDLE_PASS_MS = 5 * 60_000;
/**
 * Footer indexes read ahead of the object being judged: each new object's index is one GET (then
 * cached), and a stream gains objects at up to ~80/s at 10 MB/s; one at a time, a pass's reads
 * alone took most of the interval. Judging, and deleting, stay in sequence order.
 */
const GC_INDEX_READ_AHEAD = 8;

export interface WalCollectorOptions {
  /** The WAL store and the prefix the writer puts under. */
  readonly store: ObjectStore;
  readonly prefix: string;
  /** [G1] The writer id whose streams this broker collects: its own. */
  readonly writerId: string;
  /** The epoch being written now (its in-sync followers hold GC, [G3]); null while none is. */
  currentEpoch(): number | null;
  readonly coverage: CoverageSources;
  /**
   * [G1] A cluster broker's: also collect the streams of writer ids no live broker writes as (their
   * broker record gone or dead for WAL_ORPHAN_DELAY_MS) that the hash gives this broker.
   */
  readonly orphans?: OrphanWriters;
  readonly clock: Clock;
  readonly random: Random;
  /** Default GC_INTERVAL_MS. */
  readonly intervalMs?: number;
  /**
   * What could make more objects collectable, as a string that changes with it (new objects
   * durable, the tier moved, a topic deleted); absent: every scheduled pass runs.
   */
  progress?(): string;
  /** How long objects above a seal wait once the stream is collected down to it; default WAL_ORPHAN_DELAY_MS. */
  readonly orphanDelayMs?: number;
  /** The longest a scheduled pass is skipped while nothing changed; default GC_IDLE_PASS_MS. */
  readonly idlePassMs?: number;
  readonly indexCacheObjects?: number;
  readonly metrics?: MetricsRegistry;
  readonly log?: LoggerOption;
}

/** What one pass over a stream did. */
interface StreamPass {
  readonly deleted: number;
  /** Objects still listed after the pass. */
  readonly held: number;
  /** Nothing is left below its seal (what lies above waits out WAL_ORPHAN_DELAY_MS, [G6]). */
  readonly drained: boolean;
}

/** What one pass over a writer's streams did. */
interface WriterPass {
  readonly deleted: number;
  /** Objects its streams still listed after the pass. */
  readonly held: number;
  /** Its streams not written now with objects left below their seals: their frames wait for another broker's tiering. */
  readonly waiting: number;
}

/**
 * The WAL garbage collector (docs/tier-protocol.md [G1]-[G4], [G6]; GI1, GI2): every interval,
 * for each stream of this broker's writer id, from the stream's floor up, it deletes the objects
 * whose every frame GI1 covers, one at a time in sequence order, stopping at the first that must
 * stay; never the highest object of a stream that is not sealed, never above a hole. Seals stay
 * (chain trimming [G5] is not built). With collectOrphans, also the streams of writer ids no live
 * broker writes as, that the hash gives this broker [G1]. Two collectors of one stream are safe: each deletes only
 * what GI1 allows, in order, and deletes are idempotent.
 */
export class WalCollector {
  readonly #options: WalCollectorOptions;
  readonly #log: Logger;
  readonly #reader: WalReader;
  readonly #indexes: IndexCache;
  readonly #aboveSeal: AboveSealClock;
  readonly #metrics: WalGcMetrics | null;
  /** DI1: incarnations no record names, each said once. */
  readonly #unknownIncarnations: UnknownIncarnations;
  /** Streams whose last pass failed: a failure is said once per spell, and its end. */
  readonly #failing = new Set<string>();
  /** [G1] Also collects the streams of writer ids no live broker writes as, that the hash gives this broker (a cluster's). */
  readonly #orphans: OrphanWriters | null;
  /** Objects each stream held after its last pass that listed it, by `writerId/epoch`. */
  readonly #heldByStream = new Map<string, number>();
  #timer: Timer | null = null;
  #pass: Promise<number> | null = null;
  #stopped = false;
  /** `progress` as the last pass that failed nowhere began, and when (monotonic ms); null: run the next pass. */
  #settled: { readonly progress: string; readonly atMs: number } | null = null;

  constructor(options: WalCollectorOptions) {
    this.#options = options;
    this.#orphans = options.orphans ?? null;
    this.#log = componentLogger(options.log, 'wal-gc');
    this.#reader = new WalReader(options.store, { ...DEFAULT_WAL_READER_CONFIG, prefix: options.prefix, wants: () => false }, { clock: options.clock, random: options.random });
    this.#indexes = new IndexCache(options.indexCacheObjects);
    this.#aboveSeal = new AboveSealClock(options.orphanDelayMs);
    this.#metrics = options.metrics === undefined ? null : new WalGcMetrics(options.metrics);
    this.#unknownIncarnations = new UnknownIncarnations(this.#log, this.#metrics?.unknownIncarnations ?? null);
  }

  start(): void {
    this.#schedule();
  }

  /** Stops the passes; one under way stops before its next delete. */
  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
  }

  /** One pass over this writer's streams (tests drive it); returns the objects deleted. A pass under way is shared. */
  collect(): Promise<number> {
    this.#pass ??= this.#collect().finally(() => (this.#pass = null));
    return this.#pass;
  }

  async #collect(): Promise<number> {
    const progress = this.#options.progress?.() ?? null;
    const atMs = this.#options.clock.monotonicMs();
    const { deleted, waiting } = await this.#collectAll();
    // A stream waiting on another broker's tiering frees objects without this broker's progress
    // changing: while one does, every pass runs (a takeover's next rebuild reads what it holds).
    this.#settled = progress !== null && this.#failing.size === 0 && waiting === 0 ? { progress, atMs } : null;
    return deleted;
  }

  /** Nothing changed since a pass that failed nowhere, and it was less than idlePassMs (GC_IDLE_PASS_MS) ago. */
  #idle(): boolean {
    const settled = this.#settled;
    if (settled === null || this.#options.progress === undefined) return false;
    return this.#options.progress() === settled.progress && this.#options.clock.monotonicMs() - settled.atMs < (this.#options.idlePassMs ?? GC_IDLE_PASS_MS);
  }

  async #collectAll(): Promise<{ deleted: number; waiting: number }> {
    const own = this.#options.writerId;
    const current = this.#options.currentEpoch();
    const orphans = this.#orphans === null ? [] : ((await this.#attempt('finding orphaned writers', `${own}\u0000orphans`, () => this.#orphans!.due())) ?? []);
    const writers = [{ writerId: own, current }, ...orphans.filter((writerId) => writerId !== own).map((writerId) => ({ writerId, current: null }))];
    const streams: StreamId[] = [];
    let deleted = 0;
    let held = 0;
    let waiting = 0;
    for (const { writerId, current: writing } of writers) {
      const pass = await this.#collectWriter(writerId, writing, streams);
      deleted += pass.deleted;
      held += pass.held;
      waiting += pass.waiting;
    }
    this.#aboveSeal.keepOnly(streams);
    this.#metrics?.heldObjects.set(held);
    return { deleted, waiting };
  }

  /** The streams of `writerId` (added to `seen`); `current`: the epoch it writes now, whose in-sync followers hold GC (null: none). */
  async #collectWriter(writerId: string, current: number | null, seen: StreamId[]): Promise<WriterPass> {
    const { store, prefix } = this.#options;
    const epochs = await this.#attempt(`listing the streams of ${writerId}`, writerId, () => listEpochs(store, prefix, writerId));
    if (epochs === null) return { deleted: 0, held: this.#lastHeld(writerId), waiting: 0 }; // unlisted: what it held last, never 0 (review finding 8)
    // An epoch above the one written now is a later process of this writer id's: this one is a zombie of it, and leaves it alone.
    const streams = epochs.filter((epoch) => current === null || epoch <= current).map((epoch): StreamId => ({ writerId, epoch }));
    seen.push(...streams);
    let deleted = 0;
    let held = 0;
    let waiting = 0;
    for (const stream of streams) {
      if (this.#stopped) break;
      const key = `${writerId}/${stream.epoch}`;
      const pass = await this.#attempt(`collecting stream ${key}`, key, () => this.#collectStream(stream, stream.epoch === current));
      if (pass !== null) this.#heldByStream.set(key, pass.held);
      deleted += pass?.deleted ?? 0;
      held += pass?.held ?? this.#heldByStream.get(key) ?? 0;
      if (pass !== null && stream.epoch !== current && !pass.drained) waiting++;
    }
    for (const key of this.#heldByStream.keys()) if (key.startsWith(`${writerId}/`) && !streams.some((stream) => key === `${writerId}/${stream.epoch}`)) this.#heldByStream.delete(key);
    return { deleted, held, waiting };
  }

  /** What the streams of `writerId` held at their last pass that listed them (the gauge while a listing fails). */
  #lastHeld(writerId: string): number {
    let held = 0;
    for (const [key, count] of this.#heldByStream) if (key.startsWith(`${writerId}/`)) held += count;
    return held;
  }

  /**
   * [G4] From the floor up, in order, while GI1 allows; then [G6] above the seal once everything
   * below it is gone. The run to delete is judged first, its end marked as the stream's floor
   * (markFloor), and only then deleted, one object at a time: a seal put since at a slot of the run
   * is then found void by its sealer ([F2], review finding 1), never taken for the stream's end.
   */
  async #collectStream(stream: StreamId, current: boolean): Promise<StreamPass> {
    const { store, prefix } = this.#options;
    const listing = await listStream(store, prefix, stream);
    const leftovers = await this.#deleteBelowMark(stream, listing);
    if (listing.floor === null) return { deleted: leftovers, held: 0, drained: true };
    const coverage = new CoverageRound(this.#options.coverage, current, this.#unknownIncarnations.report);
    let keep = listing.floor; // the first object that stays
    let sealAt: number | null = null;
    let failure: unknown = null; // a read that failed ends the run there: what was judged before it still goes
    const ahead = new Map<number, Promise<ObjectIndex | null>>();
    const indexOf = (sequence: number): Promise<ObjectIndex | null> => {
      for (let next = sequence; next < sequence + GC_INDEX_READ_AHEAD && listing.sizes.has(next); next++) {
        if (!ahead.has(next)) {
          const read = this.#index(stream, next);
          read.catch(() => {}); // a read ahead that fails is awaited, and throws, only if judging reaches it
          ahead.set(next, read);
        }
      }
      const read = ahead.get(sequence)!;
      ahead.delete(sequence);
      return read;
    };
    try {
      for (; listing.sizes.has(keep) && !this.#stopped; keep++) {
        const index = await indexOf(keep);
        if (index === null) break; // another collector took it: the next pass lists again
        if (index.kind === 'seal') {
          sealAt = keep;
          break;
        }
        // Never the highest object of a stream not sealed, nor one just below a hole: [F1] seals at the
        // first free slot above the floor, so the floor must stay contiguous up to the stream's end.
        if (!listing.sizes.has(keep + 1)) break;
        if (!(await coverage.allCovered(index.entries))) break;
      }
    } catch (error) {
      failure = error;
    }
    await Promise.allSettled(ahead.values()); // no stray GETs outlive the pass
    const deleted = await this.#deleteRun(stream, listing, keep);
    if (failure !== null) throw failure;
    if (sealAt !== null && deleted === sealAt - listing.floor) return this.#collectAboveSeal(stream, sealAt, listing, leftovers + deleted);
    return { deleted: leftovers + deleted, held: listing.sizes.size - deleted, drained: false };
  }

  /**
   * What lies below the stream's highest floor mark goes first, in order: objects a pass that
   * stopped part way had judged, and a void seal ([F2]) its sealer did not live to delete. No
   * reader sees them (listSequences starts at the mark), so none can take that seal for the end.
   */
  async #deleteBelowMark(stream: StreamId, listing: StreamListing): Promise<number> {
    let deleted = 0;
    for (const { sequence, sizeBytes } of listing.belowMark) {
      if (this.#stopped) break;
      await this.#delete(stream, sequence, sizeBytes);
      deleted++;
    }
    return deleted;
  }

  /** Marks `keep` as the floor, then deletes the stream's objects below it in sequence order (GI2), then the older marks. */
  async #deleteRun(stream: StreamId, listing: StreamListing, keep: number): Promise<number> {
    const { store, prefix } = this.#options;
    if (listing.floor === null || keep <= listing.floor || this.#stopped) return 0;
    await markFloor(store, prefix, stream, keep);
    let deleted = 0;
    for (let sequence = listing.floor; sequence < keep && !this.#stopped; sequence++) {
      await this.#delete(stream, sequence, listing.sizes.get(sequence)!);
      deleted++;
    }
    if (deleted === keep - listing.floor) await dropFloorMarksBelow(store, prefix, stream, keep);
    return deleted;
  }

  /** [G6] A fenced writer's late puts above the seal: garbage once nothing below the seal is left, after the delay. */
  async #collectAboveSeal(stream: StreamId, sealSequence: number, listing: StreamListing, deletedBelow: number): Promise<StreamPass> {
    const above = [...listing.sizes.keys()].filter((sequence) => sequence > sealSequence).sort((a, b) => a - b);
    let deleted = deletedBelow;
    if (above.length > 0 && this.#aboveSeal.due(stream, this.#options.clock.monotonicMs())) {
      for (const sequence of above) {
        if (this.#stopped) break;
        await this.#delete(stream, sequence, listing.sizes.get(sequence)!);
        deleted++;
      }
    }
    return { deleted, held: listing.sizes.size - deleted, drained: true };
  }

  /** The object's footer index, read once per object (objects are immutable); null when it is gone. */
  async #index(stream: StreamId, sequence: number): Promise<ObjectIndex | null> {
    const cached = this.#indexes.get(stream, sequence);
    if (cached !== undefined) return cached;
    const read = await this.#reader.readIndex(stream, sequence);
    if (read.kind === 'absent') return null;
    const index: ObjectIndex = read.kind === 'seal' ? { kind: 'seal' } : { kind: 'data', entries: read.entries };
    this.#indexes.set(stream, sequence, index);
    return index;
  }

  async #delete(stream: StreamId, sequence: number, sizeBytes: number): Promise<void> {
    try {
      await this.#options.store.delete(walObjectKey(this.#options.prefix, stream, sequence));
    } catch (error) {
      if (!isStoreError(error, 'NotFound')) throw error; // idempotent: another collector got there first
    }
    this.#indexes.forget(stream, sequence);
    this.#metrics?.deletedObjects.add();
    this.#metrics?.deletedBytes.add(sizeBytes);
  }

  /** `run`, or null when it failed: said once per spell of failures of `what`, retried at the next pass. */
  async #attempt<T>(what: string, key: string, run: () => Promise<T>): Promise<T | null> {
    try {
      const outcome = await run();
      if (this.#failing.delete(key)) this.#log.info({ step: what }, `WAL garbage collection: ${what} works again`);
      return outcome;
    } catch (error) {
      if (this.#stopped) return null; // the engine is closing: its store may be closed under the pass
      if (!this.#failing.has(key))
        this.#log.error({ step: what, err: error }, `WAL garbage collection: ${what} failed (retried every pass; said once): ${error instanceof Error ? error.message : String(error)}`);
      this.#failing.add(key);
      this.#metrics?.failures.add();
      return null;
    }
  }

  #schedule(): void {
    if (this.#stopped) return;
    const intervalMs = this.#options.intervalMs ?? GC_INTERVAL_MS;
    assert(intervalMs > 0, 'the WAL collector runs at a positive interval');
    this.#timer = this.#options.clock.setTimer(
      intervalMs,
      () => {
        if (this.#idle()) return this.#schedule();
        void this.collect().finally(() => this.#schedule());
      },
      true,
    );
  }
}
