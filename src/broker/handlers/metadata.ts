import { isFerryError } from '../../errors.ts';
import type { MetadataRequest, MetadataResponse, MetadataResponseTopic } from '../apis/metadata.ts';
import type { BrokerContext } from '../context.ts';
import { ErrorCode } from '../protocol/error-codes.ts';

/** "No authorized operations reported" (Kafka's -2^31 sentinel). */
const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;
const LEADER_EPOCH = 0;

/**
 * One broker leads every partition (the stateless single-node mode): replicas and ISR are this
 * node. Unknown topics are created when both the client and the broker allow it, as Kafka does.
 */
export function handleMetadata(context: BrokerContext, request: MetadataRequest): MetadataResponse {
  const { engine } = context;
  const names = request.topics === null ? engine.topics().map((t) => t.name) : request.topics.map((t) => t.name);
  const topics = names.map((name) => describeTopic(context, name, request.allowAutoTopicCreation));
  return {
    throttleTimeMs: 0,
    brokers: [{ nodeId: context.nodeId, host: context.advertisedHost, port: context.advertisedPort, rack: context.rack }],
    clusterId: context.clusterId,
    controllerId: context.nodeId,
    topics,
    clusterAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
  };
}

function describeTopic(context: BrokerContext, name: string, allowAutoCreate: boolean): MetadataResponseTopic {
  const { engine, nodeId } = context;
  const failed = (errorCode: number): MetadataResponseTopic => ({ errorCode, name, isInternal: false, partitions: [], topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED });
  let partitions = engine.topics().find((t) => t.name === name)?.partitions;
  if (partitions === undefined) {
    if (!(allowAutoCreate && context.autoCreateTopics)) return failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    try {
      partitions = engine.createTopic(name, { partitions: context.defaultPartitions }).partitions;
    } catch (error) {
      if (isFerryError(error, 'InvalidArgument')) return failed(ErrorCode.INVALID_TOPIC_EXCEPTION);
      if (!isFerryError(error, 'TopicAlreadyExists')) throw error;
      partitions = engine.describeTopic(name).partitions;
    }
  }
  return {
    errorCode: ErrorCode.NONE,
    name,
    isInternal: false,
    partitions: Array.from({ length: partitions }, (_, partitionIndex) => ({ errorCode: ErrorCode.NONE, partitionIndex, leaderId: nodeId, leaderEpoch: LEADER_EPOCH, replicaNodes: [nodeId], isrNodes: [nodeId], offlineReplicas: [] })),
    topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
  };
}
