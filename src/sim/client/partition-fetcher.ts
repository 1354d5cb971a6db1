/**
 * Reading one partition from its leader, one step at a time: a Fetch from the current position
 * (recorded as a FetchOp), or, with no position, a ListOffsets for the earliest offset, or, with
 * no known leader, a Metadata refresh. Errors back off: stale leaders are asked for again
 * (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, ...), OFFSET_OUT_OF_RANGE resets to the earliest
 * offset. Shared by the partition consumer and the group consumer.
 */
import { type FetchResponse, IsolationLevel } from '../../broker/apis/fetch.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import type { Decoded } from '../../protocol/message-codec.ts';
import type { AnswerOrigin, FetchOp, ListOffsetsOp, Outcome } from '../history.ts';
import type { BrokerPool, NodeReply, PartitionLeader } from './brokers.ts';
import { backoffMs, type ClientContext, sleep } from './context.ts';
import { isStaleMetadata } from './errors.ts';
import { fetchedRecords } from './fetch-records.ts';
import { answeredOutcome, unansweredOutcome } from './outcome.ts';
import { fetchApi, listOffsetsApi } from './wire-data.ts';

/** ListOffsets' timestamp for the earliest offset. */
const EARLIEST_TIMESTAMP = -2;
/** A consumer's replica id. */
const CONSUMER_REPLICA_ID = -1;
/** How long the broker may hold a Fetch with nothing to return. */
export const FETCH_MAX_WAIT_MS_DEFAULT = 200;
const FETCH_MIN_BYTES = 1;
const FETCH_MAX_BYTES = 1024 * 1024;
/** No fetch session (a full fetch every time). */
const NO_SESSION_ID = 0;
const FINAL_SESSION_EPOCH = -1;

export class PartitionFetcher {
  readonly topic: string;
  readonly partition: number;
  /** The next offset to read; null: not known yet (reset to the earliest). */
  position: number | null;
  /** The position was reset (OFFSET_OUT_OF_RANGE) since the owner last looked: a commit below an earlier one is on purpose. */
  resetSinceCommit = false;
  readonly #context: ClientContext;
  readonly #pool: BrokerPool;
  readonly #maxWaitMs: number;

  constructor(context: ClientContext, pool: BrokerPool, topic: string, partition: number, position: number | null, maxWaitMs = FETCH_MAX_WAIT_MS_DEFAULT) {
    this.#context = context;
    this.#pool = pool;
    this.topic = topic;
    this.partition = partition;
    this.position = position;
    this.#maxWaitMs = maxWaitMs;
  }

  /** One fetch, reset or refresh; resolves after its backoff when it failed. */
  async step(): Promise<void> {
    const leader = this.#pool.leaderOf(this.topic, this.partition) ?? (await this.#refreshLeader());
    if (leader === null) return this.#backOff();
    const ok = this.position === null ? await this.#resetToEarliest(leader) : await this.#fetch(leader, this.position);
    if (!ok) await this.#backOff();
  }

  async #refreshLeader(): Promise<PartitionLeader | null> {
    await this.#pool.refreshMetadata([this.topic]);
    return this.#pool.leaderOf(this.topic, this.partition);
  }

  #backOff(): Promise<void> {
    return sleep(this.#context.clock, backoffMs(this.#context));
  }

  async #resetToEarliest(leader: PartitionLeader): Promise<boolean> {
    const startMs = this.#context.now();
    const reply = await this.#pool.send(leader.nodeId, listOffsetsApi, {
      replicaId: CONSUMER_REPLICA_ID,
      isolationLevel: IsolationLevel.READ_UNCOMMITTED,
      topics: [{ name: this.topic, partitions: [{ partitionIndex: this.partition, currentLeaderEpoch: -1, timestamp: EARLIEST_TIMESTAMP, maxNumOffsets: 1 }] }],
    });
    const answer = reply.answered ? reply.response.topics[0]?.partitions[0] : undefined;
    const outcome = !reply.answered ? unansweredOutcome(reply.error) : answeredOutcome(answer?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR);
    const listed: ListOffsetsOp = {
      kind: 'list-offsets',
      client: this.#context.name,
      node: reply.node,
      startMs,
      endMs: this.#context.now(),
      outcome,
      topic: this.topic,
      partition: this.partition,
      timestamp: EARLIEST_TIMESTAMP,
      offset: outcome.ok ? answer!.offset : null,
    };
    this.#context.record(listed);
    if (answer === undefined || answer.errorCode !== ErrorCode.NONE) {
      this.#onError(answer?.errorCode ?? null);
      return false;
    }
    this.position = answer.offset;
    this.resetSinceCommit = true;
    return true;
  }

  async #fetch(leader: PartitionLeader, fetchOffset: number): Promise<boolean> {
    const startMs = this.#context.now();
    const request = {
      replicaId: CONSUMER_REPLICA_ID,
      maxWaitMs: this.#maxWaitMs,
      minBytes: FETCH_MIN_BYTES,
      maxBytes: FETCH_MAX_BYTES,
      isolationLevel: IsolationLevel.READ_UNCOMMITTED,
      sessionId: NO_SESSION_ID,
      sessionEpoch: FINAL_SESSION_EPOCH,
      topics: [{ topic: this.topic, partitions: [{ partition: this.partition, currentLeaderEpoch: leader.leaderEpoch, fetchOffset, logStartOffset: -1, partitionMaxBytes: FETCH_MAX_BYTES }] }],
      forgottenTopicsData: [],
      rackId: '',
    };
    const reply = await this.#pool.send(leader.nodeId, fetchApi, request, this.#context.requestTimeoutMs + this.#maxWaitMs);
    return this.#onFetched(reply, fetchOffset, leader.leaderEpoch, startMs);
  }

  #onFetched(reply: NodeReply<Decoded<FetchResponse>>, fetchOffset: number, leaderEpoch: number, startMs: number): boolean {
    if (!reply.answered) {
      this.#record(reply.node, startMs, fetchOffset, leaderEpoch, unansweredOutcome(reply.error), null, []);
      this.#onError(null);
      return false;
    }
    const answer = reply.response.responses[0]?.partitions[0];
    if (answer === undefined && reply.response.errorCode === ErrorCode.NONE && reply.response.throttleTimeMs > 0) {
      // A throttled fetch answers no partition at all (KIP-219; Kafka's SessionlessFetchContext.getThrottledResponse):
      // nothing to read, nothing wrong; the connection holds the next fetch for the throttle.
      this.#record(reply.node, startMs, fetchOffset, leaderEpoch, { ok: true }, null, [], reply.origin, reply.response.throttleTimeMs);
      return true;
    }
    const code = answer === undefined ? ErrorCode.UNKNOWN_SERVER_ERROR : reply.response.errorCode !== ErrorCode.NONE ? reply.response.errorCode : answer.errorCode;
    if (answer === undefined || code !== ErrorCode.NONE) {
      this.#record(reply.node, startMs, fetchOffset, leaderEpoch, answeredOutcome(code), null, [], reply.origin);
      this.#onError(code);
      return false;
    }
    let fetched: ReturnType<typeof fetchedRecords>;
    try {
      fetched = fetchedRecords(answer.records instanceof Uint8Array ? [answer.records] : answer.records, fetchOffset);
    } catch (error) {
      this.#record(reply.node, startMs, fetchOffset, leaderEpoch, { ok: false, error: `corrupt-records: ${String(error)}`, answered: true }, answer.highWatermark, [], reply.origin);
      return false;
    }
    this.#record(reply.node, startMs, fetchOffset, leaderEpoch, { ok: true }, answer.highWatermark, fetched.records, reply.origin);
    if (this.position === fetchOffset) this.position = fetched.nextOffset;
    return true;
  }

  /** null: no answer (the connection, or the broker, is gone). */
  #onError(code: number | null): void {
    if (code === null || isStaleMetadata(code)) this.#pool.forgetLeader(this.topic, this.partition);
    if (code === ErrorCode.OFFSET_OUT_OF_RANGE) this.position = null;
  }

  #record(
    node: number,
    startMs: number,
    fetchOffset: number,
    leaderEpoch: number,
    outcome: Outcome,
    highWatermark: number | null,
    records: FetchOp['records'],
    origin?: AnswerOrigin,
    throttleTimeMs?: number,
  ): void {
    const op: FetchOp = {
      kind: 'fetch',
      client: this.#context.name,
      node,
      startMs,
      endMs: this.#context.now(),
      outcome,
      topic: this.topic,
      partition: this.partition,
      fetchOffset,
      leaderEpoch,
      highWatermark,
      records,
      ...(origin === undefined ? {} : { answeredBy: origin }),
      ...(throttleTimeMs === undefined ? {} : { throttledEmpty: throttleTimeMs }),
    };
    this.#context.record(op);
  }
}
