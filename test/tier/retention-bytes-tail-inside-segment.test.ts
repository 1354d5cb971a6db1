// Review (issue 11, [T2] with [T7]): retention.bytes counts the whole log, the tier and "the local
// bytes above the tier's end" (retainedStart's localBytesAboveTier). The tierer passes
// log.sizeBytesFrom(TE), which counts only the local segments starting at or after TE: while
// segments were tiered whole TE was a segment base and that was exact, but tiering from inside
// the active segment puts TE inside it, and the bytes between TE and the log end are not counted.
// The log then stays above retention.bytes by up to a segment (TIER_TAIL_MAX_BYTES of committed
// bytes plus whatever is not committed yet). PartitionLog.bytesFrom, added for [T2], is the count.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { copiedSegments, TierRecords, tieredEnd } from '../../src/tier/tier-record.ts';
import { Tierer, type TierSource } from '../../src/tier/tierer.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { idOf } from '../support/topic-ids.ts';
import { tempDir } from '../support/temp-dir.ts';

const TOPIC_ID = idOf('t');
const T0 = 1_700_000_000_000;
/** Every batch is this long: one record of a fixed-width value. */
const BATCH_BYTES = buildRecordBatch([{ value: 'v000', timestamp: T0 }], { nowMs: T0 }).length;
const BATCHES_PER_SEGMENT = 5;

function batch(i: number): Uint8Array {
  return buildRecordBatch([{ value: `v${String(i).padStart(3, '0')}`, timestamp: T0 + i }], { nowMs: T0 });
}

test('[T7] retention.bytes counts the committed bytes above a tiered end inside the active segment', async () => {
  // Segments [0, 5), [5, 10) rolled and tiered whole; the active [10, ...) tiered in pieces of 2 batches, 3 batches above the tiered end.
  // retention.bytes: all but the oldest segment. The whole log is 5 + 5 + 8 + 3 = 21 batches, so [0, 5) must go (16 stay).
  const retentionBytes = 16 * BATCH_BYTES;
  const log = PartitionLog.open(tempDir(), { clock: new ManualClock(T0), config: { retentionBytes, retentionMs: -1 } });
  for (let i = 0; i < 2 * BATCHES_PER_SEGMENT; i++) {
    if (i > 0 && i % BATCHES_PER_SEGMENT === 0) log.roll();
    log.append(batch(i), 1);
  }
  log.roll();
  const records = new TierRecords(new ControlStore(new MemoryStore(), 'cluster'));
  const source: TierSource & { highWatermark: number } = { topic: 't', topicId: TOPIC_ID, partition: 0, leaderEpoch: 1, log, highWatermark: log.logEndOffset };
  // Retention first: the log fits while the active segment is empty. Tail pieces of exactly 2 batches; no tail by age.
  const tierer = new Tierer({
    store: new MemoryStore(),
    prefix: '',
    records,
    clock: new ManualClock(T0),
    random: new SeededRandom(1),
    partitions: () => [source],
    tailMaxBytes: 2 * BATCH_BYTES,
    tailMaxMs: 24 * 3600_000,
  });
  for (let i = 2 * BATCHES_PER_SEGMENT; i < 2 * BATCHES_PER_SEGMENT + 8; i++) {
    log.append(batch(i), 1);
    source.highWatermark = log.logEndOffset;
    while ((await tierer.tierDue()) > 0);
  }
  expect(tieredEnd(await records.read(TOPIC_ID, 0))).toBe(18);
  for (let i = 18; i < 21; i++) log.append(batch(i), 1); // 3 batches above the tiered end, committed or not
  source.highWatermark = 19; // one batch committed above the tiered end: no piece of 2 is due
  await tierer.tierDue(); // retention runs first in every round
  const record = await records.read(TOPIC_ID, 0);
  expect(log.bytesFrom(18)).toBe(3 * BATCH_BYTES);
  const wholeLogBytes = copiedSegments(record).reduce((sum, s) => sum + (s.sections.log?.length ?? 0), 0) + log.bytesFrom(18);
  // Failed with sizeBytesFrom: the start stayed at 0, the 3 batches above the tiered end uncounted (the log holds 21 batches against retention.bytes' 16).
  expect([record.startOffset, wholeLogBytes]).toEqual([5, retentionBytes]);
  await log.close();
});
