import { describe, expect, test } from 'bun:test';
import { check } from '../../src/sim/checker.ts';
import type { ClientOp, History, LeaseHistory, LeaseRenewal, PartitionRecordWrite, ProduceOp } from '../../src/sim/history.ts';
import { fetch, produce, validHistory, validOps } from './history-fixture.ts';

/** Renewals of `process` (node 1 unless named otherwise), each sent at the time given and taken 5 ms later, lease 1000 ms. */
function renewals(process: string, sentMs: number[], options: Partial<LeaseRenewal> = {}): LeaseRenewal[] {
  const node = Number(/^broker-(\d+)#/.exec(process)![1]);
  return sentMs.map((at) => ({ process, node, sentMs: at, takenMs: at + 5, leaseMs: 1_000, resigned: false, ...options }));
}

function claim(process: string, takenMs: number, leaderEpoch: number): PartitionRecordWrite {
  return { process, topic: 't', partition: 0, leader: Number(/^broker-(\d+)#/.exec(process)![1]), leaderEpoch, takenMs };
}

/** Broker 1's first process renewing every 300 ms from 0 to 2400 (held until 3400), having claimed t/0 at epoch 0. */
function leases(parts: Partial<LeaseHistory> = {}): LeaseHistory {
  return {
    renewals: renewals('broker-1#1', [0, 300, 600, 900, 1_200, 1_500, 1_800, 2_100, 2_400]),
    partitionWrites: [claim('broker-1#1', 50, 0)],
    clockRateErrors: { 'broker-1#1': 0 },
    ...parts,
  };
}

/** The fixture's valid ops, every produce and fetch answered by broker-1#1 as it ended, plus `extra`. */
function run(lease: LeaseHistory, extra: ClientOp[] = []): History {
  const answered = (op: ClientOp) => (op.kind === 'produce' || op.kind === 'fetch') && op.answeredBy === undefined;
  const ops = [...validOps(), ...extra].map((op) => (answered(op) ? { ...op, answeredBy: { process: 'broker-1#1', atMs: op.endMs } } : op));
  return { ...validHistory(ops), leases: lease };
}

/** An acks=1 produce of `value` sent at `startMs`, answered by `process` at `answeredMs`. */
function late(value: string, startMs: number, answeredMs: number, process = 'broker-1#1'): ProduceOp {
  return produce('p2', { startMs, endMs: answeredMs + 1 }, [value], null, { acks: 1, answeredBy: { process, atMs: answeredMs } });
}

/** A fetch of t/0 from offset 4 at leader epoch `leaderEpoch` sent at `startMs`, answered by `process` at `answeredMs` with no records and high watermark 4. */
function read(startMs: number, answeredMs: number, leaderEpoch = 0, process = 'broker-1#1'): ClientOp {
  return fetch('c1', { startMs, endMs: answeredMs + 1 }, 4, [], 4, { leaderEpoch, answeredBy: { process, atMs: answeredMs } });
}

const violations = (history: History) => check(history).filter((violation) => violation.invariant === 'leader-within-lease');

describe('leader-within-lease', () => {
  test('acknowledgements within the lease and after a claim pass', () => {
    expect(violations(run(leases()))).toEqual([]);
  });

  test('an acknowledgement decided after the lease ended breaks it; one that may have been decided before does not', () => {
    const lease = leases({ renewals: renewals('broker-1#1', [0, 300]) }); // held until 1300
    expect(violations(run(lease, [late('x0', 1_200, 1_350)]))).toEqual([]); // sent within it: decided no sooner than 1200
    const broken = violations(run(lease, [late('x0', 1_310, 1_320)]));
    expect(broken).toMatchObject([{ topic: 't', partition: 0, atMs: 1_320 }]);
    expect(broken[0]!.message).toContain('acknowledged outside its lease: broker-1#1 acknowledged x0');
    expect(broken[0]!.message).toContain('its lease ended at 1300.0 ms (the last renewal the store took was sent at 300.0 ms');
  });

  test('the lease counts from the renewal sent, not from its answer: a renewal that took long to come back holds no longer', () => {
    const slow = renewals('broker-1#1', [0, 300], { takenMs: 900 }); // taken (and answered) long after it left
    expect(violations(run(leases({ renewals: slow }), [late('x0', 1_350, 1_360)]))).toHaveLength(1);
  });

  test('a lease lasts longer on a clock running slow, by the process recorded error', () => {
    const lease = leases({ renewals: renewals('broker-1#1', [0, 300]) });
    const justAfter = [late('x0', 1_310, 1_320)];
    expect(violations(run({ ...lease, clockRateErrors: { 'broker-1#1': 0.02 } }, justAfter))).toEqual([]); // held until 300 + 1000 / 0.98 = 1320.4
    expect(violations(run(lease, justAfter))).toHaveLength(1);
  });

  test('a resignation the store took ends the lease there', () => {
    const lease = leases({ renewals: [...renewals('broker-1#1', [0, 300]), ...renewals('broker-1#1', [700], { resigned: true })] }); // taken at 705
    expect(violations(run(lease, [late('x0', 710, 720)]))).toHaveLength(1);
  });

  test('another process of the same node holds no lease of the one that answered', () => {
    const lease = leases({ renewals: [...renewals('broker-1#1', [0]), ...renewals('broker-1#2', [1_000, 1_300])] });
    expect(violations(run(lease, [late('x0', 1_100, 1_110)]))).toHaveLength(1); // broker-1#1's ended at 1000
  });

  test('an acknowledgement or a read by a process that never claimed the partition breaks it', () => {
    const broken = violations(run(leases({ partitionWrites: [claim('broker-1#1', 2_000, 0)] })));
    expect(broken.map((violation) => violation.message.split(':')[0])).toEqual(['acknowledged without a claim', 'served a read without a claim']);
  });

  test('a lease that lapsed and came back over another broker claim acknowledges nothing at the old epoch', () => {
    const gap = renewals('broker-1#1', [0, 300, 2_000, 2_300]); // held [0, 1300) and [2000, 3300)
    const takeover = [claim('broker-1#1', 50, 0), claim('broker-2#1', 1_500, 1)];
    const broken = violations(run(leases({ renewals: gap, partitionWrites: takeover }), [late('x0', 2_100, 2_110)]));
    expect(broken).toHaveLength(1);
    expect(broken[0]!.message).toContain('acknowledged after its lease came back over a takeover');
    // Claimed again since: it leads at the new epoch.
    expect(violations(run(leases({ renewals: gap, partitionWrites: [...takeover, claim('broker-1#1', 2_050, 2)] }), [late('x0', 2_100, 2_110)]))).toEqual([]);
    // A takeover within one unbroken stretch is the seal's to fence, not the lease's.
    expect(violations(run(leases({ renewals: gap, partitionWrites: [claim('broker-1#1', 50, 0), claim('broker-2#1', 2_050, 1)] }), [late('x0', 2_100, 2_110)]))).toEqual([]);
  });

  test('a history without leases, and acks=0 or unanswered produces, are not judged', () => {
    expect(violations({ ...run(leases()), leases: undefined } as History)).toEqual([]);
    const lease = leases({ renewals: renewals('broker-1#1', [0]) });
    expect(violations(run(lease, [{ ...late('x0', 1_500, 1_510), acks: 0 }]))).toEqual([]);
  });

  test('a read served within the lease, at the epoch it claimed, keeps it; one served after the lease ended breaks it', () => {
    const lease = leases({ renewals: renewals('broker-1#1', [0, 300]) }); // held until 1300
    expect(violations(run(lease, [read(1_200, 1_350)]))).toEqual([]); // sent within it: may have been served before 1300
    const broken = violations(run(lease, [read(1_310, 1_320)]));
    expect(broken).toMatchObject([{ topic: 't', partition: 0, atMs: 1_320 }]);
    expect(broken[0]!.message).toContain('served a read outside its lease: broker-1#1 served a fetch from 4 at leader epoch 0 (no records, high watermark 4)');
  });

  test('a read served at an epoch another broker took over while the lease was lapsed breaks it, until the answering broker claims again', () => {
    const gap = renewals('broker-1#1', [0, 300, 2_000, 2_300]); // held [0, 1300) and [2000, 3300)
    const takeover = [claim('broker-1#1', 50, 0), claim('broker-2#1', 1_500, 1)];
    const broken = violations(run(leases({ renewals: gap, partitionWrites: takeover }), [read(2_100, 2_110)]));
    expect(broken).toHaveLength(1);
    expect(broken[0]!.message).toContain('served a read after its lease came back over a takeover');
    // Claimed again since, at epoch 2: a read at epoch 2 keeps it, a read still at epoch 0 does not.
    const again = leases({ renewals: gap, partitionWrites: [...takeover, claim('broker-1#1', 2_050, 2)] });
    expect(violations(run(again, [read(2_100, 2_110, 2)]))).toEqual([]);
    expect(violations(run(again, [read(2_100, 2_110, 0)]))).toHaveLength(1);
  });

  test('refused, unanswered and throttled-empty fetches are not judged', () => {
    const lease = leases({ renewals: renewals('broker-1#1', [0]) }); // held until 1000
    const refused = { ...read(1_500, 1_510), outcome: { ok: false, error: 'NOT_LEADER_OR_FOLLOWER', answered: true }, highWatermark: null } as ClientOp;
    const throttled = { ...read(1_500, 1_510), highWatermark: null, throttledEmpty: 100 } as ClientOp;
    expect(violations(run(lease, [refused, throttled]))).toEqual([]);
  });
});
