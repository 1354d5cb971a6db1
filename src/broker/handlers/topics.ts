import { isFerryError } from '../../errors.ts';
import { validateTopicName } from '../../engine/topic-name.ts';
import { parseTopicConfigs } from '../../log/topic-config.ts';
import { CONFIG_SOURCE_CODES } from '../../log/topic-config-describe.ts';
import { ZERO_UUID } from '../../util/uuid.ts';
import type { CreatableTopicResult, CreateTopicsRequest, CreateTopicsResponse } from '../apis/create-topics.ts';
import type { DeleteTopicsRequest, DeleteTopicsResponse } from '../apis/delete-topics.ts';
import type { BrokerContext } from '../context.ts';
import type { Session } from '../../security/session.ts';
import { LOCAL_SESSION } from './authorize.ts';
import { ErrorCode } from '../protocol/error-codes.ts';
import { errorCodeOf } from './errors.ts';

/** CreateTopics' "use the broker default" for partition count and replication factor. */
const BROKER_DEFAULT = -1;

/**
 * CreateTopics: each topic with its partitions, replication factor and configs (checked whole
 * first: a bad config creates nothing, INVALID_CONFIG), through the topology. From v5 the answer
 * also says what was created: counts, the topic's configs with their sources, and (v7) its id.
 */
export async function handleCreateTopics(context: BrokerContext, request: CreateTopicsRequest, session: Session = LOCAL_SESSION): Promise<CreateTopicsResponse> {
  const topics = await Promise.all(request.topics.map((topic) => createTopic(context, request.validateOnly, topic)));
  return { throttleTimeMs: 0, topics };
}

async function createTopic(context: BrokerContext, validateOnly: boolean, topic: CreateTopicsRequest['topics'][number]): Promise<CreatableTopicResult> {
  const partitions = topic.numPartitions === BROKER_DEFAULT ? context.defaultPartitions : topic.numPartitions;
  const replicationFactor = topic.replicationFactor === BROKER_DEFAULT ? (context.defaultReplicationFactor ?? 1) : topic.replicationFactor;
  const failed = (errorCode: number, errorMessage: string): CreatableTopicResult => ({ name: topic.name, errorCode, errorMessage, topicConfigErrorCode: errorCode, configs: null });
  if (topic.assignments.length > 0) return failed(ErrorCode.INVALID_REQUEST, 'manual replica assignments are not supported');
  if (partitions < 1) return failed(ErrorCode.INVALID_PARTITIONS, `Number of partitions must be larger than 0, got ${partitions}`);
  if (replicationFactor < 1) return failed(ErrorCode.INVALID_REPLICATION_FACTOR, `Replication factor must be larger than 0, got ${replicationFactor}`);
  const exists = failed(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${topic.name}' already exists.`);
  try {
    validateTopicName(topic.name);
    const configs = parseTopicConfigs(topic.configs.map((config) => [config.name, config.value] as const));
    const answer = { name: topic.name, errorCode: ErrorCode.NONE, errorMessage: null, numPartitions: partitions, replicationFactor };
    if (validateOnly) {
      context.engine.checkTopicConfigs(configs); // the create checks them itself, as a whole
      return (await context.topology.partitionCount(topic.name)) === null ? { ...answer, configs: null } : exists;
    }
    // The create itself decides (a create-if-absent of the topic's record, in a cluster): the
    // topics this broker last saw may still hold one another broker deleted since.
    if (!(await context.topology.createTopic(topic.name, partitions, topic.replicationFactor, configs))) return exists;
    const described = (await context.topology.describeTopicConfigs(topic.name)) ?? [];
    return { ...answer, topicId: context.topology.topicId(topic.name) ?? ZERO_UUID, configs: described.map((e) => ({ name: e.name, value: e.value, readOnly: e.readOnly, configSource: CONFIG_SOURCE_CODES[e.source], isSensitive: e.isSensitive })) };
  } catch (error) {
    const errorCode = isFerryError(error, 'InvalidArgument') ? ErrorCode.INVALID_TOPIC_EXCEPTION : errorCodeOf(error);
    return failed(errorCode, error instanceof Error ? error.message : String(error));
  }
}

/**
 * DeleteTopics by name (v0-v5) or, from v6, by name or id (KIP-516): an id not known here is
 * UNKNOWN_TOPIC_ID. The answer names each topic as the request did.
 */
export async function handleDeleteTopics(context: BrokerContext, request: DeleteTopicsRequest, session: Session = LOCAL_SESSION): Promise<DeleteTopicsResponse> {
  const asked = request.topics.length > 0 ? request.topics : request.topicNames.map((name) => ({ name, topicId: ZERO_UUID }));
  const responses = [];
  for (const topic of asked) {
    const name = topic.name ?? context.topology.topicName(topic.topicId);
    const answer = { name: topic.name ?? name, topicId: topic.topicId };
    // An id names one incarnation: checked against the topic's record, never this broker's last
    // scan, so that an id of a deleted incarnation never deletes the one created since.
    if (name === null || (topic.topicId !== ZERO_UUID && (await context.topology.topicIdNow(name)) !== topic.topicId)) {
      responses.push({ ...answer, errorCode: ErrorCode.UNKNOWN_TOPIC_ID, errorMessage: `no topic has the id ${topic.topicId}` });
      continue;
    }
    try {
      await context.topology.deleteTopic(name);
      responses.push({ ...answer, errorCode: ErrorCode.NONE, errorMessage: null });
    } catch (error) {
      responses.push({ ...answer, errorCode: errorCodeOf(error), errorMessage: error instanceof Error ? error.message : String(error) });
    }
  }
  return { throttleTimeMs: 0, responses };
}
