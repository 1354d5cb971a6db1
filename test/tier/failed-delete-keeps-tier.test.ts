// Found by the review of the late fixes (issue 11), fixed. Review of the late fixes (issue 11), src/engine/engine.ts deleteTopic + #registryTopicIds.
// A single broker's retired sweeper now treats as dead exactly the ids in #deletedTopicIds, and
// deleteTopic adds the topic's id there BEFORE the registry write that may fail (a full disk).
// That delete fails and, by design (test/engine/delete-on-full-disk.test.ts), leaves the topic
// registered and served, but its id stays in #deletedTopicIds: after the orphan delay the retired
// sweeper deletes the tier of a live topic (its tier record and segments), and every offset below
// the local log start is lost. Severity: data loss (trigger: a failed delete, e.g. ENOSPC).
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { Engine } from '../../src/engine/index.ts';
import { TOPICS_FILE } from '../../src/engine/topic-registry.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { TIER_ORPHAN_DELAY_MS, TIER_SWEEP_INTERVAL_MS } from '../../src/tier/orphan-sweeper.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { type Disk, systemDisk } from '../../src/util/disk.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { tempDir } from '../support/temp-dir.ts';

/** The tierer's timer never fires by itself: the test drives its rounds. */
const DRIVEN_BY_THE_TEST_MS = 3_600_000;
const RECORDS = 40;
/** Sweep rounds after the failed delete, each a sweep interval apart: well past the orphan delay. */
const SWEEP_ROUNDS = Math.ceil(TIER_ORPHAN_DELAY_MS / TIER_SWEEP_INTERVAL_MS) + 4;

/** The system disk, except that opening the registry's temporary file fails ENOSPC while `full`. */
function registryFullDisk(): { disk: Disk; full: { on: boolean } } {
  const full = { on: false };
  const disk: Disk = {
    ...systemDisk,
    openSync(path, flags) {
      if (full.on && path.endsWith(`${TOPICS_FILE}.tmp`)) throw Object.assign(new Error('ENOSPC: no space left on device, open'), { code: 'ENOSPC' });
      return systemDisk.openSync(path, flags);
    },
  };
  return { disk, full };
}

test('a delete that failed (the topic stays registered and served) does not let the retired sweeper delete its tier', async () => {
  const { disk, full } = registryFullDisk();
  const tier = new MemoryStore();
  const clock = new ManualClock();
  const ferry = await Engine.open({
    directory: tempDir(),
    disk,
    clock,
    random: new SeededRandom(1),
    log: { segmentBytes: 1024, flush: { kind: 'none' } },
    tier: { store: tier, control: new ControlStore(tier, ''), intervalMs: DRIVEN_BY_THE_TEST_MS },
  });
  try {
    ferry.createTopic('t', { partitions: 1 });
    for (let i = 0; i < RECORDS; i++) await ferry.produce('t', [{ value: `record ${i}`.padEnd(100, '.') }], { partition: 0 });
    while ((await ferry.tierer!.tierDue()) > 0);
    const tiered = (await tier.list('')).objects.map((object) => object.key).sort();
    expect(tiered.length).toBeGreaterThan(1); // a tier record and segments

    full.on = true;
    await expect(ferry.deleteTopic('t')).rejects.toThrow('ENOSPC');
    full.on = false;
    expect(ferry.serves('t', 0)).toBe(true); // the delete failed: the topic is whole

    for (let round = 0; round < SWEEP_ROUNDS; round++) {
      clock.advance(TIER_SWEEP_INTERVAL_MS);
      await ferry.tierer!.tierDue();
    }
    // (the tail roll, TIER_TAIL_MAX_MS, may tier the last records meanwhile: more keys, never fewer)
    expect((await tier.list('')).objects.map((object) => object.key)).toEqual(expect.arrayContaining(tiered)); // FAILS: the live topic's tier is swept, record and all
  } finally {
    await ferry.close();
  }
});
