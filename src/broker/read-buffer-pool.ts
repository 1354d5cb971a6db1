/**
 * The memory Fetch responses read segment bytes into, reused from one response to the next.
 *
 * A fetch's record batches are views of the buffer its segment read filled, and they go to the
 * socket as those views (response-frame.ts): the buffer is the response's until the connection
 * has written it. A fresh buffer per read costs the kernel's page faults and zeroing on memory
 * new to the process (measured: a fifth of the broker's CPU serving kcat from the page cache);
 * slabs given back after the write are warm.
 *
 * Invariant (RB1): a slab is lent to one ResponseBuffers at a time, and goes back to the pool
 * only when that ResponseBuffers is released, which its connection does once the request's
 * handler has settled and its response was written whole to the socket (which copies what it
 * takes) or dropped: no view of a slab is alive in a response when the slab is lent again.
 */
import { assert } from '../util/assert.ts';

/**
 * Bytes of one slab: a fetch's partition limit as clients set it by default
 * (max.partition.fetch.bytes, 1 MiB), so a partition's read fills one slab. A larger read gets
 * memory of its own, as it would without the pool.
 */
export const READ_SLAB_BYTES = 1024 * 1024;
/**
 * Slabs kept for reuse when no response holds them: this much memory (16 MiB) stays with the
 * broker after a burst of fetches, in return for warm memory for 16 responses in flight at once.
 * Slabs beyond it are dropped when given back and collected as garbage.
 */
export const READ_SLABS_KEPT_MAX = 16;

export class ReadBufferPool {
  readonly #free: Uint8Array[] = [];
  readonly #slabsKeptMax: number;

  constructor(slabsKeptMax = READ_SLABS_KEPT_MAX) {
    assert(Number.isSafeInteger(slabsKeptMax) && slabsKeptMax >= 0, 'a read buffer pool keeps a whole number of slabs');
    this.#slabsKeptMax = slabsKeptMax;
  }

  /** Slabs waiting to be lent (for tests and metrics). */
  get freeSlabs(): number {
    return this.#free.length;
  }

  /** Memory for one response's reads, given back by its release(). */
  forResponse(): ResponseBuffers {
    return new ResponseBuffers(this);
  }

  /** A slab no one else holds: a kept one, or a new one. */
  take(): Uint8Array {
    return this.#free.pop() ?? Buffer.allocUnsafeSlow(READ_SLAB_BYTES);
  }

  /** RB1: called by ResponseBuffers.release only, once no view of `slab` is in use. */
  giveBack(slab: Uint8Array): void {
    assert(slab.byteLength === READ_SLAB_BYTES && !this.#free.includes(slab), 'a slab is given back once, whole');
    if (this.#free.length < this.#slabsKeptMax) this.#free.push(slab);
  }
}

/**
 * The memory one response's segment reads land in: consecutive reads share a slab until it is
 * full (a fetch of many small partitions takes one slab, not one each). `allocate` is a
 * ReadAllocator (src/log/segment.ts). After release, allocations get memory of their own, so a
 * handler still running when its connection closed reads into nothing another response holds.
 */
export class ResponseBuffers {
  readonly #pool: ReadBufferPool;
  readonly #slabs: Uint8Array[] = [];
  /** Bytes of the last slab already allocated. */
  #usedBytes = READ_SLAB_BYTES;
  #released = false;

  constructor(pool: ReadBufferPool) {
    this.#pool = pool;
  }

  /** `length` bytes for a read to fill, this response's until release(). */
  readonly allocate = (length: number): Uint8Array => {
    if (this.#released || length === 0 || length > READ_SLAB_BYTES) return Buffer.allocUnsafeSlow(length);
    if (this.#usedBytes + length > READ_SLAB_BYTES) {
      this.#slabs.push(this.#pool.take());
      this.#usedBytes = 0;
    }
    const start = this.#usedBytes;
    this.#usedBytes += length;
    return this.#slabs.at(-1)!.subarray(start, start + length);
  };

  /**
   * Gives every slab back (RB1): only once the response holding views of them is written or
   * dropped and its handler settled. A connection may reach that point on two paths (its writer,
   * its close); the second call does nothing.
   */
  readonly release = (): void => {
    if (this.#released) return;
    this.#released = true;
    for (const slab of this.#slabs) this.#pool.giveBack(slab);
    this.#slabs.length = 0;
  };
}
