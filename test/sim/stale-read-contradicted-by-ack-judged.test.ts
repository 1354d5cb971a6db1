// Review of 744e0aa (read placement, P2 in src/sim/read-placement.ts): a read of a late-landing
// value is unplaced while any later incarnation "may hold" it, and only the last incarnation's
// final log can rule one out. Here the topic is deleted again at the end, so the re-created
// incarnation has no final log, but an acks=all acknowledgement gives its offset 0 to b0: z0 (sent
// acks=0 to the deleted incarnation) read at offset 0 long after the re-create is wrong whichever
// incarnation served it (stale, or two values at one offset), and nothing judges it now. At
// bd86748^ it was placed by its send in incarnation 0 and reported as stale-incarnation-read.
import { expect, test } from 'bun:test';
import { check } from '../../src/sim/checker.ts';
import type { ClientOp } from '../../src/sim/history.ts';
import { admin, fetch, history, produce } from './history-fixture.ts';

test('a stale value read at an offset acknowledged (acks=all) to another value in the re-created incarnation is judged', () => {
  const ops: ClientOp[] = [
    produce('p2', { startMs: 5_000, endMs: 5_000 }, ['z0'], null, { acks: 0 }), // incarnation 0
    admin('delete-topic', { startMs: 6_000, endMs: 6_010 }),
    admin('create-topic', { startMs: 8_000, endMs: 8_010 }),
    produce('p1', { startMs: 9_500, endMs: 9_510 }, ['b0'], 0), // acks=all: offset 0 of incarnation 2 is b0
    fetch('c1', { startMs: 20_000, endMs: 20_010 }, 0, ['z0'], 1), // z0 at committed offset 0
    admin('delete-topic', { startMs: 30_000, endMs: 30_010 }), // the run ends with the topic deleted: no final log
  ];
  expect(check(history({ ops, replicaLogs: [] })).map((v) => v.invariant)).not.toEqual([]);
});
