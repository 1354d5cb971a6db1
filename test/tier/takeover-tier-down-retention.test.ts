// Adversarial review of 3f4c00f (PartitionHost.#rebuild falls back to the whole WAL chain while the
// tier cannot be read). The test here failed when written; its comment says how.
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import type { Broker } from '../../src/broker/broker.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { TierRecords } from '../../src/tier/tier-record.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import { startTieredBroker } from '../support/tiered-brokers.ts';

setDefaultTimeout(60_000);

/** How long the second broker is given to serve the partition: many times a healthy takeover's. */
const TAKEOVER_BOUND_MS = 10_000;
/** Older than the default retention.ms (7 days): the tier's retention drops these records. */
const RECORD_AGE_MS = 8 * 24 * 60 * 60 * 1000;
const EARLIEST_TIMESTAMP = -2;
/** Records [0, OLD_RECORDS) are past retention; the rest are new. */
const OLD_RECORDS = 20;

const running: Broker[] = [];
afterEach(async () => {
  for (const broker of running.splice(0)) await broker.stop().catch(() => {});
});

async function within(ms: number, condition: () => boolean): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > deadline) return false;
    await Bun.sleep(10);
  }
  return true;
}

// Found by review (finding 1), fixed: the whole-chain fallback resurrects records that tier retention deleted. Retention
// moved the tier record's start to S (tier-start.ts itself says "never again at 0: its records are
// gone for good", and 3f4c00f fixed exactly that for a tier emptied by retention); but when the
// tier's GET fails at takeover, #rebuild swallows the error and rebuilds from offset 0 of the WAL
// chain (the WAL is never collected), so the new leader's log starts at 0 again: offsets below S,
// which ListOffsets(earliest) had said are gone, are served again to any consumer that asks. The
// fallback has the tier record (the control store is up) and could start the log at its
// startOffset, or only fall back when the record says nothing was expired.
test('a takeover while the tier store is down does not bring back records the tier retention deleted', async () => {
  const store = new MemoryStore();
  const tierStore = new MemoryStore();
  const first = await startTieredBroker(store, 1, running, tierStore);
  await first.context.topology.createTopic('t', 1);
  expect(await within(TAKEOVER_BOUND_MS, () => first.context.engine.serves('t', 0))).toBe(true);
  const now = Date.now();
  for (let sequence = 0; sequence < 30; sequence++) {
    const timestamp = sequence < OLD_RECORDS ? now - RECORD_AGE_MS : now; // the newer ones keep a tiered segment, read at takeover
    const batch = buildRecordBatch([{ value: `p-${sequence}`.padEnd(200, '.'), timestamp }], { nowMs: timestamp, producerId: 77, producerEpoch: 0, baseSequence: sequence });
    await (await first.context.engine.appendBatches('t', 0, batch)).committed;
  }
  while ((await first.context.engine.tierer!.tierDue()) > 0);
  await first.context.engine.tierer!.tierDue(); // retention: the segments of old records only are past retention.ms
  const topicId = first.context.engine.topics()[0]!.id;
  const record = await new TierRecords(new ControlStore(store, '')).read(topicId, 0);
  const retainedStart = record.startOffset;
  expect(retainedStart).toBeGreaterThan(0); // retention deleted [0, retainedStart) for good
  expect(record.segments.length).toBeGreaterThan(0); // a tiered segment is left: the takeover GETs its producer state
  await first.stop(); // resigns its lease: the second broker takes over at once
  running.splice(running.indexOf(first), 1);
  tierStore.injectFault({ operation: 'get', kind: 'Unavailable', count: 1_000_000 }); // the tier is down from now on
  const second = await startTieredBroker(store, 2, running, tierStore);
  expect(await within(TAKEOVER_BOUND_MS, () => second.context.engine.serves('t', 0) && second.context.engine.leads('t', 0))).toBe(true);
  expect(second.context.engine.offsetFor('t', 0, -1).offset).toBe(30); // nothing acknowledged lost
  expect(second.context.engine.offsetFor('t', 0, EARLIEST_TIMESTAMP).offset).toBeGreaterThanOrEqual(retainedStart);
});
