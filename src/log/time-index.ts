import { assert } from '../util/assert.ts';

/** One entry: timestamp int64 + relative offset int32, big-endian, as Kafka's `.timeindex`. */
export const TIME_INDEX_ENTRY_BYTES = 12;
const INITIAL_CAPACITY_ENTRIES = 64;

/**
 * A sparse map from timestamp to the first offset of a batch whose max timestamp reaches it.
 * Entries are added only when the segment's max timestamp grows, so timestamps strictly
 * increase; like the offset index it is rebuilt by scanning after a crash.
 */
export class TimeIndex {
  readonly baseOffset: number;
  #timestamps = new Float64Array(INITIAL_CAPACITY_ENTRIES);
  #relativeOffsets = new Int32Array(INITIAL_CAPACITY_ENTRIES);
  #count = 0;

  constructor(baseOffset: number) {
    this.baseOffset = baseOffset;
  }

  get entryCount(): number {
    return this.#count;
  }

  get lastTimestamp(): number {
    return this.#count === 0 ? -1 : this.#timestamps[this.#count - 1]!;
  }

  append(timestamp: number, offset: number): void {
    const relative = offset - this.baseOffset;
    assert(relative >= 0 && relative <= 0x7fffffff, `time index offset ${offset} outside segment ${this.baseOffset}`);
    assert(timestamp > this.lastTimestamp, `time index timestamp ${timestamp} not increasing`);
    if (this.#count === this.#timestamps.length) {
      const timestamps = new Float64Array(this.#count * 2);
      const offsets = new Int32Array(this.#count * 2);
      timestamps.set(this.#timestamps);
      offsets.set(this.#relativeOffsets);
      this.#timestamps = timestamps;
      this.#relativeOffsets = offsets;
    }
    this.#timestamps[this.#count] = timestamp;
    this.#relativeOffsets[this.#count] = relative;
    this.#count++;
  }

  /**
   * The offset from which to scan for the first record with timestamp >= `timestamp`: the offset
   * of the last entry whose timestamp is below it, or the segment's base offset.
   */
  lookup(timestamp: number): number {
    let low = 0;
    let high = this.#count - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      if (this.#timestamps[middle]! < timestamp) {
        found = middle;
        low = middle + 1;
      } else {
        high = middle - 1;
      }
    }
    return found < 0 ? this.baseOffset : this.baseOffset + this.#relativeOffsets[found]!;
  }

  /** Drops entries at or past `offset` (the log was truncated there). */
  truncateToOffset(offset: number): void {
    while (this.#count > 0 && this.baseOffset + this.#relativeOffsets[this.#count - 1]! >= offset) this.#count--;
  }

  encode(): Uint8Array {
    const bytes = new Uint8Array(this.#count * TIME_INDEX_ENTRY_BYTES);
    const view = new DataView(bytes.buffer);
    for (let i = 0; i < this.#count; i++) {
      view.setBigInt64(i * 12, BigInt(this.#timestamps[i]!));
      view.setInt32(i * 12 + 8, this.#relativeOffsets[i]!);
    }
    return bytes;
  }

  /** Null when the bytes cannot be this segment's time index; the caller then rebuilds it. */
  static decode(baseOffset: number, bytes: Uint8Array, nextOffset: number): TimeIndex | null {
    if (bytes.length % TIME_INDEX_ENTRY_BYTES !== 0) return null;
    const index = new TimeIndex(baseOffset);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    let lastRelative = -1;
    for (let at = 0; at < bytes.length; at += TIME_INDEX_ENTRY_BYTES) {
      const timestamp = Number(view.getBigInt64(at));
      const relative = view.getInt32(at + 8);
      const valid = relative >= lastRelative && baseOffset + relative < nextOffset && timestamp > index.lastTimestamp;
      if (!valid || !Number.isSafeInteger(timestamp)) return null;
      index.append(timestamp, baseOffset + relative);
      lastRelative = relative;
    }
    return index;
  }
}
