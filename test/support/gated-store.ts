// An object store whose puts under chosen key prefixes can be held (they wait) or failed (they
// throw a retriable fault), to freeze durability or lease renewals at a moment a test picks.
import { MemoryStore } from '../../src/store/memory.ts';
import { StoreError } from '../../src/store/errors.ts';
import type { ObjectStore, PutOptions } from '../../src/store/object-store.ts';

export class GatedStore {
  readonly inner = new MemoryStore();
  readonly store: ObjectStore;
  readonly #held = new Map<string, { promise: Promise<void>; open: () => void }>();
  readonly #failing = new Set<string>();
  /** holdNext: the prefixes whose next put is to be held, and who waits to hear it is. */
  readonly #holdNext = new Map<string, () => void>();
  /** The one put held by holdNext under each prefix, until release. */
  readonly #heldOnce = new Map<string, () => void>();

  constructor() {
    const put = async (key: string, body: Uint8Array, options?: PutOptions) => {
      const next = [...this.#holdNext].find(([prefix]) => key.startsWith(prefix));
      if (next !== undefined) {
        const [prefix, waiting] = next;
        this.#holdNext.delete(prefix);
        await new Promise<void>((open) => {
          this.#heldOnce.set(prefix, open);
          waiting();
        });
      }
      for (;;) {
        const held = [...this.#held].find(([prefix]) => key.startsWith(prefix));
        if (held === undefined) break;
        await held[1].promise;
      }
      if ([...this.#failing].some((prefix) => key.startsWith(prefix))) throw new StoreError('Unavailable', `injected: puts under this prefix fail`, { key });
      return this.inner.put(key, body, options);
    };
    this.store = new Proxy(this.inner, {
      get: (target, name) => {
        if (name === 'put') return put;
        const value: unknown = Reflect.get(target, name, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as ObjectStore;
  }

  /** Puts under `prefix` wait until `release(prefix)`. */
  hold(prefix: string): void {
    if (this.#held.has(prefix)) return;
    let open!: () => void;
    const promise = new Promise<void>((resolve) => (open = resolve));
    this.#held.set(prefix, { promise, open });
  }

  /** The next put under `prefix` waits (as `hold`) until `release(prefix)`; resolves once it is waiting. Later puts pass. */
  holdNext(prefix: string): Promise<void> {
    return new Promise((waiting) => this.#holdNext.set(prefix, waiting));
  }

  release(prefix: string): void {
    this.#heldOnce.get(prefix)?.();
    this.#heldOnce.delete(prefix);
    this.#held.get(prefix)?.open();
    this.#held.delete(prefix);
  }

  /** Puts under `prefix` fail (retriably) until `heal(prefix)`. */
  fail(prefix: string): void {
    this.#failing.add(prefix);
  }

  heal(prefix: string): void {
    this.#failing.delete(prefix);
  }
}
