/**
 * The maximum over any prefix of a fixed-size array whose slots only ever grow (a Fenwick tree
 * for max): O(log n) per update and per query. Empty slots hold -Infinity.
 */
export class MaxPrefixTree {
  readonly #tree: Float64Array;

  constructor(size: number) {
    this.#tree = new Float64Array(size + 1).fill(-Infinity);
  }

  /** Raise slot `index` (0-based) to at least `value`. */
  raise(index: number, value: number): void {
    for (let i = index + 1; i < this.#tree.length; i += i & -i) if (this.#tree[i]! < value) this.#tree[i] = value;
  }

  /** The maximum over slots 0..count-1. */
  maxOfFirst(count: number): number {
    let max = -Infinity;
    for (let i = Math.min(count, this.#tree.length - 1); i > 0; i -= i & -i) if (this.#tree[i]! > max) max = this.#tree[i]!;
    return max;
  }
}
