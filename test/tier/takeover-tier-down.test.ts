// Adversarial review: a takeover while the tier store is down (docs/tier-protocol.md [K2]). The
// test here failed when written; its comment says how.
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import type { Broker } from '../../src/broker/broker.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { startTieredBroker } from '../support/tiered-brokers.ts';

setDefaultTimeout(60_000);

/** How long the second broker is given to serve the partition: many times a healthy takeover's. */
const TAKEOVER_BOUND_MS = 10_000;

const running: Broker[] = [];
afterEach(async () => {
  for (const broker of running.splice(0)) await broker.stop().catch(() => {});
});

function start(store: ObjectStore, tierStore: ObjectStore, nodeId: number): Promise<Broker> {
  return startTieredBroker(store, nodeId, running, tierStore);
}

async function within(ms: number, condition: () => boolean): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > deadline) return false;
    await Bun.sleep(10);
  }
  return true;
}

// Found by review (finding 9), fixed: failover depends on the tier store. PartitionHost.#rebuild calls tierStartOf, which
// GETs the last tiered segment's producers section, before it reads the WAL; with the tier store
// down (a separate --tier-store, as an S3 Express WAL requires) the GET fails, the adoption fails,
// and every scan retries it in vain: the partition has no leader, and takes no produce, for as
// long as the tier is down, although every acknowledged record is in the WAL (nothing is collected
// yet) and its leader epochs are in the tier record. Without a tier the same takeover succeeds.
test('a broker takes over a tiered partition while the tier store is down', async () => {
  const store = new MemoryStore();
  const tierStore = new MemoryStore();
  const first = await start(store, tierStore, 1);
  await first.context.topology.createTopic('t', 1);
  expect(await within(TAKEOVER_BOUND_MS, () => first.context.engine.serves('t', 0))).toBe(true);
  const T0 = Date.now();
  for (let sequence = 0; sequence < 30; sequence++) {
    const batch = buildRecordBatch([{ value: `p-${sequence}`.padEnd(200, '.'), timestamp: T0 }], { nowMs: T0, producerId: 77, producerEpoch: 0, baseSequence: sequence });
    await (await first.context.engine.appendBatches('t', 0, batch)).committed;
  }
  while ((await first.context.engine.tierer!.tierDue()) > 0);
  expect(first.context.engine.tierer!.tieredEndOf(first.context.engine.topics()[0]!.id, 0)).toBeGreaterThan(0);
  await first.stop(); // resigns its lease: the second broker takes over at once
  running.splice(running.indexOf(first), 1);
  tierStore.injectFault({ operation: 'get', kind: 'Unavailable', count: 1_000_000 }); // the tier is down from now on
  const second = await start(store, tierStore, 2);
  expect(await within(TAKEOVER_BOUND_MS, () => second.context.engine.serves('t', 0) && second.context.engine.leads('t', 0))).toBe(true);
  expect(second.context.engine.offsetFor('t', 0, -1).offset).toBe(30); // every acknowledged record
});
