import type { TierRecordWrite } from '../history.ts';
import type { HistoryIndex } from '../history-index.ts';
import type { PartitionRef, ViolationList } from '../violation.ts';

export const TIER_FENCED = 'tier-fenced';

/** A partition whose topic id names no final topic: an earlier incarnation, judged all the same. */
const EARLIER_INCARNATION = -1;

/**
 * tier-fenced (docs/tier-protocol.md TI2, TI3), over every tier record write in the store's order:
 * - a write never carries a leader epoch below one an earlier write took the record in (TI2:
 *   a deposed leader writes nothing);
 * - an entry becomes `copied` only if the version before held it as `copying`, or as the merge
 *   under way [T8] (TI3: announced before its object is written), and only in the epoch the
 *   record is held in: an entry
 *   announced in an epoch below one that took the record before the commit was dropped by that
 *   take [T1], so its commit is a deposed leader's.
 */
export function checkTierFenced(index: HistoryIndex, out: ViolationList): void {
  const writes = index.history.tierWrites ?? [];
  const names = new Map<string, PartitionRef>();
  for (const partition of index.partitions) {
    if (partition.tier !== null) names.set(recordKey(partition.tier.topicId, partition.partition), partition);
  }
  const byRecord = new Map<string, TierRecordWrite[]>();
  for (const write of writes) {
    const key = recordKey(write.topicId, write.partition);
    if (!byRecord.has(key)) byRecord.set(key, []);
    byRecord.get(key)!.push(write);
  }
  for (const [key, history] of byRecord) {
    const first = history[0]!;
    const where = names.get(key) ?? { topic: `topic id ${first.topicId}`, incarnation: EARLIER_INCARNATION, partition: first.partition };
    checkRecord(history, where, out);
  }
}

function checkRecord(history: readonly TierRecordWrite[], where: PartitionRef, out: ViolationList): void {
  let takenEpoch = -Infinity;
  let previous = new Map<string, 'copying' | 'copied' | 'merging'>();
  for (const write of history) {
    if (write.leaderEpoch < takenEpoch) {
      out.add(
        TIER_FENCED,
        where,
        'written in a deposed epoch',
        null,
        `the record was written in leader epoch ${write.leaderEpoch} at ${write.atMs} ms, after epoch ${takenEpoch} had taken it`,
        write.atMs,
      );
    }
    for (const segment of write.segments) {
      if (segment.state !== 'copied' || previous.get(segment.uploadId) === 'copied') continue;
      const range = `segment ${segment.baseOffset}..${segment.endOffset} (upload ${segment.uploadId}, epoch ${segment.leaderEpoch})`;
      if (previous.get(segment.uploadId) !== 'copying' && previous.get(segment.uploadId) !== 'merging') {
        out.add(TIER_FENCED, where, 'copied without being announced', segment.baseOffset, `${range} became copied at ${write.atMs} ms; the version before did not hold it as copying`, write.atMs);
      }
      if (segment.leaderEpoch < takenEpoch) {
        out.add(TIER_FENCED, where, 'fenced commit', segment.baseOffset, `${range} was committed at ${write.atMs} ms, after epoch ${takenEpoch} had taken the record`, write.atMs);
      }
    }
    takenEpoch = Math.max(takenEpoch, write.leaderEpoch);
    previous = new Map<string, 'copying' | 'copied' | 'merging'>(write.segments.map((segment) => [segment.uploadId, segment.state]));
    if (write.merging !== undefined) {
      if (write.merging.leaderEpoch < takenEpoch)
        out.add(
          TIER_FENCED,
          where,
          'fenced merge',
          write.merging.baseOffset,
          `a merge of ${write.merging.baseOffset}..${write.merging.endOffset} was announced in epoch ${write.merging.leaderEpoch} at ${write.atMs} ms, after epoch ${takenEpoch} had taken the record`,
          write.atMs,
        );
      previous.set(write.merging.uploadId, 'merging');
    }
  }
}

function recordKey(topicId: string, partition: number): string {
  return `${topicId}\u0000${partition}`;
}
