import { FerryError } from '../errors.ts';
import type { ControlStore, Versioned } from '../control/control-store.ts';
import type { EpochEntry } from '../log/leader-epoch-cache.ts';
import { assert } from '../util/assert.ts';
import { isUuid, type Uuid } from '../util/uuid.ts';

/**
 * Segments one tier record holds at most (docs/tier-protocol.md, "The tier record"): 10 TB of
 * history at the default 1 GiB segment.bytes, about 2 MB of record. A partition that reaches it
 * tiers nothing more (its WAL is then not collected) and says so.
 */
export const TIERED_SEGMENTS_MAX = 10_000;
/** Compare-and-swap rounds a tier record change may lose (to a deposed leader's last write) before it reports the race. */
const TIER_RECORD_ATTEMPTS_MAX = 10;

/** Where a section of a tiered segment object lies, and its XXH64 (decimal: JSON has no 64-bit integers). */
export interface SectionRef {
  readonly position: number;
  readonly length: number;
  readonly checksum: string;
}

/** What a `copied` entry knows of its object, read back whole [T5]. */
export interface CopiedDetails {
  /** [T8] How many merges made it: absent (0) for a range tiered from the log, one past the highest of those it replaced for a merge. */
  readonly level?: number;
  readonly bytes: number;
  readonly maxTimestamp: number;
  /** The leader epochs in effect in [base, end): the entry in effect at base, then those starting inside. */
  readonly epochs: readonly EpochEntry[];
  readonly sections: Readonly<Record<string, SectionRef>>;
}

/** One tiered segment of a partition: announced (`copying`, [T3]) or whole and counting (`copied`, [T5]). */
export type TieredSegmentEntry =
  | { readonly state: 'copying'; readonly baseOffset: number; readonly endOffset: number; readonly uploadId: string; readonly leaderEpoch: number }
  | ({ readonly state: 'copied'; readonly baseOffset: number; readonly endOffset: number; readonly uploadId: string; readonly leaderEpoch: number } & CopiedDetails);

export type CopiedSegment = Extract<TieredSegmentEntry, { state: 'copied' }>;

/** `tier/<topicId>/<partition>`: one partition's tiered history (docs/tier-protocol.md). */
export interface TierRecord {
  /** TI2: the epoch of the last leader that took the record [T1]; only it writes. */
  readonly leaderEpoch: number;
  /** The log start for clients: offsets below are gone (retention, [T7]). */
  readonly startOffset: number;
  /** By base offset; `copied` ones contiguous from `startOffset`, `copying` ones at or past their end. */
  readonly segments: readonly TieredSegmentEntry[];
  /**
   * [T8] An upload under way of one object for [base, end), which copied segments tile now (two or
   * more, tiered from inside an active segment): on commit it replaces them. Absent: none.
   */
  readonly merging?: { readonly baseOffset: number; readonly endOffset: number; readonly uploadId: string; readonly leaderEpoch: number };
}

export const EMPTY_TIER_RECORD: TierRecord = { leaderEpoch: -1, startOffset: 0, segments: [] };

/** TE: the end of the contiguous run of copied segments from the record's start (the start itself when none). */
export function tieredEnd(record: TierRecord): number {
  let end = record.startOffset;
  for (const segment of record.segments) {
    if (segment.state !== 'copied' || segment.baseOffset > end) break;
    end = Math.max(end, segment.endOffset);
  }
  return end;
}

/** The copied segments that serve reads: those of the contiguous run, oldest first. */
export function copiedSegments(record: TierRecord): CopiedSegment[] {
  const copied: CopiedSegment[] = [];
  let end = record.startOffset;
  for (const segment of record.segments) {
    if (segment.state !== 'copied' || segment.baseOffset > end) break;
    copied.push(segment);
    end = segment.endOffset;
  }
  return copied;
}

/**
 * [T8] The copied segments that tile [base, end) exactly (the first starts at base, the last ends at
 * end), when they are two or more: what one merged object may replace. Null otherwise.
 */
export function tilingSegments(record: TierRecord, baseOffset: number, endOffset: number): CopiedSegment[] | null {
  const inside = copiedSegments(record).filter((segment) => segment.baseOffset >= baseOffset && segment.endOffset <= endOffset);
  if (inside.length < 2 || inside[0]!.baseOffset !== baseOffset || inside.at(-1)!.endOffset !== endOffset) return null;
  return inside;
}

/** Every upload id the record names: its segments' and a merge's under way (TI3: their objects are not orphans). */
export function namedUploadIds(record: TierRecord): Set<string> {
  const named = new Set(record.segments.map((segment) => segment.uploadId));
  if (record.merging !== undefined) named.add(record.merging.uploadId);
  return named;
}

/** Where the tier records live among the control records. */
const TIER_RECORDS_PREFIX = 'tier/';

export function tierRecordKey(topicId: Uuid, partition: number): string {
  return `${TIER_RECORDS_PREFIX}${topicId}/${partition}`;
}

/**
 * The tier records of one cluster (or one broker's store), each changed by compare-and-swap by
 * the partition's leader only (TI2): a change names the leader epoch it is made in, and is
 * refused (NotLeader, nothing written) once the record was taken in a later epoch.
 */
export class TierRecords {
  readonly #control: ControlStore;

  constructor(control: ControlStore) {
    this.#control = control;
  }

  async read(topicId: Uuid, partition: number): Promise<TierRecord> {
    return (await this.#control.read<TierRecord>(tierRecordKey(topicId, partition)))?.value ?? EMPTY_TIER_RECORD;
  }

  /** Every partition with a tier record, of every incarnation (the records' keys, one LIST). */
  async list(): Promise<{ topicId: Uuid; partition: number }[]> {
    const partitions: { topicId: Uuid; partition: number }[] = [];
    for (const key of await this.#control.list(TIER_RECORDS_PREFIX)) {
      const [topicId, partition] = key.slice(TIER_RECORDS_PREFIX.length).split('/');
      if (topicId !== undefined && isUuid(topicId) && partition !== undefined && /^(0|[1-9]\d{0,9})$/.test(partition)) partitions.push({ topicId, partition: Number(partition) });
    }
    return partitions;
  }

  /** Deletes the record of a deleted topic incarnation (its objects deleted first): nobody leads it again. */
  async remove(topicId: Uuid, partition: number): Promise<void> {
    await this.#control.delete(tierRecordKey(topicId, partition));
  }

  /**
   * [T1] Takes the record in `leaderEpoch`: from now on a leader of an older epoch writes
   * nothing to it. Uploads announced in older epochs are dropped (they died with their leaders;
   * their objects are orphans, [T6]). Returns the record as taken; NotLeader if a later epoch
   * took it first (this broker is deposed).
   */
  async take(topicId: Uuid, partition: number, leaderEpoch: number): Promise<TierRecord> {
    return (await this.takeOver(topicId, partition, leaderEpoch)).record;
  }

  /** take, also saying whether this take moved the record from an earlier leader's epoch (a new leader inherits a tail, [T2]). */
  async takeOver(topicId: Uuid, partition: number, leaderEpoch: number): Promise<{ record: TierRecord; fromEarlierLeader: boolean }> {
    let earlier = false;
    const record = await this.#change(topicId, partition, 'take', (found) => {
      if (found.leaderEpoch > leaderEpoch) throw deposed(topicId, partition, found, leaderEpoch);
      earlier = found.leaderEpoch !== EMPTY_TIER_RECORD.leaderEpoch && found.leaderEpoch < leaderEpoch;
      if (found.leaderEpoch === leaderEpoch) return null;
      return { leaderEpoch, startOffset: found.startOffset, segments: found.segments.filter((segment) => segment.state === 'copied') }; // a merge under way died with its leader too
    });
    return { record, fromEarlierLeader: earlier };
  }

  /** [T3] Announces an upload of [base, end) before its object is written (TI3). `base` must be the tiered end. */
  announce(topicId: Uuid, partition: number, leaderEpoch: number, entry: { baseOffset: number; endOffset: number; uploadId: string }): Promise<TierRecord> {
    assert(entry.endOffset > entry.baseOffset, `a tiered segment ${entry.baseOffset}..${entry.endOffset} holds offsets`);
    return this.#change(topicId, partition, 'announce', (record) => {
      requireHeld(record, leaderEpoch, topicId, partition);
      const end = tieredEnd(record);
      if (entry.baseOffset !== end) throw new FerryError('InvalidOffsets', `tiered segment ${entry.baseOffset}..${entry.endOffset} of ${topicId}/${partition} does not start at the tiered end ${end}`);
      if (record.segments.length >= TIERED_SEGMENTS_MAX)
        throw new FerryError('InvalidArgument', `${topicId}/${partition} holds ${TIERED_SEGMENTS_MAX} tiered segments, the most a tier record takes: raise segment.bytes or lower retention`);
      const others = record.segments.filter((segment) => !(segment.state === 'copying' && segment.baseOffset === entry.baseOffset));
      return { ...record, segments: sortedByBase([...others, { state: 'copying', ...entry, leaderEpoch }]) };
    });
  }

  /**
   * [T5] The upload `uploadId` is whole (its object read back): its entry counts from now on.
   * NotLeader if the entry is gone (a later epoch dropped it).
   */
  commit(topicId: Uuid, partition: number, leaderEpoch: number, uploadId: string, details: CopiedDetails): Promise<TierRecord> {
    return this.#change(topicId, partition, 'commit', (record) => {
      requireHeld(record, leaderEpoch, topicId, partition);
      const announced = record.segments.find((segment) => segment.uploadId === uploadId);
      if (announced === undefined) throw new FerryError('NotLeader', `tiered segment upload ${uploadId} of ${topicId}/${partition} is no longer announced: a later leader dropped it`);
      if (announced.state === 'copied') return null; // an earlier attempt's answer was lost
      const copied: CopiedSegment = { state: 'copied', baseOffset: announced.baseOffset, endOffset: announced.endOffset, uploadId, leaderEpoch: announced.leaderEpoch, ...details };
      return { ...record, segments: record.segments.map((segment) => (segment === announced ? copied : segment)) };
    });
  }

  /**
   * [T8] Announces the upload of one object for [base, end) to replace the copied segments that
   * tile it (tilingSegments), before its object is written (TI3). InvalidOffsets if they do not.
   */
  announceMerge(topicId: Uuid, partition: number, leaderEpoch: number, entry: { baseOffset: number; endOffset: number; uploadId: string }): Promise<TierRecord> {
    return this.#change(topicId, partition, 'announce a merge', (record) => {
      requireHeld(record, leaderEpoch, topicId, partition);
      if (record.merging?.uploadId === entry.uploadId) return null;
      if (tilingSegments(record, entry.baseOffset, entry.endOffset) === null)
        throw new FerryError('InvalidOffsets', `no two or more tiered segments of ${topicId}/${partition} tile ${entry.baseOffset}..${entry.endOffset}`);
      return { ...record, merging: { ...entry, leaderEpoch } };
    });
  }

  /**
   * [T8] The merged object `uploadId` is whole (read back): it replaces the segments that tile its
   * range, which leave the record (their objects are orphans, [T6]). NotLeader if the merge is no
   * longer announced (a later epoch, or retention past its base, dropped it).
   */
  commitMerge(topicId: Uuid, partition: number, leaderEpoch: number, uploadId: string, details: CopiedDetails): Promise<TierRecord> {
    return this.#change(topicId, partition, 'commit a merge', (record) => {
      requireHeld(record, leaderEpoch, topicId, partition);
      const merging = record.merging;
      if (merging?.uploadId !== uploadId) {
        if (record.segments.some((segment) => segment.uploadId === uploadId)) return null; // an earlier attempt's answer was lost
        throw new FerryError('NotLeader', `tiered segment merge ${uploadId} of ${topicId}/${partition} is no longer announced`);
      }
      const tiling = tilingSegments(record, merging.baseOffset, merging.endOffset);
      assert(tiling !== null, `the segments merged into ${merging.baseOffset}..${merging.endOffset} of ${topicId}/${partition} changed while announced`);
      const level = Math.max(...tiling.map((segment) => segment.level ?? 0)) + 1;
      const merged: CopiedSegment = { state: 'copied', baseOffset: merging.baseOffset, endOffset: merging.endOffset, uploadId, leaderEpoch: merging.leaderEpoch, ...details, level };
      const replaced = new Set(tiling);
      return { leaderEpoch: record.leaderEpoch, startOffset: record.startOffset, segments: sortedByBase([...record.segments.filter((segment) => !replaced.has(segment as CopiedSegment)), merged]) };
    });
  }

  /** [T7] Retention: the log starts at `startOffset` now; copied segments wholly below it go (their objects are orphans), and a merge reaching below it. */
  expireBefore(topicId: Uuid, partition: number, leaderEpoch: number, startOffset: number): Promise<TierRecord> {
    return this.#change(topicId, partition, 'expire', (record) => {
      requireHeld(record, leaderEpoch, topicId, partition);
      if (startOffset <= record.startOffset) return null;
      assert(startOffset <= tieredEnd(record), `retention moves the start to ${startOffset}, past the tiered end ${tieredEnd(record)}`);
      const merging = record.merging !== undefined && record.merging.baseOffset >= startOffset ? { merging: record.merging } : {};
      return { leaderEpoch: record.leaderEpoch, startOffset, segments: record.segments.filter((segment) => segment.endOffset > startOffset), ...merging };
    });
  }

  /** Compare-and-swap of `change(record)` (null: nothing to write; a throw: refused), judged again on each version read. */
  async #change(topicId: Uuid, partition: number, what: string, change: (record: TierRecord) => TierRecord | null): Promise<TierRecord> {
    const key = tierRecordKey(topicId, partition);
    for (let attempt = 0; attempt < TIER_RECORD_ATTEMPTS_MAX; attempt++) {
      const current = await this.#control.read<TierRecord>(key);
      const record = current?.value ?? EMPTY_TIER_RECORD;
      const next = change(record);
      if (next === null) return record;
      if ((await this.#write(key, current, next)) !== null) return next;
    }
    throw new FerryError('Storage', `tier record ${key} (${what}): lost ${TIER_RECORD_ATTEMPTS_MAX} compare-and-swap rounds in a row`);
  }

  #write(key: string, current: Versioned<TierRecord> | null, next: TierRecord): Promise<Versioned<TierRecord> | null> {
    return current === null ? this.#control.create(key, next) : this.#control.replace(key, current, next);
  }
}

/** TI2: only the leader that took the record in `leaderEpoch` changes it. */
function requireHeld(record: TierRecord, leaderEpoch: number, topicId: Uuid, partition: number): void {
  if (record.leaderEpoch !== leaderEpoch) throw deposed(topicId, partition, record, leaderEpoch);
}

function deposed(topicId: Uuid, partition: number, record: TierRecord, leaderEpoch: number): FerryError {
  return new FerryError('NotLeader', `tier record of ${topicId}/${partition} is held in leader epoch ${record.leaderEpoch}, not ${leaderEpoch}`);
}

function sortedByBase(segments: TieredSegmentEntry[]): TieredSegmentEntry[] {
  return segments.sort((a, b) => a.baseOffset - b.baseOffset);
}
