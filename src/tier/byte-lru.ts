import { assert } from '../util/assert.ts';

/**
 * A least-recently-used cache bounded by the bytes it holds, not by its entry count: a remote
 * read's chunks are up to TIER_CHUNK_BYTES each while index sections are a few kilobytes, so
 * only bytes say what it costs. A value larger than the whole budget is never held (its reader
 * keeps it for the one read that fetched it).
 */
export class ByteLru {
  readonly #capacityBytes: number;
  /** Map iteration order is insertion order: the first entry is the least recently used. */
  readonly #entries = new Map<string, Uint8Array>();
  #heldBytes = 0;

  constructor(capacityBytes: number) {
    assert(Number.isSafeInteger(capacityBytes) && capacityBytes >= 0, `cache capacity of ${capacityBytes} bytes`);
    this.#capacityBytes = capacityBytes;
  }

  get capacityBytes(): number {
    return this.#capacityBytes;
  }

  /** Bytes of every value held now; never above capacityBytes. */
  get heldBytes(): number {
    return this.#heldBytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The value, marked most recently used; undefined if not held. */
  get(key: string): Uint8Array | undefined {
    const value = this.#entries.get(key);
    if (value === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  /** Holds `value` as the most recently used, evicting the least recently used until it fits. */
  set(key: string, value: Uint8Array): void {
    this.delete(key);
    if (value.byteLength > this.#capacityBytes) return;
    for (const [oldest, held] of this.#entries) {
      if (this.#heldBytes + value.byteLength <= this.#capacityBytes) break;
      this.#entries.delete(oldest);
      this.#heldBytes -= held.byteLength;
    }
    this.#entries.set(key, value);
    this.#heldBytes += value.byteLength;
    assert(this.#heldBytes <= this.#capacityBytes, `the cache holds ${this.#heldBytes} bytes, over its ${this.#capacityBytes}`);
  }

  delete(key: string): void {
    const held = this.#entries.get(key);
    if (held === undefined) return;
    this.#entries.delete(key);
    this.#heldBytes -= held.byteLength;
  }

  /** Drops every entry whose key starts with `prefix` (a partition's, a segment's). */
  deletePrefix(prefix: string): void {
    for (const key of [...this.#entries.keys()]) if (key.startsWith(prefix)) this.delete(key);
  }
}
