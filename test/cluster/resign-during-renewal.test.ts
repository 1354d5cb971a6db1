// A clean shutdown resigns the lease (renewedAtMs 0) so others take over at once [C1]. A renewal
// already on its way to the store when the broker stops must not land after the resignation and
// bring the lease back: the others would then wait out a whole lease for a broker that is gone.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import type { BrokerRecord } from '../../src/cluster/control-records.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore, PutOptions, PutResult } from '../../src/store/object-store.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { testClusterNode } from '../support/cluster-node.ts';
import { settle, settleUntil } from '../support/settle.ts';

/** A store that holds the next put of `key` (once armed) until the test lets it go. */
function holdNextPut(inner: MemoryStore, key: string) {
  let armed = false;
  let held = false;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const put = async (k: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> => {
    if (k === key && armed) {
      armed = false;
      held = true;
      await gate;
    }
    return inner.put(k, body, options);
  };
  const store = new Proxy(inner, {
    get: (target, name) => {
      if (name === 'put') return put;
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as ObjectStore;
  return { store, arm: () => void (armed = true), open, held: () => held };
}

test('a renewal in flight when the broker resigns does not overwrite the resignation', async () => {
  const inner = new MemoryStore();
  const clock = new ManualClock();
  const gated = holdNextPut(inner, 'c/control/brokers/1');
  const node = testClusterNode({ store: gated.store, clock, nodeId: 1, self: { leaseMs: 3000 }, scanIntervalMs: 100_000 });
  await node.start();
  gated.arm();
  clock.advance(1000); // the lease timer fires: a renewal starts and its put is held
  await settleUntil(gated.held, 'a renewal is in flight');
  node.stop(); // a clean shutdown: stop, then resign (src/broker/broker.ts close())
  const resigned = node.resign();
  await settle();
  gated.open(); // the renewal's put lands now
  await resigned;
  await settle(20);
  const record = (await new ControlStore(inner, 'c').read<BrokerRecord>('brokers/1'))!.value;
  expect(record.renewedAtMs).toBe(0);
});
