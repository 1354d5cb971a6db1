// answer-allowed and idempotent-retry-answer (issue 25 item 1) on hand-built histories.
import { describe, expect, test } from 'bun:test';
import { API_ANSWERS, refusedAnswer, runFacts } from '../../src/sim/answer-model.ts';
import { check } from '../../src/sim/checker.ts';
import type { ClientOp, DeleteRecordsOp, FaultEvent, History, MetadataOp, Outcome, ProduceOp, RequestOp } from '../../src/sim/history.ts';
import { commit, fetch, idempotent, NO_ANSWER, OK, produce, SHAPE, validHistory, validOps, VALID_LOG } from './history-fixture.ts';

const answered = (error: string): Outcome => ({ ok: false, error, answered: true });
const names = (run: History): string[] => [...new Set(check(run).map((violation) => violation.invariant))].sort();
const withOps = (ops: ClientOp[], parts: Partial<History> = {}): History => ({ ...validHistory([...validOps(), ...ops]), ...parts });
const SECURITY: History['security'] = { users: { p1: 'p1' }, superUsers: ['admin'], aclPropagationMs: 1_000, failedAuthenticationDelayMs: 100 };

function request(api: string, outcome: Outcome, startMs = 300): RequestOp {
  return { kind: 'request', client: 'c1', node: 1, startMs, endMs: startMs + 5, outcome, api, group: api === 'InitProducerId' ? null : 'g' };
}

describe('answer-allowed', () => {
  test('errors Kafka answers the API with, in this run, pass; so do requests that got no answer', () => {
    const ops = [
      produce('p2', { startMs: 300, endMs: 310 }, ['x0'], null, { outcome: answered('NOT_LEADER_OR_FOLLOWER') }),
      produce('p2', { startMs: 320, endMs: 330 }, ['x0'], null, { outcome: NO_ANSWER }),
      fetch('c1', { startMs: 300, endMs: 310 }, 9, [], 4, { outcome: answered('OFFSET_OUT_OF_RANGE') }),
      commit({ startMs: 400, endMs: 410 }, 4, { outcome: answered('COORDINATOR_NOT_AVAILABLE') }),
      request('JoinGroup', answered('MEMBER_ID_REQUIRED')),
      request('Heartbeat', answered('REBALANCE_IN_PROGRESS')),
      request('InitProducerId', answered('COORDINATOR_LOAD_IN_PROGRESS')),
    ];
    expect(check(withOps(ops))).toEqual([]);
  });

  test('an error the API never answers, or not to these requests, is reported with the reason', () => {
    const corrupt = produce('p2', { startMs: 300, endMs: 310 }, ['x0'], null, { outcome: answered('CORRUPT_MESSAGE') });
    const violations = check(withOps([corrupt]));
    expect(violations.map((v) => [v.invariant, v.topic, v.partition])).toEqual([['answer-allowed', 't', 0]]);
    expect(violations[0]!.message).toContain('CORRUPT_MESSAGE: never: the simulated clients send well-formed requests and batches');
    expect(names(withOps([commit({ startMs: 400, endMs: 410 }, 4, { outcome: answered('KAFKA_STORAGE_ERROR') })]))).toEqual(['answer-allowed']);
    expect(names(withOps([request('SyncGroup', answered('UNKNOWN_SERVER_ERROR'))]))).toEqual(['answer-allowed']);
    expect(check(withOps([request('FindCoordinator', answered('NOT_A_KAFKA_ERROR'))]))[0]!.message).toContain('is not an error Kafka answers FindCoordinator with');
    // A fetch answer whose records did not decode is no answer Kafka gives.
    expect(names(withOps([fetch('c1', { startMs: 300, endMs: 310 }, 4, [], 4, { outcome: answered('corrupt-records: a bad batch') })]))).toEqual(['answer-allowed']);
  });

  test('conditions: authorization errors only in a secured run, sequence errors only to an idempotent producer, NOT_ENOUGH_REPLICAS only above min.insync 1', () => {
    const denied = produce('p2', { startMs: 300, endMs: 310 }, ['x0'], null, { outcome: answered('TOPIC_AUTHORIZATION_FAILED') });
    expect(names(withOps([denied]))).toEqual(['answer-allowed']);
    expect(refusedAnswer(denied, 'TOPIC_AUTHORIZATION_FAILED', runFacts({ ...withOps([]), security: SECURITY }))).toBeNull();
    const plain = produce('p2', { startMs: 300, endMs: 310 }, ['x0'], null, { outcome: answered('OUT_OF_ORDER_SEQUENCE_NUMBER') });
    expect(check(withOps([plain]))[0]!.message).toContain("only to an idempotent producer's batch");
    const short = produce('p2', { startMs: 300, endMs: 310 }, ['x0'], null, { outcome: answered('NOT_ENOUGH_REPLICAS') });
    expect(names(withOps([short]))).toEqual(['answer-allowed']);
    expect(check(withOps([short], { shape: { ...SHAPE, minInsyncReplicas: 2 } }))).toEqual([]);
    expect(names(withOps([{ ...short, acks: 1 }], { shape: { ...SHAPE, minInsyncReplicas: 2 } }))).toEqual(['answer-allowed']);
  });

  test('INVALID_TIMESTAMP only once a clock-skew fault set a broker clock back', () => {
    const refused = produce('p2', { startMs: 300, endMs: 310 }, ['x0'], null, { outcome: answered('INVALID_TIMESTAMP') });
    expect(names(withOps([refused]))).toEqual(['answer-allowed']);
    const skew: FaultEvent = { kind: 'fault', atMs: 200, fault: 'clock-skew', target: 'broker-1 (-3600000 ms)' };
    expect(check(withOps([refused], { faults: [skew] }))).toEqual([]);
  });

  test("a Metadata answer's topic and partition errors are judged one by one", () => {
    const metadata = (errors: MetadataOp['errors']): MetadataOp => ({ kind: 'metadata', client: 'c1', node: 1, startMs: 300, endMs: 301, outcome: OK, topics: [], errors });
    expect(
      check(
        withOps([
          metadata([
            { topic: 'gone', partition: null, error: 'UNKNOWN_TOPIC_OR_PARTITION' },
            { topic: 't', partition: 0, error: 'LEADER_NOT_AVAILABLE' },
          ]),
        ]),
      ),
    ).toEqual([]);
    const violations = check(withOps([metadata([{ topic: 't', partition: 0, error: 'REPLICA_NOT_AVAILABLE' }])]));
    expect(violations.map((v) => [v.invariant, v.topic, v.partition])).toEqual([['answer-allowed', 't', 0]]);
  });

  test('every API the simulated clients send has a model, and no error is both allowed and excluded', () => {
    for (const [api, answers] of Object.entries(API_ANSWERS)) {
      for (const error of Object.keys(answers.allowed)) expect([api, error, error in answers.excluded]).toEqual([api, error, false]);
    }
    expect(Object.keys(API_ANSWERS).sort()).toEqual(
      [
        'CreateAcls',
        'CreatePartitions',
        'CreateTopics',
        'DeleteAcls',
        'DeleteRecords',
        'DeleteTopics',
        'Fetch',
        'FindCoordinator',
        'Heartbeat',
        'IncrementalAlterConfigs',
        'InitProducerId',
        'JoinGroup',
        'LeaveGroup',
        'ListOffsets',
        'Metadata',
        'OffsetCommit',
        'OffsetFetch',
        'Produce',
        'SyncGroup',
      ].sort(),
    );
  });
});

describe('idempotent-retry-answer', () => {
  const OUT_OF_ORDER = answered('OUT_OF_ORDER_SEQUENCE_NUMBER');
  /** Producer 7's batch at sequence 4 ("k0","k1"), written at offsets 4..5 by a first attempt whose answer was lost. */
  const first = produce('p1', { startMs: 300, endMs: 400 }, ['k0', 'k1'], null, { idempotence: idempotent(7, 4), outcome: NO_ANSWER });
  const retry = (outcome: Outcome, startMs = 600): ProduceOp => ({ ...first, startMs, endMs: startMs + 10, outcome });
  /** node 1 served a high watermark past the batch before the retry. */
  const seen = fetch('c1', { startMs: 450, endMs: 460 }, 4, ['k0', 'k1'], 6);
  const LOG = [...VALID_LOG, 'k0', 'k1'];
  const run = (ops: ClientOp[]): History => validHistory([...validOps(), ...ops], LOG, LOG);

  test('a retry of a batch its broker held, committed, within the window, answered OUT_OF_ORDER_SEQUENCE_NUMBER: caught', () => {
    const violations = check(run([first, seen, retry(OUT_OF_ORDER)]));
    expect(violations.map((v) => [v.invariant, v.offsets, v.atMs])).toEqual([['idempotent-retry-answer', [4], 600]]);
    expect(violations[0]!.message).toContain('producer 7/0 sequence 4 (p1, "k0", stored at offset 4) to node 1');
    for (const error of ['DUPLICATE_SEQUENCE_NUMBER', 'UNKNOWN_PRODUCER_ID', 'INVALID_PRODUCER_EPOCH']) expect(names(run([first, seen, retry(answered(error))]))).toContain('idempotent-retry-answer');
  });

  test('answered ok at the original offset, or with an error that is no sequence error, passes', () => {
    expect(check(run([first, seen, { ...retry(OK), baseOffset: 4 }]))).toEqual([]);
    expect(check(run([first, seen, retry(answered('NOT_LEADER_OR_FOLLOWER'))]))).toEqual([]);
  });

  test('no proof the broker held it (its high watermark seen on another node, or only after the retry was sent): not judged', () => {
    expect(check(run([first, { ...seen, node: 2 }, retry(OUT_OF_ORDER)]))).toEqual([]);
    expect(check(run([first, { ...seen, startMs: 600, endMs: 605 }, retry(OUT_OF_ORDER)]))).toEqual([]);
  });

  test('the batch before it acknowledged before the retry was sent: judged without proof of the batch itself', () => {
    // validOps' p1 is producer 7 too: sequences 0 and 2 acknowledged by 130; sequence 3 (one record) acknowledged at 500.
    const before = produce('p1', { startMs: 480, endMs: 500 }, ['j0'], 4, { idempotence: idempotent(7, 3) });
    const next = produce('p1', { startMs: 600, endMs: 610 }, ['m0'], null, { idempotence: idempotent(7, 4), outcome: OUT_OF_ORDER });
    const log = [...VALID_LOG, 'j0'];
    expect(names(validHistory([...validOps(), before, next], log, log))).toEqual(['idempotent-retry-answer']);
    const late = { ...before, startMs: 580, endMs: 605 };
    expect(check(validHistory([...validOps(), late, next], log, log))).toEqual([]);
  });

  // Seeds 226011, 226466: broker 1, deposed by broker 2's claim but still within its own lease (a renewal
  // that landed late), answered the next batch from a log broker 2 had written past.
  test('the batch before it acknowledged by a successor of the broker that answered: not judged', () => {
    const before = produce('p1', { startMs: 480, endMs: 500 }, ['j0'], 4, { idempotence: idempotent(7, 3), node: 2 });
    const next = produce('p1', { startMs: 600, endMs: 610 }, ['m0'], null, { idempotence: idempotent(7, 4), outcome: OUT_OF_ORDER, answeredBy: { process: 'broker-1#1', atMs: 605 } });
    const log = [...VALID_LOG, 'j0'];
    const claim = (process: string, leader: number, leaderEpoch: number, takenMs: number) => ({ process, topic: 't', partition: 0, leader, leaderEpoch, takenMs });
    const withClaims = (partitionWrites: ReturnType<typeof claim>[]): History => ({
      ...validHistory([...validOps(), before, next], log, log),
      leases: { renewals: [], partitionWrites, clockRateErrors: {} },
    });
    const names = (run: History) => [...new Set(check(run).map((violation) => violation.invariant))].filter((name) => name === 'idempotent-retry-answer');
    expect(names(withClaims([claim('broker-1#1', 1, 0, 10), claim('broker-2#1', 2, 1, 450)]))).toEqual([]);
    // broker 1 still leading (no successor's claim), or claiming again after it: judged
    expect(names(withClaims([claim('broker-1#1', 1, 0, 10)]))).toEqual(['idempotent-retry-answer']);
    expect(names(withClaims([claim('broker-1#1', 1, 0, 10), claim('broker-2#1', 2, 1, 450), claim('broker-1#1', 1, 2, 550)]))).toEqual(['idempotent-retry-answer']);
  });

  test('five later batches sent before the retry ended, or a later epoch: the batch may have left the window', () => {
    const later = (n: number): ProduceOp[] =>
      Array.from({ length: n }, (_, i) => produce('p1', { startMs: 350 + i, endMs: 700 }, [`l${i}`], null, { idempotence: idempotent(7, 6 + i), outcome: NO_ANSWER }));
    expect(names(run([first, seen, ...later(4), retry(OUT_OF_ORDER)]))).toEqual(['idempotent-retry-answer']);
    expect(check(run([first, seen, ...later(5), retry(OUT_OF_ORDER)]))).toEqual([]);
    const bumped = produce('p1', { startMs: 590, endMs: 700 }, ['e0'], null, { idempotence: { producerId: 7n, producerEpoch: 1, baseSequence: 0 }, outcome: NO_ANSWER });
    expect(check(run([first, seen, bumped, retry(OUT_OF_ORDER)]))).toEqual([]);
  });

  test('a DeleteRecords that may have moved the log start above the batch before the retry ended: not judged; below it, judged', () => {
    const deleteRecords = (lowWatermark: number): DeleteRecordsOp => ({
      kind: 'delete-records',
      client: 'admin',
      node: 1,
      startMs: 500,
      endMs: 520,
      outcome: OK,
      topic: 't',
      partition: 0,
      offset: lowWatermark,
      lowWatermark,
    });
    // (delete-records-floor objects too: the final logs here still start at 0.)
    const judged = (run: History) => check(run).filter((v) => v.invariant === 'idempotent-retry-answer').length;
    expect(judged(run([first, seen, deleteRecords(5), retry(OUT_OF_ORDER)]))).toBe(0);
    expect(judged(run([first, seen, deleteRecords(4), retry(OUT_OF_ORDER)]))).toBe(1);
  });

  test("the first batch of a producer id and epoch is judged only if no later one was sent before it ended (a broker takes an unknown producer's later batch first)", () => {
    const zero = produce('p3', { startMs: 600, endMs: 610 }, ['z0'], null, { idempotence: idempotent(9, 0), outcome: OUT_OF_ORDER });
    expect(names(validHistory([...validOps(), zero]))).toEqual(['idempotent-retry-answer']);
    const after = produce('p3', { startMs: 605, endMs: 620 }, ['z1'], 4, { idempotence: idempotent(9, 1) });
    expect(check(validHistory([...validOps(), zero, after], [...VALID_LOG, 'z1'], [...VALID_LOG, 'z1']))).toEqual([]);
  });
});
