// Review of 4c30de4: a deposed process that had acknowledged the predecessor itself holds it in its
// log; its sequence error is a real producer-state bug and stays judged.
import { describe, expect, test } from 'bun:test';
import { check } from '../../src/sim/checker.ts';
import type { History, Outcome } from '../../src/sim/history.ts';
import { idempotent, produce, validHistory, validOps, VALID_LOG } from './history-fixture.ts';

const OUT_OF_ORDER: Outcome = { ok: false, answered: true, error: 'OUT_OF_ORDER_SEQUENCE_NUMBER' } as Outcome;

describe('idempotent-retry-answer and a deposed answerer', () => {
  // Broker 1's OWN process acknowledged the predecessor (so its log holds it), then was deposed,
  // then answered the next batch OUT_OF_ORDER: a real bug in its producer state, exempted.
  test('predecessor acknowledged by the deposed answerer itself: judged', () => {
    const before = produce('p1', { startMs: 480, endMs: 500 }, ['j0'], 4, { idempotence: idempotent(7, 3), node: 1, answeredBy: { process: 'broker-1#1', atMs: 495 } });
    const next = produce('p1', { startMs: 600, endMs: 610 }, ['m0'], null, { idempotence: idempotent(7, 4), node: 1, outcome: OUT_OF_ORDER, answeredBy: { process: 'broker-1#1', atMs: 605 } });
    const log = [...VALID_LOG, 'j0'];
    const claim = (process: string, leader: number, leaderEpoch: number, takenMs: number) => ({ process, topic: 't', partition: 0, leader, leaderEpoch, takenMs });
    const run: History = {
      ...validHistory([...validOps(), before, next], log, log),
      leases: { renewals: [], partitionWrites: [claim('broker-1#1', 1, 0, 10), claim('broker-2#1', 2, 1, 550)], clockRateErrors: {} },
    };
    const names = [...new Set(check(run).map((v) => v.invariant))].filter((n) => n === 'idempotent-retry-answer');
    expect(names).toEqual(['idempotent-retry-answer']);
  });
});
