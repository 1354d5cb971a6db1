import type { LogBatch, TieredSegment } from '../history.ts';
import type { HistoryIndex, LeaderView, PartitionHistory } from '../history-index.ts';
import { bytesEqual } from '../../util/bytes.ts';
import type { ViolationList } from '../violation.ts';

export const TIERED_BYTES_MATCH = 'tiered-bytes-match';

/**
 * tiered-bytes-match (docs/tier-protocol.md TI1, and TI3's "a copied entry names only an object
 * that was read back whole"): every copied segment of a final tier record names an object that
 * decodes whole (every section's checksum, batches exactly [base, end)); its batches are
 * byte-identical to the final leader's local log's at those offsets where that log still holds
 * them; and it holds no offset at or above the highest high watermark any reader saw (the final
 * leader's, or a fetch's): a tier holds only committed records.
 */
export function checkTieredBytesMatch(index: HistoryIndex, out: ViolationList): void {
  for (const partition of index.partitions) {
    const tier = partition.tier;
    if (tier === null) continue;
    const highWatermark = highestHighWatermark(partition);
    for (const segment of tier.segments) checkSegment(partition, segment, highWatermark, out);
  }
}

function checkSegment(partition: PartitionHistory, segment: TieredSegment, highWatermark: number, out: ViolationList): void {
  const range = `tiered segment ${segment.baseOffset}..${segment.endOffset} (upload ${segment.uploadId}, epoch ${segment.leaderEpoch})`;
  if (segment.problem !== null) {
    out.add(TIERED_BYTES_MATCH, partition, 'copied segment not whole', segment.baseOffset, `${range}: ${segment.problem}`);
    return;
  }
  if (segment.endOffset > highWatermark) {
    out.add(
      TIERED_BYTES_MATCH,
      partition,
      'tiered above the high watermark',
      highWatermark,
      `${range} holds offsets up to ${segment.endOffset - 1}; the highest high watermark seen is ${highWatermark}`,
    );
  }
  if (partition.leader !== null) checkAgainstLocal(partition, partition.leader, segment, range, out);
}

/** The tiered batches against the leader's local ones, where the local log still holds their offsets. */
function checkAgainstLocal(partition: PartitionHistory, leader: LeaderView, segment: TieredSegment, range: string, out: ViolationList): void {
  const local = leader.local;
  const localBatches = new Map<number, LogBatch>(local.batches.map((batch) => [batch.baseOffset, batch]));
  for (const batch of segment.batches) {
    if (batch.baseOffset < local.logStartOffset || batch.lastOffset >= local.logEndOffset) continue;
    const twin = localBatches.get(batch.baseOffset);
    const who = `${range}, final leader node ${local.node}`;
    if (twin === undefined) {
      out.add(TIERED_BYTES_MATCH, partition, 'tiered batch not in the leader log', batch.baseOffset, `${who}: no local batch starts at ${batch.baseOffset}`);
    } else if (twin.lastOffset !== batch.lastOffset || !bytesEqual(twin.bytes, batch.bytes)) {
      out.add(
        TIERED_BYTES_MATCH,
        partition,
        'tiered batch bytes differ',
        batch.baseOffset,
        `${who}: tiered batch ${batch.baseOffset}..${batch.lastOffset} (${batch.bytes.length} bytes) differs from the local ${twin.baseOffset}..${twin.lastOffset} (${twin.bytes.length} bytes)`,
      );
    }
  }
}

function highestHighWatermark(partition: PartitionHistory): number {
  let highest = partition.leader?.local.highWatermark ?? 0;
  for (const op of partition.fetches) if (op.outcome.ok && op.highWatermark !== null) highest = Math.max(highest, op.highWatermark);
  return highest;
}
