// Review (issue 11, [T8] with [D2], [T6]): a merge replaces tiered pieces with one object; a
// remote reader holding the record read before the merge still reads the pieces until the orphan
// sweeper deletes them (TIER_ORPHAN_DELAY_MS after it first saw them unnamed), and then finds
// them gone, reads the record again and serves the same batches from the merged object. The
// sweeper never deletes the merged object, announced or committed.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { parseTieredSegmentKey } from '../../src/tier/keys.ts';
import { RemoteReader } from '../../src/tier/remote-reader.ts';
import { copiedSegments, TierRecords } from '../../src/tier/tier-record.ts';
import { Tierer, type TierSource } from '../../src/tier/tierer.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { idOf } from '../support/topic-ids.ts';
import { tempDir } from '../support/temp-dir.ts';

const TOPIC_ID = idOf('t');
const T0 = 1_700_000_000_000;
const ORPHAN_DELAY_MS = 60_000;

test('[T8] a reader with the record from before a merge reads the pieces until they are swept, then the merged object', async () => {
  const clock = new ManualClock(T0);
  const store = new MemoryStore();
  const records = new TierRecords(new ControlStore(new MemoryStore(), 'cluster'));
  const log = PartitionLog.open(tempDir(), { clock });
  const batchBytes = buildRecordBatch([{ value: 'v00', timestamp: T0 }], { nowMs: T0 }).length;
  const source: TierSource & { highWatermark: number } = { topic: 't', topicId: TOPIC_ID, partition: 0, leaderEpoch: 1, log, highWatermark: 0 };
  const tierer = new Tierer({
    store,
    prefix: 'p',
    records,
    clock,
    random: new SeededRandom(2),
    partitions: () => [source],
    tailMaxBytes: 2 * batchBytes,
    sweepIntervalMs: 0,
    orphanDelayMs: ORPHAN_DELAY_MS,
    tailMaxMs: 3_600_000,
  });
  for (let i = 0; i < 8; i++) {
    log.append(buildRecordBatch([{ value: `v${String(i).padStart(2, '0')}`, timestamp: T0 + i }], { nowMs: T0 }), 1);
    source.highWatermark = log.logEndOffset;
    while ((await tierer.tierDue()) > 0);
  }
  expect(copiedSegments(await records.read(TOPIC_ID, 0)).map((s) => [s.baseOffset, s.endOffset])).toEqual([
    [0, 2],
    [2, 4],
    [4, 6],
    [6, 8],
  ]);
  const reader = new RemoteReader({ store, prefix: 'p', records, clock, recordRefreshMs: 3_600_000 });
  const before = (await reader.read(TOPIC_ID, 0, 3, 1 << 20)).batches.map((b) => [...b.bytes]);
  log.roll(); // [0, 8) rolls: its pieces are merged into one object
  log.append(buildRecordBatch([{ value: 'v08', timestamp: T0 + 8 }], { nowMs: T0 }), 1);
  source.highWatermark = log.logEndOffset;
  await tierer.tierDue();
  const merged = copiedSegments(await records.read(TOPIC_ID, 0));
  expect(merged.map((s) => [s.baseOffset, s.endOffset])).toEqual([[0, 8]]);
  expect((await reader.read(TOPIC_ID, 0, 3, 1 << 20)).batches.map((b) => [...b.bytes])).toEqual(before); // the cached record's piece is still there
  // Sweeps: the pieces are seen unnamed, then deleted once the delay passed; the merged object stays.
  clock.advance(ORPHAN_DELAY_MS);
  await tierer.tierDue();
  const keys = (await store.list('p/')).objects.map((o) => o.key);
  expect(keys.map((k) => parseTieredSegmentKey(k)?.uploadId)).toEqual([merged[0]!.uploadId]);
  // Offset 5 lies in a piece this reader never read (nothing of it cached): its GET finds it gone, the record is read again.
  const after = await reader.read(TOPIC_ID, 0, 5, 1 << 20);
  expect(after.batches.map((b) => [...b.bytes])).toEqual(
    log
      .read(5, 1 << 20)
      .batches.filter((b) => b.baseOffset < 8)
      .map((b) => [...b.bytes]),
  );
  await log.close();
});
