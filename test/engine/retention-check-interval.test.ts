// EngineOptions.retentionCheckIntervalMs (Kafka's log.retention.check.interval.ms): retention runs
// on its own at that interval, five minutes unless set (the simulation sets it so local segments
// go within a run).
import { expect, test } from 'bun:test';
import { Engine } from '../../src/engine/index.ts';
import { SimDisk } from '../../src/sim/disk.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';

const SEGMENT_BYTES = 1024;
const CHECK_INTERVAL_MS = 1_000;
const DEFAULT_CHECK_INTERVAL_MS = 5 * 60 * 1000;

/** An engine with one topic whose log rolled a few segments past a retention of one segment. */
async function rolledEngine(clock: ManualClock, retentionCheckIntervalMs?: number): Promise<Engine> {
  const disk = new SimDisk({ random: new SeededRandom(1) });
  const log = { flush: { kind: 'none' } as const, segmentBytes: SEGMENT_BYTES, retentionBytes: SEGMENT_BYTES };
  const engine = await Engine.open({ directory: '/data', disk, clock, log, ...(retentionCheckIntervalMs === undefined ? {} : { retentionCheckIntervalMs }) });
  engine.createTopic('t', { partitions: 1 });
  for (let i = 0; i < 20; i++) await engine.produce('t', [{ value: 'x'.repeat(200) }], { partition: 0 });
  return engine;
}

test('retention runs every retentionCheckIntervalMs', async () => {
  const clock = new ManualClock();
  const engine = await rolledEngine(clock, CHECK_INTERVAL_MS);
  try {
    expect(engine.localLogStartOffset('t', 0)).toBe(0);
    clock.advance(CHECK_INTERVAL_MS);
    expect(engine.localLogStartOffset('t', 0)).toBeGreaterThan(0);
  } finally {
    await engine.close();
  }
});

test('without it, retention waits the default five minutes', async () => {
  const clock = new ManualClock();
  const engine = await rolledEngine(clock);
  try {
    clock.advance(DEFAULT_CHECK_INTERVAL_MS - 1);
    expect(engine.localLogStartOffset('t', 0)).toBe(0);
    clock.advance(1);
    expect(engine.localLogStartOffset('t', 0)).toBeGreaterThan(0);
  } finally {
    await engine.close();
  }
});

test('an interval that is not a positive integer is refused before the disk is touched', async () => {
  const disk = new SimDisk({ random: new SeededRandom(1) });
  for (const retentionCheckIntervalMs of [0, -1, 0.5]) {
    await expect(Engine.open({ directory: '/data', disk, clock: new ManualClock(), retentionCheckIntervalMs })).rejects.toThrow('retentionCheckIntervalMs');
  }
  expect(disk.existsSync('/data')).toBe(false);
});
