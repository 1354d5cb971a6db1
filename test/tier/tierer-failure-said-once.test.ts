// Adversarial review of 3f4c00f (Tierer.#tierOne / #step: "failures said once and counted").
// The test here failed when written; its comment says how.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { TierRecords } from '../../src/tier/tier-record.ts';
import { Tierer } from '../../src/tier/tierer.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { idOf } from '../support/topic-ids.ts';
import { tempDir } from '../support/temp-dir.ts';

/** Tier rounds run while the sweep keeps failing. */
const ROUNDS = 5;
/** Records of the log, a segment rolled every SEGMENT_RECORDS. */
const RECORDS = 16;
const SEGMENT_RECORDS = 5;

// Found by review (finding 3), fixed: a step that keeps failing is said again every round, each time followed by "works
// again". #tierOne clears the partition's failing mark whenever the tiering step did not fail,
// in the same round as a retention or sweep step that did: with the orphan sweep failing for good
// (the tier store's LIST down or forbidden), every due sweep logs "the orphan sweep of t-0 failed
// (... said once)" and then "tiering t-0 works again", a false recovery, forever. The same holds
// for a retention step that keeps failing (two lines every round). Severity: low (log noise and a
// misleading recovery line; the failure counter is right).
test('a sweep that keeps failing is said once, and no recovery is said while it fails', async () => {
  const clock = new ManualClock(1_700_000_000_000);
  const log = PartitionLog.open(tempDir(), {});
  for (let i = 0; i < RECORDS; i++) {
    if (i > 0 && i % SEGMENT_RECORDS === 0) log.roll();
    log.append(buildRecordBatch([{ value: `v${i}` }], { nowMs: clock.nowMs() }), 1);
  }
  const store = new MemoryStore();
  store.injectFault({ operation: 'list', kind: 'Unavailable', count: 1_000_000 }); // the sweep's LIST fails for good
  const records = new TierRecords(new ControlStore(new MemoryStore(), 'cluster'));
  const source = { topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 1, log, highWatermark: log.logEndOffset };
  const lines: string[] = [];
  const tierer = new Tierer({ store, prefix: '', records, clock, random: new SeededRandom(3), partitions: () => [source], sweepIntervalMs: 0, log: (line) => lines.push(line) });
  for (let round = 0; round < ROUNDS; round++) await tierer.tierDue();
  expect(lines.filter((line) => line.includes('orphan sweep') && line.includes('failed')).length).toBe(1);
  expect(lines.filter((line) => line.includes('works again'))).toEqual([]);
  await log.close();
});
