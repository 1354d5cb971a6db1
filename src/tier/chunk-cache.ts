import type { EpochEntry } from '../log/leader-epoch-cache.ts';
import { CorruptObjectError } from '../errors.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { assert } from '../util/assert.ts';
import { ByteLru } from './byte-lru.ts';
import { readIndexRange } from './segment-indexes.ts';
import { type TieredSegmentSummary, verifySection } from './segment-object.ts';
import { Semaphore } from './semaphore.ts';

/** One copied tiered segment as a reader needs it: its object's key and its footer (from the tier record). */
export interface TieredSegmentRef {
  readonly key: string;
  readonly summary: TieredSegmentSummary;
  /** The leader epochs in effect in the segment (its tier record entry): each batch must carry the one at its base offset. */
  readonly epochs: readonly EpochEntry[];
}

export interface ChunkCacheOptions {
  readonly store: ObjectStore;
  /** The log section is fetched in ranged GETs of this many bytes, aligned to its first byte. */
  readonly chunkBytes: number;
  /** Bytes the cache holds at most (chunks and index sections together). */
  readonly cacheBytes: number;
  /** GETs under way at once at most. */
  readonly readsInFlight: number;
  /** Chunks fetched ahead of the last one a read touched, for a reader going on; default TIER_READ_AHEAD_CHUNKS. */
  readonly readAheadChunks?: number;
}

/**
 * [D2] Chunks of a log section fetched ahead of a read: a consumer reading a partition from its
 * start asks for one chunk's worth after another, and each would wait out a GET's first byte
 * (~20-50 ms on S3 Standard) before it is served. Two chunks ahead keep a sequential reader
 * fed; a reader that stops leaves at most two chunks' GETs unread.
 */
export const TIER_READ_AHEAD_CHUNKS = 2;

/** A cache key: the object's key (which starts with its partition's prefix, so a partition is forgotten by prefix), then what part of it. */
function cacheKey(segment: TieredSegmentRef, part: string): string {
  return `${segment.key}\u0000${part}`;
}

/**
 * The bytes of tiered segment objects for remote reads (docs/tier-protocol.md [D2]), fetched by
 * ranged GETs through one LRU bounded in bytes: index sections whole (each verified against its
 * XXH64 once, when fetched), the log section in chunkBytes-aligned chunks. Concurrent readers of
 * one part share its GET; at most readsInFlight GETs run at once. Values are shared: callers
 * never write into what they get.
 */
export class ChunkCache {
  readonly #store: ObjectStore;
  readonly #chunkBytes: number;
  readonly #lru: ByteLru;
  readonly #gets: Semaphore;
  readonly #inFlight = new Map<string, Promise<Uint8Array>>();
  readonly #readAheadChunks: number;
  /** Raised by forget: a GET that started before it must not put what it fetched back into the cache. */
  #generation = 0;
  #spanningCopies = 0;

  constructor(options: ChunkCacheOptions) {
    assert(Number.isSafeInteger(options.chunkBytes) && options.chunkBytes >= 1, `chunks of ${options.chunkBytes} bytes`);
    this.#store = options.store;
    this.#chunkBytes = options.chunkBytes;
    this.#lru = new ByteLru(options.cacheBytes);
    this.#gets = new Semaphore(options.readsInFlight);
    this.#readAheadChunks = options.readAheadChunks ?? TIER_READ_AHEAD_CHUNKS;
  }

  /** Bytes held now: never above cacheBytes. */
  get heldBytes(): number {
    return this.#lru.heldBytes;
  }

  /** Log ranges served by joining two or more chunks into a new buffer (a batch across a chunk boundary). */
  get spanningCopies(): number {
    return this.#spanningCopies;
  }

  /** An index section, read whole and checked against the footer's length and XXH64, and against the segment's range. */
  indexSection(segment: TieredSegmentRef, kind: 'offsetIndex' | 'timeIndex'): Promise<Uint8Array> {
    return this.#fetch(cacheKey(segment, kind), async () => {
      const section = segment.summary.sections[kind];
      const body = await this.#get(segment, section.position, section.position + section.length);
      verifySection(kind, body, segment.summary);
      const range = readIndexRange(body, kind);
      const { baseOffset, endOffset } = segment.summary;
      if (range.baseOffset !== baseOffset || range.endOffset !== endOffset) {
        throw new CorruptObjectError(kind, section.position, `names [${range.baseOffset}, ${range.endOffset}), the tier record [${baseOffset}, ${endOffset})`, `tiered segment ${segment.key}`);
      }
      return body;
    });
  }

  /**
   * Bytes [from, to) of the segment's log section: a view of one cached chunk when the range
   * lies in one, else a new buffer joining the chunks (counted in spanningCopies when `counted`).
   */
  async logBytes(segment: TieredSegmentRef, from: number, to: number, counted = true): Promise<Uint8Array> {
    assert(Number.isSafeInteger(from) && from >= 0 && to > from && to <= segment.summary.sections.log.length, `log bytes [${from}, ${to}) of ${segment.key}`);
    const first = Math.floor(from / this.#chunkBytes);
    const last = Math.floor((to - 1) / this.#chunkBytes);
    this.#readAhead(segment, last);
    if (first === last) return (await this.#chunk(segment, first)).subarray(from - first * this.#chunkBytes, to - first * this.#chunkBytes);
    const indexes = Array.from({ length: last - first + 1 }, (_, i) => first + i);
    const chunks = await Promise.all(indexes.map((index) => this.#chunk(segment, index)));
    const joined = new Uint8Array(to - from);
    chunks.forEach((chunk, i) => {
      const chunkStart = (first + i) * this.#chunkBytes;
      const part = chunk.subarray(Math.max(0, from - chunkStart), Math.min(chunk.length, to - chunkStart));
      joined.set(part, Math.max(0, chunkStart - from));
    });
    if (counted) this.#spanningCopies++;
    return joined;
  }

  /** Drops every cached part of the objects whose keys start with `keyPrefix` (a partition, a segment gone). */
  forget(keyPrefix: string): void {
    this.#generation++;
    this.#lru.deletePrefix(keyPrefix);
    for (const key of [...this.#inFlight.keys()]) if (key.startsWith(keyPrefix)) this.#inFlight.delete(key);
  }

  /** TIER_READ_AHEAD_CHUNKS after `last`, within the log section, into the cache (a failure is only a later miss). */
  #readAhead(segment: TieredSegmentRef, last: number): void {
    const chunks = Math.ceil(segment.summary.sections.log.length / this.#chunkBytes);
    for (let index = last + 1; index <= Math.min(chunks - 1, last + this.#readAheadChunks); index++) this.#chunk(segment, index).catch(() => {});
  }

  /** Chunk `index` of the log section; the whole section, when it is one chunk, is checked against its XXH64. */
  #chunk(segment: TieredSegmentRef, index: number): Promise<Uint8Array> {
    return this.#fetch(cacheKey(segment, `log ${index}`), async () => {
      const log = segment.summary.sections.log;
      const start = index * this.#chunkBytes;
      const body = await this.#get(segment, log.position + start, log.position + Math.min(log.length, start + this.#chunkBytes));
      if (body.length === log.length) verifySection('log', body, segment.summary);
      return body;
    });
  }

  /** A ranged GET of object bytes [start, end), refused unless the object has the size the tier record says and the range came back whole. */
  async #get(segment: TieredSegmentRef, start: number, end: number): Promise<Uint8Array> {
    const result = await this.#store.get(segment.key, { range: { start, end } });
    const objectName = `tiered segment ${segment.key}`;
    if (result.size !== segment.summary.bytes) throw new CorruptObjectError('size', 0, `the object has ${result.size} bytes, the tier record says ${segment.summary.bytes}`, objectName);
    if (result.body.length !== end - start) throw new CorruptObjectError('range', start, `read ${result.body.length} bytes of ${end - start}`, objectName);
    return result.body;
  }

  /** The cached value, else the GET under way for it, else a new GET (through the semaphore) whose result is cached. */
  #fetch(key: string, fetch: () => Promise<Uint8Array>): Promise<Uint8Array> {
    const held = this.#lru.get(key);
    if (held !== undefined) return Promise.resolve(held);
    const pending = this.#inFlight.get(key);
    if (pending !== undefined) return pending;
    const generation = this.#generation;
    const fetched = this.#gets.run(fetch).then((bytes) => {
      if (generation === this.#generation) this.#lru.set(key, bytes);
      return bytes;
    });
    const settled = (): void => {
      if (this.#inFlight.get(key) === fetched) this.#inFlight.delete(key);
    };
    fetched.then(settled, settled);
    this.#inFlight.set(key, fetched);
    return fetched;
  }
}
