// Review of 11908f9 ([C1] stepping aside). `#saidStorageFailing` is set when a renewal *computes*
// its record, not when the record lands. Two renewals run at once when a writer epoch change
// renews ([C7] #startNewEpoch) beside the timer's: the store heals between the two computations
// (a probe lands; the same scan's end starts the new epoch that failed while the store was cut),
// so the timer's renewal says storageFailing: true and the epoch change's says false. The later
// computed (false) lands first; the earlier one's swap fails on its ETag, reads its own record back
// and writes its value again: the record says storageFailing: true, the node believes it said
// false, and the timer's renewal ends in a confirming scan. The broker then acts as leader
// (acks=1, reads as leader) under a record that invites every other broker to take its partitions.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import type { BrokerRecord } from '../../src/cluster/control-records.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore, PutOptions } from '../../src/store/object-store.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { testClusterNode } from '../support/cluster-node.ts';

const LEASE_MS = 1000; // test/support/cluster-node.ts

/** A store whose next write of `key`, once armed, waits for `release` before it reaches the store. */
function delayedWriteStore(inner: MemoryStore, key: string) {
  const held = { armed: false, release: () => {}, waiting: Promise.withResolvers<void>() };
  const store = new Proxy(inner, {
    get(target, name) {
      if (name === 'put')
        return async (k: string, body: Uint8Array, options?: PutOptions) => {
          if (held.armed && k === key) {
            held.armed = false;
            const go = Promise.withResolvers<void>();
            held.release = go.resolve;
            held.waiting.resolve();
            await go.promise;
          }
          return target.put(k, body, options);
        };
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as ObjectStore;
  return { store, held };
}

const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 0));
};

test('a broker never acts as leader while the record it last wrote says storageFailing', async () => {
  const inner = new MemoryStore();
  const { store, held } = delayedWriteStore(inner, 'c/control/brokers/1');
  const clock = new ManualClock();
  let walFailingMs = 0;
  let epoch = 0;
  const writerFailed = Promise.withResolvers<void>();
  const node = testClusterNode({
    store,
    clock,
    nodeId: 1,
    scanIntervalMs: 3_600_000,
    storage: { failing: () => false, recheck: () => false, walStoreFailingForMs: () => walFailingMs },
    // Epoch 0's writer fails when the test says; epoch 1's never does.
    writer: { whenFailed: () => (epoch++ === 0 ? writerFailed.promise.then(() => new Error('failed') as never) : new Promise(() => {})), startNewEpoch: async () => ({ writerId: 'broker-1', epoch }) },
  });
  await node.start();
  try {
    expect(node.leaseHeld()).toBe(true);
    // Cut from the WAL store for a lease: the timer's next renewal computes storageFailing: true; its write is slow on its way.
    walFailingMs = 2 * LEASE_MS;
    held.armed = true;
    clock.advance(LEASE_MS / 3);
    await held.waiting.promise;
    expect(node.leaseHeld()).toBe(false); // stepped aside before the write
    // The store heals (a probe landed) and the writer, failed in the cut, is replaced: that renewal computes false and lands first.
    walFailingMs = 0;
    writerFailed.resolve();
    await settle();
    // The timer's write arrives: its swap fails on the ETag, it reads its own record and writes storageFailing: true again.
    held.release();
    await settle();
    const record = (await new ControlStore(inner, 'c').read<BrokerRecord>('brokers/1'))!.value;
    expect(record.storageFailing === true && node.leaseHeld()).toBe(false);
  } finally {
    node.stop();
  }
});
