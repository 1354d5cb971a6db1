// Review of 744e0aa (read placement, src/sim/read-placement.ts): a read of a late-landing value
// (acks=0 here) is left unplaced while a later incarnation "may hold" it, and the last incarnation
// is ruled out only when its final leader log is whole from offset 0. But a final log that starts
// above 0 still proves what it covers: here the stale value z0 of the deleted incarnation is read
// at offset 1 of the re-created topic, below the read's high watermark, where the final leader log
// (and an acks=all acknowledgement) holds b1. Whichever incarnation served it, the read is wrong (a
// stale read of incarnation 0, or a committed offset of the last one read as another value), yet
// no invariant judges it now. At bd86748^ the read was placed in incarnation 0 (by its send) and
// reported as stale-incarnation-read.
import { expect, test } from 'bun:test';
import { check } from '../../src/sim/checker.ts';
import type { ClientOp, DeleteRecordsOp } from '../../src/sim/history.ts';
import { admin, fetch, history, OK, produce, replica } from './history-fixture.ts';

const deleteRecords = (span: { startMs: number; endMs: number }, offset: number, lowWatermark: number): DeleteRecordsOp => ({
  kind: 'delete-records',
  client: 'admin',
  node: 1,
  ...span,
  outcome: OK,
  topic: 't',
  partition: 0,
  offset,
  lowWatermark,
});

test("a stale value read at an offset the last incarnation's final log holds otherwise is judged, though that log starts above 0", () => {
  const ops: ClientOp[] = [
    produce('p2', { startMs: 5_000, endMs: 5_000 }, ['z0'], null, { acks: 0 }), // incarnation 0
    admin('delete-topic', { startMs: 6_000, endMs: 6_010 }),
    admin('create-topic', { startMs: 8_000, endMs: 8_010 }),
    produce('p1', { startMs: 9_000, endMs: 9_010 }, ['b0'], 0),
    produce('p1', { startMs: 9_100, endMs: 9_110 }, ['b1'], 1), // acks=all: offset 1 of the re-created log is b1
    deleteRecords({ startMs: 10_000, endMs: 10_010 }, 1, 1), // the final log starts at 1: not "whole from 0"
    fetch('c1', { startMs: 20_000, endMs: 20_010 }, 1, ['z0'], 2), // z0 at offset 1, committed: wrong in any incarnation
  ];
  const violations = check(history({ ops, replicaLogs: [replica(1, true, ['b1'], 1), replica(2, false, ['b1'], 1)] }));
  expect(violations.map((v) => v.invariant)).not.toEqual([]);
});
