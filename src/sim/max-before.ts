import { countBelow } from './incarnations.ts';

/**
 * The highest value among events that happened before a time: events are (atMs, value) pairs,
 * sorted once, so each query is a binary search. No event before: -Infinity.
 */
export class MaxBefore {
  readonly #atMs: number[];
  /** prefixMax[i]: the highest value among the first i + 1 events by time. */
  readonly #prefixMax: number[];

  constructor(events: readonly { readonly atMs: number; readonly value: number }[]) {
    const sorted = [...events].sort((a, b) => a.atMs - b.atMs);
    this.#atMs = sorted.map((event) => event.atMs);
    let max = -Infinity;
    this.#prefixMax = sorted.map((event) => (max = Math.max(max, event.value)));
  }

  /** The highest value of the events strictly before `atMs`. */
  before(atMs: number): number {
    const count = countBelow(this.#atMs, atMs);
    return count === 0 ? -Infinity : this.#prefixMax[count - 1]!;
  }
}
