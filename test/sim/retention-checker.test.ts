// retention-kept (src/sim/invariants/retention-kept.ts): a retention pass keeps what retention.bytes
// and retention.ms say it must, judged over hand-built histories of one partition t/0.
import { describe, expect, test } from 'bun:test';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { check } from '../../src/sim/checker.ts';
import type { AlterConfigsOp, ClientOp, DeleteRecordsOp, FaultEvent, History, Outcome, ReplicaLog, RetentionDefaults, RetentionDelete } from '../../src/sim/history.ts';
import { history, NO_ANSWER, OK } from './history-fixture.ts';

/** The wall clock at the ops' time 0. */
const WALL_AT_ZERO_MS = 1_800_000_000_000;
/** Ten one-record batches at offsets 0..9, batch i stamped i seconds into the run. */
const BATCHES = 10;
const batchBytes = (offset: number) => buildRecordBatch([{ value: `v${offset}`, timestamp: WALL_AT_ZERO_MS + offset * 1_000 }], { nowMs: WALL_AT_ZERO_MS });
const BATCH_SIZE = batchBytes(0).length;
const NO_LIMITS: RetentionDefaults = { bytes: -1, ms: -1, localBytes: -2, localMs: -2 };

function leaderLog(): ReplicaLog {
  const offsets = Array.from({ length: BATCHES }, (_, offset) => offset);
  const batches = offsets.map((offset) => ({ baseOffset: offset, lastOffset: offset, bytes: batchBytes(offset) }));
  const records = offsets.map((offset) => ({ offset, value: `v${offset}` }));
  return { node: 1, topic: 't', partition: 0, leader: true, logStartOffset: 0, logEndOffset: BATCHES, highWatermark: BATCHES, batches, records };
}

/** Node 2 (a follower) deleted [0, keptFrom) at `atMs`, its log ending at 10. */
function deletion(atMs: number, keptFrom: number, options: Partial<RetentionDelete> = {}): RetentionDelete {
  return { node: 2, topic: 't', partition: 0, atMs, fromOffset: 0, toOffset: keptFrom, logEndOffset: BATCHES, tieredEnd: null, ...options };
}

function run(deletes: RetentionDelete[], defaults: RetentionDefaults, parts: { ops?: ClientOp[]; faults?: FaultEvent[] } = {}): History {
  return {
    ...history({ ops: parts.ops ?? [], replicaLogs: [leaderLog()], faults: parts.faults ?? [], probes: [] }),
    retentionDeletes: deletes,
    retentionDefaults: defaults,
    wallClockAtZeroMs: WALL_AT_ZERO_MS,
  };
}

const retentionViolations = (h: History) => check(h).filter((violation) => violation.invariant === 'retention-kept');

function alter(startMs: number, name: string, value: string | null, outcome: Outcome = OK): AlterConfigsOp {
  return { kind: 'alter-configs', client: 'admin', node: 1, startMs, endMs: startMs + 10, outcome, topic: 't', configs: [{ name, value }] };
}

describe('retention-kept: retention.bytes', () => {
  const keptSize = 6 * BATCH_SIZE; // [4, 10)

  test('a pass that kept at least retention.bytes keeps it; one that kept less breaks it', () => {
    expect(retentionViolations(run([deletion(5_000, 4)], { ...NO_LIMITS, bytes: keptSize }))).toEqual([]);
    const broken = retentionViolations(run([deletion(5_000, 4)], { ...NO_LIMITS, bytes: keptSize + 1 }));
    expect(broken.map((violation) => violation.offsets)).toEqual([[3]]);
  });

  test('the bytes measured off the disk are taken over the stored batches', () => {
    expect(retentionViolations(run([deletion(5_000, 4, { keptBytes: keptSize + 1 })], { ...NO_LIMITS, bytes: keptSize + 1 }))).toEqual([]);
  });

  test('kept bytes the data does not show whole are not judged', () => {
    expect(retentionViolations(run([deletion(5_000, 4, { logEndOffset: 12 })], { ...NO_LIMITS, bytes: keptSize * 10 }))).toEqual([]);
  });

  test('an alter of unknown outcome may have set its value from its start on; before it, no limit deletes anything', () => {
    const ops = [alter(1_000, 'retention.bytes', String(BATCH_SIZE), NO_ANSWER)];
    expect(retentionViolations(run([deletion(5_000, 4)], NO_LIMITS, { ops }))).toEqual([]);
    expect(retentionViolations(run([deletion(500, 4)], NO_LIMITS, { ops })).length).toBe(1);
  });

  test('a refused alter never took effect', () => {
    const ops = [alter(1_000, 'retention.bytes', String(BATCH_SIZE), { ok: false, error: 'INVALID_CONFIG', answered: true })];
    expect(retentionViolations(run([deletion(5_000, 4)], NO_LIMITS, { ops })).length).toBe(1);
  });

  test('segments below where DeleteRecords may have moved the log start may go', () => {
    const deleteRecords: DeleteRecordsOp = { kind: 'delete-records', client: 'admin', node: 1, startMs: 1_000, endMs: 1_010, outcome: OK, topic: 't', partition: 0, offset: 4, lowWatermark: 4 };
    expect(retentionViolations(run([deletion(5_000, 4)], NO_LIMITS, { ops: [deleteRecords] }))).toEqual([]);
  });

  test('below a tiered end, local.retention.bytes rules (-2: retention.bytes)', () => {
    const local = deletion(5_000, 4, { tieredEnd: 6 });
    expect(retentionViolations(run([local], { ...NO_LIMITS, bytes: keptSize * 2, localBytes: keptSize }))).toEqual([]);
    expect(retentionViolations(run([local], { ...NO_LIMITS, bytes: keptSize * 2 })).length).toBe(1);
  });
});

describe('retention-kept: retention.ms', () => {
  const TEN_SECONDS = { ...NO_LIMITS, ms: 10_000 };

  test('a last segment deleted whose newest batch is younger than retention.ms breaks it; an older one keeps it', () => {
    // The batch ending at 3 was stamped 3 s into the run.
    expect(retentionViolations(run([deletion(12_000, 4)], TEN_SECONDS)).length).toBe(1);
    expect(retentionViolations(run([deletion(13_002, 4)], TEN_SECONDS))).toEqual([]);
  });

  test('a broker whose wall clock was skewed ahead may expire records early', () => {
    const faults: FaultEvent[] = [
      { kind: 'fault', atMs: 11_000, fault: 'clock-skew', target: 'broker-2 (3600000 ms)' },
      { kind: 'fault', atMs: 11_500, fault: 'heal clock-skew', target: 'broker-2' },
    ];
    expect(retentionViolations(run([deletion(11_200, 4)], TEN_SECONDS, { faults }))).toEqual([]);
    expect(retentionViolations(run([deletion(12_000, 4)], TEN_SECONDS, { faults })).length).toBe(1); // healed by then
    expect(retentionViolations(run([deletion(11_200, 4, { node: 1 })], TEN_SECONDS, { faults })).length).toBe(1); // another broker
  });

  test('a batch not at hand is at least as new as the run on the most lagging clock', () => {
    const unknownEnd = deletion(5_000, 4, { keptBytes: 0, logEndOffset: 12 });
    const log = leaderLog();
    const withoutBatch3 = { ...run([unknownEnd], TEN_SECONDS), replicaLogs: [{ ...log, batches: log.batches.filter((batch) => batch.baseOffset !== 3) }] };
    expect(retentionViolations(withoutBatch3).length).toBe(1); // 5 s into the run, nothing is 10 s old
    const late = { ...withoutBatch3, retentionDeletes: [{ ...unknownEnd, atMs: 11_000 }] };
    expect(retentionViolations(late)).toEqual([]); // batch 3 may be older than its neighbours show
  });
});
