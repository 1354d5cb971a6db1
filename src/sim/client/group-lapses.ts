/**
 * What a real group member does wrong now and then, drawn from a stream of its own (so a member's
 * lapses shift none of the run's other draws):
 * - `stall`: its process stalls (a long GC pause, a poll loop stuck in the application): no
 *   heartbeat, fetch or commit, often past its session timeout; back, it commits with the
 *   generation it had, as if nothing happened, and only the answers tell it otherwise;
 * - `zombie`: it misses the next rebalance: on the answer that says the generation ended, it keeps
 *   fetching, heartbeating and committing under its old generation and member id for a while,
 *   while the others rebalance without it;
 * - `stale-commits`: it rejoins at the next rebalance, but goes on committing the old generation's
 *   positions under the old generation id for a while (an application thread that holds the old
 *   assignment, or a transactional producer given stale group metadata);
 * - `leave`: it commits and leaves the group (LeaveGroup), stays out a while and joins as a new
 *   member; sometimes a commit under the generation it left follows the leave.
 * The coordinator must refuse every commit of a generation that is not current.
 */
import type { Clock } from '../../util/clock.ts';
import type { SeededRandom } from '../../util/random.ts';
import { sleep } from './context.ts';

export type LapseKind = 'stall' | 'zombie' | 'stale-commits' | 'leave';

/** Each lapse kind's share of lapses. */
const LAPSE_WEIGHTS: readonly (readonly [LapseKind, number])[] = [
  ['stall', 0.3],
  ['zombie', 0.25],
  ['stale-commits', 0.25],
  ['leave', 0.2],
];
/** Between two lapses of one member: long enough that the group settles in between most of the time. */
const LAPSE_GAP_MS_MIN = 3_000;
const LAPSE_GAP_MS_MAX = 15_000;
/** A stall, as a share of the session timeout: about half the stalls outlast it (the coordinator drops the member). */
const STALL_SESSION_SHARE_MIN = 0.2;
const STALL_SESSION_SHARE_MAX = 2;
/** How long a zombie holds on to its old generation: beyond the rebalance timeout often, so the group moves on without it. */
const ZOMBIE_MS_MIN = 1_000;
const ZOMBIE_MS_MAX = 12_000;
/** How long stale commits go on after the member rejoined. */
const STALE_COMMITS_MS_MIN = 1_000;
const STALE_COMMITS_MS_MAX = 6_000;
/** How long a member that left stays out of the group. */
const LEAVE_OUT_MS_MIN = 500;
const LEAVE_OUT_MS_MAX = 5_000;
/** The share of leaves followed by a commit under the generation left. */
const COMMIT_AFTER_LEAVE_SHARE = 0.5;

export interface LapseOptions {
  /** The member's own stream of lapse draws. */
  readonly random: SeededRandom;
  /** No lapse starts once this says so (the run's faults are over: the quiet is for the probes). */
  readonly over: () => boolean;
}

/** What a member offers for its lapses (SimGroupConsumer). */
export interface LapsingMember {
  readonly running: boolean;
  readonly sessionTimeoutMs: number;
  /** Nothing runs for `ms`; then a commit under the generation it had. */
  stall(ms: number): Promise<void>;
  /** At the next answer that ends its generation, hold on to it (`zombie`) or commit under it (`stale-commits`) for `ms`. */
  lapseAtNextRebalance(kind: 'zombie' | 'stale-commits', ms: number): void;
  /** Commits, leaves, and stays out for `outMs`; `commitAfter`: one more commit under the generation left. */
  leave(outMs: number, commitAfter: boolean): Promise<void>;
}

/** Lapses at drawn moments while the member runs and `options.over()` is false. */
export async function runLapses(member: LapsingMember, clock: Clock, options: LapseOptions): Promise<void> {
  const { random } = options;
  const between = (min: number, max: number) => min + random.next() * (max - min);
  for (;;) {
    await sleep(clock, between(LAPSE_GAP_MS_MIN, LAPSE_GAP_MS_MAX));
    if (!member.running || options.over()) return;
    const kind = drawKind(random);
    if (kind === 'stall') await member.stall(member.sessionTimeoutMs * between(STALL_SESSION_SHARE_MIN, STALL_SESSION_SHARE_MAX));
    else if (kind === 'zombie') member.lapseAtNextRebalance(kind, between(ZOMBIE_MS_MIN, ZOMBIE_MS_MAX));
    else if (kind === 'stale-commits') member.lapseAtNextRebalance(kind, between(STALE_COMMITS_MS_MIN, STALE_COMMITS_MS_MAX));
    else await member.leave(between(LEAVE_OUT_MS_MIN, LEAVE_OUT_MS_MAX), random.next() < COMMIT_AFTER_LEAVE_SHARE);
  }
}

function drawKind(random: SeededRandom): LapseKind {
  let draw = random.next() * LAPSE_WEIGHTS.reduce((sum, [, weight]) => sum + weight, 0);
  for (const [kind, weight] of LAPSE_WEIGHTS) {
    draw -= weight;
    if (draw < 0) return kind;
  }
  return LAPSE_WEIGHTS.at(-1)![0];
}
