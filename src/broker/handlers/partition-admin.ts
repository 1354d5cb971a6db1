import type { CreatePartitionsRequest, CreatePartitionsResponse, CreatePartitionsTopicResult } from '../apis/create-partitions.ts';
import type { DeleteRecordsPartitionResult, DeleteRecordsRequest, DeleteRecordsResponse } from '../apis/delete-records.ts';
import type { DescribeLogDirsRequest, DescribeLogDirsResponse, DescribeLogDirsTopic } from '../apis/describe-log-dirs.ts';
import type { DescribeProducersRequest, DescribeProducersResponse, PartitionResponse } from '../apis/describe-producers.ts';
import type { BrokerContext } from '../context.ts';
import type { Session } from '../../security/session.ts';
import { allowed, allowedNames, allowedOnCluster, AuthorizationMessage, LOCAL_SESSION } from './authorize.ts';
import { AclOperation, ResourceType } from '../../security/acl/model.ts';
import { validateTopicName } from '../../engine/topic-name.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { errorCodeOf, notServedCode } from './errors.ts';
import { notControllerMessage } from './controller.ts';

/** DescribeLogDirs' "the file system cannot say" for its sizes (KIP-827). */
const SIZE_UNKNOWN = -1;

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * CreatePartitions: each topic grows to the count asked for, through the topology (a cluster's
 * topic record, so that every broker sees it); Kafka's INVALID_PARTITIONS for no increase.
 * Replicas are placed by the brokers' claims: a manual assignment is refused. Each topic needs
 * ALTER (else TOPIC_AUTHORIZATION_FAILED, after the duplicate check), as in Kafka's
 * ControllerApis.createPartitions.
 */
export async function handleCreatePartitions(context: BrokerContext, request: CreatePartitionsRequest, session: Session = LOCAL_SESSION): Promise<CreatePartitionsResponse> {
  const seen = new Map<string, number>();
  for (const topic of request.topics) seen.set(topic.name, (seen.get(topic.name) ?? 0) + 1);
  const alterable = allowedNames(
    context,
    session,
    AclOperation.ALTER,
    ResourceType.TOPIC,
    [...seen.keys()].filter((name) => seen.get(name) === 1),
  );
  const notController = notControllerMessage(context);
  const results = await Promise.all(
    request.topics.map(async (topic): Promise<CreatePartitionsTopicResult> => {
      const failed = (errorCode: number, errorMessage: string | null) => ({ name: topic.name, errorCode, errorMessage });
      if (seen.get(topic.name)! > 1) return failed(ErrorCode.INVALID_REQUEST, `Duplicate topic name ${topic.name} in the request`);
      if (!alterable.has(topic.name)) return failed(ErrorCode.TOPIC_AUTHORIZATION_FAILED, null);
      if (notController !== null) return failed(ErrorCode.NOT_CONTROLLER, notController);
      if (topic.assignments !== null) return failed(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'Ferry places replicas itself: manual replica assignments are not supported');
      try {
        await context.topology.createPartitions(topic.name, topic.count, request.validateOnly);
        return { name: topic.name, errorCode: ErrorCode.NONE, errorMessage: null };
      } catch (error) {
        return failed(errorCodeOf(error), messageOf(error));
      }
    }),
  );
  return { throttleTimeMs: 0, results };
}

/**
 * DeleteRecords on the partitions' leader: the log start moves up to each offset (-1: the high
 * watermark), through the topology, so that a cluster's later leader starts there too. Each
 * topic needs DELETE (else TOPIC_AUTHORIZATION_FAILED before its existence is looked at), as in
 * Kafka's KafkaApis.handleDeleteRecordsRequest.
 */
export async function handleDeleteRecords(context: BrokerContext, request: DeleteRecordsRequest, session: Session = LOCAL_SESSION): Promise<DeleteRecordsResponse> {
  const deletable = allowedNames(
    context,
    session,
    AclOperation.DELETE,
    ResourceType.TOPIC,
    request.topics.map((topic) => topic.name),
  );
  const topics = await Promise.all(
    request.topics.map(async (topic) => ({
      name: topic.name,
      partitions: await Promise.all(
        topic.partitions.map(async ({ partitionIndex, offset }): Promise<DeleteRecordsPartitionResult> => {
          if (!deletable.has(topic.name)) return { partitionIndex, lowWatermark: -1, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED };
          try {
            return { partitionIndex, lowWatermark: await context.topology.deleteRecords(topic.name, partitionIndex, offset, request.timeoutMs), errorCode: ErrorCode.NONE };
          } catch (error) {
            return { partitionIndex, lowWatermark: -1, errorCode: errorCodeOf(error) };
          }
        }),
      ),
    })),
  );
  return { throttleTimeMs: 0, topics };
}

/**
 * DescribeProducers (KIP-664): the idempotent producers a led partition's state holds; no
 * transactions exist here. As Kafka's KafkaApis.handleDescribeProducersRequest: a topic name that
 * is not valid is INVALID_TOPIC_EXCEPTION, then the topic needs READ (TOPIC_AUTHORIZATION_FAILED).
 */
export function handleDescribeProducers(context: BrokerContext, request: DescribeProducersRequest, session: Session = LOCAL_SESSION): DescribeProducersResponse {
  const topics = request.topics.map((topic) => {
    const refusal = topicRefusal(context, session, topic.name);
    return {
      name: topic.name,
      partitions: topic.partitionIndexes.map((partitionIndex): PartitionResponse => {
        if (refusal !== null) return { partitionIndex, ...refusal, activeProducers: [] };
        return describePartitionProducers(context, topic.name, partitionIndex);
      }),
    };
  });
  return { throttleTimeMs: 0, topics };
}

/** Why DescribeProducers answers nothing of a topic: its name is not a topic name, or the client may not READ it; null if neither. */
function topicRefusal(context: BrokerContext, session: Session, topic: string): { errorCode: number; errorMessage: string } | null {
  try {
    validateTopicName(topic);
  } catch (error) {
    return { errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, errorMessage: messageOf(error) };
  }
  if (!allowed(context, session, AclOperation.READ, ResourceType.TOPIC, topic)) return { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: AuthorizationMessage.TOPIC };
  return null;
}

function describePartitionProducers(context: BrokerContext, topic: string, partitionIndex: number): PartitionResponse {
  const failed = (errorCode: number, errorMessage: string | null) => ({ partitionIndex, errorCode, errorMessage, activeProducers: [] });
  const notServed = notServedCode(context, topic, partitionIndex);
  if (notServed !== null) return failed(notServed, null);
  try {
    return { partitionIndex, errorCode: ErrorCode.NONE, errorMessage: null, activeProducers: context.engine.describeProducers(topic, partitionIndex) };
  } catch (error) {
    return failed(errorCodeOf(error), messageOf(error));
  }
}

/**
 * DescribeLogDirs: the one log directory of this broker, with the partitions it holds (all, or
 * those asked for), their sizes, and the file system's total and usable bytes (v4, KIP-827).
 * Needs DESCRIBE on the cluster, else a top-level CLUSTER_AUTHORIZATION_FAILED and no directory
 * (Kafka's KafkaApis.handleDescribeLogDirsRequest).
 */
export function handleDescribeLogDirs(context: BrokerContext, request: DescribeLogDirsRequest, session: Session = LOCAL_SESSION): DescribeLogDirsResponse {
  if (!allowedOnCluster(context, session, AclOperation.DESCRIBE)) return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results: [] };
  let description: ReturnType<BrokerContext['engine']['describeLogDir']>;
  try {
    description = context.engine.describeLogDir();
  } catch (error) {
    return { throttleTimeMs: 0, errorCode: errorCodeOf(error), results: [] };
  }
  const wanted = request.topics === null ? null : new Map(request.topics.map((topic) => [topic.topic, new Set(topic.partitions)]));
  const byTopic = new Map<string, DescribeLogDirsTopic['partitions'][number][]>();
  for (const partition of description.partitions) {
    if (wanted !== null && wanted.get(partition.topic)?.has(partition.partition) !== true) continue;
    const partitions = byTopic.get(partition.topic) ?? [];
    partitions.push({ partitionIndex: partition.partition, partitionSize: partition.sizeBytes, offsetLag: partition.offsetLag, isFutureKey: partition.isFutureKey });
    byTopic.set(partition.topic, partitions);
  }
  return {
    throttleTimeMs: 0,
    errorCode: ErrorCode.NONE,
    results: [
      {
        errorCode: ErrorCode.NONE,
        logDir: description.path,
        topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
        totalBytes: description.totalBytes ?? SIZE_UNKNOWN,
        usableBytes: description.usableBytes ?? SIZE_UNKNOWN,
      },
    ],
  };
}
