import type { ObjectStore } from '../../src/store/object-store.ts';

/** `inner` as a test sees it with one request replaced by `method` (the others bound to `inner`): a store that holds, counts or fails one kind of request. */
export function overriding<K extends keyof ObjectStore>(inner: ObjectStore, name: K, method: ObjectStore[K]): ObjectStore {
  return new Proxy(inner, {
    get: (target, property) => {
      if (property === name) return method;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as ObjectStore;
}
