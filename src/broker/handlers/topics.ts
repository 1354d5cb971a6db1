import { isFerryError } from '../../errors.ts';
import { validateTopicName } from '../../engine/topic-name.ts';
import { DEFAULT_LOG_CONFIG } from '../../log/config.ts';
import type { CreatableTopicResult, CreateTopicsRequest, CreateTopicsResponse } from '../apis/create-topics.ts';
import type { DeleteTopicsRequest, DeleteTopicsResponse } from '../apis/delete-topics.ts';
import type { DescribeConfigsRequest, DescribeConfigsResourceResult, DescribeConfigsResponse } from '../apis/describe-configs.ts';
import type { BrokerContext } from '../context.ts';
import { ErrorCode } from '../protocol/error-codes.ts';
import { errorCodeOf } from './errors.ts';

/** CreateTopics' "use the broker default" for partition count and replication factor. */
const BROKER_DEFAULT = -1;
const RESOURCE_TOPIC = 2;
const RESOURCE_BROKER = 4;
/** DescribeConfigs config_source values. */
const SOURCE_DEFAULT = 5;
const SOURCE_TOPIC = 1;

export async function handleCreateTopics(context: BrokerContext, request: CreateTopicsRequest): Promise<CreateTopicsResponse> {
  const topics = await Promise.all(request.topics.map(async (topic) => {
    const partitions = topic.numPartitions === BROKER_DEFAULT ? context.defaultPartitions : topic.numPartitions;
    if (topic.assignments.length > 0) return { name: topic.name, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'manual replica assignments are not supported' };
    if (partitions < 1) return { name: topic.name, errorCode: ErrorCode.INVALID_PARTITIONS, errorMessage: `${partitions} partitions` };
    const exists = { name: topic.name, errorCode: ErrorCode.TOPIC_ALREADY_EXISTS, errorMessage: `topic ${topic.name} already exists` };
    try {
      validateTopicName(topic.name);
      // The create itself decides (a create-if-absent of the topic's record, in a cluster): the
      // topics this broker last saw may still hold one another broker deleted since.
      if (request.validateOnly) return (await context.topology.partitionCount(topic.name)) === null ? created(topic.name) : exists;
      if (!(await context.topology.createTopic(topic.name, partitions, topic.replicationFactor, Object.fromEntries(topic.configs.map((config) => [config.name, config.value]))))) return exists;
      return created(topic.name);
    } catch (error) {
      const errorCode = isFerryError(error, 'InvalidArgument') ? ErrorCode.INVALID_TOPIC_EXCEPTION : errorCodeOf(error);
      return { name: topic.name, errorCode, errorMessage: error instanceof Error ? error.message : String(error) };
    }
  }));
  return { throttleTimeMs: 0, topics };
}

function created(name: string): CreatableTopicResult {
  return { name, errorCode: ErrorCode.NONE, errorMessage: null };
}

export async function handleDeleteTopics(context: BrokerContext, request: DeleteTopicsRequest): Promise<DeleteTopicsResponse> {
  const responses = [];
  for (const name of request.topicNames) {
    try {
      await context.topology.deleteTopic(name);
      responses.push({ name, errorCode: ErrorCode.NONE });
    } catch (error) {
      responses.push({ name, errorCode: errorCodeOf(error) });
    }
  }
  return { throttleTimeMs: 0, responses };
}

/** A few configs that Kafka tools ask for, with Ferry's values. */
export function handleDescribeConfigs(context: BrokerContext, request: DescribeConfigsRequest): DescribeConfigsResponse {
  const results = request.resources.map((resource) => {
    const base = { errorCode: ErrorCode.NONE, errorMessage: null, resourceType: resource.resourceType, resourceName: resource.resourceName };
    if (resource.resourceType === RESOURCE_TOPIC && !context.topology.topics().has(resource.resourceName)) {
      return { ...base, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `unknown topic ${resource.resourceName}`, configs: [] };
    }
    if (resource.resourceType !== RESOURCE_TOPIC && resource.resourceType !== RESOURCE_BROKER) {
      return { ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `resource type ${resource.resourceType} is not supported`, configs: [] };
    }
    const source = resource.resourceType === RESOURCE_TOPIC ? SOURCE_TOPIC : SOURCE_DEFAULT;
    const all = configEntries(context).map(([name, value]) => entry(name, value, source));
    const configs = resource.configurationKeys === null ? all : all.filter((c) => resource.configurationKeys!.includes(c.name));
    return { ...base, configs };
  });
  return { throttleTimeMs: 0, results };
}

function configEntries(context: BrokerContext): [string, string][] {
  const log = DEFAULT_LOG_CONFIG;
  return [
    ['segment.bytes', String(log.segmentBytes)],
    ['segment.ms', String(log.segmentMs)],
    ['retention.bytes', String(log.retentionBytes)],
    ['retention.ms', String(log.retentionMs)],
    ['max.message.bytes', String(log.maxBatchBytes)],
    ['cleanup.policy', 'delete'],
    ['num.partitions', String(context.defaultPartitions)],
    ['auto.create.topics.enable', String(context.autoCreateTopics)],
  ];
}

function entry(name: string, value: string, configSource: number): DescribeConfigsResourceResult {
  return { name, value, readOnly: true, isDefault: configSource === SOURCE_DEFAULT, configSource, isSensitive: false, synonyms: [], configType: 0, documentation: null };
}
