// Review of fb962d6's producer-eviction.ts: the exemption asks whether "a record of the same producer
// id lies in [S, laterOffset) in the final log or any read", and so ignores the producer's own
// acknowledgements. A record acknowledged at an offset inside [S, laterOffset), that retention took
// before anyone read it, kept the producer known to the broker when the retry came (an answer after the
// retry still showed the start at or below it: starts only rise); Kafka's broker then answers the
// retry as a duplicate (or OutOfOrderSequence) and never writes it again. A broker that lost the
// producer's state (the regression producer-state-not-rebuilt) writes it again, and the checker now
// lets that through.
import { describe, expect, test } from 'bun:test';
import { check } from '../../src/sim/checker.ts';
import type { ClientOp, History } from '../../src/sim/history.ts';
import { fetch, history, idempotent, NO_ANSWER, produce, replica } from './history-fixture.ts';

const names = (run: History): string[] => [...new Set(check(run).map((violation) => violation.invariant))].sort();
const judged = (run: History) => names(run).filter((name) => name === 'idempotent-no-duplicates' || name === 'acked-readable');

describe('a retry the broker took while the log still held an acknowledged record of its producer', () => {
  /**
   * e0, e1 acknowledged at 0, 1; e2 lands unanswered at 2; e5 (the producer's next sequence) acknowledged at 3;
   * an answer shows the start at 3 (past e2, not past e5); e2 is retried and written again at 4, then e3 at 5;
   * an answer after the retry still shows the start at 3: e5 was in the log when the retry came. Retention then
   * takes offset 3 before anyone read it.
   */
  function retriedWhileKnown(): History {
    const ops: ClientOp[] = [
      produce('p1', { startMs: 100, endMs: 110 }, ['e0', 'e1'], 0, { idempotence: idempotent(7, 0) }),
      produce('p1', { startMs: 120, endMs: 5120 }, ['e2'], null, { idempotence: idempotent(7, 2), outcome: NO_ANSWER }),
      fetch('c1', { startMs: 130, endMs: 140 }, 0, ['e0', 'e1', 'e2'], 3),
      produce('p1', { startMs: 150, endMs: 160 }, ['e5'], 3, { idempotence: idempotent(7, 3) }),
      fetch('c1', { startMs: 200, endMs: 210 }, 4, [], 4, { logStartOffset: 3 }),
      produce('p1', { startMs: 6000, endMs: 6010 }, ['e2'], 4, { idempotence: idempotent(7, 2) }),
      produce('p1', { startMs: 6020, endMs: 6030 }, ['e3'], 5, { idempotence: idempotent(7, 4) }),
      fetch('c1', { startMs: 7000, endMs: 7010 }, 6, [], 6, { logStartOffset: 3 }),
    ];
    return history({ ops, replicaLogs: [replica(1, true, ['e2', 'e3'], 4)] });
  }

  test('is a duplicate: the exemption must count the acknowledged e5 at 3', () => {
    expect(judged(retriedWhileKnown())).toEqual(['acked-readable', 'idempotent-no-duplicates']);
  });
});

// Review of fb962d6: the exemption's premise is Kafka before 2.4. ProducerStateManager.truncateHead
// evicted a producer once the log start passed its last record; since KIP-360's change (commit
// c49775b, 2.4; KAFKA-9105 put back only the snapshot deletion) the log start's increment
// (UnifiedLog.maybeIncrementLogStartOffset -> ProducerStateManager.onLogStartOffsetIncremented)
// removes unreplicated transactions only: the producer stays until producer.id.expiration.ms (a day),
// as Ferry's own producer-state.ts keeps it. A current Kafka broker answers seed 205056's retry as a
// duplicate; a Ferry broker that wrote it again had lost the producer's state on a rebuild
// (tier-start.ts: producers null once retention took every tiered segment), and the checker now
// passes it. This test contradicts checker.test.ts's "is written again, as Kafka writes it".
describe("a retry after retention passed the producer's last record (seed 205056's shape)", () => {
  test('is a duplicate: Kafka 2.4+ still knows the producer', () => {
    const ops: ClientOp[] = [
      produce('p1', { startMs: 100, endMs: 110 }, ['e0', 'e1'], 0, { idempotence: idempotent(7, 0) }),
      produce('p1', { startMs: 120, endMs: 5120 }, ['e2'], null, { idempotence: idempotent(7, 2), outcome: NO_ANSWER }),
      fetch('c1', { startMs: 130, endMs: 140 }, 0, ['e0', 'e1', 'e2'], 3),
      fetch('c1', { startMs: 200, endMs: 210 }, 3, [], 3, { logStartOffset: 3 }),
      produce('p1', { startMs: 6000, endMs: 6010 }, ['e2'], 3, { idempotence: idempotent(7, 2) }),
      produce('p1', { startMs: 6020, endMs: 6030 }, ['e3'], 4, { idempotence: idempotent(7, 3) }),
    ];
    expect(judged(history({ ops, replicaLogs: [replica(1, true, ['e2', 'e3'], 3)] }))).toEqual(['acked-readable', 'idempotent-no-duplicates']);
  });
});
