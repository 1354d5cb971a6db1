/**
 * A simulated producer, idempotent or plain, acks 0, 1 or all. Each `produce` call is one batch of
 * fresh values (`<client>/<n>`) for one partition, its first record's key padded with `padding`
 * bytes when asked, compressed with the producer's codec; up to MAX_IN_FLIGHT batches of a
 * partition are in flight at once. As Kafka's sender drains a node, one request carries the
 * batches ready for the partitions one broker leads, at most one per partition (Kafka's
 * ProduceRequest.validateRecords refuses a second batch of a partition in v3+); with linger.ms a
 * new batch waits for others to join it. Every attempt of a batch is a ProduceOp in the history
 * (a retry repeats the values and, when idempotent, the sequence); the batches of one request
 * share its start and end.
 *
 * Kafka's idempotent rules, as the Java client (Sender, TransactionManager) keeps them: a retriable
 * failure (an error, a timeout, a lost connection) stops the partition until all of its requests in
 * flight have come back, then resends every unfinished batch in order, byte for byte, with the
 * same sequences. OUT_OF_ORDER_SEQUENCE_NUMBER on a batch behind an unfinished one is the echo of
 * that one's failure and retried too. On the partition's oldest unfinished batch, and
 * UNKNOWN_PRODUCER_ID anywhere, it says the broker lacks what precedes the batch (a batch given up
 * before it, or a broker's lost state): the partition's epoch is bumped and its unfinished batches
 * start over at sequence 0 (see #bumpEpoch), the failed one retried. DUPLICATE_SEQUENCE_NUMBER is a
 * success without an offset. A batch out of attempts ends failed (written or not: unknown) and the
 * rest go on; one refused outright (a non-retriable error, INVALID_PRODUCER_EPOCH too) ends failed
 * and the rest start over under a bumped epoch. So a wrong sequence answer has the consequence it
 * has for a Java producer: a batch the broker held is written again.
 */
import { ErrorCode } from '../../protocol/error-codes.ts';
import { assert } from '../../util/assert.ts';
import { buildRecordBatch } from '../../format/batch-builder.ts';
import type { BuildCompressionCodec } from '../../format/compression.ts';
import type { AnswerOrigin, Outcome, ProduceOp } from '../history.ts';
import { errorName } from './api.ts';
import { BrokerPool, type NodeReply, UNKNOWN_NODE } from './brokers.ts';
import { backoffMs, type ClientContext, type ClientOptions, clientContext, type SimClient, sleep } from './context.ts';
import { isRetriable, isStaleMetadata } from './errors.ts';
import { answeredOutcome, recordRequest, unansweredOutcome } from './outcome.ts';
import { initProducerIdApi, produceApi } from './wire-data.ts';
import type { ProduceRequest, ProduceResponse } from '../../broker/apis/produce.ts';

/** Kafka's max.in.flight.requests.per.connection limit for idempotence, per partition here. */
export const MAX_IN_FLIGHT = 5;
/** Attempts of one batch before giving up on it (Kafka bounds by delivery.timeout.ms instead). */
export const MAX_ATTEMPTS_DEFAULT = 5;
/** The broker's wait for acks=all, below the client's request timeout so that the broker answers first. */
const PRODUCE_TIMEOUT_FRACTION = 0.5;
/** Kafka's Short.MAX_VALUE: the Java client takes a new producer id past it (never reached here). */
const PRODUCER_EPOCH_MAX = 0x7fff;
/** Kafka's default; unused by a non-transactional producer but sent. */
const TRANSACTION_TIMEOUT_MS = 60_000;
/** Where each batch's padding starts in the pool: a stride that is no power of two, so that padded keys differ. */
const PADDING_STRIDE_BYTES = 4_099;

export interface ProducerOptions extends ClientOptions {
  readonly idempotent: boolean;
  /** An idempotent producer needs acks -1 (all), as Kafka requires. */
  readonly acks: 0 | 1 | -1;
  readonly maxInFlight?: number;
  readonly maxAttempts?: number;
  /** Kafka's linger.ms: how long a new batch waits for others to share its request; default 0 (sent at once). */
  readonly lingerMs?: number;
  /** The codec of every batch; default none. */
  readonly compression?: BuildCompressionCodec;
  /** Bytes the padding of batches is cut from (a `produce` asking for padding needs it at least that long). */
  readonly paddingPool?: Uint8Array;
}

/** How a `produce` call ended, with the values it produced. */
export type ProduceResult = BatchEnd & { readonly values: readonly string[] };

type BatchEnd = { readonly ok: true; readonly baseOffset: number | null } | { readonly ok: false; readonly error: string };

interface ProducerIdentity {
  readonly producerId: number;
  readonly producerEpoch: number;
}

interface Batch {
  readonly values: readonly string[];
  /** The first record's key: padding (empty: none). */
  readonly key: Uint8Array | null;
  /** Built at the first send and resent as it is. */
  bytes: Uint8Array | null;
  identity: ProducerIdentity | null;
  sequence: number | null;
  attempts: number;
  inFlight: boolean;
  readonly finish: (end: BatchEnd) => void;
}

interface PartitionQueue {
  readonly topic: string;
  readonly partition: number;
  /** Unfinished batches in the order they were produced (and sequenced). */
  readonly batches: Batch[];
  inFlight: number;
  nextSequence: number;
  /** A batch failed: send nothing until the ones in flight are back, then resend after a backoff. */
  retrying: boolean;
  /** The broker lacks what precedes a batch: bump the epoch once nothing is in flight. */
  bumpPending: boolean;
  /** Epoch bumps of this partition (Java's bumpIdempotentProducerEpoch): its batches go under the producer's epoch plus these. */
  epochBumps: number;
  backingOff: boolean;
  /** Metadata refreshes in a row that found no leader. */
  leaderMisses: number;
}

/** A batch about to go, with its partition. */
interface Sendable {
  readonly queue: PartitionQueue;
  readonly batch: Batch;
}

export class SimProducer implements SimClient {
  readonly #context: ClientContext;
  readonly #pool: BrokerPool;
  readonly #idempotent: boolean;
  readonly #acks: 0 | 1 | -1;
  readonly #maxInFlight: number;
  readonly #maxAttempts: number;
  readonly #lingerMs: number;
  readonly #compression: BuildCompressionCodec;
  readonly #paddingPool: Uint8Array;
  /** A pump is due when the linger of the oldest waiting batch ends. */
  #lingering = false;
  readonly #queues = new Map<string, PartitionQueue>();
  readonly #refreshing = new Set<string>();
  #identity: ProducerIdentity | null = null;
  #initializing = false;
  #valueCount = 0;
  #stopped = false;

  constructor(options: ProducerOptions) {
    assert(!options.idempotent || options.acks === -1, 'an idempotent producer uses acks=all');
    this.#context = clientContext(options);
    this.#pool = new BrokerPool(this.#context);
    this.#idempotent = options.idempotent;
    this.#acks = options.acks;
    this.#maxInFlight = options.maxInFlight ?? MAX_IN_FLIGHT;
    this.#maxAttempts = options.maxAttempts ?? MAX_ATTEMPTS_DEFAULT;
    this.#lingerMs = options.lingerMs ?? 0;
    this.#compression = options.compression ?? 'none';
    this.#paddingPool = options.paddingPool ?? new Uint8Array(0);
    assert(this.#maxInFlight >= 1 && this.#maxInFlight <= MAX_IN_FLIGHT, `at most ${MAX_IN_FLIGHT} batches in flight per partition`);
  }

  get name(): string {
    return this.#context.name;
  }

  /** Batches produced and not finished yet. */
  get pending(): number {
    let count = 0;
    for (const queue of this.#queues.values()) count += queue.batches.length;
    return count;
  }

  start(): void {
    if (this.#idempotent) this.#pump();
  }

  /** Closes the connections; unfinished batches end as failed. */
  stop(): Promise<void> {
    this.#stopped = true;
    this.#pool.close();
    for (const queue of this.#queues.values()) {
      for (const batch of queue.batches.splice(0)) batch.finish({ ok: false, error: 'stopped' });
    }
    return Promise.resolve();
  }

  /**
   * One batch of `count` new values for `topic`/`partition`, its first key `padding` bytes of the
   * pool (0: no key); resolves when acknowledged or given up.
   */
  produce(topic: string, partition: number, count: number, padding = 0): Promise<ProduceResult> {
    assert(Number.isInteger(count) && count >= 1, 'a batch holds at least one record');
    assert(Number.isInteger(padding) && padding >= 0 && padding <= this.#paddingPool.length, `padding of ${padding} bytes is cut from a pool of ${this.#paddingPool.length}`);
    const key = padding === 0 ? null : this.#paddingPool.subarray(...this.#paddingAt(padding));
    const values = Array.from({ length: count }, () => `${this.#context.name}/${this.#valueCount++}`);
    if (this.#stopped) return Promise.resolve({ ok: false, error: 'stopped', values });
    return new Promise((resolve) => {
      const finish = (end: BatchEnd) => resolve({ ...end, values });
      this.#queue(topic, partition).batches.push({ values, key, bytes: null, identity: null, sequence: null, attempts: 0, inFlight: false, finish });
      this.#pumpAfterLinger();
    });
  }

  /** Where a padding of `bytes` is cut from the pool: moved on by a stride with every value produced. */
  #paddingAt(bytes: number): [number, number] {
    const start = (this.#valueCount * PADDING_STRIDE_BYTES) % (this.#paddingPool.length - bytes + 1);
    return [start, start + bytes];
  }

  /** Kafka's linger.ms: a new batch waits for others to share its request, unless something sends sooner. */
  #pumpAfterLinger(): void {
    if (this.#lingerMs === 0) return this.#pump();
    if (this.#lingering) return;
    this.#lingering = true;
    void sleep(this.#context.clock, this.#lingerMs).then(() => {
      this.#lingering = false;
      this.#pump();
    });
  }

  #queue(topic: string, partition: number): PartitionQueue {
    const key = `${topic}/${partition}`;
    let queue = this.#queues.get(key);
    if (queue === undefined) {
      queue = { topic, partition, batches: [], inFlight: 0, nextSequence: 0, retrying: false, bumpPending: false, epochBumps: 0, backingOff: false, leaderMisses: 0 };
      this.#queues.set(key, queue);
    }
    return queue;
  }

  /** Sends whatever may be sent now; called after every event that could change that. */
  #pump(): void {
    if (this.#stopped) return;
    if (this.#idempotent && this.#identity === null) return void this.#initProducerId();
    const byNode = new Map<number, Sendable[]>();
    for (const queue of this.#queues.values()) this.#pumpPartition(queue, byNode);
    for (const [node, sendables] of byNode) for (const request of requestsOf(sendables)) void this.#send(node, request);
  }

  /** Adds the partition's batches that may go now to its leader's list, in order, within the in-flight limit. */
  #pumpPartition(queue: PartitionQueue, byNode: Map<number, Sendable[]>): void {
    if (queue.retrying) return this.#retryWhenDrained(queue);
    if (queue.batches.length === 0) return;
    const leader = this.#pool.leaderOf(queue.topic, queue.partition);
    if (leader === null) return void this.#findLeader(queue);
    let inFlight = queue.inFlight;
    for (const batch of queue.batches) {
      if (inFlight >= this.#maxInFlight) break;
      if (batch.inFlight) continue;
      let sendables = byNode.get(leader.nodeId);
      if (sendables === undefined) byNode.set(leader.nodeId, (sendables = []));
      sendables.push({ queue, batch });
      inFlight++;
    }
  }

  #retryWhenDrained(queue: PartitionQueue): void {
    if (queue.inFlight > 0 || queue.backingOff) return;
    if (queue.bumpPending) this.#bumpEpoch(queue);
    queue.backingOff = true;
    void sleep(this.#context.clock, backoffMs(this.#context)).then(() => {
      queue.backingOff = false;
      queue.retrying = false;
      this.#pump();
    });
  }

  async #findLeader(queue: PartitionQueue): Promise<void> {
    if (this.#refreshing.has(queue.topic)) return;
    this.#refreshing.add(queue.topic);
    await this.#pool.refreshMetadata([queue.topic]);
    this.#refreshing.delete(queue.topic);
    if (this.#pool.leaderOf(queue.topic, queue.partition) === null) {
      // No leader (no such topic, or none elected yet): the oldest batch waits a bounded number of refreshes.
      if (++queue.leaderMisses >= this.#maxAttempts) {
        queue.leaderMisses = 0;
        this.#giveUp(queue, queue.batches[0], 'LEADER_NOT_FOUND');
      }
      await sleep(this.#context.clock, backoffMs(this.#context));
    } else {
      queue.leaderMisses = 0;
    }
    this.#pump();
  }

  async #initProducerId(): Promise<void> {
    if (this.#initializing) return;
    this.#initializing = true;
    const startMs = this.#context.now();
    const reply = await this.#pool.send(UNKNOWN_NODE, initProducerIdApi, { transactionalId: null, transactionTimeoutMs: TRANSACTION_TIMEOUT_MS });
    recordRequest(this.#context, initProducerIdApi.name, null, startMs, reply, (response) => response.errorCode);
    if (reply.answered && reply.response.errorCode === ErrorCode.NONE) {
      this.#identity = { producerId: reply.response.producerId, producerEpoch: reply.response.producerEpoch };
    } else {
      await sleep(this.#context.clock, backoffMs(this.#context));
    }
    this.#initializing = false;
    this.#pump();
  }

  /**
   * Java's bumpIdempotentProducerEpoch for one partition, once nothing of it is in flight: its
   * unfinished batches start over at sequence 0 under the next epoch, rebuilt at their next send.
   * A broker takes a new epoch from sequence 0 whatever it held of the old one, so a batch it held
   * is written again: the Java client bumps only when the broker said it lacks what precedes it.
   * Per partition here: the brokers keep producer state per partition, as the client's sequences.
   */
  #bumpEpoch(queue: PartitionQueue): void {
    queue.bumpPending = false;
    queue.epochBumps++;
    queue.nextSequence = 0;
    for (const batch of queue.batches) {
      batch.bytes = null;
      batch.identity = null;
      batch.sequence = null;
    }
  }

  /** One request to `node` carrying `sendables` (one batch per partition); each batch's answer is handled as if it had come alone. */
  async #send(node: number, sendables: readonly Sendable[]): Promise<void> {
    for (const { queue, batch } of sendables) {
      this.#prepare(queue, batch);
      batch.attempts++;
    }
    const startMs = this.#context.now();
    const request: ProduceRequest = {
      transactionalId: null,
      acks: this.#acks,
      timeoutMs: Math.round(this.#context.requestTimeoutMs * PRODUCE_TIMEOUT_FRACTION),
      topicData: topicDataOf(sendables),
    };
    for (const { queue, batch } of sendables) {
      batch.inFlight = true;
      queue.inFlight++;
    }
    const reply = this.#acks === 0 ? await this.#sendWithoutAnswer(node, request) : await this.#pool.send(node, produceApi, request);
    for (const { queue, batch } of sendables) {
      batch.inFlight = false;
      queue.inFlight--;
      this.#onReply(queue, batch, replyFor(reply, queue), startMs);
    }
    this.#pump();
  }

  /** acks=0: no answer comes; written is all a producer knows (an ok without an offset, for every partition). */
  async #sendWithoutAnswer(node: number, request: ProduceRequest): Promise<NodeReply<ProduceResponse>> {
    const written = await this.#pool.sendWithoutAnswer(node, produceApi, request);
    if (!written) return { answered: false, error: 'not-sent', node };
    const answerOf = (index: number) => ({ index, errorCode: ErrorCode.NONE, baseOffset: -1, logAppendTimeMs: -1, logStartOffset: -1, recordErrors: [], errorMessage: null });
    const responses = request.topicData.map((topic) => ({ name: topic.name, partitionResponses: topic.partitionData.map((data) => answerOf(data.index)) }));
    return { answered: true, response: { responses, throttleTimeMs: 0 }, node };
  }

  /** Builds the batch at its first send, with the producer id and sequence it keeps for every retry. */
  #prepare(queue: PartitionQueue, batch: Batch): void {
    if (batch.bytes !== null) return;
    const records = batch.values.map((value, i) => (i === 0 && batch.key !== null ? { key: batch.key, value } : { value }));
    const nowMs = this.#context.clock.nowMs();
    const compression = this.#compression;
    if (this.#identity === null) {
      batch.bytes = buildRecordBatch(records, { nowMs, compression });
      return;
    }
    batch.identity = { producerId: this.#identity.producerId, producerEpoch: this.#identity.producerEpoch + queue.epochBumps };
    assert(batch.identity.producerEpoch <= PRODUCER_EPOCH_MAX, "a producer epoch fits Kafka's int16");
    batch.sequence = queue.nextSequence;
    queue.nextSequence += records.length;
    batch.bytes = buildRecordBatch(records, { nowMs, compression, producerId: batch.identity.producerId, producerEpoch: batch.identity.producerEpoch, baseSequence: batch.sequence });
  }

  #onReply(queue: PartitionQueue, batch: Batch, reply: NodeReply<ProduceResponse>, startMs: number): void {
    if (!reply.answered) {
      this.#record(queue, batch, reply.node, startMs, unansweredOutcome(reply.error), null, undefined);
      return this.#onRetriable(queue, batch, reply.error, true);
    }
    const answer = reply.response.responses[0]?.partitionResponses[0];
    const code = answer?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR;
    const ok = code === ErrorCode.NONE;
    const baseOffset = ok && this.#acks !== 0 ? answer!.baseOffset : null;
    this.#record(queue, batch, reply.node, startMs, answeredOutcome(code), baseOffset, reply.origin, reply.response.throttleTimeMs);
    if (ok) return this.#finish(queue, batch, { ok: true, baseOffset });
    // The broker already holds this batch (a retry of one that was written): done, offset unknown.
    if (code === ErrorCode.DUPLICATE_SEQUENCE_NUMBER) return this.#finish(queue, batch, { ok: true, baseOffset: null });
    if (this.#idempotent && this.#gapBefore(queue, batch, code)) {
      queue.bumpPending = true;
      return this.#onRetriable(queue, batch, errorName(code), false);
    }
    if (isRetriable(code) || code === ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER) return this.#onRetriable(queue, batch, errorName(code), isStaleMetadata(code));
    // Refused outright, so not written: the batches behind it cannot follow its sequence (TransactionManager.handleFailedBatch).
    if (this.#idempotent) queue.bumpPending = true;
    this.#giveUp(queue, batch, errorName(code));
  }

  /** Whether `code` says the broker lacks what precedes this batch in its sequence (TransactionManager.canRetry). */
  #gapBefore(queue: PartitionQueue, batch: Batch, code: number): boolean {
    if (code === ErrorCode.UNKNOWN_PRODUCER_ID) return true;
    return code === ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER && queue.batches[0] === batch;
  }

  #onRetriable(queue: PartitionQueue, batch: Batch, error: string, staleMetadata: boolean): void {
    if (staleMetadata) this.#pool.forgetLeader(queue.topic, queue.partition);
    if (batch.attempts >= this.#maxAttempts) return this.#giveUp(queue, batch, error);
    queue.retrying = true;
  }

  /**
   * Ends a batch as failed. An idempotent producer's sequence may have a gap there (it is unknown
   * whether the broker took the batch): the next batch's OUT_OF_ORDER_SEQUENCE_NUMBER says so.
   */
  #giveUp(queue: PartitionQueue, batch: Batch | undefined, error: string): void {
    if (batch === undefined) return;
    this.#finish(queue, batch, { ok: false, error });
    queue.retrying = true; // the batches behind it are retried after a backoff, in order
  }

  #finish(queue: PartitionQueue, batch: Batch, result: BatchEnd): void {
    const index = queue.batches.indexOf(batch);
    if (index >= 0) queue.batches.splice(index, 1);
    batch.finish(result);
  }

  #record(queue: PartitionQueue, batch: Batch, node: number, startMs: number, outcome: Outcome, baseOffset: number | null, origin: AnswerOrigin | undefined, throttleTimeMs?: number): void {
    const idempotence =
      batch.identity === null || batch.sequence === null ? null : { producerId: BigInt(batch.identity.producerId), producerEpoch: batch.identity.producerEpoch, baseSequence: batch.sequence };
    const op: ProduceOp = {
      kind: 'produce',
      client: this.#context.name,
      node,
      startMs,
      endMs: this.#context.now(),
      outcome,
      topic: queue.topic,
      partition: queue.partition,
      acks: this.#acks,
      idempotence,
      values: batch.values,
      baseOffset,
      ...(origin === undefined ? {} : { answeredBy: origin }),
      batchBytes: batch.bytes?.length ?? 0,
      ...(throttleTimeMs === undefined ? {} : { throttleTimeMs }),
    };
    this.#context.record(op);
  }
}

/** Splits one node's sendable batches into requests of at most one batch per partition, each partition's in order. */
function requestsOf(sendables: readonly Sendable[]): Sendable[][] {
  const requests: Sendable[][] = [];
  const taken = new Map<PartitionQueue, number>();
  for (const sendable of sendables) {
    const rank = taken.get(sendable.queue) ?? 0;
    taken.set(sendable.queue, rank + 1);
    (requests[rank] ??= []).push(sendable);
  }
  return requests;
}

/** A Produce request's topics, each with its partitions' batches (one per partition). */
function topicDataOf(sendables: readonly Sendable[]): ProduceRequest['topicData'] {
  const byTopic = new Map<string, { index: number; records: Uint8Array | null }[]>();
  for (const { queue, batch } of sendables) {
    let partitions = byTopic.get(queue.topic);
    if (partitions === undefined) byTopic.set(queue.topic, (partitions = []));
    partitions.push({ index: queue.partition, records: batch.bytes });
  }
  return [...byTopic].map(([name, partitionData]) => ({ name, partitionData }));
}

/** The answer of one partition of a request, shaped as the answer to a request of that partition alone (none: an empty answer). */
function replyFor(reply: NodeReply<ProduceResponse>, queue: PartitionQueue): NodeReply<ProduceResponse> {
  if (!reply.answered) return reply;
  const answer = reply.response.responses.find((topic) => topic.name === queue.topic)?.partitionResponses.find((partition) => partition.index === queue.partition);
  return { ...reply, response: { ...reply.response, responses: [{ name: queue.topic, partitionResponses: answer === undefined ? [] : [answer] }] } };
}
