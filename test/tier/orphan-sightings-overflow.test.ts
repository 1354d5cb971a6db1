// Review (issue 11, [T6] with [T2]/[T8]): since tiering cuts a piece from every written
// partition every TIER_TAIL_MAX_MS and merges replace the pieces, every piece becomes an orphan
// (about 6 a minute per partition written at all, each remembered from its first sighting until
// its delete, >= TIER_ORPHAN_DELAY_MS later). One OrphanSweeper serves every partition a tierer
// leads and remembers ORPHANS_REMEMBERED_MAX (100,000) sightings; past it "the oldest sightings
// start over (a later delete, never an early one)". But when a delay's worth of orphans exceeds
// the bound (a broker leading ~1,600 partitions written now and then: ~6/min x 10 min x 1,600),
// each partition's re-noted sightings evict the next partition's before they come due, and no
// orphan is ever deleted again: the tier grows by every piece, and every LIST with it.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { tieredSegmentKey } from '../../src/tier/keys.ts';
import { OrphanSweeper } from '../../src/tier/orphan-sweeper.ts';
import { TierRecords } from '../../src/tier/tier-record.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { randomUuid } from '../../src/util/uuid.ts';
import { idOf } from '../support/topic-ids.ts';

const PARTITIONS = 2;
/** Orphans per partition: 110,000 in all, a tenth over the sweeper's bound. */
const ORPHANS_PER_PARTITION = 55_000;
const DELAY_MS = 60_000;
const SWEEP_ROUNDS = 3;

/** The two calls a sweeper makes, over a plain set of keys (a MemoryStore sorts every key at every LIST page: minutes at this count). */
function keyStore(keys: Set<string>): ObjectStore {
  return {
    list: async (prefix: string) => ({
      objects: [...keys]
        .filter((key) => key.startsWith(prefix))
        .sort()
        .map((key) => ({ key, size: 0, etag: '' })),
    }),
    delete: async (key: string) => void keys.delete(key),
  } as unknown as ObjectStore;
}

test('[T6] orphans past the remembered bound are still deleted, at most a few delays late', async () => {
  const keys = new Set<string>();
  const records = new TierRecords(new ControlStore(new MemoryStore(), 'cluster'));
  const clock = new ManualClock();
  const random = new SeededRandom(17);
  const topicId = idOf('busy');
  for (let partition = 0; partition < PARTITIONS; partition++) {
    for (let i = 0; i < ORPHANS_PER_PARTITION; i++) keys.add(tieredSegmentKey('', topicId, partition, i, i + 1, randomUuid(random)));
  }
  const sweeper = new OrphanSweeper({ store: keyStore(keys), prefix: '', clock, delayMs: DELAY_MS });
  let deleted = 0;
  for (let round = 0; round < SWEEP_ROUNDS; round++) {
    for (let partition = 0; partition < PARTITIONS; partition++) deleted += await sweeper.sweep(records, topicId, partition); // one sweep interval: each partition in turn
    clock.advance(DELAY_MS);
  }
  // Failed while a full sweeper evicted its oldest sightings: 0 deleted in every round after the first sightings, the bound's churn re-noting them for good.
  expect([deleted, keys.size]).toEqual([PARTITIONS * ORPHANS_PER_PARTITION, 0]);
}, 120_000);
