// The engine hands the tierer its sweep interval and orphan delay (TierOptions.sweepIntervalMs,
// orphanDelayMs; production defaults TIER_SWEEP_INTERVAL_MS and TIER_ORPHAN_DELAY_MS): the
// simulation shortens them so that [T6] runs within a run.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/cluster/control-store.ts';
import { Ferry } from '../../src/engine/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tieredPartitionPrefix } from '../../src/tier/keys.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { passUntilSettled } from '../support/pass-until-settled.ts';
import { settle } from '../support/settle.ts';
import { tempDir } from '../support/temp-dir.ts';

const T0 = 1_700_000_000_000;
const WAL_INTERVAL_MS = 60_000;
const SWEEP_INTERVAL_MS = 100;
const ORPHAN_DELAY_MS = 1_000;

test("a deleted topic's tiered segments go after the engine's own orphan delay", async () => {
  const clock = new ManualClock(T0);
  const store = new MemoryStore();
  const ferry = await Ferry.open({
    directory: tempDir(),
    clock,
    log: { segmentBytes: 4096 },
    wal: { store, writerId: 'w', config: { uploadIntervalMs: WAL_INTERVAL_MS } },
    tier: { store, control: new ControlStore(store, ''), intervalMs: 3_600_000, sweepIntervalMs: SWEEP_INTERVAL_MS, orphanDelayMs: ORPHAN_DELAY_MS },
  });
  const topic = ferry.createTopic('events', { partitions: 1 });
  for (let i = 0; i < 2; i++)
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
    clock.advance(ORPHAN_DELAY_MS + SWEEP_INTERVAL_MS); // seconds, not the default's ten minutes
    await ferry.tierer!.tierDue();
    await settle();
  }
  expect((await store.list(prefix)).objects.length).toBe(0);
  await ferry.close();
});
