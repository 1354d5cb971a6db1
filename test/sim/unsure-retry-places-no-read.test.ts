// Review of c79bc1b: an idempotent value timed out (unanswered) and retried, acknowledged, in the
// final incarnation (no later one exists for the first attempt to land in, and idempotence keeps
// one copy within it) is surely there; it should still place a read whose first record is unplaced.
import { expect, test } from 'bun:test';
import { check } from '../../src/sim/checker.ts';
import type { ClientOp, History } from '../../src/sim/history.ts';
import { admin, fetch, history, idempotent, NO_ANSWER, produce, replica } from './history-fixture.ts';

const names = (run: History): string[] => [...new Set(check(run).map((violation) => violation.invariant))].sort();

test('acked-readable: a value retried after an unanswered attempt in the final incarnation still places a read', () => {
  const session = { idempotence: idempotent(7, 0) };
  const ops: ClientOp[] = [
    admin('delete-topic', { startMs: 100, endMs: 110 }),
    admin('create-topic', { startMs: 30_000, endMs: 30_010 }),
    produce('p2', { startMs: 30_015, endMs: 30_020 }, ['r0'], null, { outcome: NO_ANSWER }), // within the create's propagation: placed in none
    produce('p1', { startMs: 40_000, endMs: 40_010 }, ['a0'], null, { ...session, outcome: NO_ANSWER }), // timed out
    produce('p1', { startMs: 40_100, endMs: 40_110 }, ['a0'], 1, session), // the retry, acknowledged at 1
  ];
  const log = [replica(1, true, ['r0', 'a0'])];
  expect(check(history({ ops: [...ops, fetch('c1', { startMs: 41_000, endMs: 41_010 }, 0, ['r0', 'a0'], 2)], replicaLogs: log }))).toEqual([]);
  // a0 served at 2 though acknowledged at 1 (and the final log holds it at 1): the read must be judged
  const elsewhere = fetch('c1', { startMs: 41_000, endMs: 41_010 }, 0, ['r0', 'x0', 'a0'], 3);
  expect(names(history({ ops: [...ops, elsewhere], replicaLogs: log }))).toContain('acked-readable');
});
