/**
 * The simulated clients against a real broker over real sockets (system clock): what they write is
 * acknowledged and read back at the acknowledged offsets, group commits resume a new member, and
 * a lost answer is retried with the same sequence and written once.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { Broker } from '../../src/broker/broker.ts';
import type { ClientOp, FetchOp, ProduceOp } from '../../src/sim/history.ts';
import { SimAdmin, SimConsumer, SimGroupConsumer, SimProducer } from '../../src/sim/client/index.ts';
import type { ProduceResult } from '../../src/sim/client/producer.ts';
import { systemClock } from '../../src/util/clock.ts';
import type { NetSocket, Network } from '../../src/util/network.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { systemNetwork } from '../../src/util/system-network.ts';
import { tempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

const WAIT_MS = 4_000;

let broker: Broker;
let history: { seed: number; ops: ClientOp[] };
let stops: (() => unknown)[];

beforeEach(async () => {
  broker = await Broker.start({ listenHost: '127.0.0.1', listenPort: 0, nodeId: 1, autoCreateTopics: false, engine: { directory: tempDir(), log: { flush: { kind: 'none' } } } });
  history = { seed: 1, ops: [] };
  stops = [];
});

afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
  await broker.stop();
});

function common(name: string, network: Network = systemNetwork) {
  return {
    name,
    network,
    clock: systemClock,
    random: new SeededRandom(7),
    record: (op: ClientOp) => history.ops.push(op),
    bootstrap: [{ host: '127.0.0.1', port: broker.port }],
    requestTimeoutMs: 2_000,
    retryBackoffMs: 20,
  };
}

function started<T extends { start(): void; stop(): unknown }>(client: T): T {
  client.start();
  stops.push(() => client.stop());
  return client;
}

async function createTopic(name: string, partitions: number): Promise<void> {
  const admin = started(new SimAdmin(common('admin')));
  expect(await admin.createTopic(name, partitions, 1)).toEqual({ ok: true });
}

function opsOf<K extends ClientOp['kind']>(kind: K, client: string): Extract<ClientOp, { kind: K }>[] {
  return history.ops.filter((op): op is Extract<ClientOp, { kind: K }> => op.kind === kind && op.client === client);
}

/** Every record the consumer's fetches returned, by offset (an offset read twice must hold one value). */
function readByOffset(client: string): Map<number, string> {
  const read = new Map<number, string>();
  for (const op of opsOf('fetch', client)) {
    for (const record of op.records) {
      expect(read.get(record.offset) ?? record.value).toBe(record.value);
      read.set(record.offset, record.value);
    }
  }
  return read;
}

/** Acknowledged values at their offsets, from the producer's ok ProduceOps. */
function acknowledged(client: string, partition: number): Map<number, string> {
  const acked = new Map<number, string>();
  for (const op of opsOf('produce', client)) {
    if (!op.outcome.ok || op.baseOffset === null || op.partition !== partition) continue;
    op.values.forEach((value, i) => acked.set(op.baseOffset! + i, value));
  }
  return acked;
}

describe('simulated clients against a real broker', () => {
  test('admin creates and describes a topic, and deletes it', async () => {
    const admin = started(new SimAdmin(common('admin')));
    expect(await admin.createTopic('t', 3, 1)).toEqual({ ok: true });
    expect(await admin.createTopic('t', 3, 1)).toEqual({ ok: false, error: 'TOPIC_ALREADY_EXISTS', answered: true });
    const metadata = await admin.describe(['t']);
    expect(metadata?.topics[0]?.partitions.map((p) => p.leaderId)).toEqual([1, 1, 1]);
    expect(await admin.deleteTopic('t')).toEqual({ ok: true });
    // The controller's requests go to the controller the first Metadata named (issue 24).
    expect(history.ops.map((op) => [op.kind, op.outcome.ok, op.node])).toEqual([
      ['metadata', true, -1],
      ['create-topic', true, 1],
      ['create-topic', false, 1],
      ['metadata', true, 1],
      ['delete-topic', true, 1],
    ]);
    expect(opsOf('metadata', 'admin')[1]!.topics).toEqual([{ name: 't', partitions: 3 }]);
  });

  test("admin deletes records, adds partitions and alters a topic's config (issue 12), each recorded with its answer", async () => {
    const admin = started(new SimAdmin(common('admin')));
    expect(await admin.createTopic('t', 1, 1)).toEqual({ ok: true });
    const producer = started(new SimProducer({ ...common('p'), idempotent: true, acks: -1 }));
    expect((await producer.produce('t', 0, 4)).ok).toBe(true);
    expect(await admin.deleteRecords('t', 0, 2)).toEqual({ ok: true });
    expect(await admin.deleteRecords('t', 0, 99)).toEqual({ ok: false, error: 'OFFSET_OUT_OF_RANGE', answered: true });
    expect(opsOf('delete-records', 'admin').map((op) => [op.offset, op.lowWatermark])).toEqual([
      [2, 2],
      [99, null],
    ]);
    expect(await admin.createPartitions('t', 3)).toEqual({ ok: true });
    expect(await admin.createPartitions('t', 2)).toMatchObject({ ok: false, error: 'INVALID_PARTITIONS' });
    expect((await admin.describe(['t']))?.topics[0]?.partitions.length).toBe(3);
    expect(await admin.alterConfigs('t', [{ name: 'message.timestamp.type', value: 'LogAppendTime' }])).toEqual({ ok: true });
    expect(await admin.alterConfigs('t', [{ name: 'message.timestamp.type', value: 'Sometimes' }])).toMatchObject({ ok: false, error: 'INVALID_CONFIG' });
    expect((await producer.produce('t', 0, 1)).ok).toBe(true);
    const consumer = started(new SimConsumer({ ...common('c'), topic: 't', partition: 0, startOffset: 'earliest', maxWaitMs: 50 }));
    await until(() => consumer.position === 5, 'consumer at 5', WAIT_MS);
    expect(opsOf('list-offsets', 'c')[0]).toMatchObject({ outcome: { ok: true }, offset: 2 });
    const records = opsOf('fetch', 'c').flatMap((op) => op.records);
    expect(records.map((record) => [record.offset, record.logAppendTime ?? false])).toEqual([
      [2, false],
      [3, false],
      [4, true],
    ]);
  });

  test('an idempotent producer with acks=all is read back at its acknowledged offsets', async () => {
    await createTopic('t', 2);
    const producer = started(new SimProducer({ ...common('p'), idempotent: true, acks: -1 }));
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => producer.produce('t', i % 2, 3)));
    expect(results.every((r) => r.ok && r.baseOffset !== null)).toBe(true);
    const produced = opsOf('produce', 'p');
    expect(produced).toHaveLength(10);
    expect(produced.every((op) => op.idempotence !== null && op.node === 1)).toBe(true);
    const partition0 = produced.filter((op) => op.partition === 0).sort((a, b) => a.idempotence!.baseSequence - b.idempotence!.baseSequence);
    expect(partition0.map((op) => op.idempotence!.baseSequence)).toEqual([0, 3, 6, 9, 12]);
    expect(new Set(produced.flatMap((op) => op.values)).size).toBe(30);
    for (const partition of [0, 1]) {
      const consumer = started(new SimConsumer({ ...common(`c${partition}`), topic: 't', partition, startOffset: 'earliest', maxWaitMs: 50 }));
      await until(() => consumer.position === 15, `consumer ${partition} at 15`, WAIT_MS);
      expect(readByOffset(`c${partition}`)).toEqual(acknowledged('p', partition));
      expect(opsOf('fetch', `c${partition}`).some((op) => op.highWatermark === 15)).toBe(true);
    }
  });

  test('a plain producer with acks 1 gets offsets, with acks 0 none, and both are read', async () => {
    await createTopic('t', 1);
    const acks1 = started(new SimProducer({ ...common('one'), idempotent: false, acks: 1 }));
    const acks0 = started(new SimProducer({ ...common('zero'), idempotent: false, acks: 0 }));
    const one = await Promise.all([acks1.produce('t', 0, 2), acks1.produce('t', 0, 2)]);
    const zero = await Promise.all([acks0.produce('t', 0, 2), acks0.produce('t', 0, 1)]);
    expect(one.map((r) => r.ok && r.baseOffset !== null)).toEqual([true, true]);
    expect(zero).toEqual([
      { ok: true, baseOffset: null, values: ['zero/0', 'zero/1'] },
      { ok: true, baseOffset: null, values: ['zero/2'] },
    ]);
    expect(opsOf('produce', 'zero').map((op) => [op.acks, op.idempotence, op.baseOffset])).toEqual([
      [0, null, null],
      [0, null, null],
    ]);
    const consumer = started(new SimConsumer({ ...common('c'), topic: 't', partition: 0, startOffset: 0, maxWaitMs: 50 }));
    await until(() => consumer.position === 7, 'consumer at 7', WAIT_MS);
    const read = [...readByOffset('c').values()];
    expect(read.sort()).toEqual(['one/0', 'one/1', 'one/2', 'one/3', 'zero/0', 'zero/1', 'zero/2']);
    for (const [offset, value] of acknowledged('one', 0)) expect(readByOffset('c').get(offset)).toBe(value);
  });

  test('a consumer past the log end gets OFFSET_OUT_OF_RANGE, resets to the earliest offset and reads', async () => {
    await createTopic('t', 1);
    const producer = started(new SimProducer({ ...common('p'), idempotent: false, acks: 1 }));
    await producer.produce('t', 0, 2);
    const consumer = started(new SimConsumer({ ...common('c'), topic: 't', partition: 0, startOffset: 50, maxWaitMs: 50 }));
    await until(() => consumer.position === 2, 'consumer at 2', WAIT_MS);
    const fetches = opsOf('fetch', 'c');
    expect(fetches[0]).toMatchObject({ fetchOffset: 50, outcome: { ok: false, error: 'OFFSET_OUT_OF_RANGE', answered: true }, highWatermark: null, records: [] });
    expect(fetches[1]).toMatchObject({
      fetchOffset: 0,
      outcome: { ok: true },
      highWatermark: 2,
      records: [
        { offset: 0, value: 'p/0' },
        { offset: 1, value: 'p/1' },
      ],
    });
  });

  test('a group consumer commits its position and a new member resumes from it', async () => {
    await createTopic('t', 2);
    const producer = started(new SimProducer({ ...common('p'), idempotent: true, acks: -1 }));
    await Promise.all([producer.produce('t', 0, 4), producer.produce('t', 1, 3)]);
    const groupOptions = { group: 'g', topics: ['t'], sessionTimeoutMs: 3_000, rebalanceTimeoutMs: 1_000, heartbeatIntervalMs: 100, commitIntervalMs: 100, maxWaitMs: 50 };
    const first = new SimGroupConsumer({ ...common('g1'), ...groupOptions });
    first.start();
    await until(
      () => opsOf('commit', 'g1').some((op) => op.outcome.ok && op.partition === 0 && op.offset === 4) && opsOf('commit', 'g1').some((op) => op.outcome.ok && op.partition === 1 && op.offset === 3),
      'g1 committed both partitions',
      WAIT_MS,
    );
    expect(opsOf('offset-fetch', 'g1').map((op) => [op.partition, op.offset])).toEqual([
      [0, -1],
      [1, -1],
    ]);
    await first.stop();
    await producer.produce('t', 0, 1);
    const second = started(new SimGroupConsumer({ ...common('g2'), ...groupOptions }));
    await until(() => second.assignment.length === 2 && second.assignment.every((a) => a.position === (a.partition === 0 ? 5 : 3)), 'g2 read on from the commits', WAIT_MS);
    expect(opsOf('offset-fetch', 'g2').map((op) => [op.partition, op.offset, op.outcome.ok])).toEqual([
      [0, 4, true],
      [1, 3, true],
    ]);
    const fetches = opsOf('fetch', 'g2').filter((op) => op.records.length > 0);
    expect(fetches.map((op: FetchOp) => [op.partition, op.fetchOffset, op.records.map((r) => r.value)])).toEqual([[0, 4, ['p/7']]]);
    expect(opsOf('commit', 'g1').every((op) => !op.reset)).toBe(true);
  });

  test('a second member rebalances the group: the first rejoins and each reads its own partition', async () => {
    await createTopic('t', 2);
    const groupOptions = { group: 'g', topics: ['t'], sessionTimeoutMs: 3_000, rebalanceTimeoutMs: 1_000, heartbeatIntervalMs: 50, commitIntervalMs: 100, maxWaitMs: 50 };
    const first = started(new SimGroupConsumer({ ...common('g1'), ...groupOptions }));
    await until(() => first.assignment.length === 2, 'g1 owns both partitions', WAIT_MS);
    const second = started(new SimGroupConsumer({ ...common('g2'), ...groupOptions }));
    await until(() => first.assignment.length === 1 && second.assignment.length === 1, 'one partition each', WAIT_MS);
    expect([...first.assignment, ...second.assignment].map((a) => a.partition).sort()).toEqual([0, 1]);
    expect(opsOf('offset-fetch', 'g1')).toHaveLength(3); // both at the first join, one at the second
  });

  test('a member that crashed is expired after its session: the survivor gets its partitions', async () => {
    await createTopic('t', 2);
    const groupOptions = { group: 'g', topics: ['t'], sessionTimeoutMs: 1_000, rebalanceTimeoutMs: 1_000, heartbeatIntervalMs: 50, commitIntervalMs: 100, maxWaitMs: 50 };
    const first = new SimGroupConsumer({ ...common('g1'), ...groupOptions });
    first.start();
    const second = started(new SimGroupConsumer({ ...common('g2'), ...groupOptions }));
    await until(() => first.assignment.length === 1 && second.assignment.length === 1, 'one partition each', WAIT_MS);
    const stoppedMs = systemClock.nowMs();
    await first.stop(false); // no commit, no LeaveGroup: only the session timeout tells the coordinator
    await until(() => second.assignment.length === 2, 'g2 owns both partitions', WAIT_MS);
    // What it committed while it ran is its own (how many depends on this machine's speed); at the stop, nothing.
    // (A commit sent in the millisecond the stop began may be one it cut off, never answered: a full run met one.)
    expect(opsOf('commit', 'g1').filter((op) => op.startMs > stoppedMs || (op.startMs === stoppedMs && op.outcome.ok))).toEqual([]);
  });

  test("lapses: a member's commits under its generation past are refused, and it rejoins (issue 25)", async () => {
    await createTopic('t', 2);
    const producer = started(new SimProducer({ ...common('p'), idempotent: true, acks: -1 }));
    await Promise.all([producer.produce('t', 0, 2), producer.produce('t', 1, 2)]);
    const groupOptions = { group: 'g', topics: ['t'], sessionTimeoutMs: 1_000, rebalanceTimeoutMs: 1_000, heartbeatIntervalMs: 100, commitIntervalMs: 100, maxWaitMs: 50 };
    const first = started(new SimGroupConsumer({ ...common('g1'), ...groupOptions }));
    await until(() => first.assignment.length === 2, 'g1 owns both partitions', WAIT_MS);
    const joinedAt = (name: string) => opsOf('join-group', name).filter((op) => op.outcome.ok);

    // Stale commits: at the next rebalance g1 rejoins, and goes on committing under the generation past.
    first.lapseAtNextRebalance('stale-commits', 1_000);
    const second = started(new SimGroupConsumer({ ...common('g2'), ...groupOptions }));
    await until(() => first.assignment.length === 1 && second.assignment.length === 1, 'one partition each', WAIT_MS);
    const current = joinedAt('g1').at(-1)!.generationId;
    await until(() => opsOf('commit', 'g1').some((op) => op.generationId < current && op.startMs > joinedAt('g1').at(-1)!.endMs), 'a stale commit', WAIT_MS);
    const stale = opsOf('commit', 'g1').filter((op) => op.generationId < current && op.startMs > joinedAt('g1').at(-1)!.endMs);
    expect(stale.map((op) => op.outcome)).toContainEqual({ ok: false, error: 'ILLEGAL_GENERATION', answered: true });
    expect(stale.some((op) => op.outcome.ok)).toBe(false);

    // A stall past the session: back, it commits as before, is told it is unknown, and joins as a new member.
    const stalledFromMs = systemClock.nowMs();
    await second.stall(2_500);
    const back = opsOf('commit', 'g2').find((op) => op.startMs >= stalledFromMs + 2_500);
    expect(back?.outcome).toEqual({ ok: false, error: 'UNKNOWN_MEMBER_ID', answered: true });
    await until(() => joinedAt('g2').some((op) => op.startMs > back!.endMs && op.askedMemberId === ''), 'g2 joined again as a new member', WAIT_MS);
  }, 20_000);

  test('an idempotent batch whose answer was lost is resent with its sequence and written once', async () => {
    await createTopic('t', 1);
    const network = new AnswerDroppingNetwork();
    const producer = started(new SimProducer({ ...common('p', network), idempotent: true, acks: -1 }));
    expect((await producer.produce('t', 0, 2)).ok).toBe(true);
    network.dropNextAnswer = true;
    const result: ProduceResult = await producer.produce('t', 0, 2);
    expect(result).toEqual({ ok: true, baseOffset: 2, values: ['p/2', 'p/3'] });
    const attempts = opsOf('produce', 'p').slice(1);
    expect(attempts.map((op: ProduceOp) => [op.outcome.ok, op.idempotence?.baseSequence, op.values])).toEqual([
      [false, 2, ['p/2', 'p/3']],
      [true, 2, ['p/2', 'p/3']],
    ]);
    expect(attempts[0]!.outcome).toEqual({ ok: false, error: 'disconnected', answered: false });
    const consumer = started(new SimConsumer({ ...common('c'), topic: 't', partition: 0, startOffset: 0, maxWaitMs: 50 }));
    await until(() => consumer.position === 4, 'consumer at 4', WAIT_MS);
    await Bun.sleep(100); // a duplicate would be at offset 4 and 5 by now
    expect([...readByOffset('c').entries()]).toEqual([
      [0, 'p/0'],
      [1, 'p/1'],
      [2, 'p/2'],
      [3, 'p/3'],
    ]);
  });
});

/** Bun sockets, except that the next answer after `dropNextAnswer` is set is lost with its connection. */
class AnswerDroppingNetwork implements Network {
  dropNextAnswer = false;

  listen(): never {
    throw new Error('connects only');
  }

  resolve(host: string): Promise<string[]> {
    return systemNetwork.resolve(host);
  }

  connect(host: string, port: number, handlers: Parameters<Network['connect']>[2]): Promise<NetSocket> {
    return systemNetwork.connect(host, port, {
      ...handlers,
      data: (socket, chunk) => {
        if (!this.dropNextAnswer) return handlers.data(socket, chunk);
        this.dropNextAnswer = false;
        socket.terminate();
      },
    });
  }
}
