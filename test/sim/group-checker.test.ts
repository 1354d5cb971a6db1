/**
 * The group invariants on hand-built histories: commit-current-generation (a commit is accepted
 * only from a member of the current generation) and fetched-offset-committed (committed offsets
 * are what members committed, in order).
 */
import { describe, expect, test } from 'bun:test';
import { check } from '../../src/sim/checker.ts';
import type { ClientOp, History, Outcome } from '../../src/sim/history.ts';
import { COMMIT_CURRENT_GENERATION } from '../../src/sim/invariants/commit-current-generation.ts';
import { FETCHED_OFFSET_COMMITTED } from '../../src/sim/invariants/fetched-offset-committed.ts';
import { allHealthy, commit, groupMember, joinGroup, NO_ANSWER, offsetFetch, spell, validHistory, validOps } from './history-fixture.ts';

const refused = (error: string): Outcome => ({ ok: false, error, answered: true });
const names = (run: History): string[] => [...new Set(check(run).map((violation) => violation.invariant))].sort();
const run = (ops: ClientOp[], health = allHealthy()): History => ({ ...validHistory([...validOps(), ...ops]), health });

/** Members m1 (the leader) and m2 in generation 1 on node 1, both synced by 1_000. */
const generationOne = (): ClientOp[] => [
  joinGroup({ startMs: 500, endMs: 900 }, 'm1', 1, 'm1', { members: ['m1', 'm2'] }),
  joinGroup({ startMs: 510, endMs: 900 }, 'm2', 1, 'm1', { client: 'c2' }),
  groupMember('sync-group', { startMs: 900, endMs: 910 }, 'm1', 1),
  groupMember('sync-group', { startMs: 900, endMs: 910 }, 'm2', 1, { client: 'c2' }),
];

/** m2 rejoins without m1: generation 2, which it leads. */
const generationTwo = (joinEndMs: number, syncEndMs: number | null, node = 1): ClientOp[] => [
  joinGroup({ startMs: joinEndMs - 300, endMs: joinEndMs }, 'm2', 2, 'm2', { client: 'c2', node }),
  ...(syncEndMs === null ? [] : [groupMember('sync-group', { startMs: joinEndMs, endMs: syncEndMs }, 'm2', 2, { client: 'c2', node })]),
];

const memberCommit = (startMs: number, generationId: number, outcome: Outcome = { ok: true }, node = 1) => commit({ startMs, endMs: startMs + 10 }, 4, { memberId: 'm1', generationId, outcome, node });

describe(COMMIT_CURRENT_GENERATION, () => {
  test('commits of the current generation, and refusals of a past one, keep it', () => {
    expect(check(run([...generationOne(), memberCommit(1_000, 1), ...generationTwo(2_000, 2_010), memberCommit(3_000, 1, refused('ILLEGAL_GENERATION'))]))).toEqual([]);
  });

  test('a commit of a past generation accepted after the next was synced breaks it, from any coordinator', () => {
    expect(names(run([...generationOne(), ...generationTwo(2_000, 2_010), memberCommit(3_000, 1)]))).toEqual([COMMIT_CURRENT_GENERATION]);
    expect(names(run([...generationOne(), ...generationTwo(2_000, 2_010, 2), memberCommit(3_000, 1)]))).toEqual([COMMIT_CURRENT_GENERATION]);
  });

  test('a commit in flight while the next generation began is not judged', () => {
    expect(check(run([...generationOne(), ...generationTwo(2_000, 2_010), memberCommit(1_995, 1)]))).toEqual([]);
  });

  test('a join answered (not yet synced) counts on its coordinator only while it stays healthy', () => {
    expect(names(run([...generationOne(), ...generationTwo(2_000, null), memberCommit(3_000, 1)]))).toEqual([COMMIT_CURRENT_GENERATION]);
    expect(check(run([...generationOne(), ...generationTwo(2_000, null, 2), memberCommit(3_000, 1)]))).toEqual([]);
    expect(check(run([...generationOne(), ...generationTwo(2_000, null), memberCommit(3_000, 1)], [...allHealthy(), ...spell(1, 2_500, 2_600)]))).toEqual([]);
  });

  test('another lineage (a coordinator that started the group afresh, with new member ids) does not judge it', () => {
    const fresh = [
      joinGroup({ startMs: 1_500, endMs: 1_800 }, 'n1', 7, 'n1', { client: 'c3', node: 2 }),
      groupMember('sync-group', { startMs: 1_800, endMs: 1_810 }, 'n1', 7, { client: 'c3', node: 2 }),
    ];
    expect(check(run([...generationOne(), ...fresh, memberCommit(3_000, 1)]))).toEqual([]);
  });

  test("a member's commit accepted after its LeaveGroup was answered there breaks it", () => {
    const leave = groupMember('leave-group', { startMs: 1_500, endMs: 1_510 }, 'm1', -1);
    expect(names(run([...generationOne(), leave, memberCommit(2_000, 1)]))).toEqual([COMMIT_CURRENT_GENERATION]);
    expect(check(run([...generationOne(), leave, memberCommit(2_000, 1, refused('UNKNOWN_MEMBER_ID'))]))).toEqual([]);
  });
});

describe(FETCHED_OFFSET_COMMITTED, () => {
  const fetchAt = (startMs: number, offset: number, node = 1) => offsetFetch({ startMs, endMs: startMs + 10 }, offset, { node });
  const commitAt = (startMs: number, offset: number, outcome: Outcome = { ok: true }, node = 1) => commit({ startMs, endMs: startMs + 10 }, offset, { outcome, node });

  test('the last commit, nothing, or a commit still in flight keep it', () => {
    expect(check(run([fetchAt(100, -1), commitAt(1_000, 7), fetchAt(2_000, 7)]))).toEqual([]);
    expect(check(run([commitAt(1_000, 7), commitAt(1_995, 9), fetchAt(2_000, 7)]))).toEqual([]);
  });

  test('an offset no commit that may have been written asked for breaks it', () => {
    expect(names(run([fetchAt(2_000, 6)]))).toEqual([FETCHED_OFFSET_COMMITTED]);
    expect(names(run([commitAt(1_000, 9, refused('ILLEGAL_GENERATION')), fetchAt(2_000, 9)]))).toEqual([FETCHED_OFFSET_COMMITTED]);
    expect(names(run([fetchAt(2_000, 9), commitAt(2_500, 9)]))).toEqual([FETCHED_OFFSET_COMMITTED]); // committed only after the answer
    expect(check(run([commitAt(1_000, 9, refused('NOT_COORDINATOR')), fetchAt(2_000, 9)]))).toEqual([]); // it may have been written
  });

  test('an offset superseded by a later commit answered before the fetch breaks it', () => {
    // 9 then 7 (a reset: commits-monotonic excuses it), then a fetch of 9.
    expect(names(run([commitAt(300, 9), commitAt(1_000, 7, { ok: true }), fetchAt(2_000, 9)]))).toEqual([FETCHED_OFFSET_COMMITTED]);
  });

  test('a commit of that offset never answered is never superseded (a paused coordinator may write it late)', () => {
    expect(check(run([commitAt(300, 9, NO_ANSWER), commitAt(1_000, 7), fetchAt(2_000, 9)]))).toEqual([]);
  });

  test('a later commit answered by another broker counts once the fetching broker had the propagation bound to see it', () => {
    // The fixture's cluster: a lease of 1000 ms and scans of 100 ms, so the bound is 1200 ms.
    expect(check(run([commitAt(300, 9), commitAt(1_000, 7, { ok: true }, 2), fetchAt(2_000, 9)]))).toEqual([]);
    expect(names(run([commitAt(300, 9), commitAt(1_000, 7, { ok: true }, 2), fetchAt(2_300, 9)]))).toEqual([FETCHED_OFFSET_COMMITTED]);
    expect(check(run([commitAt(300, 9), commitAt(1_000, 7, { ok: true }, 2), fetchAt(2_300, 9)], [...allHealthy(), ...spell(1, 1_500, 1_600)]))).toEqual([]);
  });
});
