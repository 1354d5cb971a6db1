import type { ReplicaLog } from '../history.ts';
import type { HistoryIndex, PartitionHistory } from '../history-index.ts';
import { bytesEqual } from '../../util/bytes.ts';
import type { ViolationList } from '../violation.ts';

export const FOLLOWER_PREFIX = 'follower-prefix';

type Batch = ReplicaLog['batches'][number];

/**
 * follower-prefix: every follower's final log is a byte-identical prefix of its leader's
 * (docs/design.md contract 7), batch by batch, the leader's tiered segments counting as its log (TI1). Only the
 * overlap is compared: retention may have removed a prefix of either log. One partition with two final leaders is reported here too.
 */
export function checkFollowerPrefix(index: HistoryIndex, out: ViolationList): void {
  for (const partition of index.partitions) {
    const leaders = partition.replicaLogs.filter((log) => log.leader);
    if (leaders.length > 1) {
      out.add(FOLLOWER_PREFIX, partition, 'two leaders', null, `nodes ${leaders.map((log) => log.node).join(', ')} all lead at the end`);
    }
    // The leader's whole log, tier included: a follower may still hold what its leader keeps only in the tier.
    const leader = partition.leader?.log;
    if (leader === undefined) continue;
    const leaderBatches = new Map<number, Batch>(leader.batches.map((batch) => [batch.baseOffset, batch]));
    for (const follower of partition.replicaLogs) {
      if (follower !== partition.leader!.local) checkFollower(partition, leader, leaderBatches, follower, out);
    }
  }
}

function checkFollower(partition: PartitionHistory, leader: ReplicaLog, leaderBatches: ReadonlyMap<number, Batch>, follower: ReplicaLog, out: ViolationList): void {
  const who = `follower node ${follower.node}, leader node ${leader.node}`;
  if (follower.logEndOffset > leader.logEndOffset) {
    out.add(FOLLOWER_PREFIX, partition, 'follower ahead of its leader', follower.logEndOffset, `${who}: log end ${follower.logEndOffset} > ${leader.logEndOffset}`);
  }
  const leaderFirstOffset = leader.batches[0]?.baseOffset ?? leader.logEndOffset;
  let previous: Batch | null = null;
  for (const batch of follower.batches) {
    if (previous !== null && batch.baseOffset !== previous.lastOffset + 1) {
      out.add(FOLLOWER_PREFIX, partition, 'gap in a follower log', batch.baseOffset, `${who}: batch at ${batch.baseOffset} follows one ending at ${previous.lastOffset}`);
    }
    previous = batch;
    if (batch.lastOffset < leaderFirstOffset) continue;
    const twin = leaderBatches.get(batch.baseOffset);
    if (twin === undefined) {
      out.add(FOLLOWER_PREFIX, partition, 'follower batch not in the leader', batch.baseOffset, `${who}: no leader batch starts at ${batch.baseOffset}`);
    } else if (twin.lastOffset !== batch.lastOffset || !bytesEqual(twin.bytes, batch.bytes)) {
      out.add(
        FOLLOWER_PREFIX,
        partition,
        'batch bytes differ',
        batch.baseOffset,
        `${who}: batch ${batch.baseOffset}..${batch.lastOffset} (${batch.bytes.length} bytes) differs from the leader's ${twin.baseOffset}..${twin.lastOffset} (${twin.bytes.length} bytes)`,
      );
    }
  }
}
