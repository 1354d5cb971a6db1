import { assert } from '../util/assert.ts';

/**
 * The bytes of requests a broker holds at once, across all its connections (Kafka's
 * `queued.max.request.bytes` memory pool). A connection reserves a request's declared size once
 * its size prefix is read and before it reads the body; the reservation is released when the
 * request has been handled. A connection whose reservation does not fit stops reading from its
 * socket (TCP backpressure on the client) until enough is released; waiters are served in
 * arrival order, so a large request is not starved by a stream of small ones.
 *
 * Reserving the whole declared size up front (not the bytes read so far) is what keeps this
 * deadlock-free: a request that has started arriving always has room to finish.
 */
export class RequestMemory {
  readonly bytesMax: number;
  #reservedBytes = 0;
  readonly #waiters: { readonly bytes: number; readonly granted: () => void }[] = [];

  constructor(bytesMax: number) {
    assert(Number.isSafeInteger(bytesMax) && bytesMax > 0, 'a request memory budget is a positive number of bytes');
    this.bytesMax = bytesMax;
  }

  get reservedBytes(): number {
    return this.#reservedBytes;
  }

  /** Reserves `bytes` now (true), or queues the reservation and calls `granted` once it is made (false). */
  reserve(bytes: number, granted: () => void): boolean {
    assert(bytes <= this.bytesMax, `a reservation of ${bytes} bytes fits the ${this.bytesMax}-byte budget`);
    if (this.#waiters.length === 0 && this.#fits(bytes)) {
      this.#reservedBytes += bytes;
      return true;
    }
    this.#waiters.push({ bytes, granted });
    return false;
  }

  /** Withdraws a queued reservation (its connection closed before it was granted). */
  cancel(granted: () => void): void {
    const index = this.#waiters.findIndex((waiter) => waiter.granted === granted);
    if (index >= 0) this.#waiters.splice(index, 1);
    this.#grantWaiting();
  }

  release(bytes: number): void {
    assert(bytes >= 0 && bytes <= this.#reservedBytes, `released ${bytes} bytes of ${this.#reservedBytes} reserved`);
    this.#reservedBytes -= bytes;
    this.#grantWaiting();
  }

  #fits(bytes: number): boolean {
    return this.#reservedBytes + bytes <= this.bytesMax;
  }

  #grantWaiting(): void {
    while (this.#waiters.length > 0 && this.#fits(this.#waiters[0]!.bytes)) {
      const waiter = this.#waiters.shift()!;
      this.#reservedBytes += waiter.bytes;
      waiter.granted();
    }
  }
}
