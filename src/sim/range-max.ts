/**
 * The maximum over any range of a fixed array (a sparse table): O(n log n) to build, O(1) per
 * query. An empty range is -Infinity.
 */
export class RangeMax {
  /** levels[k][i]: the maximum of values[i .. i + 2^k - 1]. */
  readonly #levels: Float64Array[];

  constructor(values: readonly number[]) {
    this.#levels = [Float64Array.from(values)];
    for (let width = 2; width <= values.length; width *= 2) {
      const below = this.#levels.at(-1)!;
      const level = new Float64Array(values.length - width + 1);
      for (let i = 0; i < level.length; i++) level[i] = Math.max(below[i]!, below[i + width / 2]!);
      this.#levels.push(level);
    }
  }

  /** The maximum of values[from .. to - 1]. */
  max(from: number, to: number): number {
    if (to <= from) return -Infinity;
    const level = 31 - Math.clz32(to - from);
    const values = this.#levels[level]!;
    return Math.max(values[from]!, values[to - (1 << level)]!);
  }
}
