// Review (27c, [T8], commit 2aed18d): dueMerge's run below the local log against a brute-force
// reference: the first TIER_MERGE_RUN consecutive pieces, each at most
// TIER_REMOTE_MERGE_PIECE_BYTES_MAX, at most TIER_REMOTE_MERGE_BYTES_MAX together, of any levels.
// Held (kept as a regression test): no valid run is passed over, none oversized is taken.
import { expect, test } from 'bun:test';
import type { PartitionLog } from '../../src/log/partition-log.ts';
import { dueMerge, TIER_MERGE_RUN, TIER_REMOTE_MERGE_BYTES_MAX, TIER_REMOTE_MERGE_PIECE_BYTES_MAX } from '../../src/tier/merge-plan.ts';
import type { TierRecord } from '../../src/tier/tier-record.ts';
import { SeededRandom } from '../../src/util/random.ts';

const MiB = 1024 * 1024;

function firstValidRun(sizes: readonly number[]): number | null {
  for (let start = 0; start + TIER_MERGE_RUN <= sizes.length; start++) {
    const window = sizes.slice(start, start + TIER_MERGE_RUN);
    if (window.every((bytes) => bytes <= TIER_REMOTE_MERGE_PIECE_BYTES_MAX) && window.reduce((a, b) => a + b, 0) <= TIER_REMOTE_MERGE_BYTES_MAX) return start;
  }
  return null;
}

test('[T8] the run read back from the tier is the first valid window, for random piece sizes and levels', () => {
  const random = new SeededRandom(2727);
  const choices = [1, 8, 32, 40, 63, 64, 65, 128, 512].map((m) => m * MiB);
  for (let round = 0; round < 3000; round++) {
    const count = random.nextInt(60);
    const sizes = Array.from({ length: count }, () => choices[random.nextInt(choices.length)]! + (random.nextInt(3) - 1));
    const segments = sizes.map((bytes, i) => ({ state: 'copied', baseOffset: i * 10, endOffset: i * 10 + 10, bytes, level: random.nextInt(3), uploadId: `u${i}`, maxTimestamp: 0, epochs: [] }));
    const end = count * 10;
    const log = { logStartOffset: end, segmentBaseOffsets: [end], logEndOffset: end } as unknown as PartitionLog;
    const record = { leaderEpoch: 1, startOffset: 0, segments } as unknown as TierRecord;
    const start = firstValidRun(sizes);
    const got = dueMerge(log, record);
    if (start === null) expect(got).toBeNull();
    else expect(got).toEqual({ baseOffset: start * 10, endOffset: (start + TIER_MERGE_RUN) * 10, fromTier: true });
  }
});
