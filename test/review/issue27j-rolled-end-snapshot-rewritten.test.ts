// Review 27j (f6305a9): ProducerStateReplay.snapshotAt keeps `<end>.snapshot` whenever the state
// was not loaded at `end` itself (`loadedEnd < end`), which is always the case for a walk from a
// range's base. Before, ProducerStateManager.snapshotAt kept a file only when it had to replay
// (no snapshot at `end` yet). So every rolled segment the tierer copies (its end is the next
// segment's base, where the roll already wrote the live state's snapshot) now rewrites that roll
// snapshot with the walk's copy: one more atomic write with fsyncs, synchronous on the event loop
// (the stall this commit set out to remove), and the live state's own file replaced by a derived one.
import { expect, test } from 'bun:test';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { ControlStore } from '../../src/control/control-store.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { snapshotFileName } from '../../src/log/producer-state.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { TierRecords } from '../../src/tier/tier-record.ts';
import { Tierer, type TierSource } from '../../src/tier/tierer.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { idOf } from '../support/topic-ids.ts';
import { tempDir } from '../support/temp-dir.ts';

const T0 = 1_700_000_000_000;

test("tiering a rolled segment leaves the roll's snapshot at its end as the roll wrote it", async () => {
  const clock = new ManualClock(T0);
  const directory = tempDir();
  const log = PartitionLog.open(directory, { clock });
  for (let sequence = 0; sequence <= 10; sequence++) {
    if (sequence === 10) log.roll(); // writes 10.snapshot, the live state's
    log.append(buildRecordBatch([{ value: `v-${sequence}`, timestamp: T0 }], { nowMs: T0, producerId: 7, producerEpoch: 0, baseSequence: sequence }), 1);
  }
  const rollSnapshot = join(directory, snapshotFileName(10));
  const before = statSync(rollSnapshot);
  const records = new TierRecords(new ControlStore(new MemoryStore(), 'cluster'));
  const source: TierSource = { topic: 't', topicId: idOf('review-27j-roll'), partition: 0, leaderEpoch: 1, log, highWatermark: log.logEndOffset };
  const tierer = new Tierer({ store: new MemoryStore(), prefix: 'tiered', records, clock, random: new SeededRandom(27), partitions: () => [source] });
  expect(await tierer.tierDue()).toBe(1); // [0, 10), the rolled segment
  const after = statSync(rollSnapshot);
  expect(after.ino).toBe(before.ino); // not replaced by a rewrite
  await log.close();
});
