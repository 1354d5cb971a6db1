import type { FetchOp } from '../history.ts';
import type { HistoryIndex, PartitionHistory } from '../history-index.ts';
import type { ViolationList } from '../violation.ts';

export const HIGH_WATERMARK_MONOTONIC = 'high-watermark-monotonic';

/** A fetch that named no leader epoch (KIP-320's -1): any leader may have answered it. */
const ANY_EPOCH = -1;

/**
 * high-watermark-monotonic: a reading client never sees a partition incarnation's high watermark
 * go backward, from one leader or across a takeover to a later one. A fetch answered at leader
 * epoch E reports a high watermark at least as high as every one the client saw before at epochs up
 * to E: a leader only raises its watermark, and a new leader serves from its predecessor's sealed
 * durable end, which is at least every watermark the predecessor exposed
 * (docs/design.md contracts 5 and 6; Kafka promises less across a takeover, Ferry promises this).
 *
 * Not judged: a fetch at an epoch older than one the client was already answered at. A broker
 * answers a fetch only at the epoch it names (KIP-320), so that answer comes from a deposed leader
 * that has not learned of its successor yet, and its watermark is its own epoch's, at most the
 * offset the successor took over at. Kafka serves such reads too; its client never sends them, because it ignores
 * metadata naming an older leader epoch than one it knows, but the simulated one takes whatever
 * metadata a broker gives after a rebalance. A fetch that named no epoch is judged against all.
 *
 * Fetches that overlap in time (pipelined, or to two brokers at once) are not ordered: the broker
 * may have read the watermark of the later-answered one first. So a fetch is compared with every
 * fetch of the same client that ended before it started. Only fetches that returned records count:
 * they are placed in the incarnation their records belong to, while an empty one is placed by its
 * time and may come from a broker that has not yet seen a delete (its watermark is the old log's).
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
  /** Leader epoch → the ended fetch at that epoch with the highest watermark. */
  const highestByEpoch = new Map<number, FetchOp>();
  for (const op of byStart) {
    while (ended < byEnd.length && byEnd[ended]!.endMs <= op.startMs) {
      const done = byEnd[ended++]!;
      const highest = highestByEpoch.get(done.leaderEpoch);
      if (highest === undefined || done.highWatermark! > highest.highWatermark!) highestByEpoch.set(done.leaderEpoch, done);
    }
    const bound = highestBefore(highestByEpoch, op.leaderEpoch);
    if (bound !== null && op.highWatermark! < bound.highWatermark!) {
      const detail = `${op.client} saw ${bound.highWatermark} (from node ${bound.node} at leader epoch ${bound.leaderEpoch}), then in a fetch started after that one ended ${op.highWatermark} (from node ${op.node} at leader epoch ${op.leaderEpoch})`;
      out.add(HIGH_WATERMARK_MONOTONIC, partition, 'high watermark went backward', op.highWatermark!, detail, op.endMs);
    }
  }
}

/** The fetch with the highest watermark among those at epochs up to `epoch` (all of them when either names none). */
function highestBefore(highestByEpoch: ReadonlyMap<number, FetchOp>, epoch: number): FetchOp | null {
  let highest: FetchOp | null = null;
  for (const [seenEpoch, op] of highestByEpoch) {
    const judges = epoch === ANY_EPOCH || seenEpoch === ANY_EPOCH || seenEpoch <= epoch;
    if (judges && (highest === null || op.highWatermark! > highest.highWatermark!)) highest = op;
  }
  return highest;
}
