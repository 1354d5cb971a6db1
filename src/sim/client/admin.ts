/**
 * A simulated admin client: creates and deletes topics (an AdminOp each, one attempt: the
 * workload decides whether to try again) and describes them through Metadata.
 */
import type { MetadataResponse } from '../../broker/apis/metadata.ts';
import type { Decoded } from '../../broker/protocol/message-codec.ts';
import { ErrorCode } from '../../broker/protocol/error-codes.ts';
import type { AdminOp, Outcome } from '../history.ts';
import { BrokerPool, type NodeReply, UNKNOWN_NODE } from './brokers.ts';
import { type ClientContext, type ClientOptions, clientContext, type SimClient } from './context.ts';
import { answeredOutcome, unansweredOutcome } from './outcome.ts';
import { createTopicsApi, deleteTopicsApi } from './wire-admin.ts';

/** How long the broker may take over a create or delete before it answers REQUEST_TIMED_OUT. */
const ADMIN_TIMEOUT_FRACTION = 0.5;
/** What a delete records for a topic whose shape it does not know. */
const UNKNOWN_COUNT = -1;

export class SimAdmin implements SimClient {
  readonly #context: ClientContext;
  readonly #pool: BrokerPool;

  constructor(options: ClientOptions) {
    this.#context = clientContext(options);
    this.#pool = new BrokerPool(this.#context);
  }

  get name(): string {
    return this.#context.name;
  }

  start(): void {}

  stop(): Promise<void> {
    this.#pool.close();
    return Promise.resolve();
  }

  async createTopic(name: string, partitions: number, replicationFactor: number): Promise<Outcome> {
    const startMs = this.#context.now();
    const reply = await this.#pool.send(UNKNOWN_NODE, createTopicsApi, { topics: [{ name, numPartitions: partitions, replicationFactor, assignments: [], configs: [] }], timeoutMs: this.#brokerTimeoutMs(), validateOnly: false });
    const outcome = outcomeOf(reply, (response) => response.topics.find((t) => t.name === name)?.errorCode);
    this.#record('create-topic', name, partitions, replicationFactor, reply.node, startMs, outcome);
    return outcome;
  }

  async deleteTopic(name: string): Promise<Outcome> {
    const startMs = this.#context.now();
    const reply = await this.#pool.send(UNKNOWN_NODE, deleteTopicsApi, { topicNames: [name], timeoutMs: this.#brokerTimeoutMs() });
    const outcome = outcomeOf(reply, (response) => response.responses.find((t) => t.name === name)?.errorCode);
    this.#record('delete-topic', name, this.#pool.partitionCount(name) ?? UNKNOWN_COUNT, UNKNOWN_COUNT, reply.node, startMs, outcome);
    return outcome;
  }

  /** Metadata of `topics` (null: every topic), or null when no broker answered. */
  describe(topics: readonly string[] | null = null): Promise<Decoded<MetadataResponse> | null> {
    return this.#pool.refreshMetadata(topics);
  }

  #brokerTimeoutMs(): number {
    return Math.round(this.#context.requestTimeoutMs * ADMIN_TIMEOUT_FRACTION);
  }

  #record(kind: AdminOp['kind'], topic: string, partitions: number, replicationFactor: number, node: number, startMs: number, outcome: Outcome): void {
    const op: AdminOp = { kind, client: this.#context.name, node, startMs, endMs: this.#context.now(), outcome, topic, partitions, replicationFactor };
    this.#context.record(op);
  }
}

function outcomeOf<Response>(reply: NodeReply<Response>, codeOf: (response: Response) => number | undefined): Outcome {
  return reply.answered ? answeredOutcome(codeOf(reply.response) ?? ErrorCode.UNKNOWN_SERVER_ERROR) : unansweredOutcome(reply.error);
}
