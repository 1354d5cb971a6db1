// Review of aaab30c: a read of only acks=0 or unanswered values is still placed by their send
// time (no answered record places it), so stale-incarnation-read still judges it.
import { expect, test } from 'bun:test';
import { check } from '../../src/sim/checker.ts';
import type { ClientOp, History } from '../../src/sim/history.ts';
import { admin, fetch, history, NO_ANSWER, produce, replica, SHAPE } from './history-fixture.ts';

const names = (run: History): string[] => [...new Set(check(run).map((violation) => violation.invariant))].sort();

// As checker.test's stale-incarnation-read case, with the old incarnation's produce acks=0 or never answered.
for (const [label, opts] of [
  ['acks=0', { acks: 0 }],
  ['unanswered', { outcome: NO_ANSWER }],
] as const) {
  test(`stale-incarnation-read with a ${label} old-incarnation value`, () => {
    const life: ClientOp[] = [
      produce('p1', { startMs: 100, endMs: 110 }, ['a0'], null, opts as never),
      admin('delete-topic', { startMs: 200, endMs: 210 }),
      admin('create-topic', { startMs: 220, endMs: 230 }),
    ];
    const bound = 210 + SHAPE.leaseMs + 2 * SHAPE.scanIntervalMs;
    const after = history({ ops: [...life, fetch('c1', { startMs: bound + 10, endMs: bound + 20 }, 0, ['a0'], 1)], replicaLogs: [replica(1, true, [])] });
    expect(names(after)).toEqual(['stale-incarnation-read']);
  });
}
