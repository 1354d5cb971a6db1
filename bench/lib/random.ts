/**
 * A seeded pseudo-random source (mulberry32), so every run of a bench writes the same bytes
 * and reads the same offsets. Statistical quality is plenty for payloads and offsets.
 */
export class SeededRandom {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** A uniform 32-bit unsigned integer. */
  nextUint32(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** A uniform integer in [0, bound); bound at most 2^32. */
  nextBelow(bound: number): number {
    return Math.floor((this.nextUint32() / 0x1_0000_0000) * bound);
  }

  fill(bytes: Uint8Array): Uint8Array {
    for (let index = 0; index < bytes.length; index++) bytes[index] = this.nextUint32() & 0xff;
    return bytes;
  }
}
