import type { TierRecord } from '../tier/tier-record.ts';
import { tieredEnd } from '../tier/tier-record.ts';
import { regressed } from '../util/regressions.ts';
import type { Uuid } from '../util/uuid.ts';
import type { WalFrameEntry } from '../wal/format.ts';

/** What the control records say of a topic incarnation (CoverageSources.incarnationState). */
export type IncarnationState = 'live' | 'deleted' | 'unknown';

/** Told of each incarnation a pass found frames of with no record of it at all: those frames stay (DI1). */
export type UnknownIncarnationReport = (topic: string, topicId: Uuid) => void;

/**
 * What GI1 (docs/tier-protocol.md) asks about the frames of a WAL object, from fresh reads of the
 * store and of this broker's leader state. One per broker; the collector opens a `CoverageRound`
 * of it for each stream it walks.
 */
export interface CoverageSources {
  /** The partition's tier record as the store holds it now (TE only grows, so any later read is as safe). */
  readTierRecord(topicId: Uuid, partition: number): Promise<TierRecord>;
  /**
   * What the control records say of the topic incarnation (DI1, docs/tier-protocol.md): `deleted`
   * only when its deletion record was read; `live` when its topic is known to name it (a cluster's
   * topic record, a single engine's registry); `unknown` otherwise (a broker on an empty disk, an
   * incarnation of another engine sharing the bucket, one deleted before deletion records existed).
   * Only `deleted` lets a frame go for its incarnation's sake.
   */
  incarnationState(topic: string, topicId: Uuid): Promise<IncarnationState>;
  /** KIP-405's remote.storage.enable: a topic that does not tier has its WAL as its only durable copy beyond the leader's disk. */
  tieringEnabled(topic: string): boolean;
  /**
   * For the stream this broker writes now: the lowest log end any in-sync follower of the
   * partition reported (Infinity with none in sync), or null when the partition is not led here
   * (then nobody vouches for its followers, and its frames stay).
   */
  inSyncFollowersEnd(topicId: Uuid, partition: number): number | null;
}

/**
 * GI1 for the frames of one stream during one collector pass. Reads are made lazily, on the first
 * frame that needs them, so each is made after the index that named its partition was read, and
 * memoised for the pass: a deleted incarnation stays deleted, and TE only grows.
 */
export class CoverageRound {
  readonly #sources: CoverageSources;
  /** Whether the stream is being written now: its in-sync followers must have applied past a frame too. */
  readonly #current: boolean;
  readonly #states = new Map<string, Promise<IncarnationState>>();
  readonly #tieredEnds = new Map<string, Promise<number>>();
  readonly #reportUnknown: UnknownIncarnationReport;

  constructor(sources: CoverageSources, current: boolean, reportUnknown: UnknownIncarnationReport = () => {}) {
    this.#sources = sources;
    this.#current = current;
    this.#reportUnknown = reportUnknown;
  }

  /** Whether every frame of an object may go (GI1); false at the first that must stay. */
  async allCovered(entries: readonly WalFrameEntry[]): Promise<boolean> {
    for (const entry of entries) if (!(await this.covered(entry))) return false;
    return true;
  }

  /**
   * GI1 for one frame: its incarnation has a deletion record (DI1), or it lies below TE and every
   * in-sync follower of a partition led here applied past it. A frame of an incarnation no record
   * names at all stays, and is reported.
   */
  async covered(entry: WalFrameEntry): Promise<boolean> {
    const state = await this.#incarnationState(entry.topic, entry.topicId);
    if (state === 'deleted') return true;
    if (state === 'unknown') {
      this.#reportUnknown(entry.topic, entry.topicId);
      return false;
    }
    if (!this.#sources.tieringEnabled(entry.topic)) return false;
    const tiered = regressed('gc-frame-covered-by-first-offset') ? entry.baseOffset : entry.lastOffset; // the regression: a frame TE falls inside counts as tiered
    if (tiered >= (await this.#tieredEnd(entry.topicId, entry.partition))) return false;
    // Every in-sync follower of a partition led here applied past it, whichever of this writer's
    // streams holds it: after a new writer epoch [C7] the followers still read the previous one
    // (review finding 6). Not led here: the current stream keeps it (nobody vouches for its
    // followers); an earlier one lets it go by TE alone (its leader's followers tail the leader's stream).
    const followersEnd = this.#sources.inSyncFollowersEnd(entry.topicId, entry.partition);
    if (followersEnd === null) return !this.#current;
    return followersEnd > entry.lastOffset;
  }

  #incarnationState(topic: string, topicId: Uuid): Promise<IncarnationState> {
    const key = `${topic}\u0000${topicId}`;
    let read = this.#states.get(key);
    if (read === undefined) this.#states.set(key, (read = this.#sources.incarnationState(topic, topicId)));
    return read;
  }

  #tieredEnd(topicId: Uuid, partition: number): Promise<number> {
    const key = `${topicId}\u0000${partition}`;
    let read = this.#tieredEnds.get(key);
    if (read === undefined) this.#tieredEnds.set(key, (read = this.#sources.readTierRecord(topicId, partition).then(tieredEnd)));
    return read;
  }
}
