import { isFerryError } from '../../errors.ts';
import { isStoreError } from '../../store/errors.ts';
import type { MetadataRequest, MetadataResponse, MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic } from '../apis/metadata.ts';
import type { BrokerContext } from '../context.ts';
import type { BrokerAddress } from '../topology.ts';
import type { Session } from '../../security/session.ts';
import { AclOperation, CLUSTER_NAME, ResourceType } from '../../security/acl/model.ts';
import { allowed, allowedNames, allowedOnCluster, AUTHORIZED_OPERATIONS_OMITTED, authorizedOperations, LOCAL_SESSION } from './authorize.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { endpointFor } from '../../cluster/endpoints.ts';
import { type Uuid, ZERO_UUID } from '../../util/uuid.ts';

/** From this version the answer may carry the authorized operations (KIP-430). */
const AUTHORIZED_OPERATIONS_MIN_VERSION = 8;
/** The last version whose request can ask for the cluster's authorized operations (DescribeCluster took over). */
const CLUSTER_AUTHORIZED_OPERATIONS_MAX_VERSION = 10;
/** From this version a leader without the connection's listener is LISTENER_NOT_FOUND, before LEADER_NOT_AVAILABLE (as in Kafka). */
const LISTENER_NOT_FOUND_MIN_VERSION = 6;

/** What one Metadata request needs to answer each topic. */
interface Asking {
  readonly context: BrokerContext;
  readonly session: Session;
  readonly version: number;
  readonly allowAutoCreate: boolean;
  /** The live brokers, by node id (one look-up per partition's leader). */
  readonly brokers: ReadonlyMap<number, BrokerAddress>;
}

/**
 * Brokers, topics and partition leaders as the topology knows them (one broker, or the cluster's
 * control records), each broker at its endpoint of the listener the request came in on (brokers
 * without that listener left out, as Kafka does). Unknown topics are created when both the client
 * and the broker allow it; a partition without a live leader answers LEADER_NOT_AVAILABLE until one
 * claims it. Authorized as Kafka's KafkaApis.handleTopicMetadataRequest: a topic needs DESCRIBE,
 * else it is left out of an all-topics answer and answered TOPIC_AUTHORIZATION_FAILED when named
 * (without its id; by id, without its name); creating one needs CREATE on the cluster or the topic.
 */
export async function handleMetadata(context: BrokerContext, request: MetadataRequest, version: number, session: Session = LOCAL_SESSION): Promise<MetadataResponse> {
  const { topology } = context;
  // v0's empty list asks for every topic, as a null one does from v1.
  const every = request.topics === null || (version === 0 && request.topics.length === 0);
  const brokersById = new Map(topology.brokers().map((broker) => [broker.nodeId, broker]));
  const asking: Asking = { context, session, version, allowAutoCreate: !every && request.allowAutoTopicCreation && context.autoCreateTopics, brokers: brokersById };
  const topics = every ? await describeEvery(asking) : await Promise.all(request.topics!.map((topic) => describeAsked(asking, topic)));
  if (version >= AUTHORIZED_OPERATIONS_MIN_VERSION && request.includeTopicAuthorizedOperations) {
    for (const topic of topics) if (topic.described) topic.answer.topicAuthorizedOperations = authorizedOperations(context, session, ResourceType.TOPIC, topic.answer.name!);
  }
  const brokers = reachableBrokers([...brokersById.values()], session.listenerName);
  return {
    throttleTimeMs: 0,
    brokers,
    clusterId: context.clusterId,
    // Null while no broker is live here (this one's lease lapsed): naming itself sends the client's
    // controller requests here, answered NOT_CONTROLLER, so it reads Metadata again.
    controllerId: topology.controllerId() ?? context.nodeId,
    topics: topics.map((topic) => topic.answer),
    clusterAuthorizedOperations: clusterOperations(asking, request),
  };
}

/** The live brokers that have the listener, at their endpoint of it. */
function reachableBrokers(brokers: readonly BrokerAddress[], listener: string): MetadataResponseBroker[] {
  return brokers.flatMap((broker) => {
    const endpoint = endpointFor(broker, listener);
    return endpoint === null ? [] : [{ nodeId: broker.nodeId, host: endpoint.host, port: endpoint.port, rack: broker.rack }];
  });
}

/** v8-v10: the cluster's authorized operations when asked for (0 without DESCRIBE on the cluster). */
function clusterOperations({ context, session, version }: Asking, request: MetadataRequest): number {
  if (version < AUTHORIZED_OPERATIONS_MIN_VERSION || version > CLUSTER_AUTHORIZED_OPERATIONS_MAX_VERSION || !request.includeClusterAuthorizedOperations) return AUTHORIZED_OPERATIONS_OMITTED;
  return allowedOnCluster(context, session, AclOperation.DESCRIBE) ? authorizedOperations(context, session, ResourceType.CLUSTER, CLUSTER_NAME) : 0;
}

/** A topic's answer; `described`: it was looked up (authorized), so its authorized operations are reported when asked. */
interface TopicAnswer {
  readonly answer: { -readonly [K in keyof MetadataResponseTopic]: MetadataResponseTopic[K] };
  readonly described: boolean;
}

/** Every topic the session may DESCRIBE; the others are left out, their denials not logged (the client did not name them). */
async function describeEvery(asking: Asking): Promise<TopicAnswer[]> {
  const { context, session } = asking;
  const names = [...context.topology.topics().keys()];
  const describable = allowedNames(context, session, AclOperation.DESCRIBE, ResourceType.TOPIC, names, { logIfDenied: false });
  return Promise.all(names.filter((name) => describable.has(name)).map((name) => describeTopic(asking, name, false)));
}

/** A topic asked for by name, or from v10 by id (KIP-516): an id not known here is UNKNOWN_TOPIC_ID. */
async function describeAsked(asking: Asking, topic: { name: string | null; topicId: Uuid }): Promise<TopicAnswer> {
  const { context, session } = asking;
  const byName = topic.name !== null && topic.topicId === ZERO_UUID;
  const name = byName ? topic.name! : context.topology.topicName(topic.topicId);
  if (name === null || (!byName && topic.name !== null && topic.name !== name)) return { answer: { ...failedTopic(topic.name, ErrorCode.UNKNOWN_TOPIC_ID), topicId: topic.topicId }, described: false };
  if (!allowed(context, session, AclOperation.DESCRIBE, ResourceType.TOPIC, name)) {
    // Kafka: a topic named is refused without its id; one asked for by id (ids are not secret) without its name.
    return {
      answer: byName ? { ...failedTopic(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED), topicId: ZERO_UUID } : { ...failedTopic(null, ErrorCode.TOPIC_AUTHORIZATION_FAILED), topicId: topic.topicId },
      described: false,
    };
  }
  return describeTopic(asking, name, byName && asking.allowAutoCreate);
}

async function describeTopic(asking: Asking, name: string, allowAutoCreate: boolean): Promise<TopicAnswer> {
  try {
    return await describeFromTopology(asking, name, allowAutoCreate);
  } catch (error) {
    // The topic's record could not be read (or created) now: a topic-level error the client retries
    // after its metadata backoff, as for a leader not elected yet. Closing the connection instead
    // would fail every other request on it and tell the client nothing.
    if (isStoreError(error) || isFerryError(error, 'Storage')) return { answer: failedTopic(name, ErrorCode.LEADER_NOT_AVAILABLE), described: true };
    throw error;
  }
}

function failedTopic(name: string | null, errorCode: number): TopicAnswer['answer'] {
  return { errorCode, name, isInternal: false, partitions: [], topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED };
}

/** Kafka's check before an auto-creation: CREATE on the cluster (its denial not logged), else on the topic. */
function mayCreate({ context, session }: Asking, name: string): boolean {
  return allowedOnCluster(context, session, AclOperation.CREATE, { logIfDenied: false }) || allowed(context, session, AclOperation.CREATE, ResourceType.TOPIC, name);
}

async function describeFromTopology(asking: Asking, name: string, allowAutoCreate: boolean): Promise<TopicAnswer> {
  const { context } = asking;
  const { topology } = context;
  const failed = (errorCode: number, described = true): TopicAnswer => ({ answer: failedTopic(name, errorCode), described });
  // [C2] A topic this broker has not seen yet is read from its record, never guessed.
  let partitions = await topology.partitionCount(name);
  if (partitions === null) {
    if (!allowAutoCreate) return failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    if (!mayCreate(asking, name)) return { answer: { ...failedTopic(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED), topicId: ZERO_UUID }, described: false };
    try {
      await topology.createTopic(name, context.defaultPartitions, -1);
    } catch (error) {
      if (isFerryError(error, 'InvalidArgument')) return failed(ErrorCode.INVALID_TOPIC_EXCEPTION);
      throw error;
    }
    partitions = await topology.partitionCount(name);
    if (partitions === null) return failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION); // deleted again meanwhile
  }
  const answer = {
    errorCode: ErrorCode.NONE,
    name,
    topicId: topology.topicId(name) ?? ZERO_UUID,
    isInternal: false,
    partitions: Array.from({ length: partitions }, (_, partitionIndex) => describePartition(asking, name, partitionIndex)),
    topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
  };
  return { answer, described: true };
}

/**
 * A partition's leader, replicas and epoch. A leader that has listeners but not the request's is
 * Kafka's LISTENER_NOT_FOUND (LEADER_NOT_AVAILABLE before v6), without a leader id: the client
 * could not reach it.
 */
function describePartition({ context, session, version, brokers }: Asking, name: string, partitionIndex: number): MetadataResponsePartition {
  const { topology } = context;
  const leaderId = topology.leaderOf(name, partitionIndex);
  const leaderEpoch = topology.leaderEpochOf(name, partitionIndex);
  const replicas = leaderId === null ? [] : [leaderId, ...topology.followersOf(name, partitionIndex).map((b) => b.nodeId)];
  const leader = leaderId === null ? undefined : brokers.get(leaderId);
  if (leader !== undefined && endpointFor(leader, session.listenerName) === null) {
    const errorCode = version >= LISTENER_NOT_FOUND_MIN_VERSION ? ErrorCode.LISTENER_NOT_FOUND : ErrorCode.LEADER_NOT_AVAILABLE;
    return { errorCode, partitionIndex, leaderId: -1, leaderEpoch, replicaNodes: replicas, isrNodes: replicas, offlineReplicas: [] };
  }
  return {
    errorCode: leaderId === null ? ErrorCode.LEADER_NOT_AVAILABLE : ErrorCode.NONE,
    partitionIndex,
    leaderId: leaderId ?? -1,
    leaderEpoch,
    replicaNodes: replicas,
    isrNodes: replicas,
    offlineReplicas: [],
  };
}
