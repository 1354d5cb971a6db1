// Review (issue 11, [T8]): the tier record must stay bounded under continuous small writes. A
// quiet partition tiers a piece every TIER_TAIL_MAX_MS, and merges keep the record at a few
// entries per level, but dueMerge only merges pieces that start at a local segment's base. A
// promoted follower [K3] keeps its log, whose segment started where the follower's rebuild began
// (the tiered end when it started following, [K2]); once the old leader's merge swallowed that
// boundary into a bigger piece, no piece of the new leader's active segment is ever merged: one
// entry per TIER_TAIL_MAX_MS until the segment rolls (segment.ms: 7 days), so the record reaches
// TIERED_SEGMENTS_MAX (10,000) in about 28 hours and the partition stops tiering.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { TierRecords, tieredEnd } from '../../src/tier/tier-record.ts';
import { TIER_MERGE_RUN } from '../../src/tier/merge-plan.ts';
import { epochsIn, TIER_TAIL_MAX_MS, Tierer, type TierSource } from '../../src/tier/tierer.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { idOf } from '../support/topic-ids.ts';
import { tempDir } from '../support/temp-dir.ts';

const TOPIC_ID = idOf('quiet');
const SECOND_MS = 1000;
/** Hours of one small batch a second: pieces every TIER_TAIL_MAX_MS. */
const LEAD_SECONDS = 2 * 3600;
/** A tier record of a segment tiered in pieces: at most TIER_MERGE_RUN - 1 per level, a handful of levels (log16 of a week of pieces < 5). */
const ENTRIES_BOUND = 5 * TIER_MERGE_RUN;

let sequence = 0;
function smallBatch(clock: ManualClock): Uint8Array {
  const batch = buildRecordBatch([{ value: `v${sequence}`, timestamp: clock.nowMs() }], { nowMs: clock.nowMs(), producerId: 7, producerEpoch: 0, baseSequence: sequence });
  sequence++;
  return batch;
}

function tiererOf(clock: ManualClock, store: MemoryStore, records: TierRecords, source: TierSource): Tierer {
  return new Tierer({ store, prefix: 'tiered', records, clock, random: new SeededRandom(11), partitions: () => [source] });
}

async function entriesOf(records: TierRecords): Promise<number> {
  return (await records.read(TOPIC_ID, 0)).segments.length;
}

test('[T8] a promoted follower that keeps its log merges its small pieces: the tier record stays bounded', async () => {
  const clock = new ManualClock();
  const store = new MemoryStore();
  const records = new TierRecords(new ControlStore(new MemoryStore(), 'cluster'));
  const leaderLog = PartitionLog.open(tempDir(), { clock });
  const leader: { -readonly [K in keyof TierSource]: TierSource[K] } = { topic: 'quiet', topicId: TOPIC_ID, partition: 0, leaderEpoch: 1, log: leaderLog, highWatermark: 0 };
  const leaderTierer = tiererOf(clock, store, records, leader);
  let followerLog: PartitionLog | null = null;
  const second = async (source: { log: PartitionLog; highWatermark: number }, tierer: Tierer, append: () => void) => {
    append();
    source.highWatermark = source.log.logEndOffset;
    await tierer.tierDue();
    clock.advance(SECOND_MS);
  };
  // The old leader writes for an hour; a follower starts following after 4 pieces ([K2]: its log starts at the tiered end).
  for (let s = 0; s < 3600; s++) {
    await second(leader, leaderTierer, () => {
      const appended = leaderLog.append(smallBatch(clock), 1);
      if (followerLog !== null) followerLog.appendReplica(new Uint8Array(appended.batches.flatMap((b) => [...b.bytes])));
    });
    if (followerLog === null && tieredEnd(await records.read(TOPIC_ID, 0)) > 0 && (await entriesOf(records)) === 4) {
      const start = tieredEnd(await records.read(TOPIC_ID, 0));
      followerLog = PartitionLog.open(tempDir(), { clock });
      followerLog.startAt(start, epochsIn(leaderLog.leaderEpochs, 0, start), leaderLog.producerSnapshotAt(start));
      const behind = start < leaderLog.logEndOffset ? leaderLog.read(start, 1 << 20).batches.filter((b) => b.baseOffset >= start) : [];
      if (behind.length > 0) followerLog.appendReplica(new Uint8Array(behind.flatMap((b) => [...b.bytes])));
    }
  }
  expect(followerLog).not.toBeNull();
  const oldLeaderEntries = await entriesOf(records);
  expect(oldLeaderEntries).toBeLessThanOrEqual(ENTRIES_BOUND); // held: one leader's pieces are merged as they come
  leaderTierer.stop();
  // [K3] The follower is promoted (epoch 2) and keeps its log, a single active segment from where it started following.
  const promotedLog = followerLog!;
  expect(promotedLog.logEndOffset).toBe(leaderLog.logEndOffset);
  const promoted: { -readonly [K in keyof TierSource]: TierSource[K] } = { ...leader, leaderEpoch: 2, log: promotedLog, highWatermark: promotedLog.logEndOffset };
  const promotedTierer = tiererOf(clock, store, records, promoted);
  for (let s = 0; s < LEAD_SECONDS; s++) await second(promoted, promotedTierer, () => void promotedLog.append(smallBatch(clock), 2));
  const record = await records.read(TOPIC_ID, 0);
  expect(tieredEnd(record)).toBeGreaterThan(promotedLog.logEndOffset - (TIER_TAIL_MAX_MS / SECOND_MS) * 2); // it kept tiering
  // Failed while dueMerge wanted a piece at a segment's base: ~650 entries after 2 hours (one per piece), on the way to TIERED_SEGMENTS_MAX.
  expect(record.segments.length).toBeLessThanOrEqual(ENTRIES_BOUND);
  await Promise.all([leaderLog.close(), promotedLog.close()]);
}, 120_000);
