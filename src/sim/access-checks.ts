/**
 * What a broker must ask its authorizer to serve each request of the history, in the order it
 * asks, with the error that answers a refusal: Kafka's KafkaApis and ControllerApis (and
 * docs/security.md [A7]). acl-enforced holds every answer against these.
 */
import type { AccessCheck } from './acl-model.ts';
import type { AccessProbeOp, ClientOp, RequestOp, SimResourceType } from './history.ts';

/** One check a request needs, and the error a broker answers when it fails. */
export interface NeededCheck {
  readonly check: AccessCheck;
  readonly refusal: string;
}

/** The one name of the cluster resource (Kafka's Resource.CLUSTER_NAME). */
export const SIM_CLUSTER_NAME = 'kafka-cluster';
const TOPIC_REFUSAL = 'TOPIC_AUTHORIZATION_FAILED';
const GROUP_REFUSAL = 'GROUP_AUTHORIZATION_FAILED';
const CLUSTER_REFUSAL = 'CLUSTER_AUTHORIZATION_FAILED';
const TRANSACTIONAL_ID_REFUSAL = 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED';
const REFUSAL_OF: Readonly<Record<SimResourceType, string>> = { topic: TOPIC_REFUSAL, group: GROUP_REFUSAL, cluster: CLUSTER_REFUSAL, 'transactional-id': TRANSACTIONAL_ID_REFUSAL };

function on(operation: string, resourceType: SimResourceType, resourceName: string): AccessCheck {
  return { kind: 'resource', operation, resourceType, resourceName };
}

function needs(operation: string, resourceType: SimResourceType, resourceName: string): NeededCheck {
  return { check: on(operation, resourceType, resourceName), refusal: REFUSAL_OF[resourceType] };
}

/** CreateTopics: CREATE on the cluster, else on the topic (ControllerApis.createTopics). */
function createTopic(topic: string): NeededCheck {
  return { check: { kind: 'either', checks: [on('CREATE', 'cluster', SIM_CLUSTER_NAME), on('CREATE', 'topic', topic)] }, refusal: TOPIC_REFUSAL };
}

/** An idempotent producer's InitProducerId: IDEMPOTENT_WRITE on the cluster, or WRITE on any topic (KIP-679). */
const INIT_PRODUCER_ID: NeededCheck = {
  check: { kind: 'either', checks: [on('IDEMPOTENT_WRITE', 'cluster', SIM_CLUSTER_NAME), { kind: 'any-of-type', operation: 'WRITE', resourceType: 'topic' }] },
  refusal: CLUSTER_REFUSAL,
};

/** The checks of a request, in the order a broker makes them; null for requests not judged here (Metadata, SASL, intruders). */
export function checksOf(op: ClientOp): readonly NeededCheck[] | null {
  switch (op.kind) {
    case 'produce':
      return [needs('WRITE', 'topic', op.topic)];
    case 'fetch':
      return op.throttledEmpty === undefined ? [needs('READ', 'topic', op.topic)] : null; // a throttled answer tells nothing of the check
    case 'commit':
      return [needs('READ', 'group', op.group), needs('READ', 'topic', op.topic)];
    case 'offset-fetch':
      return [needs('DESCRIBE', 'group', op.group), needs('DESCRIBE', 'topic', op.topic)];
    case 'list-offsets':
      return [needs('DESCRIBE', 'topic', op.topic)];
    case 'request':
      return requestChecks(op);
    case 'access-probe':
      return probeChecks(op);
    case 'create-topic':
      return [createTopic(op.topic)];
    case 'delete-topic':
      return [{ check: { kind: 'either', checks: [on('DELETE', 'cluster', SIM_CLUSTER_NAME), on('DELETE', 'topic', op.topic)] }, refusal: TOPIC_REFUSAL }];
    case 'delete-records':
      return [needs('DELETE', 'topic', op.topic)];
    case 'create-partitions':
      return [needs('ALTER', 'topic', op.topic)];
    case 'alter-configs':
      return [needs('ALTER_CONFIGS', 'topic', op.topic)];
    case 'create-acl':
    case 'delete-acl':
      return [needs('ALTER', 'cluster', SIM_CLUSTER_NAME)];
    default:
      return null;
  }
}

/** The group APIs (READ on the group; FindCoordinator: DESCRIBE) and an idempotent producer's InitProducerId. */
function requestChecks(op: RequestOp): readonly NeededCheck[] | null {
  if (op.api === 'InitProducerId') return [INIT_PRODUCER_ID];
  if (op.group === null) return null;
  return [needs(op.api === 'FindCoordinator' ? 'DESCRIBE' : 'READ', 'group', op.group)];
}

function probeChecks(op: AccessProbeOp): readonly NeededCheck[] {
  const { resourceType, resourceName } = op;
  switch (op.api) {
    case 'FindCoordinator':
    case 'DescribeGroups':
    case 'ListOffsets':
    case 'Metadata':
      return [needs('DESCRIBE', resourceType, resourceName)];
    case 'DescribeConfigs':
    case 'DescribeClientQuotas':
      return [needs('DESCRIBE_CONFIGS', resourceType, resourceName)];
    case 'IncrementalAlterConfigs':
    case 'AlterClientQuotas':
      return [needs('ALTER_CONFIGS', resourceType, resourceName)];
    case 'CreateTopics':
      return [createTopic(resourceName)];
    case 'DescribeAcls':
      return [needs('DESCRIBE', 'cluster', SIM_CLUSTER_NAME)];
    case 'InitProducerId':
      return [INIT_PRODUCER_ID];
  }
}
