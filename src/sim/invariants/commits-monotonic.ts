import type { CommitOp, OffsetFetchOp } from '../history.ts';
import type { HistoryIndex, PartitionHistory } from '../history-index.ts';
import { countAtMost } from '../incarnations.ts';
import { MaxPrefixTree } from '../max-prefix-tree.ts';
import type { ViolationList } from '../violation.ts';

export const COMMITS_MONOTONIC = 'commits-monotonic';

/**
 * commits-monotonic: per group and partition incarnation, an OffsetFetch that started after a
 * successful commit ended answers at least that commit's offset, unless a reset commit (one that
 * succeeded or whose outcome is unknown) overlaps the commit, the fetch, or lies between them.
 * So the fetch is held to the highest commit that ended before it started and started after
 * every reset that started before the fetch ended had ended. (A reset commit is itself never the
 * one a fetch is held to: the latest reset always excuses it.)
 */
export function checkCommitsMonotonic(index: HistoryIndex, out: ViolationList): void {
  for (const partition of index.partitions) {
    const groups = new Set<string>(partition.offsetFetches.map((op) => op.group));
    for (const group of groups) {
      const commits = partition.commits.filter((op) => op.group === group);
      const fetches = partition.offsetFetches.filter((op) => op.group === group && op.outcome.ok);
      if (commits.length > 0) checkGroup(partition, commits, fetches, out);
    }
  }
}

function checkGroup(partition: PartitionHistory, commits: readonly CommitOp[], fetches: readonly OffsetFetchOp[], out: ViolationList): void {
  const resets = commits.filter((op) => op.reset && (op.outcome.ok || !op.outcome.answered)).sort((a, b) => a.startMs - b.startMs);
  const resetStartsMs = resets.map((op) => op.startMs);
  const resetEndsMaxMs: number[] = [];
  for (const op of resets) resetEndsMaxMs.push(Math.max(resetEndsMaxMs.at(-1) ?? -Infinity, op.endMs));

  // Successful commits, indexed by start time descending, so "started after t" is a prefix.
  const succeeded = commits.filter((op) => op.outcome.ok);
  const byStartDescending = [...succeeded].sort((a, b) => b.startMs - a.startMs);
  const startsAscending = byStartDescending.map((op) => op.startMs).reverse();
  const slotOf = new Map<CommitOp, number>(byStartDescending.map((op, slot) => [op, slot]));
  const byEnd = [...succeeded].sort((a, b) => a.endMs - b.endMs);
  const tree = new MaxPrefixTree(succeeded.length);

  let ended = 0;
  for (const fetch of [...fetches].sort((a, b) => a.startMs - b.startMs)) {
    while (ended < byEnd.length && byEnd[ended]!.endMs <= fetch.startMs) {
      const commit = byEnd[ended++]!;
      tree.raise(slotOf.get(commit)!, commit.offset);
    }
    const resetsBefore = countAtMost(resetStartsMs, fetch.endMs);
    const lastResetEndMs = resetsBefore === 0 ? -Infinity : resetEndsMaxMs[resetsBefore - 1]!;
    const startedAfterReset = succeeded.length - countAtMost(startsAscending, lastResetEndMs);
    const demanded = tree.maxOfFirst(startedAfterReset);
    if (fetch.offset < demanded) {
      const detail = `group ${fetch.group}: ${fetch.client} fetched offset ${fetch.offset} after a commit of ${demanded} had ended, with no reset in between`;
      out.add(COMMITS_MONOTONIC, partition, 'committed offset went backward', fetch.offset, detail, fetch.endMs);
    }
  }
}
