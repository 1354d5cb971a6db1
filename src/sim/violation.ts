/** A broken invariant found in a run's history: which one, where, and what was seen. */
export interface Violation {
  /** The invariant's name, e.g. `acked-durable` (see checker.ts for the list). */
  readonly invariant: string;
  readonly topic: string;
  /** Which life of the topic: 0 before its first create or delete in the run, +1 after each. */
  readonly incarnation?: number;
  readonly partition: number;
  /** The offsets involved (at most VIOLATION_OFFSETS_MAX; the message says how many in all). */
  readonly offsets: number[];
  readonly message: string;
  /** Simulated ms at which an op first showed it, when one did (the trace is centred there). */
  readonly atMs?: number;
}

/** Offsets listed per violation: enough to find the trace, few enough to read. */
export const VIOLATION_OFFSETS_MAX = 20;

/** Where a violation lies: a partition of one incarnation of a topic. */
export interface PartitionRef {
  readonly topic: string;
  readonly incarnation: number;
  readonly partition: number;
}

interface Group {
  readonly invariant: string;
  readonly where: PartitionRef;
  readonly firstDetail: string;
  readonly offsets: number[];
  count: number;
  atMs: number | undefined;
}

/**
 * Collects violations, one per (invariant, partition, reason): a lost partition shows as one
 * violation naming its first offsets and how many there are, not as thousands of lines.
 */
export class ViolationList {
  readonly #groups = new Map<string, Group>();

  add(invariant: string, where: PartitionRef, reason: string, offset: number | null, detail: string, atMs?: number): void {
    const key = `${invariant}\u0000${where.topic}\u0000${where.incarnation}\u0000${where.partition}\u0000${reason}`;
    let group = this.#groups.get(key);
    if (group === undefined) {
      group = { invariant, where, firstDetail: `${reason}: ${detail}`, offsets: [], count: 0, atMs };
      this.#groups.set(key, group);
    }
    group.count++;
    if (offset !== null && group.offsets.length < VIOLATION_OFFSETS_MAX) group.offsets.push(offset);
    if (atMs !== undefined && (group.atMs === undefined || atMs < group.atMs)) group.atMs = atMs;
  }

  toArray(): Violation[] {
    return [...this.#groups.values()].map((group) => {
      const more = group.count > 1 ? ` (${group.count} cases in all)` : '';
      const violation: Violation = {
        invariant: group.invariant,
        topic: group.where.topic,
        incarnation: group.where.incarnation,
        partition: group.where.partition,
        offsets: group.offsets,
        message: group.firstDetail + more,
      };
      return group.atMs === undefined ? violation : { ...violation, atMs: group.atMs };
    });
  }
}
