// src/wal/store-health.ts: how long writes to the WAL store have failed with none landing, across
// writers, and the probe that ends it for a broker with no upload of its own (docs/cluster-protocol.md [C1]).
import { expect, test } from 'bun:test';
import { StoreError } from '../../src/store/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore, PutOptions } from '../../src/store/object-store.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { storeHealthProbeKey, WalStoreHealth } from '../../src/wal/store-health.ts';

/** A store whose puts fail while `down`, counting them. */
function flakyStore(): { store: ObjectStore; inner: MemoryStore; down: boolean; puts: number } {
  const inner = new MemoryStore();
  const view = { inner, down: false, puts: 0, store: inner as ObjectStore };
  view.store = new Proxy(inner, {
    get(target, name) {
      if (name === 'put')
        return (key: string, body: Uint8Array, options?: PutOptions) => {
          view.puts++;
          return view.down ? Promise.reject(new StoreError('AccessDenied', 'injected')) : target.put(key, body, options);
        };
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return view;
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

test('failing counts from the first failed write and only a landed write ends it', () => {
  const clock = new ManualClock();
  const health = new WalStoreHealth(new MemoryStore(), 'k', clock);
  expect(health.failingForMs()).toBe(0);
  health.writeFailed(clock.monotonicMs());
  clock.advance(300);
  health.writeFailed(clock.monotonicMs()); // a later failure does not restart the count
  clock.advance(200);
  expect(health.failingForMs()).toBe(500);
  health.writeLanded(clock.monotonicMs());
  expect(health.failingForMs()).toBe(0);
});

test('a probe runs only while writes fail, one at a time, and its landing ends the failure', async () => {
  const clock = new ManualClock();
  const flaky = flakyStore();
  const health = new WalStoreHealth(flaky.store, storeHealthProbeKey('p/', 'broker-1'), clock);
  health.recheck();
  await settle();
  expect(flaky.puts).toBe(0); // nothing failing: nothing to probe

  flaky.down = true;
  health.writeFailed(clock.monotonicMs());
  clock.advance(1000);
  health.recheck();
  health.recheck(); // one probe in flight at a time
  await settle();
  expect(flaky.puts).toBe(1);
  expect(health.failingForMs()).toBe(1000); // the failed probe keeps it failing

  flaky.down = false;
  health.recheck();
  await settle();
  expect(flaky.puts).toBe(2);
  expect(health.failingForMs()).toBe(0);
  expect(flaky.inner.peekKeys('p/').filter((key) => key.startsWith('p/wal/'))).toEqual([]); // never among the streams' keys
  expect(flaky.inner.peek('p/store-health/broker-1')).not.toBeNull();
});
