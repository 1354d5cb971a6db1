// Adversarial review: a deleted topic's tiered history (docs/tier-protocol.md, DESIGN.md contract
// 10). The test here failed when written; its comment says how.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/cluster/control-store.ts';
import { Ferry } from '../../src/engine/index.ts';
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

// Found by review (finding 7), fixed: nothing deleted a deleted topic's tiered segments or its
// tier records (the orphan sweeper [T6] runs only for partitions a broker leads, and a deleted
// incarnation is led by nobody again). Now the tierer's RetiredIncarnationSweeper deletes them.
test("a deleted topic's tiered segments are deleted in time", async () => {
  const clock = new ManualClock(T0);
  const store = new MemoryStore();
  const control = new ControlStore(store, '');
  const ferry = await Ferry.open({
    directory: tempDir(),
    clock,
    log: { segmentBytes: 4096 },
    wal: { store, writerId: 'w', config: { uploadIntervalMs: WAL_INTERVAL_MS } },
    tier: { store, control, intervalMs: 3_600_000 },
  });
  const topic = ferry.createTopic('events', { partitions: 1 });
  for (let i = 0; i < 4; i++)
    await passUntilSettled(
      clock,
      ferry.produce(
        'events',
        Array.from({ length: 10 }, (_, r) => ({ value: `record ${i}/${r} `.padEnd(300, '.') })),
        { acks: 'all' },
      ),
      WAL_INTERVAL_MS,
    );
  while ((await ferry.tierer!.tierDue()) > 0);
  const prefix = tieredPartitionPrefix('', topic.id, 0);
  expect((await store.list(prefix)).objects.length).toBeGreaterThan(0);
  await ferry.deleteTopic('events');
  for (let look = 0; look < 2; look++) {
    // a sighting, and another a delay later
    clock.advance(TIER_ORPHAN_DELAY_MS + TIER_SWEEP_INTERVAL_MS);
    await ferry.tierer!.tierDue();
    await settle();
  }
  expect((await store.list(prefix)).objects.length).toBe(0);
  expect(await new TierRecords(control).list()).toEqual([]); // and its tier record
  await ferry.close();
}, 60_000); // slow: the manual clock's half hour fires every engine timer in it
