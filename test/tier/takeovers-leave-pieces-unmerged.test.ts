// Review (issue 11, [T8]): the tier record must stay bounded under continuous small writes. Each
// takeover that rebuilds from the tier ([K2]: a restarted broker, or a claimant that was no
// follower) starts its log at the tiered end, and dueMerge merges only pieces inside a local
// segment: what the previous leader tiered of its active segment in pieces (up to
// TIER_MERGE_RUN - 1 per level) stays in the record as it is, for good with retention.ms = -1. So
// the record grows with every takeover (a rolling restart a day is thousands of entries within a
// year of a partition written now and then) until TIERED_SEGMENTS_MAX stops its tiering.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { TierRecords, tieredEnd } from '../../src/tier/tier-record.ts';
import { TIER_MERGE_RUN } from '../../src/tier/merge-plan.ts';
import { epochsIn, Tierer, type TierSource } from '../../src/tier/tierer.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { idOf } from '../support/topic-ids.ts';
import { tempDir } from '../support/temp-dir.ts';

const TOPIC_ID = idOf('quiet');
const SECOND_MS = 1000;
/** How long each leader leads (one small batch a second, a piece every TIER_TAIL_MAX_MS). */
const LEAD_SECONDS = 40 * 60;
const TAKEOVERS = 10;
/** A partition tiered in pieces: at most TIER_MERGE_RUN - 1 entries per level, a handful of levels. */
const ENTRIES_BOUND = 5 * TIER_MERGE_RUN;

test("[T8] the pieces each takeover leaves below the new leader's log are merged from the tier: the record stays bounded", async () => {
  const clock = new ManualClock();
  const store = new MemoryStore();
  const records = new TierRecords(new ControlStore(new MemoryStore(), 'cluster'));
  const config = { retentionMs: -1, retentionBytes: -1 };
  let sequence = 0;
  let log = PartitionLog.open(tempDir(), { clock, config });
  const logs = [log];
  for (let epoch = 1; epoch <= TAKEOVERS + 1; epoch++) {
    if (epoch > 1) {
      // [K2] The new leader's log starts at the tiered end with the tier's producer state, then takes the WAL's tail (here: the old log's).
      const start = tieredEnd(await records.read(TOPIC_ID, 0));
      const next = PartitionLog.open(tempDir(), { clock, config });
      next.startAt(start, epochsIn(log.leaderEpochs, 0, start), log.producerSnapshotAt(start));
      const tail = start < log.logEndOffset ? log.read(start, 1 << 20).batches.filter((b) => b.baseOffset >= start) : [];
      if (tail.length > 0) next.appendReplica(new Uint8Array(tail.flatMap((b) => [...b.bytes])));
      log = next;
      logs.push(log);
    }
    const source: TierSource & { highWatermark: number } = { topic: 'quiet', topicId: TOPIC_ID, partition: 0, leaderEpoch: epoch, log, highWatermark: log.logEndOffset };
    const tierer = new Tierer({ store, prefix: 'tiered', records, clock, random: new SeededRandom(epoch), partitions: () => [source] });
    for (let s = 0; s < LEAD_SECONDS; s++) {
      log.append(buildRecordBatch([{ value: `v${sequence}`, timestamp: clock.nowMs() }], { nowMs: clock.nowMs(), producerId: 7, producerEpoch: 0, baseSequence: sequence++ }), epoch);
      source.highWatermark = log.logEndOffset;
      await tierer.tierDue();
      clock.advance(SECOND_MS);
    }
    tierer.stop();
  }
  const record = await records.read(TOPIC_ID, 0);
  expect(tieredEnd(record)).toBeGreaterThan(log.logEndOffset - 30); // every leader kept tiering
  // Failed before merges read pieces back from the tier (dueMerge, fromTier): about 23 entries left behind per takeover (13 of level 1, 10 of level 0), ~250 after 10.
  expect(record.segments.length).toBeLessThanOrEqual(ENTRIES_BOUND);
  await Promise.all(logs.map((l) => l.close()));
}, 120_000);
