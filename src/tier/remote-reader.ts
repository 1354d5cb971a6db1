import { firstRecordAtOrAfter, type TimestampAndOffset } from '../format/timestamp-lookup.ts';
import { CorruptObjectError, FerryError } from '../errors.ts';
import type { RecordBatch } from '../format/record-batch.ts';
import { isStoreError } from '../store/errors.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { assert } from '../util/assert.ts';
import type { Clock } from '../util/clock.ts';
import type { Uuid } from '../util/uuid.ts';
import { ChunkCache, type TieredSegmentRef } from './chunk-cache.ts';
import { tieredPartitionPrefix, tieredSegmentKey } from './keys.ts';
import { SegmentBatchWalk } from './segment-batch-walk.ts';
import { offsetForTimestamp as timeIndexLookup, positionFor } from './segment-indexes.ts';
import { TIERED_SECTION_KINDS, type TieredSectionRef, type TieredSegmentSummary } from './segment-object.ts';
import { type CopiedSegment, copiedSegments, type TierRecord, type TierRecords, tieredEnd } from './tier-record.ts';

/** Bytes of log per ranged GET [D2]: one S3 request's worth (cost per GET against bytes read and never served). */
export const TIER_CHUNK_BYTES = 1024 * 1024;
/** Bytes of chunks and index sections a broker keeps for remote reads: 64 chunks. */
export const TIER_CACHE_BYTES = 64 * 1024 * 1024;
/** Remote GETs under way at once per reader [D2]: each may hold a chunk in memory. */
export const TIER_READS_IN_FLIGHT = 16;
/** How long a cached tier record answers logStartOffset/tieredEnd before it is read again (a read outside it re-reads at once). */
export const TIER_RECORD_REFRESH_MS = 5000;
/** Tries of one read that finds its segment object gone (retention removed it after the record was read) before it reports it. */
export const TIER_READ_ATTEMPTS_MAX = 2;

assert(TIER_CHUNK_BYTES <= TIER_CACHE_BYTES, 'the chunk cache holds at least one chunk');

export interface RemoteReaderOptions {
  /** The tier (S3 Standard in production). */
  readonly store: ObjectStore;
  /** The tierer's prefix: segment keys are `<prefix>/tier/...`. */
  readonly prefix: string;
  readonly records: TierRecords;
  /** Only its monotonic time is used, to age cached tier records. */
  readonly clock: Clock;
  readonly chunkBytes?: number;
  readonly cacheBytes?: number;
  readonly readsInFlight?: number;
  /** Chunks fetched ahead of a read (ChunkCache, TIER_READ_AHEAD_CHUNKS by default). */
  readonly readAheadChunks?: number;
  readonly recordRefreshMs?: number;
}

export interface RemoteReadResult {
  /** Whole batches, the one holding the offset first, all from one tiered segment; views of cached bytes (never written into). */
  readonly batches: RecordBatch[];
  /** LS: the tier record's start. */
  readonly logStartOffset: number;
  /** TE: offsets from here on are not in the tier. */
  readonly tieredEnd: number;
}

/** A tier record as read, with its copied segments (the ones that serve reads) and when it was read. */
interface CachedRecord {
  readonly record: TierRecord;
  readonly copied: readonly CopiedSegment[];
  readonly readAtMs: number;
}

/**
 * Reads offsets below the tiered end from the tier (docs/tier-protocol.md [D2], [D3]): the tier
 * record (cached per partition) names the copied segment holding an offset, its offset index
 * (one ranged GET, verified, cached) gives the position, and chunkBytes-aligned ranged GETs of
 * its log section through a byte-bounded LRU give the batches, each checked before it is served.
 */
export class RemoteReader {
  readonly #prefix: string;
  readonly #records: TierRecords;
  readonly #clock: Clock;
  readonly #refreshMs: number;
  readonly #chunks: ChunkCache;
  readonly #cached = new Map<string, CachedRecord>();
  /** When peekLogStartOffset last started a background read of each partition's record (monotonic ms). */
  readonly #peekReadsMs = new Map<string, number>();
  readonly #recordReads = new Map<string, Promise<CachedRecord>>();

  constructor(options: RemoteReaderOptions) {
    this.#prefix = options.prefix;
    this.#records = options.records;
    this.#clock = options.clock;
    this.#refreshMs = options.recordRefreshMs ?? TIER_RECORD_REFRESH_MS;
    const chunkBytes = options.chunkBytes ?? TIER_CHUNK_BYTES;
    const cacheBytes = options.cacheBytes ?? TIER_CACHE_BYTES;
    this.#chunks = new ChunkCache({
      store: options.store,
      chunkBytes,
      cacheBytes,
      readsInFlight: options.readsInFlight ?? TIER_READS_IN_FLIGHT,
      ...(options.readAheadChunks === undefined ? {} : { readAheadChunks: options.readAheadChunks }),
    });
  }

  /** Bytes the chunk cache holds now: never above cacheBytes. */
  get cachedBytes(): number {
    return this.#chunks.heldBytes;
  }

  /** Batches served by joining chunks into a new buffer (they spanned a chunk boundary). */
  get spanningCopies(): number {
    return this.#chunks.spanningCopies;
  }

  /**
   * [D2] The whole batches from the one holding `offset` on, as a local log read gives them (the
   * first even when it alone exceeds maxBytes, then more while the total fits), never past the
   * end of the tiered segment holding it. OffsetOutOfRange outside [LS, TE) (and for an offset
   * that is no integer); CorruptObject for bytes that fail a check (nothing of them is served).
   * A maxBytes of 0 or less gives the one batch holding the offset, as locally.
   */
  read(topicId: Uuid, partition: number, offset: number, maxBytes: number): Promise<RemoteReadResult> {
    return this.#withSegment(topicId, partition, offset, async (cached, segment) => ({
      batches: await this.#readFrom(segment, offset, maxBytes),
      logStartOffset: cached.record.startOffset,
      tieredEnd: tieredEnd(cached.record),
    }));
  }

  /**
   * [D3] The first record (at or above LS) whose timestamp reaches `timestamp`, among the tiered
   * segments: the first whose maxTimestamp reaches it, its time index, then a scan of batches
   * from that entry, and of the records of the first batch that reaches it. Null if none does.
   * `fromOffset`: the search starts there when it is above LS (the log start DeleteRecords set,
   * which the record may lag).
   */
  async offsetForTimestamp(topicId: Uuid, partition: number, timestamp: number, fromOffset = 0): Promise<TimestampAndOffset | null> {
    let cached = await this.#record(topicId, partition);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#offsetForTimestampIn(cached, topicId, partition, timestamp, fromOffset);
      } catch (error) {
        if (!isStoreError(error, 'NotFound') || attempt >= TIER_READ_ATTEMPTS_MAX) throw error;
        cached = await this.#readRecord(topicId, partition, false); // retention took a segment after the record was read
      }
    }
  }

  /** The end of what is tiered (the offset after the last one copied); null if nothing is. */
  async tieredEndOffset(topicId: Uuid, partition: number): Promise<number | null> {
    const cached = await this.#record(topicId, partition);
    return cached.copied.length === 0 ? null : tieredEnd(cached.record);
  }

  /**
   * LS as the tier says: the record's start if it has copied segments, else null (nothing tiered).
   * `fresh`: from a read started now, not a record read within the refresh interval, which may
   * predate a copy that the local log has since let go of (DeleteRecords' answer needs that).
   */
  async logStartOffset(topicId: Uuid, partition: number, fresh = false): Promise<number | null> {
    const cached = fresh ? await this.#readRecord(topicId, partition, false) : await this.#record(topicId, partition);
    return cached.copied.length === 0 ? null : cached.record.startOffset;
  }

  /**
   * LS as last read, without waiting (a local Fetch answers at once): the cached record's start if
   * it has copied segments, else null. A record missing or older than the refresh interval is read
   * again in the background (one read shared with any other), for the answers after this one.
   */
  peekLogStartOffset(topicId: Uuid, partition: number): number | null {
    const cached = this.#peek(topicId, partition);
    return cached === undefined || cached.copied.length === 0 ? null : cached.record.startOffset;
  }

  /**
   * TE as last read, without waiting, refreshed in the background as peekLogStartOffset: null
   * before the record was first read. TE only grows within an incarnation, so a stale answer is
   * below the true one: what a follower's local retention may delete below [D1].
   */
  peekTieredEnd(topicId: Uuid, partition: number): number | null {
    const cached = this.#peek(topicId, partition);
    return cached === undefined ? null : tieredEnd(cached.record);
  }

  /** The cached record, starting a background read when it is missing or old (at most one per refresh interval). */
  #peek(topicId: Uuid, partition: number): CachedRecord | undefined {
    const key = partitionKey(topicId, partition);
    const nowMs = this.#clock.monotonicMs();
    const triedMs = this.#peekReadsMs.get(key);
    // At most one background read per refresh interval: while the tier is down, every Fetch would start one.
    if (this.#youngRecord(topicId, partition) === undefined && (triedMs === undefined || nowMs - triedMs >= this.#refreshMs)) {
      this.#peekReadsMs.set(key, nowMs);
      this.#readRecord(topicId, partition, true).catch(() => {}); // a failed read is tried again an interval later
    }
    return this.#cached.get(key);
  }

  /** TE: the end of the tier's copied run (its start when nothing is copied). */
  async tieredEnd(topicId: Uuid, partition: number): Promise<number> {
    return tieredEnd((await this.#record(topicId, partition)).record);
  }

  /** Drops what is cached of a partition (its topic was deleted). */
  forget(topicId: Uuid, partition: number): void {
    const key = partitionKey(topicId, partition);
    this.#cached.delete(key);
    this.#recordReads.delete(key);
    this.#peekReadsMs.delete(key);
    this.#chunks.forget(tieredPartitionPrefix(this.#prefix, topicId, partition));
  }

  /**
   * Runs `read` on the copied segment holding `offset`. A cached record that does not cover it
   * is read again once before OffsetOutOfRange; a segment object gone (NotFound: retention after
   * the record was read) reads the record again and answers from the new one.
   */
  async #withSegment<T>(topicId: Uuid, partition: number, offset: number, read: (cached: CachedRecord, segment: TieredSegmentRef) => Promise<T>): Promise<T> {
    const young = this.#youngRecord(topicId, partition);
    let fresh = young === undefined;
    let cached = young ?? (await this.#readRecord(topicId, partition, true));
    for (let attempt = 1; ; attempt++) {
      let segment = segmentHolding(cached, offset);
      if (segment === null && !fresh) {
        cached = await this.#readRecord(topicId, partition, true); // the record may have moved on since it was cached
        fresh = true;
        segment = segmentHolding(cached, offset);
      }
      if (segment === null) throw outOfRange(topicId, partition, offset, cached.record);
      const ref = this.#refOf(topicId, partition, segment);
      try {
        return await read(cached, ref);
      } catch (error) {
        if (!isStoreError(error, 'NotFound')) throw error;
        this.#chunks.forget(ref.key);
        if (attempt >= TIER_READ_ATTEMPTS_MAX) throw new FerryError('Storage', `tiered segment ${ref.key} is gone, though the tier record read again still names it`, { cause: error });
        cached = await this.#readRecord(topicId, partition, false);
        fresh = true;
      }
    }
  }

  /** The batches from the one holding `offset`: skip to it from its offset index entry, then take whole batches while they fit. */
  async #readFrom(segment: TieredSegmentRef, offset: number, maxBytes: number): Promise<RecordBatch[]> {
    const walk = new SegmentBatchWalk(this.#chunks, segment, positionFor(await this.#chunks.indexSection(segment, 'offsetIndex'), offset));
    let frame = await walk.frame();
    while (frame.lastOffset < offset) {
      walk.advance(frame);
      frame = await walk.frame();
    }
    const batches: RecordBatch[] = [];
    let takenBytes = 0;
    for (;;) {
      batches.push(await walk.batch(frame));
      takenBytes += frame.sizeBytes;
      walk.advance(frame);
      if (walk.atEnd) return batches;
      frame = await walk.frame();
      if (takenBytes + frame.sizeBytes > maxBytes) return batches;
    }
  }

  async #offsetForTimestampIn(cached: CachedRecord, topicId: Uuid, partition: number, timestamp: number, fromOffset: number): Promise<TimestampAndOffset | null> {
    const startOffset = Math.max(cached.record.startOffset, fromOffset);
    for (const segment of cached.copied) {
      if (segment.maxTimestamp < timestamp || segment.endOffset <= startOffset) continue;
      const ref = this.#refOf(topicId, partition, segment);
      const entryOffset = timeIndexLookup(await this.#chunks.indexSection(ref, 'timeIndex'), timestamp);
      if (entryOffset === null) continue; // the footer said some batch reaches it and the index disagrees: look further rather than answer wrong
      const found = await this.#scanForTimestamp(ref, Math.max(entryOffset, startOffset), timestamp, startOffset);
      if (found !== null) return found;
    }
    return null;
  }

  /** The first record at or above `floor` whose timestamp reaches `timestamp`, in batches holding an offset at or above `from`, in this segment. */
  async #scanForTimestamp(segment: TieredSegmentRef, from: number, timestamp: number, floor: number): Promise<TimestampAndOffset | null> {
    const walk = new SegmentBatchWalk(this.#chunks, segment, positionFor(await this.#chunks.indexSection(segment, 'offsetIndex'), from));
    while (!walk.atEnd) {
      const frame = await walk.frame();
      if (frame.lastOffset >= from && frame.maxTimestamp >= timestamp) {
        const found = firstRecordAtOrAfter(await walk.batch(frame), timestamp, floor); // its CRC vouches for the records read
        if (found !== null) return found;
      }
      walk.advance(frame);
    }
    return null;
  }

  /** The partition's record: the cached one while younger than the refresh interval, else read again. */
  async #record(topicId: Uuid, partition: number): Promise<CachedRecord> {
    return this.#youngRecord(topicId, partition) ?? (await this.#readRecord(topicId, partition, true));
  }

  #youngRecord(topicId: Uuid, partition: number): CachedRecord | undefined {
    const cached = this.#cached.get(partitionKey(topicId, partition));
    return cached !== undefined && this.#clock.monotonicMs() - cached.readAtMs < this.#refreshMs ? cached : undefined;
  }

  /**
   * Reads the record and caches it. With `join`, a read of it already under way answers instead
   * (concurrent readers share one GET); without, the read starts now (a segment found gone must
   * be judged against a record read after it went).
   */
  #readRecord(topicId: Uuid, partition: number, join: boolean): Promise<CachedRecord> {
    const key = partitionKey(topicId, partition);
    const pending = this.#recordReads.get(key);
    if (join && pending !== undefined) return pending;
    const reading = this.#fetchRecord(topicId, partition, key);
    this.#recordReads.set(key, reading);
    const settled = (): void => {
      if (this.#recordReads.get(key) === reading) this.#recordReads.delete(key);
    };
    reading.then(settled, settled);
    return reading;
  }

  async #fetchRecord(topicId: Uuid, partition: number, key: string): Promise<CachedRecord> {
    const readAtMs = this.#clock.monotonicMs();
    const record = await this.#records.read(topicId, partition);
    const cached: CachedRecord = { record, copied: copiedSegments(record), readAtMs };
    // A forget while the read was under way (the topic deleted) wins: the answer serves its callers only.
    const held = this.#cached.get(key);
    if (this.#recordReads.has(key) && (held === undefined || held.readAtMs <= readAtMs)) this.#cached.set(key, cached);
    return cached;
  }

  #refOf(topicId: Uuid, partition: number, segment: CopiedSegment): TieredSegmentRef {
    const key = tieredSegmentKey(this.#prefix, topicId, partition, segment.baseOffset, segment.endOffset, segment.uploadId);
    return { key, summary: summaryOf(segment, key), epochs: segment.epochs };
  }
}

/** The copied segment holding `offset` at or above LS, by binary search (they are contiguous and sorted), or null. */
function segmentHolding({ record, copied }: CachedRecord, offset: number): CopiedSegment | null {
  if (!Number.isSafeInteger(offset) || offset < record.startOffset) return null; // retention keeps the segment holding LS whole: its offsets below LS are gone all the same
  let low = 0;
  let high = copied.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const segment = copied[middle]!;
    if (offset < segment.baseOffset) high = middle - 1;
    else if (offset >= segment.endOffset) low = middle + 1;
    else return segment;
  }
  return null;
}

/** The footer the tier record repeats, every section present (a record naming fewer is corrupt, not readable). */
function summaryOf(segment: CopiedSegment, key: string): TieredSegmentSummary {
  const sections: Partial<Record<string, TieredSectionRef>> = {};
  for (const kind of TIERED_SECTION_KINDS) {
    const section = segment.sections[kind];
    if (section === undefined) throw new CorruptObjectError('sections', 0, `the tier record's entry names no ${kind} section`, `tiered segment ${key}`);
    sections[kind] = section;
  }
  return { baseOffset: segment.baseOffset, endOffset: segment.endOffset, bytes: segment.bytes, maxTimestamp: segment.maxTimestamp, sections: sections as TieredSegmentSummary['sections'] };
}

function outOfRange(topicId: Uuid, partition: number, offset: number, record: TierRecord): FerryError {
  return new FerryError('OffsetOutOfRange', `offset ${offset} of ${topicId}/${partition} is outside the tier [${record.startOffset}, ${tieredEnd(record)})`);
}

function partitionKey(topicId: Uuid, partition: number): string {
  return `${topicId}\u0000${partition}`;
}
