import type { FetchOp } from '../history.ts';
import type { HistoryIndex, PartitionHistory } from '../history-index.ts';
import type { ViolationList } from '../violation.ts';

export const HIGH_WATERMARK_MONOTONIC = 'high-watermark-monotonic';

/**
 * high-watermark-monotonic: a reading client never sees a partition incarnation's high watermark
 * go backward. Fetches that overlap in time (pipelined, or to two brokers at once) are not
 * ordered: the broker may have read the watermark of the later-answered one first. So a
 * fetch is compared with every fetch of the same client that ended before it started: its high
 * watermark is at least the highest of theirs. Only fetches that returned records count: they are
 * placed in the incarnation their records belong to, while an empty one is placed by its time and
 * may come from a broker that has not yet seen a delete (its watermark is the old log's).
 */
export function checkHighWatermarkMonotonic(index: HistoryIndex, out: ViolationList): void {
  for (const partition of index.partitions) {
    const byClient = new Map<string, FetchOp[]>();
    for (const op of partition.fetches) {
      if (!op.outcome.ok || op.highWatermark === null || op.records.length === 0) continue;
      let list = byClient.get(op.client);
      if (list === undefined) byClient.set(op.client, (list = []));
      list.push(op);
    }
    for (const fetches of byClient.values()) checkClient(partition, fetches, out);
  }
}

function checkClient(partition: PartitionHistory, fetches: readonly FetchOp[], out: ViolationList): void {
  const byStart = [...fetches].sort((a, b) => a.startMs - b.startMs);
  const byEnd = [...fetches].sort((a, b) => a.endMs - b.endMs);
  let ended = 0;
  let highest: FetchOp | null = null;
  for (const op of byStart) {
    while (ended < byEnd.length && byEnd[ended]!.endMs <= op.startMs) {
      const done = byEnd[ended++]!;
      if (highest === null || done.highWatermark! > highest.highWatermark!) highest = done;
    }
    if (highest !== null && op.highWatermark! < highest.highWatermark!) {
      const detail = `${op.client} saw ${highest.highWatermark} (from node ${highest.node}), then in a fetch started after that one ended ${op.highWatermark} (from node ${op.node})`;
      out.add(HIGH_WATERMARK_MONOTONIC, partition, 'high watermark went backward', op.highWatermark!, detail, op.endMs);
    }
  }
}
