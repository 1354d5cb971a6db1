/**
 * The simulated producer's retry rules against a scripted broker (the broker's own codecs on the
 * other end of a scripted network, a hand-driven clock): resends keep their sequences, an echo
 * of an earlier failure is retried, a gap the broker reports bumps the epoch, retries are bounded.
 */
import { expect, test } from 'bun:test';
import { initProducerIdCodec } from '../../src/broker/apis/init-producer-id.ts';
import { metadataCodec } from '../../src/broker/apis/metadata.ts';
import { produceCodec } from '../../src/broker/apis/produce.ts';
import { ErrorCode } from '../../src/protocol/error-codes.ts';
import { readRequestHeader } from '../../src/protocol/header.ts';
import { KafkaReader } from '../../src/protocol/reader.ts';
import { KafkaWriter } from '../../src/protocol/writer.ts';
import { RecordBatch } from '../../src/format/record-batch.ts';
import type { ClientOp, ProduceOp } from '../../src/sim/history.ts';
import { type ProduceResult, type ProducerOptions, SimProducer } from '../../src/sim/client/producer.ts';
import { ManualClock } from '../../src/util/clock.ts';
import type { NetSocket, Network, SocketHandlers } from '../../src/util/network.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { advanceUntil, settle } from '../support/settle.ts';

interface ReceivedBatch {
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly baseSequence: number;
  readonly count: number;
  readonly partition: number;
  /** The batch as it came (its codec, its first key). */
  readonly batch: RecordBatch;
}

/** A one-broker broker of 't'/0 and 't'/1 that checks sequences as Kafka does (a new epoch starts at 0), plus scripted errors (one per batch, in order). */
class ScriptedBroker implements Network {
  /** Error codes for the next Produce requests, in order (NONE: handle normally). */
  readonly script: number[] = [];
  /** Produce answers are held until `release` while false. */
  autoAnswer = true;
  readonly received: ReceivedBatch[] = [];
  readonly log: ReceivedBatch[] = [];
  /** How many batches each Produce request carried. */
  readonly requests: number[] = [];
  metadataRequests = 0;
  initRequests = 0;
  /** The next sequence of each producer id and epoch. */
  readonly #expected = new Map<string, number>();
  readonly #held: (() => void)[] = [];
  #nextProducerId = 1000;

  listen(): never {
    throw new Error('unused');
  }
  async resolve(host: string): Promise<string[]> {
    return [host];
  }

  async connect(_host: string, _port: number, handlers: SocketHandlers): Promise<NetSocket> {
    const socket: NetSocket = {
      remoteAddress: 'broker',
      // the client writes each request whole, in one write
      write: (bytes) => {
        this.#onFrame(bytes.subarray(4), (answer) => handlers.data(socket, answer));
        return bytes.length;
      },
      end: () => {},
      terminate: () => {},
      pause: () => {},
      resume: () => {},
    };
    return socket;
  }

  /** Forgets the producer's sequence at epoch 0 on partition 0 (as a broker that lost its producer state would). */
  loseSequence(producerId: number, expected: number): void {
    this.#expected.set(`${producerId}/0/0`, expected);
  }

  release(): void {
    for (const answer of this.#held.splice(0)) answer();
  }

  get held(): number {
    return this.#held.length;
  }

  #onFrame(frame: Uint8Array, deliver: (bytes: Uint8Array) => void): void {
    const reader = new KafkaReader(frame);
    const header = readRequestHeader(reader, false);
    const writer = new KafkaWriter().int32(header.correlationId);
    if (header.apiKey === metadataCodec.key) {
      this.metadataRequests++;
      metadataCodec.decodeRequest(reader, header.apiVersion);
      metadataCodec.encodeResponse(writer, header.apiVersion, {
        throttleTimeMs: 0,
        brokers: [{ nodeId: 1, host: 'b', port: 1, rack: null }],
        clusterId: null,
        controllerId: 1,
        topics: [
          {
            errorCode: 0,
            name: 't',
            isInternal: false,
            partitions: [0, 1].map((partitionIndex) => ({ errorCode: 0, partitionIndex, leaderId: 1, leaderEpoch: 0, replicaNodes: [1], isrNodes: [1], offlineReplicas: [] })),
            topicAuthorizedOperations: 0,
          },
        ],
        clusterAuthorizedOperations: 0,
      });
    } else if (header.apiKey === initProducerIdCodec.key) {
      this.initRequests++;
      initProducerIdCodec.encodeResponse(writer, header.apiVersion, { throttleTimeMs: 0, errorCode: 0, producerId: this.#nextProducerId++, producerEpoch: 0 });
    } else {
      const request = produceCodec.decodeRequest(reader, header.apiVersion);
      const partitionData = request.topicData[0]!.partitionData;
      this.requests.push(partitionData.length);
      const partitionResponses = partitionData.map(({ index, records }) => {
        const { errorCode, baseOffset } = this.#append(index, new RecordBatch(records!));
        return { index, errorCode, baseOffset, logAppendTimeMs: -1, logStartOffset: 0, recordErrors: [], errorMessage: null };
      });
      produceCodec.encodeResponse(writer, header.apiVersion, { responses: [{ name: 't', partitionResponses }], throttleTimeMs: 0 });
    }
    const isProduce = header.apiKey === produceCodec.key;
    const body = Buffer.concat(writer.chunks());
    const answer = () => queueMicrotask(() => deliver(Buffer.concat([Buffer.concat(new KafkaWriter().int32(body.length).chunks()), body])));
    if (this.autoAnswer || !isProduce) answer();
    else this.#held.push(answer);
  }

  #append(partition: number, batch: RecordBatch): { errorCode: number; baseOffset: number } {
    const received = { producerId: batch.producerId, producerEpoch: batch.producerEpoch, baseSequence: batch.baseSequence, count: batch.recordCount, partition, batch };
    this.received.push(received);
    const scripted = this.script.shift() ?? ErrorCode.NONE;
    if (scripted !== ErrorCode.NONE) return { errorCode: scripted, baseOffset: -1 };
    const session = `${received.producerId}/${received.producerEpoch}/${partition}`;
    const expected = this.#expected.get(session) ?? 0;
    if (received.producerId >= 0 && received.baseSequence !== expected) return { errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, baseOffset: -1 };
    this.#expected.set(session, expected + received.count);
    const baseOffset = this.log.filter((b) => b.partition === partition).reduce((sum, b) => sum + b.count, 0);
    this.log.push(received);
    return { errorCode: ErrorCode.NONE, baseOffset };
  }
}

function setup(maxAttempts = 5, idempotent = true, shape: Partial<ProducerOptions> = {}) {
  const clock = new ManualClock();
  const broker = new ScriptedBroker();
  const history: { ops: ClientOp[] } = { ops: [] };
  const producer = new SimProducer({
    name: 'p',
    network: broker,
    clock,
    random: new SeededRandom(3),
    record: (op) => history.ops.push(op),
    bootstrap: [{ host: 'b', port: 1 }],
    requestTimeoutMs: 1_000,
    retryBackoffMs: 10,
    idempotent,
    acks: idempotent ? -1 : 1,
    maxAttempts,
    ...shape,
  });
  producer.start();
  const produces = () => history.ops.filter((op): op is ProduceOp => op.kind === 'produce');
  return { clock, broker, producer, produces };
}

async function produceAll(clock: ManualClock, producer: SimProducer, batches: number): Promise<unknown[]> {
  const results: ProduceResult[] = [];
  const calls = Array.from({ length: batches }, (_, i) => producer.produce('t', 0, 2).then((r) => void (results[i] = r)));
  await advanceUntil(clock, () => producer.pending === 0, 'every batch finished');
  await Promise.all(calls);
  return results.map(({ values: _values, ...end }) => end);
}

test('a retriable error refreshes metadata and resends the batch with its sequence', async () => {
  const { clock, broker, producer, produces } = setup();
  broker.script.push(ErrorCode.NOT_LEADER_OR_FOLLOWER);
  expect(await produceAll(clock, producer, 1)).toEqual([{ ok: true, baseOffset: 0 }]);
  expect(produces().map((op) => [op.outcome.ok ? 'ok' : (op.outcome as { error: string }).error, op.idempotence?.baseSequence, op.values])).toEqual([
    ['NOT_LEADER_OR_FOLLOWER', 0, ['p/0', 'p/1']],
    ['ok', 0, ['p/0', 'p/1']],
  ]);
  expect(broker.metadataRequests).toBe(2);
});

test('at most 5 batches are in flight; the echoes of a failure behind it are retried in order, not reset', async () => {
  const { clock, broker, producer, produces } = setup();
  broker.autoAnswer = false;
  broker.script.push(ErrorCode.NOT_ENOUGH_REPLICAS);
  const finished = produceAll(clock, producer, 7);
  await advanceUntil(clock, () => broker.held === 5, 'five requests in flight');
  await settle();
  expect(broker.received.map((b) => b.baseSequence)).toEqual([0, 2, 4, 6, 8]);
  broker.autoAnswer = true;
  broker.release();
  const results = await finished;
  expect(results.map((r) => (r as ProduceResult).ok)).toEqual([true, true, true, true, true, true, true]);
  expect(broker.log.map((b) => b.baseSequence)).toEqual([0, 2, 4, 6, 8, 10, 12]);
  expect(broker.initRequests).toBe(1);
  const failed = produces()
    .filter((op) => !op.outcome.ok)
    .map((op) => [(op.outcome as { error: string }).error, op.idempotence?.baseSequence]);
  expect(failed).toEqual([
    ['NOT_ENOUGH_REPLICAS', 0],
    ['OUT_OF_ORDER_SEQUENCE_NUMBER', 2],
    ['OUT_OF_ORDER_SEQUENCE_NUMBER', 4],
    ['OUT_OF_ORDER_SEQUENCE_NUMBER', 6],
    ['OUT_OF_ORDER_SEQUENCE_NUMBER', 8],
  ]);
});

test('OUT_OF_ORDER_SEQUENCE_NUMBER on the oldest batch bumps the epoch and retries it from sequence 0 (Java: TransactionManager.canRetry)', async () => {
  const { clock, broker, producer, produces } = setup();
  expect(await produceAll(clock, producer, 1)).toEqual([{ ok: true, baseOffset: 0 }]);
  broker.loseSequence(1000, 40);
  expect(await produceAll(clock, producer, 1)).toEqual([{ ok: true, baseOffset: 2 }]);
  expect(broker.initRequests).toBe(1);
  expect(produces().map((op) => [op.outcome.ok, op.idempotence, op.values[0]])).toEqual([
    [true, { producerId: 1000n, producerEpoch: 0, baseSequence: 0 }, 'p/0'],
    [false, { producerId: 1000n, producerEpoch: 0, baseSequence: 2 }, 'p/2'],
    [true, { producerId: 1000n, producerEpoch: 1, baseSequence: 0 }, 'p/2'],
  ]);
});

test('UNKNOWN_PRODUCER_ID bumps the epoch too, once the batches in flight came back: the unfinished ones start over from 0', async () => {
  const { clock, broker, producer, produces } = setup();
  broker.script.push(ErrorCode.NONE, ErrorCode.UNKNOWN_PRODUCER_ID);
  const results = await produceAll(clock, producer, 3);
  expect(results.map((r) => (r as ProduceResult).ok)).toEqual([true, true, true]);
  expect(broker.initRequests).toBe(1);
  expect(produces().map((op) => [op.outcome.ok ? 'ok' : (op.outcome as { error: string }).error, op.idempotence?.producerEpoch, op.idempotence?.baseSequence])).toEqual([
    ['ok', 0, 0],
    ['UNKNOWN_PRODUCER_ID', 0, 2],
    ['OUT_OF_ORDER_SEQUENCE_NUMBER', 0, 4],
    ['ok', 1, 0],
    ['ok', 1, 2],
  ]);
});

test('retries are bounded: each attempt is its own op with the same sequence; the batch fails, and the gap it may leave is bumped over', async () => {
  const { clock, broker, producer, produces } = setup(3);
  broker.script.push(ErrorCode.REQUEST_TIMED_OUT, ErrorCode.REQUEST_TIMED_OUT, ErrorCode.REQUEST_TIMED_OUT);
  expect(await produceAll(clock, producer, 1)).toEqual([{ ok: false, error: 'REQUEST_TIMED_OUT' }]);
  expect(produces().map((op) => [op.outcome.ok, op.idempotence?.baseSequence, op.values])).toEqual([
    [false, 0, ['p/0', 'p/1']],
    [false, 0, ['p/0', 'p/1']],
    [false, 0, ['p/0', 'p/1']],
  ]);
  // The next batch follows the failed one's sequence; the broker never took that one: out of order, then the next epoch from 0.
  expect(await produceAll(clock, producer, 1)).toEqual([{ ok: true, baseOffset: 0 }]);
  expect(
    produces()
      .slice(3)
      .map((op) => [op.outcome.ok, op.idempotence]),
  ).toEqual([
    [false, { producerId: 1000n, producerEpoch: 0, baseSequence: 2 }],
    [true, { producerId: 1000n, producerEpoch: 1, baseSequence: 0 }],
  ]);
});

test('a batch refused outright fails, and the batches behind it start over under the next epoch', async () => {
  const { clock, broker, producer, produces } = setup();
  broker.script.push(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
  const results = await produceAll(clock, producer, 2);
  expect(results).toEqual([
    { ok: false, error: 'TOPIC_AUTHORIZATION_FAILED' },
    { ok: true, baseOffset: 0 },
  ]);
  expect(produces().map((op) => [op.outcome.ok ? 'ok' : (op.outcome as { error: string }).error, op.idempotence?.producerEpoch, op.idempotence?.baseSequence])).toEqual([
    ['TOPIC_AUTHORIZATION_FAILED', 0, 0],
    ['OUT_OF_ORDER_SEQUENCE_NUMBER', 0, 2],
    ['ok', 1, 0],
  ]);
});

test('DUPLICATE_SEQUENCE_NUMBER is a success without an offset (Sender.completeBatch)', async () => {
  const { clock, broker, producer } = setup();
  broker.script.push(ErrorCode.DUPLICATE_SEQUENCE_NUMBER);
  expect(await produceAll(clock, producer, 1)).toEqual([{ ok: true, baseOffset: null }]);
});

test('a plain producer resends a failed batch as it was, and gives it up after its attempts', async () => {
  const { clock, broker, producer, produces } = setup(2, false);
  broker.script.push(ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.NOT_ENOUGH_REPLICAS);
  expect(await produceAll(clock, producer, 2)).toEqual([
    { ok: false, error: 'NOT_ENOUGH_REPLICAS' },
    { ok: true, baseOffset: 0 },
  ]);
  expect(produces().map((op) => [op.outcome.ok, op.idempotence, op.values[0], op.acks])).toEqual([
    [false, null, 'p/0', 1],
    [false, null, 'p/2', 1],
    [false, null, 'p/0', 1],
    [true, null, 'p/2', 1],
  ]);
  expect(broker.initRequests).toBe(0);
  expect(broker.received.every((b) => b.producerId === -1 && b.baseSequence === -1)).toBe(true);
});

test('the same seed and the same script give the same history', async () => {
  const run = async () => {
    const { clock, broker, producer, produces } = setup();
    broker.script.push(ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NONE, ErrorCode.REQUEST_TIMED_OUT);
    await produceAll(clock, producer, 6);
    return JSON.stringify(produces(), (_key, value) => (typeof value === 'bigint' ? value.toString() : value));
  };
  const first = await run();
  expect(await run()).toBe(first);
  expect(first).toContain('REQUEST_TIMED_OUT');
});

test('batches of two partitions ready at once share a request, one per partition; each is answered and retried on its own', async () => {
  const { clock, broker, producer, produces } = setup(5, true, { lingerMs: 20 });
  broker.script.push(ErrorCode.NONE, ErrorCode.NOT_ENOUGH_REPLICAS); // the second batch of the first request fails
  const both = Promise.all([producer.produce('t', 0, 1), producer.produce('t', 1, 2), producer.produce('t', 0, 1)]);
  await advanceUntil(clock, () => producer.pending === 0, 'every batch finished');
  expect((await both).map((result) => result.ok)).toEqual([true, true, true]);
  // [t/0 seq 0, t/1 seq 0], then t/0 seq 1 (its partition's second batch, a request of its own), then t/1 again
  expect(broker.requests).toEqual([2, 1, 1]);
  expect(broker.received.map((b) => [b.partition, b.baseSequence])).toEqual([
    [0, 0],
    [1, 0],
    [0, 1],
    [1, 0],
  ]);
  const ops = produces();
  expect(ops[0]!.startMs).toBe(ops[1]!.startMs); // one request: its batches share its start and end
  expect(ops[0]!.endMs).toBe(ops[1]!.endMs);
  expect(ops.map((op) => [op.partition, op.outcome.ok])).toEqual([
    [0, true],
    [1, false],
    [0, true],
    [1, true],
  ]);
});

test('linger.ms holds a new batch back; compression and padding are in the bytes, resent as they were', async () => {
  const paddingPool = new Uint8Array(64).map((_, i) => i);
  const { clock, broker, producer } = setup(5, true, { lingerMs: 50, compression: 'gzip', paddingPool });
  broker.script.push(ErrorCode.REQUEST_TIMED_OUT);
  void producer.produce('t', 0, 2, 16);
  await advanceUntil(clock, () => broker.received.length > 0, 'the batch went out');
  expect(clock.nowMs()).toBeGreaterThanOrEqual(50);
  await advanceUntil(clock, () => producer.pending === 0, 'the batch finished');
  const [first, retry] = broker.received;
  expect(first!.batch.compression).toBe('gzip');
  expect([...first!.batch.records()][0]!.key?.length).toBe(16);
  expect(retry!.batch.bytes).toEqual(first!.batch.bytes);
});
