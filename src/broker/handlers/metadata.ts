import { isFerryError } from '../../errors.ts';
import { isStoreError } from '../../store/errors.ts';
import type { MetadataRequest, MetadataResponse, MetadataResponseTopic } from '../apis/metadata.ts';
import type { BrokerContext } from '../context.ts';
import type { Session } from '../../security/session.ts';
import { LOCAL_SESSION } from './authorize.ts';
import { ErrorCode } from '../protocol/error-codes.ts';
import { type Uuid, ZERO_UUID } from '../../util/uuid.ts';

/** "No authorized operations reported" (Kafka's -2^31 sentinel). */
const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;

/**
 * Brokers, topics and partition leaders as the topology knows them (one broker, or the cluster's
 * control records). Unknown topics are created when both the client and the broker allow it, as
 * Kafka does; a partition without a live leader answers LEADER_NOT_AVAILABLE until one claims it.
 */
export async function handleMetadata(context: BrokerContext, request: MetadataRequest, version: number, session: Session = LOCAL_SESSION): Promise<MetadataResponse> {
  const { topology } = context;
  // v0's empty list asks for every topic, as a null one does from v1.
  const every = request.topics === null || (version === 0 && request.topics.length === 0);
  const asked = every ? [...topology.topics().keys()].map((name) => ({ name, topicId: ZERO_UUID })) : request.topics!;
  const topics = await Promise.all(asked.map((topic) => describeAsked(context, topic, request.allowAutoTopicCreation)));
  return {
    throttleTimeMs: 0,
    brokers: topology.brokers(),
    clusterId: context.clusterId,
    controllerId: topology.brokers()[0]?.nodeId ?? context.nodeId,
    topics,
    clusterAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
  };
}

/** A topic asked for by name, or from v10 by id (KIP-516): an id not known here is UNKNOWN_TOPIC_ID. */
async function describeAsked(context: BrokerContext, topic: { name: string | null; topicId: Uuid }, allowAutoCreate: boolean): Promise<MetadataResponseTopic> {
  if (topic.name !== null && topic.topicId === ZERO_UUID) return describeTopic(context, topic.name, allowAutoCreate);
  const name = context.topology.topicName(topic.topicId);
  if (name === null || (topic.name !== null && topic.name !== name)) return { ...failedTopic(topic.name, ErrorCode.UNKNOWN_TOPIC_ID), topicId: topic.topicId };
  return describeTopic(context, name, false);
}

async function describeTopic(context: BrokerContext, name: string, allowAutoCreate: boolean): Promise<MetadataResponseTopic> {
  try {
    return await describeFromTopology(context, name, allowAutoCreate);
  } catch (error) {
    // The topic's record could not be read (or created) now: a topic-level error the client retries
    // after its metadata backoff, as for a leader not elected yet. Closing the connection instead
    // would fail every other request on it and tell the client nothing.
    if (isStoreError(error) || isFerryError(error, 'Storage')) return failedTopic(name, ErrorCode.LEADER_NOT_AVAILABLE);
    throw error;
  }
}

function failedTopic(name: string | null, errorCode: number): MetadataResponseTopic {
  return { errorCode, name, isInternal: false, partitions: [], topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED };
}

async function describeFromTopology(context: BrokerContext, name: string, allowAutoCreate: boolean): Promise<MetadataResponseTopic> {
  const { topology } = context;
  const failed = (errorCode: number): MetadataResponseTopic => failedTopic(name, errorCode);
  // [C2] A topic this broker has not seen yet is read from its record, never guessed.
  let partitions = await topology.partitionCount(name);
  if (partitions === null) {
    if (!(allowAutoCreate && context.autoCreateTopics)) return failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    try {
      await topology.createTopic(name, context.defaultPartitions, -1);
    } catch (error) {
      if (isFerryError(error, 'InvalidArgument')) return failed(ErrorCode.INVALID_TOPIC_EXCEPTION);
      throw error;
    }
    partitions = await topology.partitionCount(name);
    if (partitions === null) return failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION); // deleted again meanwhile
  }
  return {
    errorCode: ErrorCode.NONE,
    name,
    topicId: topology.topicId(name) ?? ZERO_UUID,
    isInternal: false,
    partitions: Array.from({ length: partitions }, (_, partitionIndex) => {
      const leaderId = topology.leaderOf(name, partitionIndex);
      const replicas = leaderId === null ? [] : [leaderId, ...topology.followersOf(name, partitionIndex).map((b) => b.nodeId)];
      return { errorCode: leaderId === null ? ErrorCode.LEADER_NOT_AVAILABLE : ErrorCode.NONE, partitionIndex, leaderId: leaderId ?? -1, leaderEpoch: topology.leaderEpochOf(name, partitionIndex), replicaNodes: replicas, isrNodes: replicas, offlineReplicas: [] };
    }),
    topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
  };
}
