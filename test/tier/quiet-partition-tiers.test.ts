// A quiet partition's active segment rolls once its tiered end has stayed below its log end for
// TIER_TAIL_MAX_MS, so it tiers, and WAL GC (which deletes a stream in order) is no longer held
// at its frames by it: every busy partition's objects behind them go too (review finding 5).
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { Engine } from '../../src/engine/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { TIER_TAIL_MAX_MS } from '../../src/tier/tierer.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { parseWalObjectKey } from '../../src/wal/keys.ts';
import { settle } from '../support/settle.ts';
import { tempDir } from '../support/temp-dir.ts';

const T0 = 1_700_000_000_000;
/** Tiering and GC run when the test says. */
const DRIVEN_BY_THE_TEST_MS = 24 * 3_600_000;
const UPLOAD_INTERVAL_MS = 10;

async function produced(clock: ManualClock, ferry: Engine, topic: string, value: string): Promise<void> {
  let done = false;
  const producing = ferry.produce(topic, [{ value }], { acks: 'all' }).finally(() => (done = true));
  while (!done) {
    clock.advance(UPLOAD_INTERVAL_MS);
    await settle();
  }
  await producing;
}

async function walObjects(store: MemoryStore): Promise<number> {
  return (await store.list('wal/')).objects.filter((object) => parseWalObjectKey('', object.key) !== null).length;
}

test('a quiet partition tiers after TIER_TAIL_MAX_MS, and the WAL objects behind its frames are collected', async () => {
  const clock = new ManualClock(T0);
  const wal = new MemoryStore();
  const tier = new MemoryStore();
  const ferry = await Engine.open({
    directory: tempDir(),
    clock,
    log: { segmentBytes: 4096 },
    wal: { store: wal, writerId: 'w', config: { uploadIntervalMs: UPLOAD_INTERVAL_MS } },
    tier: { store: tier, control: new ControlStore(tier, ''), intervalMs: DRIVEN_BY_THE_TEST_MS },
    walGcIntervalMs: DRIVEN_BY_THE_TEST_MS,
  });
  try {
    const quiet = ferry.createTopic('quiet', { partitions: 1 });
    ferry.createTopic('busy', { partitions: 1 });
    await produced(clock, ferry, 'quiet', 'one record, then nothing');
    for (let i = 0; i < 60; i++) await produced(clock, ferry, 'busy', `record ${i} `.padEnd(300, '.'));
    while ((await ferry.tierer!.tierDue()) > 0);
    await ferry.walCollector!.collect();
    const pinned = await walObjects(wal);
    expect(pinned).toBeGreaterThan(50); // the quiet partition's frame, in object 0, holds the stream
    expect(ferry.tierer!.tieredEndOf(quiet.id, 0)).toBe(0);
    clock.advance(TIER_TAIL_MAX_MS);
    await ferry.tierer!.tierDue(); // rolls the quiet partition's segment
    while ((await ferry.tierer!.tierDue()) > 0);
    expect(ferry.tierer!.tieredEndOf(quiet.id, 0)).toBe(1);
    await ferry.walCollector!.collect();
    expect(await walObjects(wal)).toBeLessThan(pinned / 2);
    const [first] = (await ferry.fetchWithTier('quiet', 0, 0)).batches;
    expect(first?.baseOffset).toBe(0);
  } finally {
    await ferry.close();
  }
});
