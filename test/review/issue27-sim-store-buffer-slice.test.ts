// Review of issue 27 (low severity, simulation fidelity): src/sim/store.ts copies a caller's body
// with `.slice()` where the caller may reuse its buffer before the request reaches the store (a
// control-record put delayed on its path, "what left the process"; a multipart part, for the WAL
// audit). For a Buffer, `.slice()` is a view (cd64854 fixed the same mistake in SimLink.write,
// which let a reused read slab change bytes in flight): the store then takes bytes the caller
// wrote after the put, not the ones it sent. No caller passes a reused Buffer there today; the
// first that does (a pooled or slab-backed body) would make the simulation store what the process
// never sent. util/bytes.ts copyBytes is the copy meant. Fails on dd22f7c.
import { expect, test } from 'bun:test';
import { MemoryStore } from '../../src/store/memory.ts';
import { ProcessGate, SIM_EPOCH_MS, SimClock, SimScheduler } from '../../src/sim/scheduler.ts';
import { SimStoreView } from '../../src/sim/store.ts';
import { SeededRandom } from '../../src/util/random.ts';

const SENT = 'the record as sent';

test('a delayed control-record put stores the bytes sent, even when the caller reuses its Buffer at once', async () => {
  const time = new SimScheduler(new SeededRandom(1));
  const store = new MemoryStore({ clock: new SimClock(time, new ProcessGate('store')) });
  const view = new SimStoreView(store, new ProcessGate('broker-1#1'), time, new SeededRandom(2));
  view.controlWriteDelays = () => ({ toStoreMs: 100, backMs: 0 });
  const body = Buffer.from(SENT);
  const put = view.put('control/brokers/1', body);
  body.fill('x'); // the caller's buffer, reused once put() returned (as a pooled buffer would be)
  await time.run(SIM_EPOCH_MS + 1_000);
  await put;
  const stored = await store.get('control/brokers/1');
  expect(new TextDecoder().decode(stored.body)).toBe(SENT);
});
