import { GroupLineages } from '../group-lineages.ts';
import { healthySinceOf } from '../health-since.ts';
import type { ClientOp, CommitOp, GroupMemberOp, JoinGroupOp } from '../history.ts';
import type { HistoryIndex } from '../history-index.ts';
import { countBelow } from '../incarnations.ts';
import { RangeMax } from '../range-max.ts';
import type { ViolationList } from '../violation.ts';

export const COMMIT_CURRENT_GENERATION = 'commit-current-generation';

/**
 * commit-current-generation: an OffsetCommit of a group member (one naming a generation, ≥ 0)
 * is answered ok only while its member belongs to the group's current generation; Kafka answers
 * ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS or FENCED_INSTANCE_ID otherwise.
 * Judged from what the history shows, per lineage of the group (group-lineages.ts: the members
 * of one group state, whose generation only grows):
 * - a lineage is at generation g' or later from the end of a SyncGroup answered ok at g', on any
 *   coordinator (Kafka stores the generation before it answers a sync: a coordinator that takes
 *   the group over has it);
 * - and from the end of a JoinGroup answered ok at g' (the coordinator completed the join before
 *   answering), on that coordinator while it stays healthy (a Kafka coordinator that failed over
 *   may be back at the last generation stored);
 * - a LeaveGroup answered ok removed its member from its end, on that coordinator while healthy;
 * so a commit answered ok that started after its lineage reached a later generation than the one
 * it names, or after its member left, was accepted from a member of no current generation. A
 * commit in flight across the change is not judged: which came first is not known.
 */
export function checkCommitCurrentGeneration(index: HistoryIndex, out: ViolationList): void {
  const { ops } = index.history;
  const accepted = ops.filter((op): op is CommitOp => op.kind === 'commit' && op.outcome.ok && op.generationId >= 0);
  if (accepted.length === 0) return;
  const lineages = new GroupLineages(ops);
  const witnesses = new GenerationWitnesses(ops, lineages);
  const healthySince = healthySinceOf(index.history.health);
  for (const commit of accepted) {
    const lineage = lineages.of(commit.group, commit.memberId);
    // Since when the committing coordinator surely held what it answered before (Infinity: not healthy at the commit).
    const heldSinceMs = healthySince(commit.node, commit.startMs);
    const later = Math.max(witnesses.syncedBefore(lineage, commit.startMs), witnesses.joinedWithin(lineage, commit.node, heldSinceMs, commit.startMs));
    const where = { topic: commit.topic, incarnation: index.incarnations.attribute(commit.topic, commit.startMs, commit.endMs) ?? index.incarnations.last(commit.topic), partition: commit.partition };
    if (later > commit.generationId) {
      const detail = `group ${commit.group}: ${commit.client}'s commit of offset ${commit.offset} as ${commit.memberId} of generation ${commit.generationId} was accepted by node ${commit.node} after generation ${later} of its lineage had begun`;
      out.add(COMMIT_CURRENT_GENERATION, where, 'commit of a past generation accepted', commit.offset, detail, commit.endMs);
    }
    if (witnesses.leftWithin(commit.group, commit.memberId, commit.node, heldSinceMs, commit.startMs)) {
      const detail = `group ${commit.group}: ${commit.client}'s commit of offset ${commit.offset} as ${commit.memberId} was accepted by node ${commit.node} after that member's LeaveGroup there was answered`;
      out.add(COMMIT_CURRENT_GENERATION, where, 'commit of a member that left accepted', commit.offset, detail, commit.endMs);
    }
  }
}

/** When each lineage's generations began, at the latest, and when members left: indexed for look-ups by time. */
class GenerationWitnesses {
  /** By lineage: SyncGroup answers ok, by end. */
  readonly #synced = new Map<string, Timeline>();
  /** By lineage and coordinator: JoinGroup answers ok, by end. */
  readonly #joined = new Map<string, Timeline>();
  /** By group, member and coordinator: the ends of LeaveGroup answers ok, ascending. */
  readonly #left = new Map<string, number[]>();

  constructor(ops: readonly ClientOp[], lineages: GroupLineages) {
    const synced = new Map<string, GroupMemberOp[]>();
    const joined = new Map<string, JoinGroupOp[]>();
    for (const op of ops) {
      if (!op.outcome.ok) continue;
      if (op.kind === 'sync-group') push(synced, lineages.of(op.group, op.memberId), op);
      else if (op.kind === 'join-group') push(joined, `${lineages.of(op.group, op.memberId)}\u0000${op.node}`, op);
      else if (op.kind === 'leave-group') push(this.#left, `${op.group}\u0000${op.memberId}\u0000${op.node}`, op.endMs);
    }
    for (const [key, list] of synced) this.#synced.set(key, new Timeline(list));
    for (const [key, list] of joined) this.#joined.set(key, new Timeline(list));
    for (const ends of this.#left.values()) ends.sort((a, b) => a - b);
  }

  /** The latest generation a SyncGroup of the lineage was answered at before `atMs` (-Infinity: none). */
  syncedBefore(lineage: string, atMs: number): number {
    return this.#synced.get(lineage)?.maxBetween(-Infinity, atMs) ?? -Infinity;
  }

  /** The latest generation a JoinGroup of the lineage was answered at by `node` in [fromMs, toMs). */
  joinedWithin(lineage: string, node: number, fromMs: number, toMs: number): number {
    return this.#joined.get(`${lineage}\u0000${node}`)?.maxBetween(fromMs, toMs) ?? -Infinity;
  }

  /** Whether a LeaveGroup of the member was answered ok by `node` in [fromMs, toMs). */
  leftWithin(group: string, memberId: string, node: number, fromMs: number, toMs: number): boolean {
    const ends = this.#left.get(`${group}\u0000${memberId}\u0000${node}`);
    return ends !== undefined && countBelow(ends, toMs) > countBelow(ends, fromMs);
  }
}

/** Generations answered, by the end of their answers: the latest one answered within a span. */
class Timeline {
  readonly #endsMs: number[];
  readonly #generations: RangeMax;

  constructor(answers: readonly { readonly endMs: number; readonly generationId: number }[]) {
    const sorted = [...answers].sort((a, b) => a.endMs - b.endMs);
    this.#endsMs = sorted.map((op) => op.endMs);
    this.#generations = new RangeMax(sorted.map((op) => op.generationId));
  }

  /** The latest generation among the answers that ended in [fromMs, toMs). */
  maxBetween(fromMs: number, toMs: number): number {
    return this.#generations.max(countBelow(this.#endsMs, fromMs), countBelow(this.#endsMs, toMs));
  }
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}
