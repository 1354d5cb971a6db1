// Adversarial review: a deleted topic's tiered history (docs/tier-protocol.md, docs/design.md
// contract 10). The first test here failed when written; its comment says how. The second: the engine
// hands the tierer its sweep interval and orphan delay (TierOptions.sweepIntervalMs,
// orphanDelayMs), which the simulation shortens so that [T6] runs within a run.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { Engine, type EngineOptions } from '../../src/engine/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { TIER_ORPHAN_DELAY_MS, TIER_SWEEP_INTERVAL_MS } from '../../src/tier/orphan-sweeper.ts';
import { tieredPartitionPrefix } from '../../src/tier/keys.ts';
import { TierRecords } from '../../src/tier/tier-record.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { passUntilSettled } from '../support/pass-until-settled.ts';
import { settle } from '../support/settle.ts';
import { tempDir } from '../support/temp-dir.ts';

const T0 = 1_700_000_000_000;
/** The WAL's upload interval: a minute, so the sweeps' hours of manual time fire few of its timers. */
const WAL_INTERVAL_MS = 60_000;
/** The shortened sweep of the second test: seconds, not the default's ten minutes. */
const SWEEP_INTERVAL_MS = 100;
const ORPHAN_DELAY_MS = 1_000;

/**
 * Tiers `batches` batches of a topic, deletes it, and looks twice, `sweepWaitMs` apart (a
 * sighting, and another a delay later): what the tier holds of it then, and its tier records.
 */
async function deletedTopicAfterSweeps(batches: number, sweep: Pick<NonNullable<EngineOptions['tier']>, 'sweepIntervalMs' | 'orphanDelayMs'>, sweepWaitMs: number) {
  const clock = new ManualClock(T0);
  const store = new MemoryStore();
  const control = new ControlStore(store, '');
  const ferry = await Engine.open({
    directory: tempDir(),
    clock,
    log: { segmentBytes: 4096 },
    wal: { store, writerId: 'w', config: { uploadIntervalMs: WAL_INTERVAL_MS } },
    tier: { store, control, intervalMs: 3_600_000, ...sweep },
  });
  const topic = ferry.createTopic('events', { partitions: 1 });
  for (let i = 0; i < batches; i++) {
    const records = Array.from({ length: 10 }, (_, r) => ({ value: `record ${i}/${r} `.padEnd(300, '.') }));
    await passUntilSettled(clock, ferry.produce('events', records, { acks: 'all' }), WAL_INTERVAL_MS);
  }
  while ((await ferry.tierer!.tierDue()) > 0);
  const prefix = tieredPartitionPrefix('', topic.id, 0);
  const tieredBefore = (await store.list(prefix)).objects.length;
  await ferry.deleteTopic('events');
  for (let look = 0; look < 2; look++) {
    clock.advance(sweepWaitMs);
    await ferry.tierer!.tierDue();
    await settle();
  }
  const outcome = { tieredBefore, tieredAfter: (await store.list(prefix)).objects.length, tierRecords: await new TierRecords(control).list() };
  await ferry.close();
  return outcome;
}

// Found by review (finding 7), fixed: nothing deleted a deleted topic's tiered segments or its
// tier records (the orphan sweeper [T6] runs only for partitions a broker leads, and a deleted
// incarnation is led by nobody again). Now the tierer's RetiredIncarnationSweeper deletes them.
test("a deleted topic's tiered segments are deleted in time", async () => {
  const outcome = await deletedTopicAfterSweeps(4, {}, TIER_ORPHAN_DELAY_MS + TIER_SWEEP_INTERVAL_MS);
  expect(outcome.tieredBefore).toBeGreaterThan(0);
  expect(outcome.tieredAfter).toBe(0);
  expect(outcome.tierRecords).toEqual([]); // and its tier record
}, 60_000); // slow: the manual clock's half hour fires every engine timer in it

test("a deleted topic's tiered segments go after the engine's own orphan delay", async () => {
  const outcome = await deletedTopicAfterSweeps(2, { sweepIntervalMs: SWEEP_INTERVAL_MS, orphanDelayMs: ORPHAN_DELAY_MS }, ORPHAN_DELAY_MS + SWEEP_INTERVAL_MS);
  expect(outcome.tieredBefore).toBeGreaterThan(0);
  expect(outcome.tieredAfter).toBe(0);
});
