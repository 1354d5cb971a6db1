/**
 * The keys of an in-memory store in sorted order (UTF-16 code units, as Array.prototype.sort), so
 * that a LIST of a prefix is a binary search and a walk, not a sort of every key the store holds:
 * a simulated run LISTs its WAL streams and tier prefixes every few hundred ms while the store
 * holds thousands of objects. Adding and removing a key moves the tail of one array.
 */
export class SortedKeys {
  readonly #keys: string[] = [];

  /** Adds `key` if it is not there yet. */
  add(key: string): void {
    const at = this.#lowerBound(key);
    if (this.#keys[at] !== key) this.#keys.splice(at, 0, key);
  }

  /** Removes `key` if it is there. */
  remove(key: string): void {
    const at = this.#lowerBound(key);
    if (this.#keys[at] === key) this.#keys.splice(at, 1);
  }

  /** The keys that start with `prefix`, sorted. */
  withPrefix(prefix: string): string[] {
    const keys: string[] = [];
    for (let at = this.#lowerBound(prefix); at < this.#keys.length && this.#keys[at]!.startsWith(prefix); at++) keys.push(this.#keys[at]!);
    return keys;
  }

  /** The first position whose key is not below `key`. */
  #lowerBound(key: string): number {
    let low = 0;
    let high = this.#keys.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.#keys[middle]! < key) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
