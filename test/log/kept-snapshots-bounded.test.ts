// Review (issue 11, [T2]): ProducerStateManager.snapshotAt keeps every producer state it replays
// as `<offset>.snapshot` in the log directory, "a producer-state snapshot file per 32 MiB"
// (TIER_TAIL_MAX_BYTES). But a quiet partition tiers its tail every TIER_TAIL_MAX_MS however small,
// so it keeps a snapshot file every 10 s, and none of them goes until local retention deletes the
// segment they lie in (deleteSnapshotsBefore), which for the active segment is after segment.ms
// (7 days): ~60,000 files per quiet partition, each snapshotAt listing the whole directory again.
// Each file holds the whole producer state: measured with 1,000 idempotent producers taking turns
// at one batch a second, an hour kept 327 files, 14.6 MB of snapshots beside 262 KB of log (56x);
// a week of it is gigabytes per partition.
import { expect, test } from 'bun:test';
import { readdirSync } from 'node:fs';
import { ControlStore } from '../../src/control/control-store.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { TierRecords, tieredEnd } from '../../src/tier/tier-record.ts';
import { TIER_TAIL_MAX_BYTES, Tierer, type TierSource } from '../../src/tier/tierer.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { idOf } from '../support/topic-ids.ts';
import { tempDir } from '../support/temp-dir.ts';

const TOPIC_ID = idOf('quiet');
const SECOND_MS = 1000;
const LEAD_SECONDS = 3600;
/** What the design allows: one per local segment (its roll), one per TIER_TAIL_MAX_BYTES tiered, and the log start's. */
const SNAPSHOTS_SLACK = 2;

test('[T2] the snapshot files kept for tiered ends stay a few per segment, not one per tiered piece', async () => {
  const clock = new ManualClock();
  const records = new TierRecords(new ControlStore(new MemoryStore(), 'cluster'));
  const log = PartitionLog.open(tempDir(), { clock });
  const source: TierSource & { highWatermark: number } = { topic: 'quiet', topicId: TOPIC_ID, partition: 0, leaderEpoch: 1, log, highWatermark: 0 };
  const tierer = new Tierer({ store: new MemoryStore(), prefix: 'tiered', records, clock, random: new SeededRandom(3), partitions: () => [source] });
  for (let s = 0; s < LEAD_SECONDS; s++) {
    log.append(buildRecordBatch([{ value: `v${s}`, timestamp: clock.nowMs() }], { nowMs: clock.nowMs(), producerId: 7, producerEpoch: 0, baseSequence: s }), 1);
    source.highWatermark = log.logEndOffset;
    await tierer.tierDue();
    clock.advance(SECOND_MS);
  }
  expect(tieredEnd(await records.read(TOPIC_ID, 0))).toBeGreaterThan(log.logEndOffset - 20); // tiered all along, in pieces
  const snapshots = readdirSync(log.directory).filter((name) => name.endsWith('.snapshot'));
  const allowed = log.segmentBaseOffsets.length + Math.ceil(log.sizeBytes / TIER_TAIL_MAX_BYTES) + SNAPSHOTS_SLACK;
  // Failed before snapshotAt dropped the earlier ones it kept in the segment: one file per piece tiered (~330 in an hour) in a log of one segment.
  expect(snapshots.length).toBeLessThanOrEqual(allowed);
  await log.close();
}, 60_000);
