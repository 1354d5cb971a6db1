// Review of bd86748 (part 2b): a later incarnation counts as a place a late-landing value may be
// only if the create that began it surely succeeded (life.exists). A re-create whose answer was
// lost may have taken effect all the same (mayHaveTakenEffect): here it did, the held acks=0 value
// was written into it, and the final log holds it there; a read of it is still placed in the
// incarnation it was sent to and taken for a stale read.
import { expect, test } from 'bun:test';
import { check } from '../../src/sim/checker.ts';
import type { ClientOp } from '../../src/sim/history.ts';
import { admin, fetch, history, NO_ANSWER, produce, replica } from './history-fixture.ts';

test('stale-incarnation-read: a late-landing value read from a re-create whose answer was lost (the final log holds it) is not a stale read', () => {
  const ops: ClientOp[] = [
    produce('p2', { startMs: 5_000, endMs: 5_000 }, ['z0'], null, { acks: 0 }), // held, written at offset 0 of the re-created incarnation
    admin('delete-topic', { startMs: 6_000, endMs: 6_010 }),
    admin('create-topic', { startMs: 8_000, endMs: 8_010 }, NO_ANSWER), // took effect; its answer was lost
    fetch('c1', { startMs: 20_000, endMs: 20_010 }, 0, ['z0'], 1),
  ];
  expect(check(history({ ops, replicaLogs: [replica(1, true, ['z0'])] }))).toEqual([]);
});
