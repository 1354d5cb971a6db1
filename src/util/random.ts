/**
 * A seeded pseudo-random source (docs/design.md contract 8): the same seed gives the same sequence, so
 * a simulated failure replays exactly. SplitMix32-style mixing: fast, and good enough for
 * fault injection and latency sampling (not for cryptography).
 */
export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
}

export class SeededRandom implements Random {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  next(): number {
    this.#state = (this.#state + 0x9e3779b9) >>> 0;
    let z = this.#state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    z = (z ^ (z >>> 16)) >>> 0;
    return z / 0x1_0000_0000;
  }

  /** An integer in [0, bound). */
  nextInt(bound: number): number {
    return Math.floor(this.next() * bound);
  }

  /** A wait drawn from the exponential distribution of mean `meanMs`: the gaps of events that come at random (a Poisson process). */
  nextExponential(meanMs: number): number {
    return -Math.log(1 - this.next()) * meanMs;
  }
}

/**
 * The operating system's randomness behind the same interface: for values that must differ
 * across processes and restarts (topic ids), where a seed would repeat them. Simulations inject a
 * SeededRandom instead.
 */
export const systemRandom: Random = {
  next(): number {
    const words = crypto.getRandomValues(new Uint32Array(2));
    return ((words[0]! >>> 5) * 0x400_0000 + (words[1]! >>> 6)) / 2 ** 53; // 53 random bits
  },
};
