// The invariants of issue 12's admin operations (delete-records-floor, partition-count-monotonic,
// config-applied, and acked-durable's demand up to DeleteRecords' start) over hand-built histories.
import { describe, expect, test } from 'bun:test';
import { check } from '../../src/sim/checker.ts';
import type { AlterConfigsOp, CreatePartitionsOp, DeleteRecordsOp, FetchOp, History, ListOffsetsOp, MetadataOp, Outcome } from '../../src/sim/history.ts';
import { allHealthy, fetch, history, OK, probe, produce, replica, spell, VALID_LOG, validOps } from './history-fixture.ts';

const names = (run: History): string[] => [...new Set(check(run).map((violation) => violation.invariant))].sort();
type Span = { startMs: number; endMs: number };

function deleteRecords(span: Span, offset: number, lowWatermark: number | null, outcome: Outcome = OK): DeleteRecordsOp {
  return { kind: 'delete-records', client: 'admin', node: 1, ...span, outcome, topic: 't', partition: 0, offset, lowWatermark };
}

function listEarliest(span: Span, offset: number): ListOffsetsOp {
  return { kind: 'list-offsets', client: 'c2', node: 1, ...span, outcome: OK, topic: 't', partition: 0, timestamp: -2, offset };
}

function createPartitions(span: Span, count: number): CreatePartitionsOp {
  return { kind: 'create-partitions', client: 'admin', node: 1, ...span, outcome: OK, topic: 't', count };
}

function metadata(span: Span, partitions: number, node = 1): MetadataOp {
  return { kind: 'metadata', client: 'c1', node, ...span, outcome: OK, topics: [{ name: 't', partitions }] };
}

/** The fixture's valid ops (a0..a2 acks=all at 0..2, b0 acks=1 at 3), then records before 2 deleted at 300..310. */
const deletedTo2 = () => [...validOps(), deleteRecords({ startMs: 300, endMs: 310 }, 2, 2)];
const logFrom2 = () => [replica(1, true, ['a2', 'b0'], 2)];

describe('delete-records-floor', () => {
  test('reads, ListOffsets and the final log from the deleted start on keep it', () => {
    const ops = [...deletedTo2(), fetch('c2', { startMs: 320, endMs: 330 }, 2, ['a2', 'b0'], 4), listEarliest({ startMs: 340, endMs: 350 }, 2)];
    expect(check(history({ ops, replicaLogs: logFrom2() }))).toEqual([]);
  });

  // Reads are judged of a broker healthy for the propagation bound (SHAPE: 1,000 + 2 x 100 ms) before them.
  test('a read below the start after the answer breaks it; one that started before the answer does not', () => {
    const late = fetch('c2', { startMs: 1_320, endMs: 1_330 }, 0, ['a0', 'a1', 'a2', 'b0'], 4);
    expect(names(history({ ops: [...deletedTo2(), late], replicaLogs: logFrom2() }))).toEqual(['delete-records-floor']);
    const overlapping = fetch('c2', { startMs: 305, endMs: 330 }, 0, ['a0', 'a1', 'a2', 'b0'], 4);
    expect(check(history({ ops: [...deletedTo2(), overlapping], replicaLogs: logFrom2() }))).toEqual([]);
  });

  test('ListOffsets EARLIEST below the start after the answer breaks it', () => {
    const run = history({ ops: [...deletedTo2(), listEarliest({ startMs: 1_340, endMs: 1_350 }, 0)], replicaLogs: logFrom2() });
    expect(names(run)).toEqual(['delete-records-floor']);
    expect(check(run)[0]!.message).toContain('earliest offset below the deleted start');
  });

  test('a broker back from a pause answers from what it read last until its next scan [C1]: judged only once healthy for the propagation bound (sim seed 30293)', () => {
    const health = [...allHealthy(), ...spell(1, 200, 2_000)]; // node 1 paused over the delete's answer
    const justBack = [...deletedTo2(), listEarliest({ startMs: 2_010, endMs: 2_020 }, 0), fetch('c2', { startMs: 2_030, endMs: 2_040 }, 0, ['a0', 'a1', 'a2', 'b0'], 4)];
    expect(check(history({ ops: justBack, replicaLogs: logFrom2(), health }))).toEqual([]);
    const settled = [...deletedTo2(), listEarliest({ startMs: 3_300, endMs: 3_310 }, 0)];
    expect(names(history({ ops: settled, replicaLogs: logFrom2(), health }))).toEqual(['delete-records-floor']);
  });

  test('a final leader serving from below the start breaks it', () => {
    const run = history({ ops: deletedTo2(), replicaLogs: [{ ...replica(1, true, ['a0', 'a1', 'a2', 'b0']), clientStartOffset: 1 }] });
    expect(names(run)).toEqual(['delete-records-floor']);
    expect(check(run)[0]!.message).toContain('final log starts below the deleted start');
  });

  test('a low watermark answered below the offset asked breaks it', () => {
    const ops = [...validOps(), deleteRecords({ startMs: 300, endMs: 310 }, 3, 2)];
    expect(names(history({ ops, replicaLogs: [replica(1, true, ['a2', 'b0'], 2)] }))).toEqual(['delete-records-floor']);
  });
});

describe('acked-durable with DeleteRecords', () => {
  test('a log start moved past every DeleteRecords loses the acknowledged records between', () => {
    const run = history({ ops: deletedTo2(), replicaLogs: [replica(1, true, ['b0'], 3)] });
    expect(names(run)).toEqual(['acked-durable']);
    expect(check(run)[0]).toMatchObject({ offsets: [2] });
  });

  test('without a DeleteRecords, or with one of unknown outcome up to the high watermark, that start is not judged', () => {
    expect(check(history({ ops: validOps(), replicaLogs: [replica(1, true, ['b0'], 3)] }))).toEqual([]);
    const unknown = [...validOps(), deleteRecords({ startMs: 300, endMs: 310 }, -1, null, { ok: false, error: 'REQUEST_TIMED_OUT', answered: true })];
    expect(check(history({ ops: unknown, replicaLogs: [replica(1, true, ['b0'], 3)] }))).toEqual([]);
  });
});

describe('partition-count-monotonic', () => {
  // The fixture's cluster propagates a change within 1000 + 2 × 100 ms.
  const grown = () => [...validOps(), createPartitions({ startMs: 290, endMs: 300 }, 2)];
  const partition1 = () => ({ ...replica(1, true, []), partition: 1 });
  const bothProbed = () => [probe(), { ...probe(), partition: 1 }];

  test('Metadata naming fewer partitions after the propagation bound breaks it; within it, or from a broker not healthy for as long, it does not', () => {
    const replicaLogs = [replica(1, true, ['a0', 'a1', 'a2', 'b0']), partition1()];
    const fewer = history({ ops: [...grown(), metadata({ startMs: 2_000, endMs: 2_001 }, 1)], replicaLogs, probes: bothProbed() });
    expect(names(fewer)).toEqual(['partition-count-monotonic']);
    expect(check(fewer)[0]!.message).toContain('partition count went down');
    expect(check(history({ ops: [...grown(), metadata({ startMs: 1_000, endMs: 1_001 }, 1)], replicaLogs, probes: bothProbed() }))).toEqual([]);
    const health = [...allHealthy(), ...spell(2, 500, 1_900)];
    expect(check(history({ ops: [...grown(), metadata({ startMs: 2_000, endMs: 2_001 }, 1, 2)], replicaLogs, probes: bothProbed(), health }))).toEqual([]);
  });

  test('an added partition of the final incarnation never probed, or without a final leader, breaks it', () => {
    const run = history({ ops: grown(), replicaLogs: [replica(1, true, ['a0', 'a1', 'a2', 'b0'])] });
    const messages = check(run)
      .filter((violation) => violation.invariant === 'partition-count-monotonic')
      .map((violation) => violation.message);
    expect(messages.some((message) => message.includes('added partition not probed'))).toBe(true);
    expect(messages.some((message) => message.includes('added partition without a leader'))).toBe(true);
  });
});

describe('config-applied', () => {
  function alter(span: Span, value: string, outcome: Outcome = OK): AlterConfigsOp {
    return { kind: 'alter-configs', client: 'admin', node: 1, ...span, outcome, topic: 't', configs: [{ name: 'message.timestamp.type', value }] };
  }
  const stamped = (op: FetchOp): FetchOp => ({ ...op, records: op.records.map((record) => ({ ...record, logAppendTime: true as const })) });
  // The fixture's cluster propagates a change within 1200 ms: p3 produces c0 at 2000 ms, after the alter at 300 ms.
  const later = () => produce('p3', { startMs: 2_000, endMs: 2_010 }, ['c0'], 4);
  const readC0 = () => fetch('c2', { startMs: 2_100, endMs: 2_110 }, 4, ['c0'], 5);
  const replicaLogs = () => [replica(1, true, [...VALID_LOG, 'c0'])];

  test('a record produced after a LogAppendTime alter took effect reads back with that type; one produced before it need not', () => {
    const ops = [...validOps(), alter({ startMs: 290, endMs: 300 }, 'LogAppendTime'), later()];
    expect(check(history({ ops: [...ops, stamped(readC0())], replicaLogs: replicaLogs() }))).toEqual([]);
    const run = history({ ops: [...ops, readC0()], replicaLogs: replicaLogs() });
    expect(names(run)).toEqual(['config-applied']);
    expect(check(run)[0]!.message).toContain('read back from node 1 as CreateTime');
  });

  test('before any alter the type is CreateTime; around an alter of unknown outcome it is not judged', () => {
    const early = history({ ops: [...validOps(), later(), stamped(readC0()), alter({ startMs: 2_500, endMs: 2_510 }, 'LogAppendTime')], replicaLogs: replicaLogs() });
    expect(names(early)).toEqual(['config-applied']);
    const unknown = [
      ...validOps(),
      alter({ startMs: 290, endMs: 300 }, 'LogAppendTime'),
      alter({ startMs: 1_900, endMs: 1_950 }, 'CreateTime', { ok: false, error: 'REQUEST_TIMED_OUT', answered: true }),
      later(),
      readC0(),
    ];
    expect(check(history({ ops: unknown, replicaLogs: replicaLogs() }))).toEqual([]);
  });
});
