import { describe, expect, test } from 'bun:test';
import { check } from '../../src/sim/checker.ts';
import type { History, TieredPartition, TieredSegment, TierRecordWrite } from '../../src/sim/history.ts';
import { history, replica, VALID_LOG, validOps } from './history-fixture.ts';

const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAA';

/** The fixture's leader log [0, 4) with its first batch [0, 2) tiered; the leader keeps locally from `localStart`. */
function tieredHistory(options: { localStart?: number; segment?: Partial<TieredSegment>; writes?: TierRecordWrite[] } = {}): History {
  const whole = replica(1, true, VALID_LOG);
  const localStart = options.localStart ?? 2;
  const local = replica(1, true, VALID_LOG.slice(localStart), localStart);
  const segment: TieredSegment = {
    baseOffset: 0,
    endOffset: 2,
    uploadId: 'u1',
    leaderEpoch: 1,
    counted: true,
    batches: whole.batches.slice(0, 1),
    records: whole.records.slice(0, 2),
    problem: null,
    ...options.segment,
  };
  const tiered: TieredPartition = { topic: 't', partition: 0, topicId: TOPIC_ID, startOffset: 0, tieredEnd: 2, segments: [segment] };
  return { ...history({ ops: validOps(), replicaLogs: [local, replica(2, false, VALID_LOG.slice(0, 2))] }), tiered: [tiered], tierWrites: options.writes ?? VALID_WRITES };
}

function write(atMs: number, leaderEpoch: number, segments: TierRecordWrite['segments']): TierRecordWrite {
  return { topicId: TOPIC_ID, partition: 0, atMs, leaderEpoch, segments };
}

const copying = (leaderEpoch: number) => ({ baseOffset: 0, endOffset: 2, uploadId: 'u1', leaderEpoch, state: 'copying' as const });
const copied = (leaderEpoch: number) => ({ ...copying(leaderEpoch), state: 'copied' as const });
/** Take in epoch 1, announce, commit; a later leader takes the record in epoch 2. */
const VALID_WRITES = [write(10, 1, []), write(20, 1, [copying(1)]), write(30, 1, [copied(1)]), write(40, 2, [copied(1)])];

const names = (run: History): string[] => [...new Set(check(run).map((violation) => violation.invariant))].sort();

describe('the whole log: tier then local', () => {
  test('records tiered and then dropped locally are neither lost nor judged against nothing', () => {
    expect(check(tieredHistory())).toEqual([]);
  });

  test('a tiered segment whose object does not read back whole is reported, and what it held is lost', () => {
    const run = tieredHistory({ segment: { batches: [], records: [], problem: 'object tier/... does not decode: log checksum' } });
    expect(names(run)).toEqual(['acked-durable', 'read-durable', 'tiered-bytes-match']);
    expect(check(run).find((violation) => violation.invariant === 'acked-durable')!.offsets).toEqual([0, 1]);
  });
});

test('follower-prefix: a follower still holding what its leader keeps only in the tier is judged against the tier', () => {
  const run = tieredHistory();
  const follower = replica(2, false, ['a0', 'a9']);
  const changed = { ...run, replicaLogs: [run.replicaLogs[0]!, follower] };
  expect(names(changed)).toContain('follower-prefix');
  expect(check(changed).find((violation) => violation.invariant === 'follower-prefix')!.message).toContain('batch bytes differ');
});

describe('tiered-bytes-match', () => {
  test('a tiered batch whose bytes differ from the leader log where it still holds them', () => {
    const other = { baseOffset: 0, lastOffset: 1, bytes: new TextEncoder().encode('a0,a9') };
    const run = tieredHistory({ localStart: 0, segment: { batches: [other] } });
    expect(names(run)).toEqual(['tiered-bytes-match']);
    expect(check(run)[0]!.message).toContain('tiered batch bytes differ');
    expect(check(tieredHistory({ localStart: 0 }))).toEqual([]);
  });

  test('a tiered segment reaching past every high watermark seen holds uncommitted offsets', () => {
    const run = tieredHistory({ segment: { endOffset: 5 } });
    expect(names(run)).toEqual(['tiered-bytes-match']);
    expect(check(run)[0]!.message).toContain('tiered above the high watermark');
  });
});

describe('tier-fenced', () => {
  test('a commit after a later epoch took the record (and dropped the announcement) is fenced', () => {
    const writes = [write(10, 1, []), write(20, 1, [copying(1)]), write(30, 2, []), write(40, 2, [copied(1)])];
    const violations = check(tieredHistory({ writes }));
    expect(violations.map((violation) => violation.invariant)).toEqual(['tier-fenced', 'tier-fenced']);
    expect(violations.map((violation) => violation.message.split(':')[0])).toEqual(['copied without being announced', 'fenced commit']);
    expect(violations[0]).toMatchObject({ topic: 't', partition: 0, offsets: [0], atMs: 40 });
  });

  test("a write in an epoch below one that took the record is a deposed leader's", () => {
    const writes = [write(10, 1, []), write(20, 1, [copying(1)]), write(30, 2, [copying(1)]), write(40, 1, [copied(1)])];
    const messages = check(tieredHistory({ writes })).map((violation) => violation.message.split(':')[0]);
    expect(messages).toEqual(['written in a deposed epoch', 'fenced commit']);
  });

  test('a partition of an earlier incarnation is judged too, named by its topic id', () => {
    const writes = [...VALID_WRITES, { ...write(10, 3, []), topicId: 'BBBBBBBBBBBBBBBBBBBBBA' }, { ...write(20, 2, []), topicId: 'BBBBBBBBBBBBBBBBBBBBBA' }];
    expect(check(tieredHistory({ writes }))).toMatchObject([{ invariant: 'tier-fenced', topic: 'topic id BBBBBBBBBBBBBBBBBBBBBA', incarnation: -1 }]);
  });
});
