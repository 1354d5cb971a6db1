import { describe, expect, test } from 'bun:test';
import { check, formatViolation, INVARIANTS } from '../../src/sim/checker.ts';
import type { ClientOp, HealthChange, History, Outcome, ProduceOp, RunShape } from '../../src/sim/history.ts';
import { resumeBoundMs } from '../../src/sim/invariants/acks-resume-with-quorum.ts';
import { quorumWindows } from '../../src/sim/quorum-windows.ts';
import { TRACE_LINES_MAX } from '../../src/sim/trace.ts';
import { admin, allHealthy, commit, fetch, history, idempotent, NO_ANSWER, OK, offsetFetch, probe, produce, replica, SHAPE, spell, VALID_LOG, validHistory, validOps } from './history-fixture.ts';

const names = (run: History): string[] => [...new Set(check(run).map((violation) => violation.invariant))].sort();

test('the valid run passes every invariant', () => {
  expect(check(validHistory())).toEqual([]);
  expect(INVARIANTS.map((invariant) => invariant.name)).toEqual([
    'acked-durable',
    'offset-unique',
    'idempotent-no-duplicates',
    'high-watermark-monotonic',
    'follower-prefix',
    'commits-monotonic',
    'commit-current-generation',
    'fetched-offset-committed',
    'liveness-after-quiet',
    'acked-readable',
    'read-durable',
    'acks-resume-with-quorum',
    'stale-incarnation-read',
    'ack-after-durable',
    'acks-all-min-insync',
    'tiered-bytes-match',
    'tier-fenced',
    'wal-gc-needed',
    'delete-records-floor',
    'partition-count-monotonic',
    'config-applied',
    'intruder-no-data',
    'auth-refused',
    'auth-accepted',
    'acl-enforced',
    'producer-id-unique',
    'answer-allowed',
    'idempotent-retry-answer',
    'leader-within-lease',
    'quota-throttle',
    'retention-kept',
  ]);
});

describe('acked-durable', () => {
  test('an acknowledged record missing from the final leader is lost', () => {
    const ops = validOps().filter((op) => op.kind !== 'fetch');
    const run = validHistory(ops, ['a0', 'a1'], ['a0', 'a1']);
    expect(names(run)).toEqual(['acked-durable']);
    expect(check(run)[0]).toMatchObject({ topic: 't', partition: 0, offsets: [2], atMs: 130 });
  });

  test('an acks=1 record may be lost', () => {
    const ops = validOps().filter((op) => op.kind !== 'fetch');
    expect(check(validHistory(ops, ['a0', 'a1', 'a2'], ['a0', 'a1']))).toEqual([]);
  });

  test('a record below the leader log start (retention) is not demanded', () => {
    const run = history({ ops: validOps().filter((op) => op.kind !== 'fetch'), replicaLogs: [replica(1, true, ['a2', 'b0'], 2)] });
    expect(check(run)).toEqual([]);
  });

  test('a partition with no final leader loses its acknowledged records', () => {
    const run = history({ ops: validOps().filter((op) => op.kind !== 'fetch'), replicaLogs: [replica(2, false, VALID_LOG)] });
    expect(names(run)).toEqual(['acked-durable']);
  });

  test('an idempotent producer acknowledged out of sequence order breaks producer order', () => {
    const ops = [produce('p1', { startMs: 100, endMs: 110 }, ['a0'], 1, { idempotence: idempotent(7, 0) }), produce('p1', { startMs: 120, endMs: 130 }, ['a1'], 0, { idempotence: idempotent(7, 1) })];
    const run = history({ ops, replicaLogs: [replica(1, true, ['a1', 'a0'])] });
    expect(names(run)).toEqual(['acked-durable']);
    expect(check(run)[0]!.message).toContain('producer order broken');
    const inOrder = [ops[0]!, { ...ops[1]!, idempotence: idempotent(7, -1) }];
    expect(check(history({ ops: inOrder, replicaLogs: [replica(1, true, ['a1', 'a0'])] }))).toEqual([]);
  });

  test('a value sent once by a plain producer stored twice is a duplicate; a retried one may be', () => {
    const once = [produce('p2', { startMs: 100, endMs: 110 }, ['b0'], 0)];
    expect(names(history({ ops: once, replicaLogs: [replica(1, true, ['b0', 'b0'])] }))).toEqual(['acked-durable']);
    const retried = [produce('p2', { startMs: 90, endMs: 95 }, ['b0'], null, { outcome: NO_ANSWER }), ...once];
    expect(check(history({ ops: retried, replicaLogs: [replica(1, true, ['b0', 'b0'])] }))).toEqual([]);
  });
});

describe('offset-unique', () => {
  test('two reads of one offset with different values', () => {
    const ops: ClientOp[] = [...validOps(), fetch('c2', { startMs: 300, endMs: 310 }, 1, ['zz'], 4)];
    expect(names(validHistory(ops))).toEqual(['offset-unique', 'read-durable']);
    expect(check(validHistory(ops)).find((v) => v.invariant === 'offset-unique')).toMatchObject({ offsets: [1], atMs: 310 });
  });

  test('an acknowledgement and a final follower log that disagree', () => {
    expect(names(validHistory(validOps(), VALID_LOG, ['a0', 'xx']))).toContain('offset-unique');
  });

  test('an acks=1 offset reused after a loss is not a violation', () => {
    const ops = [produce('p2', { startMs: 100, endMs: 110 }, ['b0'], 0, { acks: 1 }), produce('p3', { startMs: 200, endMs: 210 }, ['c0'], 0)];
    expect(check(history({ ops, replicaLogs: [replica(1, true, ['c0'])] }))).toEqual([]);
  });
});

test('idempotent-no-duplicates: an idempotent value at two offsets', () => {
  const run = validHistory(validOps(), [...VALID_LOG, 'a0']);
  expect(names(run)).toEqual(['idempotent-no-duplicates']);
  expect(check(run)[0]).toMatchObject({ offsets: [4] });
  const readTwice: ClientOp[] = [...validOps(), fetch('c2', { startMs: 300, endMs: 310 }, 4, ['a1'], 5)];
  expect(names(validHistory(readTwice))).toContain('idempotent-no-duplicates');
});

test('idempotent-no-duplicates: a value resent by a new producer session may be stored twice', () => {
  const resent: ClientOp[] = [...validOps(), produce('p1', { startMs: 160, endMs: 170 }, ['a0'], null, { idempotence: { ...idempotent(8, 0)! }, outcome: NO_ANSWER })];
  expect(check(validHistory(resent, [...VALID_LOG, 'a0']))).toEqual([]);
});

// Seed 205056: a batch landed unanswered, then tier retention took the producer's every record, and
// a new leader rebuilt without its state (the tier's last segment, with the producer state at its
// end, was gone too): the retry was written again. Kafka's broker keeps the producer past the log
// start (KIP-360, until producer.id.expiration.ms) and answers such a retry as a duplicate.
test("idempotent-no-duplicates: a retry after retention passed its producer's records is still a duplicate", () => {
  const ops: ClientOp[] = [
    produce('p1', { startMs: 100, endMs: 110 }, ['e0', 'e1'], 0, { idempotence: idempotent(7, 0) }),
    produce('p1', { startMs: 120, endMs: 5120 }, ['e2'], null, { idempotence: idempotent(7, 2), outcome: NO_ANSWER }),
    fetch('c1', { startMs: 130, endMs: 140 }, 0, ['e0', 'e1', 'e2'], 3),
    produce('p1', { startMs: 6000, endMs: 6010 }, ['e2'], 3, { idempotence: idempotent(7, 2) }),
    produce('p1', { startMs: 6020, endMs: 6030 }, ['e3'], 4, { idempotence: idempotent(7, 3) }),
  ];
  const judged = names(history({ ops, replicaLogs: [replica(1, true, ['e2', 'e3'], 3)] })).filter((name) => name === 'idempotent-no-duplicates' || name === 'acked-readable');
  expect(judged).toEqual(['acked-readable', 'idempotent-no-duplicates']);
});

describe('high-watermark-monotonic', () => {
  test('a client whose later fetch sees a lower high watermark', () => {
    const ops: ClientOp[] = [...validOps(), fetch('c1', { startMs: 300, endMs: 310 }, 0, ['a0', 'a1', 'a2'], 3)];
    expect(names(validHistory(ops))).toEqual(['high-watermark-monotonic']);
  });

  test('an empty fetch is not judged: placed by its time, it may come from a broker that has not seen a delete yet', () => {
    const ops: ClientOp[] = [...validOps(), fetch('c1', { startMs: 300, endMs: 310 }, 4, [], 3)];
    expect(check(validHistory(ops))).toEqual([]);
  });

  // Seeds 5211, 7886, 8850, 9777, 12216, 17819, 17848, 18801: after a rebalance the group consumer
  // took a deposed leader's metadata and read from it at its old epoch, its watermark frozen where
  // the successor took over.
  test('a fetch at an older leader epoch than one the client was answered at is not judged: a deposed leader answered it', () => {
    const newer = (op: ClientOp): ClientOp => ({ ...op, node: 2, leaderEpoch: 1 }) as ClientOp;
    const deposed = fetch('c1', { startMs: 300, endMs: 310 }, 0, ['a0', 'a1'], 2, { node: 1, leaderEpoch: 0 });
    const ops: ClientOp[] = [...validOps().map((op) => (op.kind === 'fetch' ? newer(op) : op)), deposed];
    expect(check(validHistory(ops))).toEqual([]);
  });

  test("a new leader serving a watermark below its predecessor's", () => {
    const successor = fetch('c1', { startMs: 300, endMs: 310 }, 0, ['a0', 'a1'], 2, { node: 2, leaderEpoch: 1 });
    const run = validHistory([...validOps(), successor]);
    expect(names(run)).toEqual(['high-watermark-monotonic']);
    expect(check(run)[0]!.message).toContain('saw 4 (from node 1 at leader epoch 0), then in a fetch started after that one ended 2 (from node 2 at leader epoch 1)');
  });

  test('a fetch that named no leader epoch is judged against every earlier one', () => {
    const anyLeader = fetch('c1', { startMs: 300, endMs: 310 }, 0, ['a0', 'a1'], 2, { leaderEpoch: -1 });
    const earlierNewer = validOps().map((op): ClientOp => (op.kind === 'fetch' ? { ...op, leaderEpoch: 5 } : op));
    expect(names(validHistory([...earlierNewer, anyLeader]))).toEqual(['high-watermark-monotonic']);
  });

  test('overlapping fetches, and other clients, are not ordered', () => {
    const overlapping: ClientOp[] = [...validOps(), fetch('c1', { startMs: 205, endMs: 300 }, 4, [], 3)];
    expect(check(validHistory(overlapping))).toEqual([]);
    const otherClient: ClientOp[] = [...validOps(), fetch('c2', { startMs: 300, endMs: 310 }, 0, ['a0', 'a1', 'a2'], 3)];
    expect(check(validHistory(otherClient))).toEqual([]);
  });
});

describe('follower-prefix', () => {
  test('a follower batch whose bytes differ', () => {
    const follower = replica(2, false, VALID_LOG.slice(0, 2));
    const bytes = follower.batches[0]!.bytes;
    bytes[0] = bytes[0]! ^ 1;
    const run = history({ ops: validOps(), replicaLogs: [replica(1, true, VALID_LOG), follower] });
    expect(names(run)).toEqual(['follower-prefix']);
    expect(check(run)[0]).toMatchObject({ offsets: [0] });
  });

  test('a follower ahead of its leader', () => {
    expect(names(validHistory(validOps(), VALID_LOG, [...VALID_LOG, 'x', 'y']))).toContain('follower-prefix');
  });

  test('a follower whose retention removed a prefix is compared on the overlap', () => {
    const run = history({ ops: validOps(), replicaLogs: [replica(1, true, VALID_LOG), replica(2, false, VALID_LOG.slice(2), 2)] });
    expect(check(run)).toEqual([]);
  });

  test('two final leaders', () => {
    expect(names(history({ ops: validOps(), replicaLogs: [replica(1, true, VALID_LOG), replica(2, true, VALID_LOG)] }))).toEqual(['follower-prefix']);
  });
});

describe('commits-monotonic', () => {
  const later = { startMs: 300, endMs: 310 };
  test('an offset fetch answering less than a commit that ended before it', () => {
    const run = validHistory([...validOps(), offsetFetch(later, 2)]);
    expect(names(run)).toEqual(['commits-monotonic', 'fetched-offset-committed']); // 2 was never committed either
    expect(names(validHistory([...validOps(), offsetFetch(later, -1)]))).toEqual(['commits-monotonic']);
  });

  test('a reset in between, or overlapping, excuses it', () => {
    expect(check(validHistory([...validOps(), commit({ startMs: 280, endMs: 290 }, 2, { reset: true }), offsetFetch(later, 2)]))).toEqual([]);
    expect(check(validHistory([...validOps(), commit({ startMs: 305, endMs: 320 }, 2, { reset: true }), offsetFetch(later, 2)]))).toEqual([]);
    expect(check(validHistory([...validOps(), commit({ startMs: 245, endMs: 255 }, 2, { reset: true, outcome: NO_ANSWER }), offsetFetch(later, 2)]))).toEqual([]);
  });

  test('a commit after the reset holds the fetch again', () => {
    const ops = [...validOps(), commit({ startMs: 280, endMs: 285 }, 2, { reset: true }), commit({ startMs: 290, endMs: 295 }, 3), offsetFetch(later, 2)];
    expect(names(validHistory(ops))).toEqual(['commits-monotonic', 'fetched-offset-committed']); // 3 superseded 2 too
  });

  test('an offset fetch that started before the commit ended is not held to it', () => {
    expect(check(validHistory([...validOps(), offsetFetch({ startMs: 245, endMs: 300 }, -1)]))).toEqual([]);
  });
});

test('liveness-after-quiet: a probe that never wrote, or read too late, and a partition never probed', () => {
  const ops = validOps();
  const logs = () => [replica(1, true, VALID_LOG)];
  expect(names(history({ ops, replicaLogs: logs(), probes: [probe(null, 60)] }))).toEqual(['liveness-after-quiet']);
  expect(names(history({ ops, replicaLogs: logs(), probes: [probe(50, 10_001)] }))).toEqual(['liveness-after-quiet']);
  expect(names(history({ ops, replicaLogs: logs(), probes: [] }))).toEqual(['liveness-after-quiet']);
});

test('acked-readable: an acknowledged record read at another offset, even in a deleted incarnation', () => {
  const ops: ClientOp[] = [produce('p1', { startMs: 100, endMs: 110 }, ['a0'], 0), fetch('c1', { startMs: 200, endMs: 210 }, 1, ['a0'], 2), admin('delete-topic', { startMs: 300, endMs: 310 })];
  const run = history({ ops, replicaLogs: [], probes: [] });
  expect(names(run)).toEqual(['acked-readable']);
  expect(check(run)[0]).toMatchObject({ offsets: [1], incarnation: 0 });
});

test('acked-readable: a batch that timed out into an incarnation later deleted, retried and acknowledged in the re-created one, is a copy in each; a value never sent to the read incarnation is not', () => {
  const TIMED_OUT = { ok: false, error: 'REQUEST_TIMED_OUT', answered: true } as const;
  const session = { idempotence: idempotent(7, 25) };
  const recreate: ClientOp[] = [
    produce('p1', { startMs: 100, endMs: 600 }, ['a0'], null, { ...session, outcome: TIMED_OUT }), // landed in incarnation 0 unacknowledged
    produce('p2', { startMs: 100, endMs: 110 }, ['b0'], 0), // places the read below in incarnation 0
    admin('delete-topic', { startMs: 700, endMs: 710 }),
    admin('create-topic', { startMs: 2000, endMs: 2010 }),
    produce('p1', { startMs: 3500, endMs: 3510 }, ['a0'], 0, session), // the retry, into a new log with no state for p1
  ];
  const read = (values: string[]) => fetch('c1', { startMs: 620, endMs: 630 }, 0, values, values.length);
  const run = (ops: ClientOp[]) => history({ ops, replicaLogs: [replica(1, true, ['a0'])] });
  expect(check(run([...recreate, read(['b0', 'a0'])]))).toEqual([]);
  // a first attempt overlapping the delete may have reached either incarnation
  const overlapping = recreate.map((op) => (op.client === 'p1' && op.startMs === 100 ? { ...op, endMs: 705 } : op));
  expect(check(run([...overlapping, read(['b0', 'a0'])]))).toEqual([]);
  // a0 read in incarnation 0 though only ever sent to incarnation 2: one log served as another's
  const sentOnlyAfter = recreate.filter((op) => op.startMs !== 100 || op.client !== 'p1');
  expect(names(run([...sentOnlyAfter, read(['b0', 'a0'])]))).toEqual(['acked-readable']);
  expect(check(run([...sentOnlyAfter, read(['b0', 'a0'])]))[0]).toMatchObject({ offsets: [1], incarnation: 0 });
});

// Seed 220060: an acks=0 batch sent while its topic was deleted was written 9 s later into the
// re-created incarnation; the read starting with it was placed by that send's time, in the gap.
test('acked-readable: a read is placed by a record whose incarnation is sure, not by an acks=0 value that may have landed later', () => {
  const ops: ClientOp[] = [
    admin('delete-topic', { startMs: 100, endMs: 110 }),
    produce('p2', { startMs: 20_000, endMs: 20_000 }, ['z0'], null, { acks: 0 }), // sent in the gap: lands wherever its broker takes it
    admin('create-topic', { startMs: 30_000, endMs: 30_010 }),
    produce('p1', { startMs: 40_000, endMs: 40_010 }, ['a0'], 1),
  ];
  const read = fetch('c1', { startMs: 41_000, endMs: 41_010 }, 0, ['z0', 'a0'], 2);
  expect(check(history({ ops: [...ops, read], replicaLogs: [replica(1, true, ['z0', 'a0'])] }))).toEqual([]);
  // a0 read at another offset than acknowledged is still caught, the read placed by a0
  const elsewhere = fetch('c1', { startMs: 41_000, endMs: 41_010 }, 0, ['z0', 'x0', 'a0'], 3);
  expect(names(history({ ops: [...ops, elsewhere], replicaLogs: [replica(1, true, ['z0', 'a0'])] }))).toContain('acked-readable');
});

// Seed 260114: a value refused in the incarnation later deleted (answered: its span is where it
// landed, if at all), then sent again unanswered to the re-created one and written there; the read
// starting with it was placed by the refused attempt, in the deleted incarnation.
test('acked-readable: an answered attempt places no read when an attempt to a later incarnation may have landed the value there', () => {
  const ops: ClientOp[] = [
    produce('p2', { startMs: 5_000, endMs: 5_010 }, ['v0'], null, { outcome: { ok: false, error: 'UNKNOWN_TOPIC_OR_PARTITION', answered: true } }),
    admin('delete-topic', { startMs: 10_000, endMs: 10_010 }),
    admin('create-topic', { startMs: 30_000, endMs: 30_010 }),
    produce('p2', { startMs: 40_000, endMs: 40_010 }, ['v0'], null, { outcome: NO_ANSWER }), // the retry, written in the re-created incarnation
    produce('p1', { startMs: 40_100, endMs: 40_110 }, ['a0'], 1),
  ];
  const log = [replica(1, true, ['v0', 'a0'])];
  expect(check(history({ ops: [...ops, fetch('c1', { startMs: 41_000, endMs: 41_010 }, 0, ['v0', 'a0'], 2)], replicaLogs: log }))).toEqual([]);
  // the read is placed by a0 instead, and judged: a0 served at another offset than acknowledged
  const elsewhere = fetch('c1', { startMs: 41_000, endMs: 41_010 }, 0, ['v0', 'x0', 'a0'], 3);
  expect(names(history({ ops: [...ops, elsewhere], replicaLogs: log }))).toContain('acked-readable');
});

// Seed 272961: acks=0 batches sent just before a delete, held by a quota's mute and written 10 s
// later into the re-created incarnation, which was deleted again before the run ended; a read of only
// them was placed by their send time, in the first incarnation, and taken for a stale read.
test('stale-incarnation-read: a read of only late-landing values is not placed in their send incarnation while a later one may hold them', () => {
  const ops: ClientOp[] = [
    produce('p2', { startMs: 5_000, endMs: 5_000 }, ['z0', 'z1'], null, { acks: 0 }), // held, then written in the next incarnation
    admin('delete-topic', { startMs: 6_000, endMs: 6_010 }),
    admin('create-topic', { startMs: 8_000, endMs: 8_010 }),
    admin('delete-topic', { startMs: 30_000, endMs: 30_010 }),
    admin('create-topic', { startMs: 32_000, endMs: 32_010 }),
  ];
  const late = fetch('c1', { startMs: 20_000, endMs: 20_010 }, 0, ['z0', 'z1'], 2);
  expect(check(history({ ops: [...ops, late], replicaLogs: [replica(1, true, [])] }))).toEqual([]);
  // read before the re-create began, the values can only be in the incarnation they were sent to: still judged
  const early = fetch('c1', { startMs: 7_500, endMs: 7_510 }, 0, ['z0', 'z1'], 2);
  expect(names(history({ ops: [...ops, early], replicaLogs: [replica(1, true, [])] }))).toEqual(['stale-incarnation-read']);
});

test('stale-incarnation-read: a record of a deleted incarnation served after the re-create took effect everywhere; within the propagation bound it is not', () => {
  const life: ClientOp[] = [produce('p1', { startMs: 100, endMs: 110 }, ['a0'], 0), admin('delete-topic', { startMs: 200, endMs: 210 }), admin('create-topic', { startMs: 220, endMs: 230 })];
  const bound = 210 + SHAPE.leaseMs + 2 * SHAPE.scanIntervalMs; // from the delete's end: a broker that has not scanned yet may still serve the old log
  const within = history({ ops: [...life, fetch('c1', { startMs: bound - 10, endMs: bound }, 0, ['a0'], 1)], replicaLogs: [replica(1, true, [])] });
  expect(check(within)).toEqual([]);
  const after = history({ ops: [...life, fetch('c1', { startMs: bound + 10, endMs: bound + 20 }, 0, ['a0'], 1)], replicaLogs: [replica(1, true, [])] });
  expect(names(after)).toEqual(['stale-incarnation-read']);
  expect(check(after)[0]).toMatchObject({ offsets: [0], incarnation: 0 });
  // a broker paused across the change has not scanned since: like Kafka's, it may still serve what it has
  const paused = { ...after, health: [...allHealthy(), ...spell(1, 150, bound + 5)] };
  expect(check(paused)).toEqual([]);
});

describe('ack-after-durable', () => {
  const acked = produce('p1', { startMs: 100, endMs: 120 }, ['a0', 'a1'], 0);
  const inWal = (settledMs: number, values = ['a0', 'a1']) => values.map((value, offset) => ({ topic: 't', partition: 0, offset, value, settledMs }));
  const run = (walRecords: ReturnType<typeof inWal>) => history({ ops: [acked], replicaLogs: [replica(1, true, ['a0', 'a1'])], walRecords });

  test('an acknowledgement after the write of a WAL object holding the records passes', () => {
    expect(check(run(inWal(110)))).toEqual([]);
  });

  test('a record in no WAL object, or only in one first written after the ack, was acknowledged without durability', () => {
    expect(check(run(inWal(110, ['a0']))).map((v) => [v.invariant, v.offsets])).toEqual([['ack-after-durable', [1]]]);
    expect(check(run(inWal(130))).map((v) => [v.invariant, v.offsets])).toEqual([['ack-after-durable', [0, 1]]]);
  });

  test('a run whose WAL was not audited is not judged', () => {
    expect(check(history({ ops: [acked], replicaLogs: [replica(1, true, ['a0', 'a1'])] }))).toEqual([]);
  });
});

describe('acks-all-min-insync', () => {
  const MIN_INSYNC_2: RunShape = { ...SHAPE, minInsyncReplicas: 2 };
  const acked = produce('p1', { startMs: 100, endMs: 120 }, ['a0', 'a1'], 0);
  const end = (node: number, atMs: number, logEndOffset: number) => ({ node, topic: 't', partition: 0, atMs, logEndOffset });
  const run = (replicaEnds: ReturnType<typeof end>[], shape = MIN_INSYNC_2, ops: ClientOp[] = [acked]) =>
    history({ ops, replicaLogs: [replica(1, true, ['a0', 'a1']), replica(2, false, ['a0', 'a1'])], shape, replicaEnds });

  test('an acknowledgement after the leader and a follower held the batch passes', () => {
    expect(check(run([end(1, 0, 0), end(2, 0, 0), end(1, 105, 2), end(2, 112, 2)]))).toEqual([]);
  });

  test('an acknowledgement while only the leader held the batch is reported', () => {
    const early = run([end(1, 0, 0), end(2, 0, 0), end(1, 105, 2), end(2, 112, 1), end(2, 130, 2)]);
    expect(check(early).map((v) => [v.invariant, v.offsets, v.message])).toEqual([['acks-all-min-insync', [0], expect.stringContaining('held by only node 1')]]);
  });

  test('a log that ended past the batch before it was first sent does not count (an older incarnation)', () => {
    expect(names(run([end(1, 0, 0), end(2, 50, 9), end(1, 105, 2)]))).toEqual(['acks-all-min-insync']);
  });

  test('a retry counts what replicas held since the first send of its batch', () => {
    const first = produce('p1', { startMs: 40, endMs: 60 }, ['a0', 'a1'], null, { outcome: NO_ANSWER });
    expect(check(run([end(1, 0, 0), end(2, 0, 0), end(1, 45, 2), end(2, 55, 2)], MIN_INSYNC_2, [first, acked]))).toEqual([]);
  });

  test('min.insync.replicas 1 or no recorded log ends: not judged', () => {
    expect(check(run([end(1, 105, 2)], SHAPE))).toEqual([]);
    expect(check(history({ ops: [acked], replicaLogs: [replica(1, true, ['a0', 'a1']), replica(2, false, ['a0', 'a1'])], shape: MIN_INSYNC_2 }))).toEqual([]);
  });
});

test('read-durable: a record read below the high watermark but missing from the final leader', () => {
  const ops: ClientOp[] = [produce('p2', { startMs: 100, endMs: 110 }, ['b0'], null, { outcome: NO_ANSWER }), fetch('c1', { startMs: 200, endMs: 210 }, 0, ['b0'], 1)];
  expect(names(history({ ops, replicaLogs: [replica(1, true, [])] }))).toEqual(['read-durable']);
  expect(check(history({ ops, replicaLogs: [replica(1, true, ['b0'])] }))).toEqual([]);
  const atHighWatermark = [ops[0]!, fetch('c1', { startMs: 200, endMs: 210 }, 0, ['b0'], 0)];
  expect(check(history({ ops: atHighWatermark, replicaLogs: [replica(1, true, [])] }))).toEqual([]);
});

describe('acks-resume-with-quorum', () => {
  // A failure any produce may be answered (answer-allowed): TIMED_OUT needs min.insync.replicas above SHAPE's 1.
  const TIMED_OUT: Outcome = { ok: false, error: 'REQUEST_TIMED_OUT', answered: true };
  const ATTEMPT_MS = 50;
  let valueCount = 0;
  /** acks=all attempts to t/0 every `everyMs` over [fromMs, toMs), each lasting ATTEMPT_MS. */
  const attempts = (fromMs: number, toMs: number, everyMs: number, outcome: Outcome): ProduceOp[] => {
    const ops: ProduceOp[] = [];
    for (let atMs = fromMs; atMs < toMs; atMs += everyMs) ops.push(produce('p1', { startMs: atMs, endMs: atMs + ATTEMPT_MS }, [`v${valueCount++}`], null, { outcome }));
    return ops;
  };
  /** A run of these attempts whose final leader holds every acknowledged one (so only this invariant can object). */
  const run = (ops: ProduceOp[], health: HealthChange[], shape: RunShape = SHAPE): History => {
    let offset = 0;
    const placed = [...ops].sort((a, b) => a.startMs - b.startMs).map((op) => (op.outcome.ok ? { ...op, baseOffset: offset++ } : op));
    const log = placed.filter((op) => op.outcome.ok).flatMap((op) => op.values);
    return history({ ops: placed, replicaLogs: [replica(1, true, log)], shape, health });
  };
  const BOUND_MS = resumeBoundMs(SHAPE);

  test('the resume bound: 2 leases, 3 scans and 3 s of slack', () => {
    expect(BOUND_MS).toBe(5_300);
  });

  test('a broker unhealthy with the quorum holding: acks fail during the takeover, then resume', () => {
    const ops = [...attempts(0, 1_000, 200, OK), ...attempts(1_000, 5_000, 500, TIMED_OUT), ...attempts(5_000, 30_000, 500, OK)];
    expect(check(run(ops, [...allHealthy(), ...spell(2, 1_000, 20_000)]))).toEqual([]);
  });

  test('the quorum holds for long and every attempt fails: caught, naming the partition', () => {
    const ops = [...attempts(0, 1_000, 200, OK), ...attempts(1_000, 20_000, 500, TIMED_OUT)];
    const violations = check(run(ops, [...allHealthy(), ...spell(2, 1_000, 30_000)]));
    expect(violations.map((v) => v.invariant)).toEqual(['acks-resume-with-quorum']);
    // owed from the health change at 1000 + 5300; the first attempt at or after 6300 starts at 6500
    expect(violations[0]).toMatchObject({ topic: 't', partition: 0, incarnation: 0, atMs: 6_500 });
    expect(violations[0]!.message).toContain("after a broker's health changed (resume bound 5300 ms)");
    expect(violations[0]!.message).toContain('first: p1->node 1 REQUEST_TIMED_OUT');
  });

  test('a resume later than the bound plus the demand span is caught; one within it is not', () => {
    const health = [...allHealthy(), ...spell(2, 1_000, 30_000)];
    const late = [...attempts(1_000, 9_000, 500, TIMED_OUT), ...attempts(9_000, 12_000, 500, OK)];
    expect(names(run(late, health))).toEqual(['acks-resume-with-quorum']);
    // the failures owed a success (started from 6300 on) span only 6500..7550: under the 2000 ms demand span
    const inTime = [...attempts(1_000, 8_000, 500, TIMED_OUT), ...attempts(8_000, 12_000, 500, OK)];
    expect(check(run(inTime, health))).toEqual([]);
  });

  test('a stall after an acknowledged write, with no health change, is caught', () => {
    const ops = [...attempts(0, 2_000, 500, OK), ...attempts(2_000, 12_000, 500, NO_ANSWER)];
    const violations = check(run(ops, allHealthy()));
    expect(violations.map((v) => v.invariant)).toEqual(['acks-resume-with-quorum']);
    expect(violations[0]!.message).toContain('after an acks=all write was acknowledged');
  });

  test('the quorum lost (two of two brokers unhealthy at once): failures are not demanded', () => {
    const ops = [...attempts(0, 1_000, 200, OK), ...attempts(1_000, 20_000, 500, TIMED_OUT)];
    const bothDown = [...allHealthy(), ...spell(1, 3_000, 30_000), ...spell(2, 1_000, 30_000)];
    expect(check(run(ops, bothDown))).toEqual([]);
    // with min.insync 2 (no broker may be down) one unhealthy broker already loses the quorum
    expect(check(run(ops, [...allHealthy(), ...spell(2, 1_000, 30_000)], { ...SHAPE, minInsyncReplicas: 2 }))).toEqual([]);
    // but a quorum window shorter than R + the demand span, with failures throughout, is not judged either
    expect(check(run(ops, [...allHealthy(), ...spell(1, 1_000 + BOUND_MS + 1_900, 30_000), ...spell(2, 1_000, 30_000)]))).toEqual([]);
  });

  test('attempts still in flight when a write is acknowledged belong to no stall', () => {
    const slow = (startMs: number) => produce('p1', { startMs, endMs: 9_500 }, [`v${valueCount++}`], null, { outcome: { ok: false, error: 'REQUEST_TIMED_OUT', answered: true } });
    const ops = [...attempts(0, 1, 1, OK), slow(6_000), slow(7_000), slow(8_000), produce('p1', { startMs: 8_900, endMs: 9_000 }, [`v${valueCount++}`], null), ...attempts(10_000, 12_000, 500, OK)];
    expect(check(run(ops, allHealthy()))).toEqual([]);
    const resumedLater = ops.map((op) => (op.endMs === 9_000 ? { ...op, startMs: 9_900, endMs: 10_000 } : op));
    expect(names(run(resumedLater, allHealthy()))).toEqual(['acks-resume-with-quorum']);
  });

  test('attempts sent to a stranded broker (it keeps its lease: cut from all but the control store) are not demanded; once the spell ends they are', () => {
    // node 1 cut from the network at 1000, loses the control store too at 10000 (its spell ends), heals at 30000
    const health = [...allHealthy(), ...spell(1, 1_000, 30_000)];
    const stranded = [
      { node: 1, atMs: 1_000, stranded: true },
      { node: 1, atMs: 10_000, stranded: false },
    ];
    const takenOver = [...attempts(0, 1_000, 200, OK), ...attempts(1_000, 14_000, 500, NO_ANSWER), ...attempts(14_000, 20_000, 500, OK)];
    expect(check({ ...run(takenOver, health), stranded })).toEqual([]);
    expect(names(run(takenOver, health))).toEqual(['acks-resume-with-quorum']); // unstranded, the same is owed from 6300
    const neverTaken = [...attempts(0, 1_000, 200, OK), ...attempts(1_000, 20_000, 500, NO_ANSWER)];
    const violations = check({ ...run(neverTaken, health), stranded });
    expect(violations.map((v) => [v.invariant, v.atMs])).toEqual([['acks-resume-with-quorum', 15_500]]); // owed from the spell's end + 5300
    expect(violations[0]!.message).toContain('after a broker stopped being stranded');
  });

  test('no health recorded: no quorum window, nothing judged', () => {
    const ops = attempts(1_000, 20_000, 500, TIMED_OUT);
    expect(check(run(ops, []))).toEqual([]);
  });

  test('single broker: demanded while it is healthy, not while it is down', () => {
    const single: RunShape = { brokers: 1, cluster: false, replicationFactor: 1, minInsyncReplicas: 1, leaseMs: 1_000, scanIntervalMs: 100 };
    const down = [{ node: 1, atMs: 0, healthy: true }, ...spell(1, 1_000, 20_000)];
    const ops = [...attempts(0, 1_000, 200, OK), ...attempts(1_000, 20_000, 500, NO_ANSWER), ...attempts(21_000, 25_000, 500, OK)];
    expect(check(run(ops, down, single))).toEqual([]);
    const up = [{ node: 1, atMs: 0, healthy: true }];
    expect(names(run(ops, up, single))).toEqual(['acks-resume-with-quorum']);
  });

  test("errors of the producer's session, and other acks, are not failures of the partition", () => {
    const health = allHealthy();
    const session = attempts(1_000, 20_000, 500, { ok: false, error: 'OUT_OF_ORDER_SEQUENCE_NUMBER', answered: true }).map((op) => ({ ...op, idempotence: idempotent(9, 5) }));
    expect(check(run(session, health))).toEqual([]);
    const acksOne = attempts(1_000, 20_000, 500, TIMED_OUT).map((op) => ({ ...op, acks: 1 as const }));
    expect(check(run(acksOne, health))).toEqual([]);
    expect(names(run(attempts(1_000, 20_000, 500, TIMED_OUT), health))).toEqual(['acks-resume-with-quorum']);
  });

  test('too few attempts, or a quick burst of failures, are no evidence', () => {
    // the first failure (at 1000) comes before anything was owed: two count
    const two = [...attempts(1_000, 1_001, 1, TIMED_OUT), ...attempts(10_000, 10_001, 1, TIMED_OUT), ...attempts(20_000, 20_001, 1, TIMED_OUT)];
    expect(check(run(two, allHealthy()))).toEqual([]);
    expect(names(run([...two, ...attempts(15_000, 15_001, 1, TIMED_OUT)], allHealthy()))).toEqual(['acks-resume-with-quorum']);
    const burst = [...attempts(0, 1_000, 500, OK), ...attempts(10_000, 11_500, 300, TIMED_OUT), ...attempts(11_500, 12_000, 500, OK)];
    expect(check(run(burst, allHealthy()))).toEqual([]);
    const longer = [...attempts(0, 1_000, 500, OK), ...attempts(10_000, 12_500, 300, TIMED_OUT), ...attempts(12_500, 13_000, 500, OK)];
    expect(names(run(longer, allHealthy()))).toEqual(['acks-resume-with-quorum']);
  });

  test('a deleted topic is not demanded; a re-created one only from R after its creation', () => {
    const failing = (fromMs: number) => attempts(fromMs, 30_000, 500, { ok: false, error: 'UNKNOWN_TOPIC_OR_PARTITION', answered: true });
    const deleted = [admin('delete-topic', { startMs: 1_000, endMs: 1_100 }), ...failing(1_200)];
    expect(check(history({ ops: deleted, replicaLogs: [], probes: [] }))).toEqual([]);
    expect(names(history({ ops: failing(1_200), replicaLogs: [], probes: [] }))).toEqual(['acks-resume-with-quorum']);
    const recreated = [admin('delete-topic', { startMs: 1_000, endMs: 1_100 }), admin('create-topic', { startMs: 1_200, endMs: 1_300 }), ...failing(1_400)];
    const violations = check(history({ ops: recreated, replicaLogs: [replica(1, true, [])] }));
    expect(violations.map((v) => [v.invariant, v.incarnation, v.atMs])).toEqual([['acks-resume-with-quorum', 2, 7_900]]); // R after the create took effect everywhere (its end plus the propagation bound)
    expect(violations[0]!.message).toContain('after the topic was created');
  });
});

describe('quorum windows', () => {
  const FIVE: RunShape = { brokers: 5, cluster: true, replicationFactor: 3, minInsyncReplicas: 2, leaseMs: 1_000, scanIntervalMs: 100 };
  const spans = (shape: RunShape, health: HealthChange[]) => quorumWindows(shape, health).map((w) => [w.fromMs, w.toMs, [...w.changesMs]]);

  test('overlapping unhealthy spells of several brokers, with one tolerated (RF 3, min.insync 2)', () => {
    const health = [
      ...spell(1, 1_000, 5_000),
      ...spell(2, 3_000, 8_000),
      ...spell(3, 7_000, 9_000),
      { node: 4, atMs: 12_000, healthy: false },
      // a swap at one instant: still one broker down, the window goes on
      { node: 1, atMs: 14_000, healthy: false },
      { node: 4, atMs: 14_000, healthy: true },
      // no change: node 5 is healthy already
      { node: 5, atMs: 15_000, healthy: true },
      ...allHealthy(FIVE),
    ].reverse();
    expect(spans(FIVE, health)).toEqual([
      [0, 3_000, [1_000]],
      [5_000, 7_000, []],
      [8_000, Infinity, [9_000, 12_000, 14_000]],
    ]);
  });

  test('every node starts unhealthy: the window opens when enough have come up', () => {
    const health = [
      { node: 1, atMs: 100, healthy: true },
      { node: 2, atMs: 200, healthy: true },
      { node: 3, atMs: 300, healthy: true },
      { node: 4, atMs: 400, healthy: true },
      { node: 5, atMs: 500, healthy: true },
    ];
    expect(spans(FIVE, health)).toEqual([[400, Infinity, [500]]]);
    expect(spans(FIVE, [])).toEqual([]);
  });

  test('none tolerated (min.insync = RF, or a single broker): any unhealthy broker closes the window', () => {
    const strict = { ...FIVE, minInsyncReplicas: 3 };
    expect(spans(strict, [...allHealthy(FIVE), ...spell(5, 1_000, 2_000)])).toEqual([
      [0, 1_000, []],
      [2_000, Infinity, []],
    ]);
    const single: RunShape = { brokers: 1, cluster: false, replicationFactor: 1, minInsyncReplicas: 1, leaseMs: 1_000, scanIntervalMs: 100 };
    expect(spans(single, [{ node: 1, atMs: 0, healthy: true }, ...spell(1, 1_000, 2_000)])).toEqual([
      [0, 1_000, []],
      [2_000, Infinity, []],
    ]);
  });

  test('a health change of a node outside the cluster is a broken history', () => {
    expect(() => quorumWindows(FIVE, [{ node: 6, atMs: 0, healthy: true }])).toThrow('outside 1..5');
  });
});

describe('topic incarnations', () => {
  // one broker: a create or delete takes effect when it is answered (no propagation to other brokers)
  const ONE_BROKER = { ...SHAPE, brokers: 1, cluster: false, replicationFactor: 1 };
  const oldLife: ClientOp[] = [
    produce('p1', { startMs: 100, endMs: 110 }, ['x0'], 0),
    fetch('c1', { startMs: 120, endMs: 130 }, 0, ['x0'], 1),
    admin('delete-topic', { startMs: 200, endMs: 210 }),
    admin('create-topic', { startMs: 220, endMs: 230 }),
  ];

  test('a re-created topic is a new log: the old records are not demanded, offsets may repeat', () => {
    const ops: ClientOp[] = [...oldLife, produce('p1', { startMs: 300, endMs: 310 }, ['y0'], 0), fetch('c1', { startMs: 320, endMs: 330 }, 0, ['y0'], 1)];
    expect(check(history({ shape: ONE_BROKER, ops, replicaLogs: [replica(1, true, ['y0'])] }))).toEqual([]);
  });

  test('an op after the re-create belongs to the new incarnation and is demanded', () => {
    const ops: ClientOp[] = [...oldLife, produce('p1', { startMs: 300, endMs: 310 }, ['y0'], 0)];
    const violations = check(history({ shape: ONE_BROKER, ops, replicaLogs: [replica(1, true, [])] }));
    expect(violations.map((v) => [v.invariant, v.incarnation])).toEqual([['acked-durable', 2]]);
  });

  test('an op overlapping a delete is not demanded', () => {
    const ops: ClientOp[] = [...oldLife, produce('p1', { startMs: 205, endMs: 240 }, ['z0'], 0)];
    expect(check(history({ shape: ONE_BROKER, ops, replicaLogs: [replica(1, true, [])] }))).toEqual([]);
  });

  test('a delete whose outcome is unknown is a boundary; a refused one is not', () => {
    const before = produce('p1', { startMs: 100, endMs: 110 }, ['x0'], 0);
    const after = produce('p1', { startMs: 300, endMs: 310 }, ['y0'], 0);
    const unknown = admin('delete-topic', { startMs: 200, endMs: 210 }, NO_ANSWER);
    expect(check(history({ shape: ONE_BROKER, ops: [before, unknown, after], replicaLogs: [replica(1, true, ['y0'])] }))).toEqual([]);
    const refused = admin('delete-topic', { startMs: 200, endMs: 210 }, { ok: false, error: 'UNKNOWN_TOPIC_OR_PARTITION', answered: true });
    expect(names(history({ shape: ONE_BROKER, ops: [before, refused, after], replicaLogs: [replica(1, true, ['y0'])] }))).toEqual(['acked-durable', 'offset-unique']);
  });

  test('after a delete of unknown outcome the incarnation is unknown until a create succeeds: a record acknowledged before it and read after it at its offset is no violation', () => {
    const acked = produce('p1', { startMs: 100, endMs: 110 }, ['x0'], 0);
    const unknown = admin('delete-topic', { startMs: 200, endMs: 210 }, NO_ANSWER); // it did not happen: the log goes on
    const exists = admin('create-topic', { startMs: 300, endMs: 310 }, { ok: false, error: 'TOPIC_ALREADY_EXISTS', answered: true });
    const readAfter = fetch('c1', { startMs: 400, endMs: 410 }, 0, ['x0'], 1);
    expect(check(history({ shape: ONE_BROKER, ops: [acked, unknown, exists, readAfter], replicaLogs: [replica(1, true, ['x0'])] }))).toEqual([]);
    // once a create succeeds, the topic is surely a new log again: the old record served there is stale
    const created = admin('create-topic', { startMs: 500, endMs: 510 });
    const readNew = fetch('c1', { startMs: 600, endMs: 610 }, 0, ['x0'], 1);
    expect(names(history({ shape: ONE_BROKER, ops: [acked, unknown, created, readNew], replicaLogs: [replica(1, true, ['x0'])] }))).toContain('stale-incarnation-read');
  });

  test('a create or delete that was never sent (no connection) is no boundary', () => {
    const before = produce('p1', { startMs: 100, endMs: 110 }, ['x0'], 0);
    const notSent = admin('delete-topic', { startMs: 200, endMs: 210 }, { ok: false, error: 'not-sent', answered: false });
    const readAfter = fetch('c1', { startMs: 300, endMs: 310 }, 0, ['y0'], 1);
    expect(names(history({ shape: ONE_BROKER, ops: [before, notSent, readAfter], replicaLogs: [replica(1, true, ['x0'])] }))).toContain('offset-unique');
  });
});

describe('formatViolation', () => {
  test('prints the seed, the invariant, the partition, the offsets and a bounded trace with relative times', () => {
    const ops: ClientOp[] = validOps().filter((op) => op.kind !== 'fetch');
    for (let i = 0; i < 40; i++) ops.push(fetch('c9', { startMs: 1_000 + i * 10, endMs: 1_005 + i * 10 }, 0, [], 0, { partition: 0 }));
    const run = { ...validHistory(ops, ['a0', 'a1'], ['a0']), faults: [{ kind: 'fault' as const, atMs: 125, fault: 'crash', target: 'node 1' }] };
    const violation = check(run).find((v) => v.invariant === 'acked-durable')!;
    const text = formatViolation(violation, run);
    expect(text).toContain('seed 42');
    expect(text).toContain('acked-durable violated on topic t partition 0 (incarnation 0), offset 2, at +0.130s');
    expect(text).toContain('fault crash node 1');
    expect(text).toContain('* +0.120s..+0.130s  p1->node 1 produce acks=-1');
    const traceLines = text.split('\n').slice(4);
    expect(traceLines.length).toBeLessThanOrEqual(TRACE_LINES_MAX);
    expect(traceLines.length).toBeGreaterThan(3);
  });

  test('the trace keeps the ops on the offsets involved even when they lie far from the violation', () => {
    const ops: ClientOp[] = validOps();
    for (let i = 0; i < 40; i++) ops.push(fetch('c9', { startMs: 1_000 + i * 10, endMs: 1_005 + i * 10 }, 4, [], 4));
    ops.push(fetch('c2', { startMs: 2_000, endMs: 2_010 }, 2, ['zz'], 4));
    const run = validHistory(ops);
    const text = formatViolation(check(run).find((v) => v.invariant === 'offset-unique')!, run);
    expect(text).toContain('* +0.120s..+0.130s  p1->node 1 produce');
    expect(text).toContain('* +2.000s..+2.010s  c2->node 1 fetch from 2');
    expect(text.split('\n').length).toBeLessThanOrEqual(4 + TRACE_LINES_MAX);
  });
});

// What the checker costs is measured in bench/sim-check.bench.ts (a time bound here would fail on a busy machine).
test('judges a run of tens of thousands of ops: clean as written, and a leader log cut short is found', () => {
  const PARTITIONS = 20;
  const BATCHES = 1_000;
  const ops: ClientOp[] = [];
  const logs = [];
  for (let partition = 0; partition < PARTITIONS; partition++) {
    const values: string[] = [];
    for (let i = 0; i < BATCHES; i++) {
      const batch = [`p${partition}/${2 * i}`, `p${partition}/${2 * i + 1}`];
      ops.push(produce(`p${partition}`, { startMs: i * 10, endMs: i * 10 + 5 }, batch, 2 * i, { partition, idempotence: idempotent(partition, 2 * i) }));
      ops.push(fetch('c1', { startMs: i * 10 + 6, endMs: i * 10 + 8 }, 2 * i, batch, 2 * i + 2, { partition }));
      ops.push(commit({ startMs: i * 10 + 8, endMs: i * 10 + 9 }, 2 * i + 2, { partition }));
      if (i % 50 === 0) ops.push(offsetFetch({ startMs: i * 10 + 9, endMs: i * 10 + 10 }, 2 * i + 2, { partition }));
      values.push(...batch);
    }
    logs.push({ ...replica(1, true, values), partition }, { ...replica(2, false, values), partition });
  }
  const probes = Array.from({ length: PARTITIONS }, (_, partition) => ({ ...probe(), partition }));
  const run = history({ ops, replicaLogs: logs, probes });
  expect(check(run)).toEqual([]);
  const broken = { ...run, replicaLogs: run.replicaLogs.map((log) => (log.partition === 3 && log.leader ? { ...log, records: log.records.slice(0, 100) } : log)) };
  const violations = check(broken);
  expect(violations.filter((v) => v.invariant === 'acked-durable').map((v) => [v.partition, v.offsets.length, v.message.includes('1900 cases')])).toEqual([[3, 20, true]]);
});

describe('producer-id-unique', () => {
  test('a second client producing under a producer id and epoch another client had is a violation (CW1: two brokers handed out one block)', () => {
    const shared = produce('p3', { startMs: 300, endMs: 310 }, ['c0'], null, { idempotence: idempotent(7, 0), outcome: NO_ANSWER });
    const run = validHistory([...validOps(), shared]);
    expect(names(run)).toEqual(['producer-id-unique']);
    expect(check(run)[0]!.message).toContain('producer id 7 epoch 0 used by p1');
  });

  test('one client keeping its id, or another client with another id or epoch, is not', () => {
    const other = produce('p3', { startMs: 300, endMs: 310 }, ['c0'], null, { idempotence: idempotent(8, 0), outcome: NO_ANSWER });
    const bumped = produce('p4', { startMs: 320, endMs: 330 }, ['d0'], null, { idempotence: { producerId: 7n, producerEpoch: 1, baseSequence: 0 }, outcome: NO_ANSWER });
    expect(check(validHistory([...validOps(), other, bumped]))).toEqual([]);
  });
});
