import { isFerryError } from '../../errors.ts';
import { isStoreError } from '../../store/errors.ts';
import type { MetadataRequest, MetadataResponse, MetadataResponseTopic } from '../apis/metadata.ts';
import type { BrokerContext } from '../context.ts';
import { ErrorCode } from '../protocol/error-codes.ts';

/** "No authorized operations reported" (Kafka's -2^31 sentinel). */
const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;

/**
 * Brokers, topics and partition leaders as the topology knows them (one broker, or the cluster's
 * control records). Unknown topics are created when both the client and the broker allow it, as
 * Kafka does; a partition without a live leader answers LEADER_NOT_AVAILABLE until one claims it.
 */
export async function handleMetadata(context: BrokerContext, request: MetadataRequest): Promise<MetadataResponse> {
  const { topology } = context;
  const names = request.topics === null ? [...topology.topics().keys()] : request.topics.map((t) => t.name);
  const topics = await Promise.all(names.map((name) => describeTopic(context, name, request.allowAutoTopicCreation)));
  return {
    throttleTimeMs: 0,
    brokers: topology.brokers(),
    clusterId: context.clusterId,
    controllerId: topology.brokers()[0]?.nodeId ?? context.nodeId,
    topics,
    clusterAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
  };
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

function failedTopic(name: string, errorCode: number): MetadataResponseTopic {
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
    isInternal: false,
    partitions: Array.from({ length: partitions }, (_, partitionIndex) => {
      const leaderId = topology.leaderOf(name, partitionIndex);
      const replicas = leaderId === null ? [] : [leaderId, ...topology.followersOf(name, partitionIndex).map((b) => b.nodeId)];
      return { errorCode: leaderId === null ? ErrorCode.LEADER_NOT_AVAILABLE : ErrorCode.NONE, partitionIndex, leaderId: leaderId ?? -1, leaderEpoch: topology.leaderEpochOf(name, partitionIndex), replicaNodes: replicas, isrNodes: replicas, offlineReplicas: [] };
    }),
    topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
  };
}
