import type { ClientOp } from './history.ts';

/**
 * A group's lineages, from the JoinGroup answers of a history: the member ids that shared a
 * generation (an answer names its member and the generation's leader; the leader's names every
 * member) are in one lineage, the members of one group state on one coordinator, whose
 * generation only grows. A coordinator that takes the group over with no state of it starts a
 * lineage afresh (Ferry does, with new member ids); Kafka's carries the state over, and its
 * lineage is the group's. Joining fewer member ids than share a state keeps every judgement by
 * lineage sound: two lineages are never assumed one.
 */
export class GroupLineages {
  readonly #parent = new Map<string, string>();

  constructor(ops: readonly ClientOp[]) {
    for (const op of ops) {
      if (op.kind !== 'join-group' || !op.outcome.ok) continue;
      this.#union(memberKey(op.group, op.memberId), memberKey(op.group, op.leader));
      for (const member of op.members) this.#union(memberKey(op.group, member), memberKey(op.group, op.leader));
    }
  }

  /** The lineage of a member of a group: one key for every member id it holds (the member's own key for one never answered a join). */
  of(group: string, memberId: string): string {
    return this.#root(memberKey(group, memberId));
  }

  #root(key: string): string {
    let root = key;
    for (let parent = this.#parent.get(root); parent !== undefined; parent = this.#parent.get(root)) root = parent;
    for (let at = key; at !== root; ) {
      const next = this.#parent.get(at)!;
      this.#parent.set(at, root); // path compression: the next look-up is one step
      at = next;
    }
    return root;
  }

  #union(a: string, b: string): void {
    const rootA = this.#root(a);
    const rootB = this.#root(b);
    if (rootA !== rootB) this.#parent.set(rootA, rootB);
  }
}

function memberKey(group: string, memberId: string): string {
  return `${group}\u0000${memberId}`;
}
