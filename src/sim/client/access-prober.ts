/**
 * The access prober (issue 25): a legitimate user whose only rights are the ACLs a secured run
 * draws for it and changes during the chaos. At drawn moments it asks the brokers one question
 * after another, each an API about one resource that changes nothing (alterations and creates are
 * validate_only), over every resource type: topics (Metadata, ListOffsets, DescribeConfigs,
 * IncrementalAlterConfigs, CreateTopics), groups (FindCoordinator, DescribeGroups), transactional
 * ids (FindCoordinator), the cluster (DescribeConfigs of a broker, DescribeAcls, the client-quota
 * APIs, InitProducerId). Each answer is an AccessProbeOp; acl-enforced holds it against the ACLs.
 *
 * An InitProducerId with a transactional id is not sent: Ferry has no transactions and refuses
 * every one with TRANSACTIONAL_ID_AUTHORIZATION_FAILED, allowed or not (coordinator.ts), so its
 * answer tells nothing; FindCoordinator asks DESCRIBE of a transactional id instead.
 */
import { ConfigResourceType } from '../../broker/apis/describe-configs.ts';
import { CoordinatorKeyType } from '../../broker/apis/find-coordinator.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { AclOperation, AclPermissionType, PatternType, ResourceType } from '../../security/acl/model.ts';
import type { AccessProbeApi, AccessProbeOp, Outcome, SimResourceType } from '../history.ts';
import type { ClientApi } from './api.ts';
import { BrokerPool, type NodeReply, UNKNOWN_NODE } from './brokers.ts';
import { type ClientContext, type ClientOptions, clientContext, type SimClient, sleep } from './context.ts';
import { answeredOutcome, unansweredOutcome } from './outcome.ts';
import { createTopicsApi, describeConfigsApi, describeGroupsApi, incrementalAlterConfigsApi } from './wire-admin.ts';
import { initProducerIdApi, listOffsetsApi, metadataApi } from './wire-data.ts';
import { findCoordinatorApi } from './wire-group.ts';
import { alterClientQuotasApi, describeAclsApi, describeClientQuotasApi } from './wire-security.ts';

/** The names the prober asks about. */
export interface AccessTargets {
  /** The run's topics as they are now. */
  readonly topics: () => readonly string[];
  readonly groups: readonly string[];
  readonly transactionalIds: readonly string[];
  /** Names no topic has, for CreateTopics (validate_only: none is created). */
  readonly newTopics: readonly string[];
}

export interface AccessProberOptions extends ClientOptions {
  readonly targets: AccessTargets;
  /** Mean simulated ms between two probes (a Poisson process). */
  readonly intervalMsMean: number;
  /** The chaos is over: no more questions (the ACLs change no more). */
  readonly over: () => boolean;
}

/** One kind of question: the API, the type of resource it names, and where its names come from. */
interface ProbeKind {
  readonly api: AccessProbeApi;
  readonly resourceType: SimResourceType;
  readonly names: (targets: AccessTargets) => readonly string[];
}

const CLUSTER = ['kafka-cluster'];
const PROBE_KINDS: readonly ProbeKind[] = [
  { api: 'Metadata', resourceType: 'topic', names: (t) => t.topics() },
  { api: 'ListOffsets', resourceType: 'topic', names: (t) => t.topics() },
  { api: 'DescribeConfigs', resourceType: 'topic', names: (t) => t.topics() },
  { api: 'IncrementalAlterConfigs', resourceType: 'topic', names: (t) => t.topics() },
  { api: 'CreateTopics', resourceType: 'topic', names: (t) => t.newTopics },
  { api: 'FindCoordinator', resourceType: 'group', names: (t) => t.groups },
  { api: 'DescribeGroups', resourceType: 'group', names: (t) => t.groups },
  { api: 'FindCoordinator', resourceType: 'transactional-id', names: (t) => t.transactionalIds },
  { api: 'DescribeConfigs', resourceType: 'cluster', names: () => CLUSTER },
  { api: 'DescribeAcls', resourceType: 'cluster', names: () => CLUSTER },
  { api: 'DescribeClientQuotas', resourceType: 'cluster', names: () => CLUSTER },
  { api: 'AlterClientQuotas', resourceType: 'cluster', names: () => CLUSTER },
  { api: 'InitProducerId', resourceType: 'cluster', names: () => CLUSTER },
];

/** ListOffsets' EARLIEST, and the one partition every topic has. */
const EARLIEST = -2;
const PARTITION = 0;
/** What the validate_only alterations set: values every broker takes (the topic's retention unbounded; a huge byte rate). */
const RETENTION_BYTES_UNBOUNDED = '-1';
const QUOTA_PROBE_RATE = 1_000_000_000;
const CONFIG_SET = 0;
/** The broker's wait for a CreateTopics (validate_only: nothing to wait for). */
const CREATE_TIMEOUT_MS = 1_000;
/** Kafka's default transaction.timeout.ms, sent by every InitProducerId (unused without a transactional id). */
const TRANSACTION_TIMEOUT_MS = 60_000;

export class SimAccessProber implements SimClient {
  readonly #context: ClientContext;
  readonly #pool: BrokerPool;
  readonly #targets: AccessTargets;
  readonly #intervalMsMean: number;
  readonly #over: () => boolean;
  #running = false;

  constructor(options: AccessProberOptions) {
    this.#context = clientContext(options);
    this.#pool = new BrokerPool(this.#context);
    this.#targets = options.targets;
    this.#intervalMsMean = options.intervalMsMean;
    this.#over = options.over;
  }

  get name(): string {
    return this.#context.name;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    void this.#run();
  }

  stop(): Promise<void> {
    this.#running = false;
    this.#pool.close();
    return Promise.resolve();
  }

  async #run(): Promise<void> {
    const { random, clock } = this.#context;
    await this.#pool.refreshMetadata(null);
    while (this.#running && !this.#over()) {
      await sleep(clock, random.nextExponential(this.#intervalMsMean));
      if (!this.#running || this.#over()) return;
      const kind = PROBE_KINDS[random.nextInt(PROBE_KINDS.length)]!;
      const names = kind.names(this.#targets);
      if (names.length === 0) continue;
      await this.#probe(kind, names[random.nextInt(names.length)]!);
    }
  }

  async #probe(kind: ProbeKind, resourceName: string): Promise<void> {
    const startMs = this.#context.now();
    const { node, outcome } = await this.#ask(kind, resourceName);
    const op: AccessProbeOp = { kind: 'access-probe', client: this.#context.name, node, startMs, endMs: this.#context.now(), outcome, api: kind.api, resourceType: kind.resourceType, resourceName };
    this.#context.record(op);
  }

  #ask(kind: ProbeKind, name: string): Promise<{ node: number; outcome: Outcome }> {
    switch (kind.api) {
      case 'Metadata':
        return this.#send(UNKNOWN_NODE, metadataApi, { topics: [{ name }], allowAutoTopicCreation: false }, (r) => r.topics.find((t) => t.name === name)?.errorCode);
      case 'ListOffsets': {
        const leader = this.#pool.leaderOf(name, PARTITION)?.nodeId ?? UNKNOWN_NODE;
        const request = { replicaId: -1, isolationLevel: 0, topics: [{ name, partitions: [{ partitionIndex: PARTITION, timestamp: EARLIEST }] }] };
        return this.#send(leader, listOffsetsApi, request, (r) => r.topics.find((t) => t.name === name)?.partitions[0]?.errorCode);
      }
      case 'DescribeConfigs':
        return this.#describeConfigs(kind.resourceType, name);
      case 'IncrementalAlterConfigs': {
        const resource = { resourceType: ConfigResourceType.TOPIC, resourceName: name, configs: [{ name: 'retention.bytes', configOperation: CONFIG_SET, value: RETENTION_BYTES_UNBOUNDED }] };
        return this.#send(UNKNOWN_NODE, incrementalAlterConfigsApi, { resources: [resource], validateOnly: true }, (r) => r.responses[0]?.errorCode);
      }
      case 'CreateTopics':
        return this.#createTopic(name);
      case 'FindCoordinator': {
        const keyType = kind.resourceType === 'group' ? CoordinatorKeyType.GROUP : CoordinatorKeyType.TRANSACTION;
        return this.#send(UNKNOWN_NODE, findCoordinatorApi, { key: name, keyType }, (r) => r.errorCode);
      }
      case 'DescribeGroups':
        return this.#send(UNKNOWN_NODE, describeGroupsApi, { groups: [name] }, (r) => r.groups[0]?.errorCode);
      case 'DescribeAcls': {
        const filter = { resourceTypeFilter: ResourceType.ANY, resourceNameFilter: null, patternTypeFilter: PatternType.ANY, principalFilter: null, hostFilter: null };
        return this.#send(UNKNOWN_NODE, describeAclsApi, { ...filter, operation: AclOperation.ANY, permissionType: AclPermissionType.ANY }, (r) => r.errorCode);
      }
      case 'DescribeClientQuotas':
        return this.#send(UNKNOWN_NODE, describeClientQuotasApi, { components: [], strict: false }, (r) => r.errorCode);
      case 'AlterClientQuotas': {
        const entry = {
          entity: [{ entityType: 'user', entityName: this.#context.sasl?.username ?? this.#context.name }],
          ops: [{ key: 'producer_byte_rate', value: QUOTA_PROBE_RATE, remove: false }],
        };
        return this.#send(UNKNOWN_NODE, alterClientQuotasApi, { entries: [entry], validateOnly: true }, (r) => r.entries[0]?.errorCode);
      }
      case 'InitProducerId':
        return this.#send(UNKNOWN_NODE, initProducerIdApi, { transactionalId: null, transactionTimeoutMs: TRANSACTION_TIMEOUT_MS }, (r) => r.errorCode);
    }
  }

  /** A topic's configs, or (the cluster) those of the broker it is sent to: DESCRIBE_CONFIGS on the cluster. */
  #describeConfigs(resourceType: SimResourceType, name: string): Promise<{ node: number; outcome: Outcome }> {
    if (resourceType === 'topic') {
      const resource = { resourceType: ConfigResourceType.TOPIC, resourceName: name, configurationKeys: null };
      return this.#send(UNKNOWN_NODE, describeConfigsApi, { resources: [resource] }, (r) => r.results[0]?.errorCode);
    }
    const nodes = this.#pool.knownNodes();
    const node = nodes.length === 0 ? UNKNOWN_NODE : nodes[this.#context.random.nextInt(nodes.length)]!;
    const resource = { resourceType: ConfigResourceType.BROKER, resourceName: String(node), configurationKeys: null };
    return this.#send(node, describeConfigsApi, { resources: [resource] }, (r) => r.results[0]?.errorCode);
  }

  /** CreateTopics (validate_only) goes to the controller, as an admin client sends it (another broker answers NOT_CONTROLLER). */
  async #createTopic(name: string): Promise<{ node: number; outcome: Outcome }> {
    if (this.#pool.controller() === null) await this.#pool.refreshMetadata([]);
    const topic = { name, numPartitions: 1, replicationFactor: -1, assignments: [], configs: [] };
    const asked = await this.#send(this.#pool.controller() ?? UNKNOWN_NODE, createTopicsApi, { topics: [topic], timeoutMs: CREATE_TIMEOUT_MS, validateOnly: true }, (r) => r.topics[0]?.errorCode);
    if (!asked.outcome.ok && (!asked.outcome.answered || asked.outcome.error === 'NOT_CONTROLLER')) this.#pool.forgetController();
    return asked;
  }

  async #send<Request, Response>(node: number, api: ClientApi<Request, Response>, request: Request, codeOf: (response: Response) => number | undefined): Promise<{ node: number; outcome: Outcome }> {
    const reply: NodeReply<Response> = await this.#pool.send(node, api, request);
    const outcome = reply.answered ? answeredOutcome(codeOf(reply.response) ?? ErrorCode.UNKNOWN_SERVER_ERROR) : unansweredOutcome(reply.error);
    return { node: reply.node, outcome };
  }
}
