// Review of 744e0aa (read placement, P1 in src/sim/read-placement.ts): any attempt that may have
// landed later and was sent while the topic's incarnation is unknown (here: within a re-create's
// propagation bound) makes every later read of its value unplaced, even when its value was
// acknowledged in that same re-created incarnation and no other incarnation that may exist could
// hold it (the old one was surely over when it was sent; the one between is a deletion). A read
// that returns the value at an offset the final log and an acks=all acknowledgement give to another
// value is then judged by nothing. At bd86748^ it was placed by its acknowledged value and reported
// (offset-unique, read-durable).
import { expect, test } from 'bun:test';
import { check } from '../../src/sim/checker.ts';
import type { ClientOp } from '../../src/sim/history.ts';
import { admin, fetch, history, NO_ANSWER, produce, replica } from './history-fixture.ts';

test('a read placed by a value acknowledged in the last incarnation stays judged after an unanswered attempt sent during its create', () => {
  const ops: ClientOp[] = [
    admin('delete-topic', { startMs: 6_000, endMs: 6_010 }), // incarnation 0 surely over at 7,210
    admin('create-topic', { startMs: 8_000, endMs: 8_010 }), // attributions resume at 9,210
    produce('p1', { startMs: 8_500, endMs: 8_510 }, ['a0'], null, { outcome: NO_ANSWER }), // unattributed, may land later
    produce('p1', { startMs: 9_500, endMs: 9_510 }, ['a0'], 0), // its retry, acknowledged at 0 in incarnation 2
    produce('p2', { startMs: 9_600, endMs: 9_610 }, ['b0'], 1), // acks=all: offset 1 is b0
    fetch('c1', { startMs: 20_000, endMs: 20_010 }, 1, ['a0'], 2), // a0 at committed offset 1: wrong
  ];
  const violations = check(history({ ops, replicaLogs: [replica(1, true, ['a0', 'b0']), replica(2, false, ['a0', 'b0'])] }));
  expect(violations.map((v) => v.invariant)).not.toEqual([]);
});
