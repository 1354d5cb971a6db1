// Review of bd86748 (part 2b): a read of only late-landing values is placed in their send
// incarnation unless a later one may hold them, and the last incarnation is counted out when no
// final log holds the value. But a value that landed in the last incarnation and was then removed
// from it (DeleteRecords, retention) is in no final log either: a read of it, served rightly from
// the last incarnation, is placed in the deleted one and taken for a stale read.
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

test('stale-incarnation-read: a late-landing value written into the last incarnation, read there, then deleted from it, is not a stale read', () => {
  const ops: ClientOp[] = [
    produce('p2', { startMs: 5_000, endMs: 5_000 }, ['z0'], null, { acks: 0 }), // held, written at offset 0 of the re-created incarnation
    admin('delete-topic', { startMs: 6_000, endMs: 6_010 }),
    admin('create-topic', { startMs: 8_000, endMs: 8_010 }),
    fetch('c1', { startMs: 20_000, endMs: 20_010 }, 0, ['z0'], 1), // the re-created log, as it was
    produce('p1', { startMs: 21_000, endMs: 21_010 }, ['b0'], 1),
    deleteRecords({ startMs: 25_000, endMs: 25_010 }, 1, 1), // z0 removed: no final log holds it
  ];
  expect(check(history({ ops, replicaLogs: [replica(1, true, ['b0'], 1)] }))).toEqual([]);
});
