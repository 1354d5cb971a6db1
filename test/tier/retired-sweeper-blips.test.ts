// Adversarial review of issue 11, guarantee 6 ("the sweep of deleted incarnations never deletes a
// live topic's tier"). Failed on main at 8c03420; fixed (a live sighting starts the delay over).
//
// What it shows: RetiredIncarnationSweeper (src/tier/retired-sweeper.ts, sweep(): the loop over
// byTopic) remembers when an id was FIRST seen missing from the live set, and forgets that only
// when the id's tier record is no longer listed; seeing the id live again does not clear it
// (`if (live.has(topicId)) continue;` skips the reset). So a live topic missing from one view, then
// present for hours, then missing from one more view at least TIER_ORPHAN_DELAY_MS after the first,
// is deleted at that second glitch: its tiered segments and its tier record, with no wait. The
// delay is meant to protect against exactly such brief misses ("an id that is live again at the
// later look ... is not deleted", test/tier/retired-sweeper.test.ts); it only does for the first
// one. With the WAL already collected below TE, that is acknowledged data lost for good.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/cluster/control-store.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tieredPartitionPrefix, tieredSegmentKey } from '../../src/tier/keys.ts';
import { RetiredIncarnationSweeper } from '../../src/tier/retired-sweeper.ts';
import { TierRecords } from '../../src/tier/tier-record.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { randomUuid, type Uuid } from '../../src/util/uuid.ts';

const DELAY_MS = 60_000;
const SWEEP_INTERVAL_MS = 5_000;

test('a live topic missing from two views a delay apart, live in every view between, keeps its tier', async () => {
  const random = new SeededRandom(11);
  const store = new MemoryStore();
  const records = new TierRecords(new ControlStore(store, ''));
  const clock = new ManualClock(0);
  const topicId: Uuid = randomUuid(random);
  await records.take(topicId, 0, 0);
  await store.put(tieredSegmentKey('', topicId, 0, 0, 10, randomUuid(random)), new Uint8Array(16));
  const views: ReadonlySet<Uuid>[] = [];
  const sweeper = new RetiredIncarnationSweeper({ store, prefix: '', records, clock, delayMs: DELAY_MS, liveTopicIds: async () => views.shift() ?? new Set([topicId]) });

  views.push(new Set()); // one view misses the live id (the case the delay exists for)
  await sweeper.sweep();
  for (let at = SWEEP_INTERVAL_MS; at < DELAY_MS; at += SWEEP_INTERVAL_MS) {
    // then it is live at every sweep for a delay
    clock.advance(SWEEP_INTERVAL_MS);
    await sweeper.sweep();
  }
  clock.advance(SWEEP_INTERVAL_MS);
  views.push(new Set()); // one more miss, a single view, a delay after the first
  await sweeper.sweep();

  expect((await store.list(tieredPartitionPrefix('', topicId, 0))).objects.length).toBe(1);
  expect((await records.list()).map((p) => p.topicId)).toEqual([topicId]);
});
