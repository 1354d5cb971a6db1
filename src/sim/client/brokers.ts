/**
 * A client's view of the cluster: its connections (one per broker, reopened after a loss) and
 * the last Metadata it read (brokers, partition leaders). Requests go to a node id; metadata is
 * asked of any broker, bootstrap addresses first until a broker list is known.
 */
import type { MetadataResponse } from '../../broker/apis/metadata.ts';
import type { Decoded } from '../../protocol/message-codec.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import type { AuthenticateOp, MetadataOp, ThrottleOp } from '../history.ts';
import { type ClientApi, errorName } from './api.ts';
import { ClientConnection, type Reply, type Throttle } from './connection.ts';
import type { SaslResult } from './sasl.ts';
import type { BrokerAddress, ClientContext } from './context.ts';
import { metadataApi } from './wire-data.ts';

/** Node id of a broker known only by its bootstrap address. */
export const UNKNOWN_NODE = -1;
/** Where a client's rotation over brokers starts is drawn below this (a multiple of every cluster size, 1 to 5 brokers). */
const ROTATION_START_TURNS = 60;

export interface PartitionLeader {
  readonly nodeId: number;
  readonly leaderEpoch: number;
}

/** A reply, with the node it was sent to (the history records it). */
export type NodeReply<Response> = Reply<Response> & { readonly node: number };

export class BrokerPool {
  readonly #context: ClientContext;
  readonly #addresses = new Map<number, BrokerAddress>();
  readonly #connections = new Map<string, Promise<ClientConnection | null>>();
  /** `${topic}/${partition}` → its leader, from the last Metadata that named the topic. */
  readonly #leaders = new Map<string, PartitionLeader>();
  readonly #partitionCounts = new Map<string, number>();
  /** The controller the last Metadata named (the controller's requests go there); null: ask Metadata. */
  #controller: number | null = null;
  /**
   * Rotates the broker metadata (and any request for no broker in particular: InitProducerId) is
   * asked of, so that one dead broker does not stop the client. It starts at a drawn turn, as
   * Kafka's clients shuffle their bootstrap servers: clients starting together spread over the
   * brokers (two brokers reserve producer-id blocks at once, CW1) instead of all asking one.
   */
  #metadataTurn: number;
  #closed = false;

  constructor(context: ClientContext) {
    this.#context = context;
    this.#metadataTurn = context.random.nextInt(ROTATION_START_TURNS);
  }

  leaderOf(topic: string, partition: number): PartitionLeader | null {
    return this.#leaders.get(`${topic}/${partition}`) ?? null;
  }

  /** The controller the last Metadata named; null until one is read, or after forgetController. */
  controller(): number | null {
    return this.#controller;
  }

  /** Forgets the controller (it answered NOT_CONTROLLER, or did not answer): the next request reads Metadata first. */
  forgetController(): void {
    this.#controller = null;
  }

  /** The brokers' node ids this client learned (from Metadata), in order. */
  knownNodes(): number[] {
    return [...this.#addresses.keys()].sort((a, b) => a - b);
  }

  partitionCount(topic: string): number | null {
    return this.#partitionCounts.get(topic) ?? null;
  }

  /** A broker's address learned outside Metadata (FindCoordinator names the coordinator's). */
  learnAddress(nodeId: number, address: BrokerAddress): void {
    this.#addresses.set(nodeId, address);
  }

  /** Forgets a partition's leader: the next request asks for metadata first. */
  forgetLeader(topic: string, partition: number): void {
    this.#leaders.delete(`${topic}/${partition}`);
  }

  /** Sends to broker `node` (UNKNOWN_NODE: whichever broker the rotation picks). */
  async send<Request, Response>(node: number, api: ClientApi<Request, Response>, request: Request, timeoutMs?: number): Promise<NodeReply<Response>> {
    const target = node === UNKNOWN_NODE ? this.#nextAddress() : { node, address: this.#addresses.get(node) ?? null };
    const connection = target.address === null ? null : await this.#connection(target.address);
    if (connection === null) return { answered: false, error: 'not-sent', node: target.node };
    return { ...(await connection.send(api, request, timeoutMs)), node: target.node };
  }

  /** Sends a request that gets no answer (acks 0); false when broker `node` cannot be reached. */
  async sendWithoutAnswer<Request>(node: number, api: ClientApi<Request, unknown>, request: Request): Promise<boolean> {
    const address = this.#addresses.get(node);
    const connection = address === undefined ? null : await this.#connection(address);
    return connection?.sendWithoutAnswer(api, request) ?? false;
  }

  /** Asks for metadata of `topics` (null: every topic) and remembers brokers and leaders; null when no broker answered. */
  async refreshMetadata(topics: readonly string[] | null): Promise<Decoded<MetadataResponse> | null> {
    const startMs = this.#context.now();
    const reply = await this.send(UNKNOWN_NODE, metadataApi, {
      topics: topics === null ? null : topics.map((name) => ({ name })),
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
    if (!reply.answered) return null;
    this.#recordMetadata(reply.node, startMs, reply.response);
    this.#learn(reply.response);
    return reply.response;
  }

  /** Closes every connection; requests in flight end unanswered. */
  close(): void {
    this.#closed = true;
    for (const pending of this.#connections.values()) void pending.then((connection) => connection?.close());
    this.#connections.clear();
  }

  /** The answer's partition counts go into the history (partition-count-monotonic judges them), and its errors (answer-allowed). */
  #recordMetadata(node: number, startMs: number, metadata: Decoded<MetadataResponse>): void {
    const topics = metadata.topics.filter((topic) => topic.errorCode === ErrorCode.NONE && topic.name !== null).map((topic) => ({ name: topic.name!, partitions: topic.partitions.length }));
    const errors = metadata.topics.flatMap((topic) => [
      ...(topic.errorCode === ErrorCode.NONE ? [] : [{ topic: topic.name ?? '', partition: null, error: errorName(topic.errorCode) }]),
      ...topic.partitions
        .filter((partition) => partition.errorCode !== ErrorCode.NONE)
        .map((partition) => ({ topic: topic.name ?? '', partition: partition.partitionIndex, error: errorName(partition.errorCode) })),
    ]);
    const op: MetadataOp = { kind: 'metadata', client: this.#context.name, node, startMs, endMs: this.#context.now(), outcome: { ok: true }, topics, ...(errors.length === 0 ? {} : { errors }) };
    this.#context.record(op);
  }

  #learn(metadata: Decoded<MetadataResponse>): void {
    for (const broker of metadata.brokers) this.#addresses.set(broker.nodeId, { host: broker.host, port: broker.port });
    this.#controller = metadata.controllerId !== undefined && metadata.controllerId >= 0 ? metadata.controllerId : null;
    for (const topic of metadata.topics) {
      for (const partition of topic.partitions) this.#leaders.delete(`${topic.name}/${partition.partitionIndex}`);
      if (topic.errorCode !== ErrorCode.NONE) {
        this.#partitionCounts.delete(topic.name!);
        continue;
      }
      this.#partitionCounts.set(topic.name!, topic.partitions.length);
      for (const partition of topic.partitions) {
        if (partition.errorCode !== ErrorCode.NONE || partition.leaderId < 0) continue;
        this.#leaders.set(`${topic.name}/${partition.partitionIndex}`, { nodeId: partition.leaderId, leaderEpoch: partition.leaderEpoch });
      }
    }
  }

  /** Known brokers in node order, then the bootstrap addresses not among them, one after another. */
  #nextAddress(): { node: number; address: BrokerAddress | null } {
    const known = [...this.#addresses.entries()].sort(([a], [b]) => a - b);
    const knownKeys = new Set(known.map(([, address]) => addressKey(address)));
    const bootstrap = this.#context.bootstrap.filter((address) => !knownKeys.has(addressKey(address))).map((address) => [UNKNOWN_NODE, address] as const);
    const candidates = [...known, ...bootstrap];
    if (candidates.length === 0) return { node: UNKNOWN_NODE, address: null };
    const [node, address] = candidates[this.#metadataTurn++ % candidates.length]!;
    return { node, address };
  }

  /** The open connection to `address`, opened if there is none (callers at once share one attempt). */
  #connection(address: BrokerAddress): Promise<ClientConnection | null> {
    if (this.#closed) return Promise.resolve(null);
    const key = addressKey(address);
    const existing = this.#connections.get(key);
    if (existing !== undefined) return existing.then((connection) => (connection === null || connection.closed ? this.#reopen(key, address, existing) : connection));
    return this.#open(key, address);
  }

  #reopen(key: string, address: BrokerAddress, stale: Promise<ClientConnection | null>): Promise<ClientConnection | null> {
    if (this.#connections.get(key) !== stale) return this.#connection(address); // someone reopened it already
    return this.#open(key, address);
  }

  #open(key: string, address: BrokerAddress): Promise<ClientConnection | null> {
    const { network, clock, name, requestTimeoutMs, sasl, now, answerOrigin } = this.#context;
    const onAuthentication = (result: SaslResult, reauthentication: boolean, startMs: number) => this.#recordAuthentication(address, result, reauthentication, startMs);
    const onThrottle = (throttle: Throttle) => this.#recordThrottle(address, throttle);
    const opening = ClientConnection.open({ network, clock, host: address.host, port: address.port, clientId: name, requestTimeoutMs, sasl, onAuthentication, onThrottle, now, origin: answerOrigin });
    this.#connections.set(key, opening);
    return opening;
  }

  /** Every answer that carried a throttle time goes into the history (quota-throttle judges them). */
  #recordThrottle(address: BrokerAddress, throttle: Throttle): void {
    const op: ThrottleOp = {
      kind: 'throttle',
      client: this.#context.name,
      node: this.#nodeOf(address),
      startMs: throttle.answeredMs,
      endMs: throttle.answeredMs,
      outcome: { ok: true },
      api: throttle.api,
      throttleMs: throttle.throttleMs,
      nextSentAfterMs: throttle.nextSentMs === null ? null : throttle.nextSentMs - throttle.answeredMs,
    };
    this.#context.record(op);
  }

  #nodeOf(address: BrokerAddress): number {
    return [...this.#addresses].find(([, known]) => addressKey(known) === addressKey(address))?.[0] ?? UNKNOWN_NODE;
  }

  /** Every SASL exchange goes into the history (auth-accepted judges them). */
  #recordAuthentication(address: BrokerAddress, result: SaslResult, reauthentication: boolean, startMs: number): void {
    const sasl = this.#context.sasl!;
    const node = this.#nodeOf(address);
    const op: AuthenticateOp = {
      kind: 'authenticate',
      client: this.#context.name,
      node,
      startMs,
      endMs: this.#context.now(),
      outcome: result.outcome,
      mechanism: sasl.mechanism,
      handshakeVersion: sasl.bareTokens ? 0 : 1,
      reauthentication,
      sessionLifetimeMs: result.sessionLifetimeMs,
      credential: result.credential,
    };
    this.#context.record(op);
  }
}

function addressKey(address: BrokerAddress): string {
  return `${address.host}:${address.port}`;
}
