// Review of bd86748 (part 2a): an acknowledged value whose earlier attempt went unanswered in the
// same incarnation loses its "sure" incarnation whenever that incarnation is not the topic's last,
// whatever the read's time. A read that ended before any later incarnation began cannot hold a copy
// landed there, yet it is no longer placed by that value, so a wrong read of it goes unjudged when
// its first record cannot place it. Before bd86748 the read was placed (and judged).
import { expect, test } from 'bun:test';
import { check } from '../../src/sim/checker.ts';
import type { ClientOp, History } from '../../src/sim/history.ts';
import { admin, fetch, history, idempotent, NO_ANSWER, produce, replica } from './history-fixture.ts';

const names = (run: History): string[] => [...new Set(check(run).map((violation) => violation.invariant))].sort();

const session = { idempotence: idempotent(7, 0) };
const ops: ClientOp[] = [
  produce('p2', { startMs: 1_000, endMs: 1_010 }, ['r0'], null, { outcome: NO_ANSWER }), // r0: sent in incarnation 0 ...
  produce('p1', { startMs: 1_100, endMs: 1_110 }, ['a0'], null, { ...session, outcome: NO_ANSWER }), // a0 timed out ...
  produce('p1', { startMs: 1_200, endMs: 1_210 }, ['a0'], 1, session), // ... and its retry acknowledged at 1, all in incarnation 0
  admin('delete-topic', { startMs: 10_000, endMs: 10_010 }),
  admin('create-topic', { startMs: 30_000, endMs: 30_010 }),
  produce('p2', { startMs: 40_000, endMs: 40_010 }, ['r0'], null, { outcome: NO_ANSWER }), // ... and again in incarnation 2: r0 places no read
];
const log = [replica(1, true, ['r0'])];

test('acked-readable: a read that ended before the topic was deleted is still placed by a value acknowledged there after a timed-out attempt', () => {
  // read at 2 s, 8 s before the delete began: a0 can only be incarnation 0's copy, acknowledged at 1 but served at 2
  const wrong = fetch('c1', { startMs: 2_000, endMs: 2_010 }, 0, ['r0', 'x0', 'a0'], 3);
  expect(names(history({ ops: [...ops, wrong], replicaLogs: log }))).toContain('acked-readable');
});

test('stale-incarnation-read: the same value read after the delete took effect everywhere, before any re-create began, is still judged', () => {
  // read at 20 s: the delete (10 s) took effect everywhere by 11.21 s and the re-create begins at 30 s, so incarnation 0 served it stale
  const stale = fetch('c1', { startMs: 20_000, endMs: 20_010 }, 0, ['r0', 'a0'], 2);
  expect(names(history({ ops: [...ops, stale], replicaLogs: log }))).toEqual(['stale-incarnation-read']);
});
