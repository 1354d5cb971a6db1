/**
 * A simulated admin client: creates and deletes topics (an AdminOp each), deletes records, adds
 * partitions and alters topic configs (issue 12: an op each), creates and deletes ACLs (issue 13:
 * an op each), one attempt per call (the workload decides whether to try again), and describes
 * topics through Metadata.
 */
import type { MetadataResponse } from '../../broker/apis/metadata.ts';
import type { DeleteAclsResponse } from '../../protocol/messages/delete-acls.ts';
import type { Decoded } from '../../protocol/message-codec.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { ConfigResourceType } from '../../broker/apis/describe-configs.ts';
import type { AclChangeOp, AdminOp, AlterConfigsOp, CreatePartitionsOp, DeleteRecordsOp, Outcome, QuotaChangeOp, ScramChangeOp } from '../history.ts';
import type { ScramMechanism } from '../../security/scram/mechanism.ts';
import { aclOnWire, type SimAcl } from '../security-setup.ts';
import { BrokerPool, type NodeReply, UNKNOWN_NODE } from './brokers.ts';
import { type ClientContext, type ClientOptions, clientContext, type SimClient } from './context.ts';
import { answeredOutcome, unansweredOutcome } from './outcome.ts';
import { type ClientApi, errorName } from './api.ts';
import { createPartitionsApi, createTopicsApi, deleteRecordsApi, deleteTopicsApi, incrementalAlterConfigsApi } from './wire-admin.ts';
import { alterClientQuotasApi, alterUserScramCredentialsApi, createAclsApi, deleteAclsApi } from './wire-security.ts';

/** How long the broker may take over a create or delete before it answers REQUEST_TIMED_OUT. */
const ADMIN_TIMEOUT_FRACTION = 0.5;
/** What a delete records for a topic whose shape it does not know. */
const UNKNOWN_COUNT = -1;
/** IncrementalAlterConfigs' SET and DELETE (back to the default) operations. */
const CONFIG_OPERATION_SET = 0;
const CONFIG_OPERATION_DELETE = 1;

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

  /** `configs`: the topic's own configs, set at its creation (each incarnation has them). */
  async createTopic(name: string, partitions: number, replicationFactor: number, configs: readonly { readonly name: string; readonly value: string }[] = []): Promise<Outcome> {
    const startMs = this.#context.now();
    const reply = await this.#toController(createTopicsApi, {
      topics: [{ name, numPartitions: partitions, replicationFactor, assignments: [], configs: configs.map(({ name: config, value }) => ({ name: config, value })) }],
      timeoutMs: this.#brokerTimeoutMs(),
      validateOnly: false,
    });
    const outcome = this.#controllerOutcome(reply, (response) => response.topics.find((t) => t.name === name)?.errorCode);
    this.#record('create-topic', name, partitions, replicationFactor, reply.node, startMs, outcome);
    return outcome;
  }

  async deleteTopic(name: string): Promise<Outcome> {
    const startMs = this.#context.now();
    const reply = await this.#toController(deleteTopicsApi, { topicNames: [name], timeoutMs: this.#brokerTimeoutMs() });
    const outcome = this.#controllerOutcome(reply, (response) => response.responses.find((t) => t.name === name)?.errorCode);
    this.#record('delete-topic', name, this.#pool.partitionCount(name) ?? UNKNOWN_COUNT, UNKNOWN_COUNT, reply.node, startMs, outcome);
    return outcome;
  }

  /**
   * DeleteRecords of one partition up to `offset` (-1: the high watermark), sent to the leader
   * this client knows (any broker when it knows none: a non-leader answers NOT_LEADER_OR_FOLLOWER).
   */
  async deleteRecords(topic: string, partition: number, offset: number): Promise<Outcome> {
    const startMs = this.#context.now();
    const leader = this.#pool.leaderOf(topic, partition) ?? (await this.#refreshLeader(topic, partition));
    const reply = await this.#pool.send(leader?.nodeId ?? UNKNOWN_NODE, deleteRecordsApi, {
      topics: [{ name: topic, partitions: [{ partitionIndex: partition, offset }] }],
      timeoutMs: this.#brokerTimeoutMs(),
    });
    const answer = reply.answered ? reply.response.topics.find((t) => t.name === topic)?.partitions.find((p) => p.partitionIndex === partition) : undefined;
    const outcome = outcomeOf(reply, () => answer?.errorCode);
    if (!outcome.ok) this.#pool.forgetLeader(topic, partition);
    const op: DeleteRecordsOp = {
      kind: 'delete-records',
      client: this.#context.name,
      node: reply.node,
      startMs,
      endMs: this.#context.now(),
      outcome,
      topic,
      partition,
      offset,
      lowWatermark: outcome.ok ? answer!.lowWatermark : null,
    };
    this.#context.record(op);
    return outcome;
  }

  /** CreatePartitions: `topic` grows to `count` partitions in all. */
  async createPartitions(topic: string, count: number): Promise<Outcome> {
    const startMs = this.#context.now();
    const reply = await this.#toController(createPartitionsApi, { topics: [{ name: topic, count, assignments: null }], timeoutMs: this.#brokerTimeoutMs(), validateOnly: false });
    const outcome = this.#controllerOutcome(reply, (response) => response.results.find((t) => t.name === topic)?.errorCode);
    const op: CreatePartitionsOp = { kind: 'create-partitions', client: this.#context.name, node: reply.node, startMs, endMs: this.#context.now(), outcome, topic, count };
    this.#context.record(op);
    return outcome;
  }

  /**
   * A controller's request (CreateTopics, DeleteTopics, CreatePartitions), sent as Kafka's clients
   * send it: to the controller the last Metadata named, reading Metadata first when none is known
   * (any broker when no Metadata is answered: it answers NOT_CONTROLLER unless it is the controller).
   */
  async #toController<Request, Response>(api: ClientApi<Request, Response>, request: Request): Promise<NodeReply<Response>> {
    if (this.#pool.controller() === null) await this.#pool.refreshMetadata([]);
    return this.#pool.send(this.#pool.controller() ?? UNKNOWN_NODE, api, request);
  }

  /** The outcome of a controller's request; a NOT_CONTROLLER answer, or none, makes the next one read Metadata first. */
  #controllerOutcome<Response>(reply: NodeReply<Response>, codeOf: (response: Response) => number | undefined): Outcome {
    const outcome = outcomeOf(reply, codeOf);
    if (!reply.answered || (!outcome.ok && outcome.error === errorName(ErrorCode.NOT_CONTROLLER))) this.#pool.forgetController();
    return outcome;
  }

  /** IncrementalAlterConfigs of one topic: each config SET to its value. */
  async alterConfigs(topic: string, configs: AlterConfigsOp['configs']): Promise<Outcome> {
    const startMs = this.#context.now();
    const resource = {
      resourceType: ConfigResourceType.TOPIC,
      resourceName: topic,
      configs: configs.map(({ name, value }) => ({ name, configOperation: value === null ? CONFIG_OPERATION_DELETE : CONFIG_OPERATION_SET, value })),
    };
    const reply = await this.#pool.send(UNKNOWN_NODE, incrementalAlterConfigsApi, { resources: [resource], validateOnly: false });
    const outcome = outcomeOf(reply, (response) => response.responses.find((r) => r.resourceName === topic)?.errorCode);
    const op: AlterConfigsOp = { kind: 'alter-configs', client: this.#context.name, node: reply.node, startMs, endMs: this.#context.now(), outcome, topic, configs };
    this.#context.record(op);
    return outcome;
  }

  /** CreateAcls of one ACL (creating one that exists already succeeds, as in Kafka). */
  async createAcl(acl: SimAcl): Promise<Outcome> {
    const startMs = this.#context.now();
    const reply = await this.#pool.send(UNKNOWN_NODE, createAclsApi, { creations: [aclOnWire(acl)] });
    const outcome = outcomeOf(reply, (response) => response.results[0]?.errorCode);
    this.#recordAcl('create-acl', acl, reply.node, startMs, outcome);
    return outcome;
  }

  /**
   * DeleteAcls with a filter that matches exactly this ACL (none matching is no error). Succeeds
   * only if the filter and every deletion it lists did, as Kafka's Admin `deleteAcls(...).all()`:
   * a matched ACL whose deletion failed (its record's write did) still stands (seed 50082).
   */
  async deleteAcl(acl: SimAcl): Promise<Outcome> {
    const startMs = this.#context.now();
    const wire = aclOnWire(acl);
    const filter = {
      resourceTypeFilter: wire.resourceType,
      resourceNameFilter: wire.resourceName,
      patternTypeFilter: wire.resourcePatternType,
      principalFilter: wire.principal,
      hostFilter: wire.host,
      operation: wire.operation,
      permissionType: wire.permissionType,
    };
    const reply = await this.#pool.send(UNKNOWN_NODE, deleteAclsApi, { filters: [filter] });
    const outcome = outcomeOf(reply, deleteAclsErrorCode);
    this.#recordAcl('delete-acl', acl, reply.node, startMs, outcome);
    return outcome;
  }

  /**
   * AlterUserScramCredentials of one user's credential of one mechanism (issue 25): `set` it (the
   * salted password, never the password, as Kafka's Admin sends it) as credential number
   * `credential`, or delete it (`set` null). A ScramChangeOp each.
   */
  async alterScramCredential(user: string, mechanism: ScramMechanism, credential: number | null, set: { salt: Uint8Array; saltedPassword: Uint8Array; iterations: number } | null): Promise<Outcome> {
    const startMs = this.#context.now();
    const request = set === null ? { deletions: [{ name: user, mechanism: mechanism.type }], upsertions: [] } : { deletions: [], upsertions: [{ name: user, mechanism: mechanism.type, ...set }] };
    const reply = await this.#pool.send(UNKNOWN_NODE, alterUserScramCredentialsApi, request);
    const outcome = outcomeOf(reply, (response) => response.results.find((result) => result.user === user)?.errorCode);
    const op: ScramChangeOp = { kind: 'alter-scram', client: this.#context.name, node: reply.node, startMs, endMs: this.#context.now(), outcome, user, mechanism: mechanism.name, credential };
    this.#context.record(op);
    return outcome;
  }

  /** AlterClientQuotas of one user's quota of one key (issue 25): set to `value`, or removed (null). A QuotaChangeOp each. */
  async alterQuota(user: string, key: string, value: number | null): Promise<Outcome> {
    const startMs = this.#context.now();
    const entry = { entity: [{ entityType: 'user', entityName: user }], ops: [{ key, value: value ?? 0, remove: value === null }] };
    const reply = await this.#pool.send(UNKNOWN_NODE, alterClientQuotasApi, { entries: [entry], validateOnly: false });
    const outcome = outcomeOf(reply, (response) => response.entries[0]?.errorCode);
    const op: QuotaChangeOp = { kind: 'alter-quota', client: this.#context.name, node: reply.node, startMs, endMs: this.#context.now(), outcome, user, key, value };
    this.#context.record(op);
    return outcome;
  }

  #recordAcl(kind: AclChangeOp['kind'], acl: SimAcl, node: number, startMs: number, outcome: Outcome): void {
    const op: AclChangeOp = { kind, client: this.#context.name, node, startMs, endMs: this.#context.now(), outcome, ...acl };
    this.#context.record(op);
  }

  async #refreshLeader(topic: string, partition: number): Promise<ReturnType<BrokerPool['leaderOf']>> {
    await this.#pool.refreshMetadata([topic]);
    return this.#pool.leaderOf(topic, partition);
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

/** The first filter's error, else the first error among the deletions it lists (NONE: all done). */
function deleteAclsErrorCode(response: Decoded<DeleteAclsResponse>): number | undefined {
  const result = response.filterResults[0];
  if (result === undefined || result.errorCode !== ErrorCode.NONE) return result?.errorCode;
  return result.matchingAcls.find((acl) => acl.errorCode !== ErrorCode.NONE)?.errorCode ?? ErrorCode.NONE;
}

function outcomeOf<Response>(reply: NodeReply<Response>, codeOf: (response: Response) => number | undefined): Outcome {
  return reply.answered ? answeredOutcome(codeOf(reply.response) ?? ErrorCode.UNKNOWN_SERVER_ERROR) : unansweredOutcome(reply.error);
}
