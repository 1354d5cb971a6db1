// Invariants that stand on topic configs, judged while the configs change (issue 25, item 4):
// acks-all-min-insync and acks-resume-with-quorum by the topic's min.insync.replicas as altered
// (config-timeline.ts), acked-durable's DeleteRecords floor once retention may run.
import { describe, expect, test } from 'bun:test';
import { check } from '../../src/sim/checker.ts';
import { ConfigTimeline } from '../../src/sim/config-timeline.ts';
import type { AlterConfigsOp, ClientOp, DeleteRecordsOp, History, Outcome, ProduceOp, QuotaChangeOp, RunShape } from '../../src/sim/history.ts';
import { allHealthy, history, NO_ANSWER, OK, produce, replica, SHAPE, spell, validOps } from './history-fixture.ts';

const names = (run: History): string[] => [...new Set(check(run).map((violation) => violation.invariant))].sort();
type Span = { startMs: number; endMs: number };

function alter(span: Span, name: string, value: string | null, outcome: Outcome = OK): AlterConfigsOp {
  return { kind: 'alter-configs', client: 'admin', node: 1, ...span, outcome, topic: 't', configs: [{ name, value }] };
}

// The fixture's propagation bound: a lease and two scans, 1,000 + 2 x 100 ms.
describe('ConfigTimeline', () => {
  const ops = [alter({ startMs: 1_000, endMs: 1_010 }, 'min.insync.replicas', '1'), alter({ startMs: 5_000, endMs: 5_010 }, 'min.insync.replicas', '3')];
  const timeline = new ConfigTimeline(ops, 't', 'min.insync.replicas', '2', 1_200);

  test('before an alter, the default; from its start until the bound after its answer, both; then its value alone', () => {
    expect(timeline.possibleValues(100, 900)).toEqual(['2']);
    expect(timeline.possibleValues(1_005, 1_100).sort()).toEqual(['1', '2']);
    expect(timeline.possibleValues(3_000, 4_000)).toEqual(['1']);
    expect(timeline.possibleValues(3_000, 5_005).sort()).toEqual(['1', '3']);
  });

  test('a broker not healthy for the bound may still act on an older value', () => {
    expect(timeline.possibleValues(3_000, 4_000, 2_500).sort()).toEqual(['1', '2']);
  });

  test('an alter of unknown outcome may take effect at any later time; a refused one never does', () => {
    const unknown = new ConfigTimeline([alter({ startMs: 100, endMs: 200 }, 'min.insync.replicas', '1', NO_ANSWER), ...ops], 't', 'min.insync.replicas', '2', 1_200);
    expect(unknown.possibleValues(8_000, 9_000).sort()).toEqual(['1', '3']);
    const refused = alter({ startMs: 100, endMs: 200 }, 'min.insync.replicas', '1', { ok: false, error: 'INVALID_CONFIG', answered: true });
    expect(new ConfigTimeline([refused], 't', 'min.insync.replicas', '2', 1_200).possibleValues(0, 9_000)).toEqual(['2']);
  });

  test('a DELETE and a create bring back the default', () => {
    const back = new ConfigTimeline([...ops, alter({ startMs: 7_000, endMs: 7_010 }, 'min.insync.replicas', null)], 't', 'min.insync.replicas', '2', 1_200);
    expect(back.possibleValues(9_000, 9_500)).toEqual(['2']);
  });
});

describe('acks-all-min-insync as min.insync.replicas changes', () => {
  const MIN_INSYNC_2: RunShape = { ...SHAPE, minInsyncReplicas: 2 };
  const end = (node: number, atMs: number, logEndOffset: number) => ({ node, topic: 't', partition: 0, atMs, logEndOffset });
  /** An ack of a0 at [startMs, startMs + 20] that only the leader (node 1) ever held. */
  const leaderOnly = (startMs: number, ops: ClientOp[], shape: RunShape) => {
    const acked = produce('p1', { startMs, endMs: startMs + 20 }, ['a0'], 0);
    return history({ ops: [...ops, acked], replicaLogs: [replica(1, true, ['a0']), replica(2, false, [])], shape, replicaEnds: [end(1, 0, 0), end(2, 0, 0), end(1, startMs + 5, 1)] });
  };

  test('lowered to 1: an ack the leader alone held is judged by the old value only before the alter', () => {
    const lowered = [alter({ startMs: 1_000, endMs: 1_010 }, 'min.insync.replicas', '1')];
    expect(names(leaderOnly(500, lowered, MIN_INSYNC_2))).toEqual(['acks-all-min-insync']);
    expect(check(leaderOnly(1_005, lowered, MIN_INSYNC_2))).toEqual([]);
    expect(check(leaderOnly(3_000, lowered, MIN_INSYNC_2))).toEqual([]);
  });

  test('raised to 2: caught once the alter surely applies, not while the old value may still', () => {
    const raised = [alter({ startMs: 1_000, endMs: 1_010 }, 'min.insync.replicas', '2')];
    expect(check(leaderOnly(1_500, raised, SHAPE))).toEqual([]);
    const late = leaderOnly(3_000, raised, SHAPE);
    expect(names(late)).toEqual(['acks-all-min-insync']);
    expect(check(late)[0]!.message).toContain('min.insync.replicas 2');
  });
});

describe('acks-resume-with-quorum as min.insync.replicas changes', () => {
  const NOT_ENOUGH_REPLICAS: Outcome = { ok: false, error: 'NOT_ENOUGH_REPLICAS', answered: true };
  const failures = (fromMs: number, toMs: number): ProduceOp[] => {
    const ops: ProduceOp[] = [];
    for (let atMs = fromMs; atMs < toMs; atMs += 500) ops.push(produce('p1', { startMs: atMs, endMs: atMs + 50 }, [`v${atMs}`], null, { outcome: NOT_ENOUGH_REPLICAS }));
    return ops;
  };
  // Node 2 of 2 is down from 1,000 on: with min.insync 1 a quorum holds, with 2 none does.
  const health = [...allHealthy(), ...spell(2, 1_000, 60_000)];

  test('raised to 2 (RF): with one broker down no quorum holds, so failures are not demanded', () => {
    const ops = [alter({ startMs: 900, endMs: 910 }, 'min.insync.replicas', '2'), ...failures(1_000, 30_000)];
    expect(check(history({ ops, replicaLogs: [replica(1, true, [])], health }))).toEqual([]);
  });

  test('back to 1: acks=all is owed again from the bound after the change', () => {
    const ops = [alter({ startMs: 900, endMs: 910 }, 'min.insync.replicas', '2'), alter({ startMs: 2_000, endMs: 2_010 }, 'min.insync.replicas', '1'), ...failures(1_000, 30_000)];
    const violations = check(history({ ops, replicaLogs: [replica(1, true, [])], health }));
    expect(violations.map((violation) => violation.invariant)).toEqual(['acks-resume-with-quorum']);
    expect(violations[0]!.message).toContain('min.insync.replicas may have changed');
  });
});

describe('acks-resume-with-quorum and produce quotas', () => {
  const TIMED_OUT: Outcome = { ok: false, error: 'REQUEST_TIMED_OUT', answered: true };
  const stalled = (): ProduceOp[] => {
    const ops: ProduceOp[] = [];
    for (let atMs = 1_000; atMs < 30_000; atMs += 500) ops.push(produce('p1', { startMs: atMs, endMs: atMs + 50 }, [`v${atMs}`], null, { outcome: TIMED_OUT }));
    return ops;
  };
  const secured = (ops: ClientOp[]): History => ({
    ...history({ ops, replicaLogs: [replica(1, true, [])] }),
    security: { users: { p1: 'p1' }, superUsers: [], aclPropagationMs: 1_000, failedAuthenticationDelayMs: 100 },
  });
  const quota: QuotaChangeOp = { kind: 'alter-quota', client: 'admin', node: 1, startMs: 10, endMs: 20, outcome: { ok: true }, user: 'p1', key: 'producer_byte_rate', value: 300 };

  test('a producer no quota binds is owed acks=all while a quorum holds', () => {
    expect(names(secured(stalled()))).toContain('acks-resume-with-quorum');
  });

  test("a producer a produce quota may bind is not: the broker's throttle mutes its connection (KIP-219)", () => {
    expect(names(secured([quota, ...stalled()]))).not.toContain('acks-resume-with-quorum');
  });
});

describe('acked-durable with retention', () => {
  const deleteRecords = (span: Span, offset: number, lowWatermark: number): DeleteRecordsOp => ({
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
  const deletedTo2 = () => [...validOps(), deleteRecords({ startMs: 300, endMs: 310 }, 2, 2)];

  test('a log start past every DeleteRecords is a loss, unless a retention limit was set on the topic', () => {
    expect(names(history({ ops: deletedTo2(), replicaLogs: [replica(1, true, ['b0'], 3)] }))).toEqual(['acked-durable']);
    const limited = [...deletedTo2(), alter({ startMs: 400, endMs: 410 }, 'retention.bytes', String(128 * 1024))];
    expect(check(history({ ops: limited, replicaLogs: [replica(1, true, ['b0'], 3)] }))).toEqual([]);
    const unlimited = [...deletedTo2(), alter({ startMs: 400, endMs: 410 }, 'retention.ms', '-1')];
    expect(names(history({ ops: unlimited, replicaLogs: [replica(1, true, ['b0'], 3)] }))).toEqual(['acked-durable']);
  });
});
