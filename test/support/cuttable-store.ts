// An object store as one broker reaches it, cut off on demand: while `cut`, every request fails
// with `kind` (Unavailable: a network partition; AccessDenied: revoked access).
import { StoreError, type StoreErrorKind } from '../../src/store/errors.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';

export function cuttableStore(store: ObjectStore, kind: StoreErrorKind = 'Unavailable'): { store: ObjectStore; cut: boolean } {
  const view = { cut: false, store };
  view.store = new Proxy(store, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (view.cut) return Promise.reject(new StoreError(kind, `injected: this broker is cut from the store (${kind})`));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return view;
}
