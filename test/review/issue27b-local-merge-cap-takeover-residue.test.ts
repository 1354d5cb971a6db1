// Review (27b, [T8], commit 59f080e): TIER_LOCAL_MERGE_BYTES_MAX keeps a busy partition's pieces
// unmerged inside its active segment until the roll. A takeover that rebuilds from the tier ([K2]:
// a restarted broker, a claimant that was no follower) starts its log at the tiered end, so the old
// leader's active segment never rolls here: its pieces are below the new log, where only merges
// read back from the tier reach them, and those take at most TIER_REMOTE_MERGE_BYTES_MAX (64 MiB)
// per run of TIER_MERGE_RUN. A busy partition's pieces (8 to 32 MiB: TIER_TAIL_MAX_MS of a
// partition written at 0.8 MiB/s or more) are too big for either, so each takeover leaves the old
// leader's whole active segment of pieces in the record for good (retention.ms = -1): up to
// segment.bytes / piece, 128 per 1 GiB segment of 8 MiB pieces, where before the cap a level merge
// left at most TIER_MERGE_RUN - 1 per level. TIERED_SEGMENTS_MAX (10,000) is then ~80 takeovers away
// (a rolling restart a day: under three months), after which the partition stops tiering and its
// WAL is no longer collected.
//
// Fixed: merges read back from the tier take TIER_MERGE_RUN pieces of up to
// TIER_REMOTE_MERGE_PIECE_BYTES_MAX each, TIER_REMOTE_MERGE_BYTES_MAX (512 MiB) together.
//
// Scaled down: pieces of PIECE_BYTES (4 MiB and a bit; 16 of them exceed the 64 MiB a remote run
// took before the fix, as 16 of production's 8 to 32 MiB pieces do) and a local cap of 4 pieces, as
// production's 128 MiB is of 32 MiB pieces.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { TIER_MERGE_RUN, TIER_REMOTE_MERGE_BYTES_MAX, TIER_REMOTE_MERGE_PIECE_BYTES_MAX } from '../../src/tier/merge-plan.ts';
import { copiedSegments, TierRecords, tieredEnd } from '../../src/tier/tier-record.ts';
import { epochsIn, Tierer, type TierSource } from '../../src/tier/tierer.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { idOf } from '../support/topic-ids.ts';
import { tempDir } from '../support/temp-dir.ts';

const TOPIC_ID = idOf('busy');
/** Batches per piece (a batch is at most 1 MiB). */
const BATCHES_PER_PIECE = 5;
/** A piece: TIER_MERGE_RUN of them exceed the 64 MiB a remote run took before the fix, and fit today's limits. */
const PIECE_BYTES = 4 * 1024 * 1024 + 4096;
const VALUE_BYTES = Math.ceil(PIECE_BYTES / BATCHES_PER_PIECE);
/** 128 MiB over 32 MiB pieces: a run of TIER_MERGE_RUN never fits. */
const LOCAL_MERGE_BYTES_MAX = 4 * PIECE_BYTES;

let sequence = 0;
function bigBatch(clock: ManualClock): Uint8Array {
  const value = new Uint8Array(VALUE_BYTES).fill(sequence % 251);
  return buildRecordBatch([{ value, timestamp: clock.nowMs() }], { nowMs: clock.nowMs(), producerId: 7, producerEpoch: 0, baseSequence: sequence++ });
}

async function lead(log: PartitionLog, epoch: number, store: MemoryStore, records: TierRecords, clock: ManualClock, pieces: number, localMergeBytesMax: number): Promise<void> {
  const source: TierSource & { highWatermark: number } = { topic: 'busy', topicId: TOPIC_ID, partition: 0, leaderEpoch: epoch, log, highWatermark: log.logEndOffset };
  const tierer = new Tierer({ store, prefix: 'tiered', records, clock, random: new SeededRandom(epoch), partitions: () => [source], tailMaxBytes: PIECE_BYTES, localMergeBytesMax });
  for (let i = 0; i < pieces; i++) {
    for (let b = 0; b < BATCHES_PER_PIECE; b++) log.append(bigBatch(clock), epoch);
    source.highWatermark = log.logEndOffset;
    while ((await tierer.tierDue()) > 0);
    clock.advance(1000);
  }
  for (let round = 0; round < 4; round++) await tierer.tierDue(); // any merge due (from the tier too)
  tierer.stop();
}

/** The pieces of each level the record holds. */
async function piecesByLevel(records: TierRecords): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  for (const segment of copiedSegments(await records.read(TOPIC_ID, 0))) counts.set(segment.level ?? 0, (counts.get(segment.level ?? 0) ?? 0) + 1);
  return counts;
}

async function takeoverResidue(localMergeBytesMax: number): Promise<Map<number, number>> {
  const clock = new ManualClock();
  const store = new MemoryStore();
  const records = new TierRecords(new ControlStore(new MemoryStore(), 'cluster'));
  const config = { retentionMs: -1, retentionBytes: -1 };
  const old = PartitionLog.open(tempDir(), { clock, config });
  await lead(old, 1, store, records, clock, TIER_MERGE_RUN, localMergeBytesMax); // a busy leader's active segment, tiered in pieces
  // [K2] The next leader rebuilds: its log starts at the tiered end.
  const start = tieredEnd(await records.read(TOPIC_ID, 0));
  expect(start).toBe(old.logEndOffset);
  const next = PartitionLog.open(tempDir(), { clock, config });
  next.startAt(start, epochsIn(old.leaderEpochs, 0, start), old.producerSnapshotAt(start));
  await lead(next, 2, store, records, clock, 1, localMergeBytesMax);
  await Promise.all([old.close(), next.close()]);
  return piecesByLevel(records);
}

test('[T8] before the local merge cap, a takeover left at most TIER_MERGE_RUN - 1 pieces of a level behind (control)', async () => {
  const residue = await takeoverResidue(Number.POSITIVE_INFINITY);
  for (const count of residue.values()) expect(count).toBeLessThanOrEqual(TIER_MERGE_RUN - 1);
}, 60_000);

test("[T8] with the local merge cap, a takeover leaves the old leader's whole active segment of busy pieces in the record for good", async () => {
  const residue = await takeoverResidue(LOCAL_MERGE_BYTES_MAX);
  // Failed before the fix: the old leader's TIER_MERGE_RUN pieces of level 0 (plus the new leader's one) stayed, neither merged locally nor from the tier.
  expect(TIER_MERGE_RUN * PIECE_BYTES).toBeLessThanOrEqual(TIER_REMOTE_MERGE_BYTES_MAX);
  expect(PIECE_BYTES).toBeLessThanOrEqual(TIER_REMOTE_MERGE_PIECE_BYTES_MAX);
  for (const count of residue.values()) expect(count).toBeLessThanOrEqual(TIER_MERGE_RUN - 1);
}, 60_000);
