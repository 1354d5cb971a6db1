import { assert } from '../util/assert.ts';
import type { WalFrameEntry } from '../wal/format.ts';
import type { StreamId } from '../wal/keys.ts';

/**
 * Footer indexes the collector keeps between passes: an object that must stay (not tiered yet) is
 * judged again every pass, and its index never changes (I4: objects are immutable). About 100
 * bytes an entry, so 4096 objects of 50 frames is ~20 MB at most; an object evicted is read again.
 */
export const GC_INDEX_CACHE_OBJECTS = 4096;

export type ObjectIndex = { readonly kind: 'seal' } | { readonly kind: 'data'; readonly entries: readonly WalFrameEntry[] };

/** A bounded LRU of object indexes by (stream, sequence). */
export class IndexCache {
  readonly #capacity: number;
  readonly #entries = new Map<string, ObjectIndex>();

  constructor(capacity = GC_INDEX_CACHE_OBJECTS) {
    assert(Number.isSafeInteger(capacity) && capacity > 0, 'an index cache holds at least one object');
    this.#capacity = capacity;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(stream: StreamId, sequence: number): ObjectIndex | undefined {
    const key = cacheKey(stream, sequence);
    const index = this.#entries.get(key);
    if (index !== undefined) {
      this.#entries.delete(key); // most recently used goes last
      this.#entries.set(key, index);
    }
    return index;
  }

  set(stream: StreamId, sequence: number, index: ObjectIndex): void {
    const key = cacheKey(stream, sequence);
    this.#entries.delete(key);
    this.#entries.set(key, index);
    while (this.#entries.size > this.#capacity) this.#entries.delete(this.#entries.keys().next().value!);
  }

  /** The object was deleted: its index is of no more use. */
  forget(stream: StreamId, sequence: number): void {
    this.#entries.delete(cacheKey(stream, sequence));
  }
}

function cacheKey(stream: StreamId, sequence: number): string {
  return `${stream.writerId}/${stream.epoch}/${sequence}`;
}
