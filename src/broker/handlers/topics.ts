import { isFerryError } from '../../errors.ts';
import { validateTopicName } from '../../engine/topic-name.ts';
import { parseTopicConfigs } from '../../log/topic-config.ts';
import { CONFIG_SOURCE_CODES } from '../../log/topic-config-describe.ts';
import { ZERO_UUID } from '../../util/uuid.ts';
import type { CreatableTopicResult, CreateTopicsRequest, CreateTopicsResponse } from '../apis/create-topics.ts';
import type { DeleteTopicsRequest, DeleteTopicsResponse } from '../apis/delete-topics.ts';
import type { BrokerContext } from '../context.ts';
import type { Session } from '../../security/session.ts';
import { allowedNames, allowedOnCluster, AuthorizationMessage, LOCAL_SESSION } from './authorize.ts';
import { AclOperation, ResourceType } from '../../security/acl/model.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { errorCodeOf } from './errors.ts';
import { notControllerMessage } from './controller.ts';

/** CreateTopics' "use the broker default" for partition count and replication factor. */
const BROKER_DEFAULT = -1;

/** Kafka's message of UNKNOWN_TOPIC_OR_PARTITION (Errors.java), which its ApiError carries. */
const UNKNOWN_TOPIC_MESSAGE = 'This server does not host this topic-partition.';
/** Kafka's message for a topic the client may not create (ControllerApis.createTopics). */
const CREATE_REFUSED_MESSAGE = 'Authorization failed.';

/**
 * CreateTopics: each topic with its partitions, replication factor and configs (checked whole
 * first: a bad config creates nothing, INVALID_CONFIG), through the topology. From v5 the answer
 * also says what was created: counts, the topic's configs with their sources, and (v7) its id.
 * Authorized as Kafka's ControllerApis.createTopics: CREATE on the cluster, else on each topic
 * (TOPIC_AUTHORIZATION_FAILED, nothing created); the counts and configs of a created topic only
 * with DESCRIBE_CONFIGS on it (else its topic_config_error_code is TOPIC_AUTHORIZATION_FAILED).
 */
export async function handleCreateTopics(context: BrokerContext, request: CreateTopicsRequest, session: Session = LOCAL_SESSION): Promise<CreateTopicsResponse> {
  const names = request.topics.map((topic) => topic.name);
  const creatable = allowedOnCluster(context, session, AclOperation.CREATE, { logIfDenied: false }) ? new Set(names) : allowedNames(context, session, AclOperation.CREATE, ResourceType.TOPIC, names);
  const describable = allowedNames(context, session, AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, names, { logIfDenied: false });
  const notController = notControllerMessage(context);
  const topics = await Promise.all(
    request.topics.map(async (topic): Promise<CreatableTopicResult> => {
      if (!creatable.has(topic.name)) return { name: topic.name, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: CREATE_REFUSED_MESSAGE, configs: null };
      if (notController !== null) return { name: topic.name, errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: notController, configs: null };
      const result = await createTopic(context, request.validateOnly, topic);
      if (result.errorCode !== ErrorCode.NONE || describable.has(topic.name)) return result;
      // Created, but the client may not see its configs: Kafka answers its id and nothing of its configuration.
      return { name: result.name, topicId: result.topicId, errorCode: ErrorCode.NONE, errorMessage: null, topicConfigErrorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, configs: [] };
    }),
  );
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
    // Created: a store that fails the read of its configs makes them null with the read's error in
    // topicConfigErrorCode (v5+, as Kafka answers; the Java admin client reads the configs unless it
    // is set), never the create's error (sim seed 32, issue 25).
    const described = await context.topology.describeTopicConfigs(topic.name).then(
      (entries) => ({ entries: entries ?? [], errorCode: ErrorCode.NONE }),
      (error: unknown) => ({ entries: null, errorCode: errorCodeOf(error) }),
    );
    return {
      ...answer,
      topicId: context.topology.topicId(topic.name) ?? ZERO_UUID,
      configs: described.entries?.map((e) => ({ name: e.name, value: e.value, readOnly: e.readOnly, configSource: CONFIG_SOURCE_CODES[e.source], isSensitive: e.isSensitive })) ?? null,
      ...(described.errorCode === ErrorCode.NONE ? {} : { topicConfigErrorCode: described.errorCode }),
    };
  } catch (error) {
    const errorCode = isFerryError(error, 'InvalidArgument') ? ErrorCode.INVALID_TOPIC_EXCEPTION : errorCodeOf(error);
    return failed(errorCode, error instanceof Error ? error.message : String(error));
  }
}

/**
 * DeleteTopics by name (v0-v5) or, from v6, by name or id (KIP-516): an id not known here is
 * UNKNOWN_TOPIC_ID. The answer names each topic as the request did. Authorized as Kafka's
 * ControllerApis.deleteTopics: DELETE on the cluster allows every topic; else a topic named needs
 * DESCRIBE (TOPIC_AUTHORIZATION_FAILED before its existence is looked at) and DELETE
 * (TOPIC_AUTHORIZATION_FAILED); a topic named by id without DELETE is TOPIC_AUTHORIZATION_FAILED,
 * its name told only with DESCRIBE.
 */
export async function handleDeleteTopics(context: BrokerContext, request: DeleteTopicsRequest, session: Session = LOCAL_SESSION): Promise<DeleteTopicsResponse> {
  const asked = request.topics.length > 0 ? request.topics : request.topicNames.map((name) => ({ name, topicId: ZERO_UUID }));
  const named = asked.map((topic) => topic.name ?? context.topology.topicName(topic.topicId)).filter((name) => name !== null);
  const clusterDelete = allowedOnCluster(context, session, AclOperation.DELETE, { logIfDenied: false });
  const describable = clusterDelete ? new Set(named) : allowedNames(context, session, AclOperation.DESCRIBE, ResourceType.TOPIC, named);
  const deletable = clusterDelete ? new Set(named) : allowedNames(context, session, AclOperation.DELETE, ResourceType.TOPIC, named);
  const refused = { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: AuthorizationMessage.TOPIC };
  const notController = notControllerMessage(context);
  const responses = [];
  for (const topic of asked) {
    const name = topic.name ?? context.topology.topicName(topic.topicId);
    const answer = { name: topic.name ?? name, topicId: topic.topicId };
    if (topic.name !== null && !describable.has(topic.name)) {
      responses.push({ ...answer, ...refused });
      continue;
    }
    if (notController !== null) {
      responses.push({ ...answer, errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: notController });
      continue;
    }
    // An id names one incarnation: checked against the topic's record, never this broker's last
    // scan, so that an id of a deleted incarnation never deletes the one created since.
    if (name === null || (topic.topicId !== ZERO_UUID && (await context.topology.topicIdNow(name)) !== topic.topicId)) {
      responses.push({ ...answer, errorCode: ErrorCode.UNKNOWN_TOPIC_ID, errorMessage: `no topic has the id ${topic.topicId}` });
      continue;
    }
    try {
      if (deletable.has(name)) {
        await context.topology.deleteTopic(name);
        responses.push({ ...answer, errorCode: ErrorCode.NONE, errorMessage: null });
      } else if (topic.name !== null && (await context.topology.partitionCount(name)) === null) {
        // Kafka looks a named topic up before the DELETE check: a client that may describe it learns it does not exist.
        responses.push({ ...answer, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: UNKNOWN_TOPIC_MESSAGE });
      } else {
        responses.push({ ...answer, name: describable.has(name) ? name : null, ...refused });
      }
    } catch (error) {
      responses.push({ ...answer, errorCode: errorCodeOf(error), errorMessage: error instanceof Error ? error.message : String(error) });
    }
  }
  return { throttleTimeMs: 0, responses };
}
