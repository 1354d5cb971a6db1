import { healthySinceOf } from '../health-since.ts';
import type { CommitOp, OffsetFetchOp } from '../history.ts';
import { type HistoryIndex, metadataPropagationMs } from '../history-index.ts';
import { countAtMost } from '../incarnations.ts';
import type { ViolationList } from '../violation.ts';

export const FETCHED_OFFSET_COMMITTED = 'fetched-offset-committed';

/**
 * Answers to an OffsetCommit that say nothing was written: the member or generation was refused,
 * the group or topic not authorized or not known, the offset's metadata too large. Any other
 * error (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, a timeout, a storage error) may follow a write
 * that took effect, as Kafka's may follow an append to its offsets topic.
 */
const NOTHING_WRITTEN: ReadonlySet<string> = new Set([
  'REBALANCE_IN_PROGRESS',
  'ILLEGAL_GENERATION',
  'UNKNOWN_MEMBER_ID',
  'FENCED_INSTANCE_ID',
  'GROUP_AUTHORIZATION_FAILED',
  'TOPIC_AUTHORIZATION_FAILED',
  'UNKNOWN_TOPIC_OR_PARTITION',
  'INVALID_GROUP_ID',
  'OFFSET_METADATA_TOO_LARGE',
  'INVALID_COMMIT_OFFSET_SIZE',
]);

/**
 * fetched-offset-committed: a group's committed offsets are what its members committed, in order.
 * Every OffsetFetch answered ok (a member's at the start of its generation, and the read of the
 * final state once every member stopped) names, for each partition, -1 (nothing: none committed
 * yet, or the topic incarnation it was committed for is gone) or an offset that a commit of that
 * group and partition asked for, sent before the fetch was answered and not refused outright
 * (NOTHING_WRITTEN); and not one whose every such commit was superseded: followed by a commit
 * of another offset that started after it was answered and was answered ok before the fetch
 * started. A commit answered by another broker than the fetch counts against it only once the
 * fetching broker had been healthy for the propagation bound since it was answered (a
 * coordinator deposed without knowing it answers from what it holds, as Kafka's answers from its
 * cache); a commit never answered is never superseded (a paused coordinator may write it when it
 * resumes). Judged per group, topic and partition across incarnations: a coordinator files a
 * commit under the incarnation it knows then.
 */
export function checkFetchedOffsetCommitted(index: HistoryIndex, out: ViolationList): void {
  const byKey = new Map<string, { commits: CommitOp[]; fetches: OffsetFetchOp[] }>();
  const entry = (op: CommitOp | OffsetFetchOp) => {
    const key = `${op.group}\u0000${op.topic}\u0000${op.partition}`;
    let found = byKey.get(key);
    if (found === undefined) byKey.set(key, (found = { commits: [], fetches: [] }));
    return found;
  };
  for (const op of index.history.ops) {
    if (op.kind === 'commit') entry(op).commits.push(op);
    else if (op.kind === 'offset-fetch' && op.outcome.ok && op.offset >= 0) entry(op).fetches.push(op);
  }
  const judge = { index, out, propagationMs: metadataPropagationMs(index.history), healthySince: healthySinceOf(index.history.health) };
  for (const { commits, fetches } of byKey.values()) if (fetches.length > 0) checkPartition(judge, commits, fetches);
}

interface Judge {
  readonly index: HistoryIndex;
  readonly out: ViolationList;
  readonly propagationMs: number;
  readonly healthySince: (node: number, atMs: number) => number;
}

/** Of the commits of one offset that may have been written: the first start, and the last end (Infinity: one was never answered). */
interface Writes {
  firstStartMs: number;
  lastEndMs: number;
}

function checkPartition(judge: Judge, commits: readonly CommitOp[], fetches: readonly OffsetFetchOp[]): void {
  const writes = new Map<number, Writes>();
  for (const op of commits) {
    if (!op.outcome.ok && op.outcome.answered && NOTHING_WRITTEN.has(op.outcome.error)) continue;
    const endMs = op.outcome.ok || op.outcome.answered ? op.endMs : Infinity;
    const known = writes.get(op.offset);
    if (known === undefined) writes.set(op.offset, { firstStartMs: op.startMs, lastEndMs: endMs });
    else {
      known.firstStartMs = Math.min(known.firstStartMs, op.startMs);
      known.lastEndMs = Math.max(known.lastEndMs, endMs);
    }
  }
  const anywhere = new LaterCommits(commits.filter((op) => op.outcome.ok));
  const byNode = new Map<number, LaterCommits>();
  for (const fetch of fetches) {
    const written = writes.get(fetch.offset);
    if (written === undefined || written.firstStartMs >= fetch.endMs) {
      report(judge, fetch, 'fetched offset never committed', `no commit of offset ${fetch.offset} that may have been written was sent before it was answered`);
      continue;
    }
    let sameNode = byNode.get(fetch.node);
    if (sameNode === undefined) byNode.set(fetch.node, (sameNode = new LaterCommits(commits.filter((op) => op.outcome.ok && op.node === fetch.node))));
    // Commits answered by another broker count once the fetching broker had the bound to see them.
    const seenFromMs = judge.healthySince(fetch.node, fetch.startMs) + judge.propagationMs;
    const otherUntilMs = seenFromMs <= fetch.startMs ? Math.min(fetch.startMs - judge.propagationMs, fetch.startMs) : -Infinity;
    const superseding = sameNode.firstEndedBetween(written.lastEndMs, fetch.startMs) ?? anywhere.firstEndedBetween(written.lastEndMs, otherUntilMs);
    if (superseding !== null) {
      report(
        judge,
        fetch,
        'fetched offset superseded',
        `every commit of offset ${fetch.offset} had been answered before ${superseding.client}'s commit of ${superseding.offset} started, answered ok by node ${superseding.node} at ${superseding.endMs}`,
      );
    }
  }
}

function report(judge: Judge, fetch: OffsetFetchOp, reason: string, why: string): void {
  const { index, out } = judge;
  const incarnation = index.incarnations.attribute(fetch.topic, fetch.startMs, fetch.endMs) ?? index.incarnations.last(fetch.topic);
  const detail = `group ${fetch.group}: ${fetch.client}'s OffsetFetch from node ${fetch.node} answered ${fetch.offset}, but ${why}`;
  out.add(FETCHED_OFFSET_COMMITTED, { topic: fetch.topic, incarnation, partition: fetch.partition }, reason, fetch.offset, detail, fetch.endMs);
}

/** Commits answered ok, by start: the one ending first among those that started after a moment. */
class LaterCommits {
  readonly #startsMs: number[];
  /** firstEnded[i]: of the commits from the i-th by start on, the one that ended first. */
  readonly #firstEnded: CommitOp[];

  constructor(commits: readonly CommitOp[]) {
    const sorted = [...commits].sort((a, b) => a.startMs - b.startMs);
    this.#startsMs = sorted.map((op) => op.startMs);
    this.#firstEnded = new Array<CommitOp>(sorted.length);
    for (let i = sorted.length - 1; i >= 0; i--) {
      const next = this.#firstEnded[i + 1];
      this.#firstEnded[i] = next !== undefined && next.endMs <= sorted[i]!.endMs ? next : sorted[i]!;
    }
  }

  /** A commit that started after `afterMs` and ended before `beforeMs`; null if none did. */
  firstEndedBetween(afterMs: number, beforeMs: number): CommitOp | null {
    const first = this.#firstEnded[countAtMost(this.#startsMs, afterMs)];
    return first !== undefined && first.endMs < beforeMs ? first : null;
  }
}
