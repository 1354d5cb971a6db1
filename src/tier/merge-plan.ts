import type { PartitionLog } from '../log/partition-log.ts';
import { type CopiedSegment, copiedSegments, type TierRecord } from './tier-record.ts';

/**
 * [T8] Which tiered pieces a leader merges next (docs/tier-protocol.md): runs of one level inside
 * a local segment, a rolled segment tiled by pieces, or pieces an earlier leader left below the
 * local log. The Tierer uploads what this picks; nothing here reads a store.
 */

/**
 * [T8] How many consecutive tiered pieces of one level, inside one local segment, are merged into
 * one piece of the next level: a segment tiered in pieces every TIER_TAIL_MAX_MS for a week holds a
 * few dozen entries in the tier record, not 60,000 (TIERED_SEGMENTS_MAX), and each byte is uploaded
 * once per level (log16 of its pieces) before the segment's final merge when it rolls.
 */
export const TIER_MERGE_RUN = 16;
/**
 * [T8] The largest piece below the local log a merge reads back from the tier: each piece's object
 * is read whole, and the next one is fetched while the upload still holds views of the last one's
 * final batches, so a merge from the tier holds at most two of these and its upload's parts
 * (review 27c). A busy partition's pieces (up to TIER_TAIL_MAX_BYTES, 32 MiB, and a batch) fit;
 * the 512 MiB pieces of an earlier level-merge stay as they are.
 */
export const TIER_REMOTE_MERGE_PIECE_BYTES_MAX = 64 * 1024 * 1024;
/**
 * [T8] The most bytes one merge of pieces below the local log takes: TIER_MERGE_RUN pieces of a
 * busy partition (32 MiB each). Each takeover that rebuilds from the tier leaves the old leader's
 * pieces below the new log, a few small ones of each level (~23 per takeover, review finding 2)
 * and, since TIER_LOCAL_MERGE_BYTES_MAX keeps a busy partition's pieces apart until the roll, up
 * to a segment's worth of big ones (128 per 1 GiB segment of 8 MiB pieces): merged here, once per
 * takeover, or the record would fill within months of daily restarts (review 27b, finding 5).
 */
export const TIER_REMOTE_MERGE_BYTES_MAX = 512 * 1024 * 1024;
/**
 * [T8] The most bytes one merge inside a local segment takes before the segment rolls. A quiet
 * partition's small pieces (one every TIER_TAIL_MAX_MS) still merge by levels; a busy partition's
 * pieces of TIER_TAIL_MAX_BYTES (32 MiB) wait for the roll's merge. Merged by levels too, each of
 * their bytes was uploaded three times (piece, 512 MiB level, segment), and the tier cost the
 * broker as much CPU as the produce path. Any TIER_MERGE_RUN consecutive pieces left unmerged hold
 * more than this, so Kafka's largest segment (2 GiB) keeps at most 256: far below
 * TIERED_SEGMENTS_MAX.
 */
export const TIER_LOCAL_MERGE_BYTES_MAX = 128 * 1024 * 1024;

/** A range a merge [T8] replaces: read from the local log, or from the tiered pieces themselves (`fromTier`). */
export interface MergeRange {
  readonly baseOffset: number;
  readonly endOffset: number;
  readonly fromTier: boolean;
}

/**
 * [T8] The next merge due: first TIER_MERGE_RUN pieces of one level below the local log (a previous
 * leader's, left when this leader's log started at the tiered end), read back from the tier, each
 * at most TIER_REMOTE_MERGE_PIECE_BYTES_MAX, at most TIER_REMOTE_MERGE_BYTES_MAX together; then
 * dueLocalMerge. Null when none.
 */
export function dueMerge(log: PartitionLog, record: TierRecord, localMergeBytesMax = TIER_LOCAL_MERGE_BYTES_MAX): MergeRange | null {
  const copied = copiedSegments(record);
  let below = 0;
  while (below < copied.length && copied[below]!.endOffset <= log.logStartOffset) below++;
  // Of any levels: the pieces below the log are left by many leaders, a few of each level per takeover.
  const run = levelRun(copied, 0, below - 1, { bytesMax: TIER_REMOTE_MERGE_BYTES_MAX, pieceBytesMax: TIER_REMOTE_MERGE_PIECE_BYTES_MAX, anyLevel: true });
  return run !== null ? { ...run, fromTier: true } : dueLocalMerge(log, record, localMergeBytesMax);
}

/**
 * [T8] The oldest local segment with a merge due, read from the local log: all of a rolled
 * segment, wholly tiered, that two or more pieces tile exactly (it was tiered from inside, [T2]),
 * else TIER_MERGE_RUN consecutive pieces of one level wholly inside a segment, of at most
 * `localMergeBytesMax` together (a promoted follower's log starts inside a piece: its own pieces
 * start past its first segment's base).
 */
export function dueLocalMerge(log: PartitionLog, record: TierRecord, localMergeBytesMax = TIER_LOCAL_MERGE_BYTES_MAX): MergeRange | null {
  const bases = log.segmentBaseOffsets;
  const copied = copiedSegments(record); // contiguous, by base: one pass over both lists
  let first = 0;
  for (let index = 0; index < bases.length; index++) {
    const baseOffset = bases[index]!;
    const endOffset = bases[index + 1] ?? log.logEndOffset; // the active segment's end is where its pieces stop, at most
    while (first < copied.length && copied[first]!.baseOffset < baseOffset) first++;
    let last = first - 1;
    while (last + 1 < copied.length && copied[last + 1]!.endOffset <= endOffset) last++;
    if (baseOffset < log.logStartOffset || last <= first) continue;
    const rolled = index + 1 < bases.length;
    if (rolled && copied[first]!.baseOffset === baseOffset && copied[last]!.endOffset === endOffset) return { baseOffset, endOffset, fromTier: false }; // the whole rolled segment
    const run = levelRun(copied, first, last, { bytesMax: localMergeBytesMax, pieceBytesMax: Number.POSITIVE_INFINITY, anyLevel: false });
    if (run !== null) return { ...run, fromTier: false };
  }
  return null;
}

/** Which pieces a run may hold: of one level (unless `anyLevel`), each at most `pieceBytesMax`, at most `bytesMax` together. */
interface RunLimits {
  readonly bytesMax: number;
  readonly pieceBytesMax: number;
  readonly anyLevel: boolean;
}

/** [T8] The first TIER_MERGE_RUN consecutive pieces among copied[first..last] within `limits`. */
function levelRun(copied: readonly CopiedSegment[], first: number, last: number, limits: RunLimits): { baseOffset: number; endOffset: number } | null {
  const { bytesMax, pieceBytesMax, anyLevel } = limits;
  for (let start = first; start + TIER_MERGE_RUN - 1 <= last; ) {
    if (copied[start]!.bytes > pieceBytesMax) {
      start++; // no run holds it
      continue;
    }
    const level = copied[start]!.level ?? 0;
    const joins = (piece: CopiedSegment, bytes: number) => (anyLevel || (piece.level ?? 0) === level) && piece.bytes <= pieceBytesMax && bytes + piece.bytes <= bytesMax;
    let end = start;
    let bytes = copied[start]!.bytes;
    while (end < start + TIER_MERGE_RUN - 1 && joins(copied[end + 1]!, bytes)) bytes += copied[++end]!.bytes;
    if (end === start + TIER_MERGE_RUN - 1) return { baseOffset: copied[start]!.baseOffset, endOffset: copied[end]!.endOffset };
    // A change of level ends every run through it; too many bytes only this one, and the next may start one piece on.
    const levelChanges = end < last && !anyLevel && (copied[end + 1]!.level ?? 0) !== level;
    start = levelChanges ? end + 1 : start + 1;
  }
  return null;
}
