import { type StreamId, sameStream } from '../wal/keys.ts';
import type { SettledPrefix } from '../partition/rebuild.ts';
import type { PartitionRecord } from './control-records.ts';
import type { Uuid } from '../util/uuid.ts';
import { regressed } from '../util/regressions.ts';

/**
 * What a broker must do to lead a partition (docs/cluster-protocol.md [C3]-[C5]), decided from
 * the partition's control record alone:
 * - `claim`: compare-and-swap `next` over the record read, then seal every stream in `seal`
 *   [C4], rebuild from `rebuildFrom` in that order [C5], and only then serve;
 * - `stream-sealed`: the broker's current stream appears in the chain before another stream, so
 *   a later leader sealed it (or will, [C4]): the broker's writer is fenced and must start a new
 *   epoch before it can lead anything again ([C7]).
 */
export type TakeoverPlan =
  | { readonly kind: 'claim'; readonly seal: readonly StreamId[]; readonly rebuildFrom: readonly StreamId[]; readonly settled: SettledPrefix | null; readonly next: PartitionRecord }
  | { readonly kind: 'stream-sealed' };

export type ClaimPlan = Extract<TakeoverPlan, { kind: 'claim' }>;

/**
 * L6: `stream` is followed by another entry of `chain`, so a later leader sealed it (or is about
 * to, [C4]): its writer is fenced, whichever partition's chain shows it.
 */
export function sealedInChain(chain: readonly StreamId[], stream: StreamId): boolean {
  return chain.slice(0, -1).some((s) => sameStream(s, stream));
}

/** The topic incarnation a partition is claimed for, as its topic record names it. */
export interface Incarnation {
  readonly topicId: Uuid;
  /**
   * [L4] The first leader epoch of this incarnation: one past every epoch an earlier incarnation
   * of the name reached (TopicRecord.leaderEpochBase), so epochs never repeat under one name.
   */
  readonly leaderEpochBase: number;
}

/**
 * The takeover plan for `recorded` (null: the partition was never led) by broker `nodeId` writing
 * `stream`, for the topic incarnation `incarnation` (a record of another incarnation is a deleted
 * topic's leftover: nothing of it is sealed, rebuilt or inherited, [L4]). Every stream of the chain but `stream` is sealed, once each; the rebuild reads the
 * whole chain in order (a stream that appears twice is read twice: frames already applied are
 * skipped); `stream` ends the next chain exactly once, and the leader epoch moves up by one. A
 * partition never led in this incarnation starts at the incarnation's base epoch, not at 0 [L4].
 */
export function planTakeover(recorded: PartitionRecord | null, nodeId: number, stream: StreamId, incarnation: Incarnation): TakeoverPlan {
  const { topicId, leaderEpochBase } = incarnation;
  const record = recorded?.topicId === topicId ? recorded : null;
  const chain = record?.chain ?? [];
  if (sealedInChain(chain, stream)) return { kind: 'stream-sealed' };
  const endsWithCurrent = chain.length > 0 && sameStream(chain.at(-1)!, stream);
  const earlier = endsWithCurrent ? chain.slice(0, -1) : chain;
  // [K6] The settled prefix is sealed already: only the streams after it are sealed (again).
  const settled = record?.settled !== undefined && record.settled.count <= earlier.length ? record.settled : null;
  const seal: StreamId[] = [];
  for (const s of earlier.slice(settled?.count ?? 0)) if (!seal.some((t) => sameStream(s, t))) seal.push(s);
  // DeleteRecords' log start goes on with every claim: no later leader serves below it.
  const logStart = record?.logStartOffset === undefined ? {} : { logStartOffset: record.logStartOffset };
  const next: PartitionRecord = {
    topicId,
    leader: nodeId,
    leaderEpoch: record === null ? leaderEpochBase : record.leaderEpoch + 1,
    chain: [...earlier, stream],
    ...(settled === null ? {} : { settled }),
    ...logStart,
  };
  if (regressed('restart-stream-not-chained') && record?.leader === nodeId) return { kind: 'claim', seal, rebuildFrom: earlier, settled, next: record };
  const own = (s: StreamId) => s.writerId === stream.writerId;
  if (regressed('reclaim-drops-own-stream') && earlier.some((s) => !own(s))) return { kind: 'claim', seal, rebuildFrom: earlier.filter((s) => !own(s)), settled: null, next };
  return { kind: 'claim', seal, rebuildFrom: earlier, settled, next };
}
