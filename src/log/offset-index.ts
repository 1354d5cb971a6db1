import { assert } from '../util/assert.ts';

/** One entry: relative offset int32 + file position int32, big-endian, as Kafka's `.index`. */
export const OFFSET_INDEX_ENTRY_BYTES = 8;
const INITIAL_CAPACITY_ENTRIES = 64;

/**
 * A sparse map from offset to the file position of a batch starting at or before it. Entries
 * are held in memory and written whole when the segment is sealed or closed; after a crash the
 * active segment's index is rebuilt by scanning (recovery.ts), so it never needs an fsync.
 * Invariant: offsets and positions strictly increase.
 */
export class OffsetIndex {
  readonly baseOffset: number;
  #entries = new Int32Array(INITIAL_CAPACITY_ENTRIES * 2);
  #count = 0;

  constructor(baseOffset: number) {
    this.baseOffset = baseOffset;
  }

  get entryCount(): number {
    return this.#count;
  }

  get lastOffset(): number {
    return this.#count === 0 ? this.baseOffset - 1 : this.baseOffset + this.#entries[(this.#count - 1) * 2]!;
  }

  get lastPosition(): number {
    return this.#count === 0 ? 0 : this.#entries[(this.#count - 1) * 2 + 1]!;
  }

  append(offset: number, position: number): void {
    const relative = offset - this.baseOffset;
    assert(relative >= 0 && relative <= 0x7fffffff, `index offset ${offset} outside segment ${this.baseOffset}`);
    if (this.#count > 0) {
      assert(offset > this.lastOffset && position > this.lastPosition, `index entry (${offset}, ${position}) not increasing`);
    }
    if ((this.#count + 1) * 2 > this.#entries.length) {
      const grown = new Int32Array(this.#entries.length * 2);
      grown.set(this.#entries);
      this.#entries = grown;
    }
    this.#entries[this.#count * 2] = relative;
    this.#entries[this.#count * 2 + 1] = position;
    this.#count++;
  }

  /** Position of the last indexed batch whose base offset is at or below `offset`; 0 if none. */
  lookup(offset: number): number {
    const relative = offset - this.baseOffset;
    let low = 0;
    let high = this.#count - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      if (this.#entries[middle * 2]! <= relative) {
        found = middle;
        low = middle + 1;
      } else {
        high = middle - 1;
      }
    }
    return found < 0 ? 0 : this.#entries[found * 2 + 1]!;
  }

  /** Drops entries at or past `position` (the log was truncated there). */
  truncateToPosition(position: number): void {
    while (this.#count > 0 && this.#entries[(this.#count - 1) * 2 + 1]! >= position) this.#count--;
  }

  encode(): Uint8Array {
    const bytes = new Uint8Array(this.#count * OFFSET_INDEX_ENTRY_BYTES);
    const view = new DataView(bytes.buffer);
    for (let i = 0; i < this.#count; i++) {
      view.setInt32(i * 8, this.#entries[i * 2]!);
      view.setInt32(i * 8 + 4, this.#entries[i * 2 + 1]!);
    }
    return bytes;
  }

  /** Null when the bytes cannot be this segment's index; the caller then rebuilds it by scanning. */
  static decode(baseOffset: number, bytes: Uint8Array, segmentSizeBytes: number): OffsetIndex | null {
    if (bytes.length % OFFSET_INDEX_ENTRY_BYTES !== 0) return null;
    const index = new OffsetIndex(baseOffset);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    for (let at = 0; at < bytes.length; at += OFFSET_INDEX_ENTRY_BYTES) {
      const relative = view.getInt32(at);
      const position = view.getInt32(at + 4);
      const increasing = index.#count === 0 || (relative > index.#entries[(index.#count - 1) * 2]! && position > index.lastPosition);
      if (relative < 0 || position < 0 || position >= segmentSizeBytes || !increasing) return null;
      index.append(baseOffset + relative, position);
    }
    return index;
  }
}
