import { assert } from '../util/assert.ts';

/** The first allocation of a file's bytes; each growth at least doubles it (amortised O(1) appends). */
const FILE_INITIAL_CAPACITY_BYTES = 4096;

/**
 * One file (an inode) of the simulated disk: the bytes written so far (the page cache) and the
 * bytes a power loss keeps (those of its last fsync/fdatasync). Both are growable buffers with a
 * length, so an append copies only its own bytes, and a sync copies only what changed since the
 * last one (from `#dirtyFrom`). Invariant: `#durable` is zero past `#durableLength`, so a range
 * whose sync failed reads back as zeros after a crash (what a lost write leaves).
 */
export class SimFile {
  #bytes: Uint8Array<ArrayBuffer> = new Uint8Array(0);
  #length = 0;
  #durable: Uint8Array<ArrayBuffer> = new Uint8Array(0);
  #durableLength = 0;
  /** The lowest position written or truncated since the last sync; Infinity when nothing was. */
  #dirtyFrom = Number.POSITIVE_INFINITY;
  /** The last write since the last sync (a crash may keep a prefix of it); length -1 when none. */
  #lastWritePosition = 0;
  #lastWriteLength = -1;
  /** Live names (links) and open descriptors: the file's space is freed when both are zero. */
  links = 0;
  openDescriptors = 0;

  get length(): number {
    return this.#length;
  }

  get durableLength(): number {
    return this.#durableLength;
  }

  /** Whether a crash now would change the file: bytes or a truncation not yet synced. */
  get dirty(): boolean {
    return this.#dirtyFrom !== Number.POSITIVE_INFINITY;
  }

  /** How much longer the file gets by writing `length` bytes at `position`. */
  growthOf(position: number, length: number): number {
    return Math.max(0, position + length - this.#length);
  }

  write(source: Uint8Array, position: number): void {
    const end = position + source.length;
    if (end > this.#bytes.length) this.#bytes = grown(this.#bytes, end);
    this.#bytes.set(source, position);
    this.#length = Math.max(this.#length, end);
    this.#dirtyFrom = Math.min(this.#dirtyFrom, position);
    this.#lastWritePosition = position;
    this.#lastWriteLength = source.length;
  }

  /** ftruncate(2): shorter cuts, longer extends with zeros. */
  truncate(length: number): void {
    if (length > this.#bytes.length) this.#bytes = grown(this.#bytes, length);
    if (length < this.#length) this.#bytes.fill(0, length, this.#length);
    this.#length = length;
    this.#dirtyFrom = Math.min(this.#dirtyFrom, length);
    this.#lastWriteLength = -1; // the last change is the cut: nothing is left half-written
  }

  /** Copies up to `length` bytes at `position` into `into` at `offset`; returns how many. */
  read(into: Uint8Array, offset: number, length: number, position: number): number {
    const count = Math.max(0, Math.min(length, this.#length - position, into.length - offset));
    if (count > 0) into.set(this.#bytes.subarray(position, position + count), offset);
    return count;
  }

  contents(): Uint8Array {
    return this.#bytes.slice(0, this.#length);
  }

  /** fsync/fdatasync: everything written so far survives a crash. */
  sync(): void {
    if (!this.dirty) return;
    if (this.#length > this.#durable.length) this.#durable = grown(this.#durable, this.#length);
    if (this.#length < this.#durableLength) this.#durable.fill(0, this.#length, this.#durableLength);
    if (this.#dirtyFrom < this.#length) this.#durable.set(this.#bytes.subarray(this.#dirtyFrom, this.#length), this.#dirtyFrom);
    this.#durableLength = this.#length;
    this.#markClean();
  }

  /**
   * A failed fsync (EIO): as Linux does, the dirty pages are marked clean without reaching the
   * disk, so a later sync does not carry them; only writing them again does.
   */
  loseUnsynced(): void {
    this.#markClean();
  }

  /**
   * A power loss: the file becomes its durable bytes, plus, when the last write was never synced,
   * a prefix of it of `tornLength(writeLength)` bytes (possibly none) landed over them.
   */
  crash(tornLength: (writeLength: number) => number): void {
    if (this.dirty && this.#lastWriteLength > 0) {
      const kept = tornLength(this.#lastWriteLength);
      assert(kept >= 0 && kept <= this.#lastWriteLength, `torn length ${kept} is not within the write's ${this.#lastWriteLength}`);
      const end = this.#lastWritePosition + kept;
      if (kept > 0) {
        if (end > this.#durable.length) this.#durable = grown(this.#durable, end);
        this.#durable.set(this.#bytes.subarray(this.#lastWritePosition, end), this.#lastWritePosition);
        this.#durableLength = Math.max(this.#durableLength, end);
      }
    }
    this.#bytes = this.#durable;
    this.#durable = this.#bytes.slice();
    this.#length = this.#durableLength;
    this.#markClean();
    this.openDescriptors = 0;
  }

  #markClean(): void {
    this.#dirtyFrom = Number.POSITIVE_INFINITY;
    this.#lastWriteLength = -1;
  }
}

/** A copy of `buffer` with room for at least `needed` bytes, zero past the copied ones. */
function grown(buffer: Uint8Array, needed: number): Uint8Array<ArrayBuffer> {
  let capacity = Math.max(buffer.length * 2, FILE_INITIAL_CAPACITY_BYTES);
  while (capacity < needed) capacity *= 2;
  const next = new Uint8Array(capacity);
  next.set(buffer);
  return next;
}
