import { type ConfigAlteration, type ConfigChangeOp, replaceAllChanges } from '../../log/topic-config-changes.ts';
import { CONFIG_SOURCE_CODES, CONFIG_TYPE_CODES, type TopicConfigEntry } from '../../log/topic-config-describe.ts';
import type { AlterConfigsRequest, AlterConfigsResourceResponse, AlterConfigsResponse } from '../apis/alter-configs.ts';
import type { DescribeConfigsRequest, DescribeConfigsResourceResult, DescribeConfigsResponse, DescribeConfigsResult } from '../apis/describe-configs.ts';
import { ConfigResourceType } from '../apis/describe-configs.ts';
import type { IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse } from '../apis/incremental-alter-configs.ts';
import { type BrokerConfigEntry, brokerConfigEntries } from '../broker-config-entries.ts';
import type { BrokerContext } from '../context.ts';
import type { Session } from '../../security/session.ts';
import { allowed, AuthorizationMessage, LOCAL_SESSION } from './authorize.ts';
import { AclOperation, CLUSTER_NAME, ResourceType } from '../../security/acl/model.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { errorCodeOf } from './errors.ts';

/** IncrementalAlterConfigs' config_operation values (KIP-339). */
const OPERATIONS: readonly ConfigChangeOp[] = ['set', 'delete', 'append', 'subtract'];
const STATIC_BROKER_CONFIGS = 'broker configs are static in Ferry: set them in its configuration (server.properties, flags) and restart the broker';

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isThisBroker(context: BrokerContext, resourceName: string): boolean {
  return resourceName === '' || resourceName === String(context.nodeId);
}

/**
 * The refusal of `operation` (DESCRIBE_CONFIGS or ALTER_CONFIGS) on a config resource, as Kafka's
 * ConfigHelper and ControllerApis.authorizeAlterResource decide it: a topic's configs on the topic
 * (TOPIC_AUTHORIZATION_FAILED), a broker's (and its loggers') on the cluster
 * (CLUSTER_AUTHORIZATION_FAILED), with the error's own message; null when allowed or of another type.
 */
function configRefusal(context: BrokerContext, session: Session, operation: AclOperation, resourceType: number, resourceName: string): { errorCode: number; errorMessage: string } | null {
  if (resourceType === ConfigResourceType.TOPIC) {
    return allowed(context, session, operation, ResourceType.TOPIC, resourceName) ? null : { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: AuthorizationMessage.TOPIC };
  }
  if (resourceType === ConfigResourceType.BROKER || resourceType === ConfigResourceType.BROKER_LOGGER) {
    return allowed(context, session, operation, ResourceType.CLUSTER, CLUSTER_NAME) ? null : { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: AuthorizationMessage.CLUSTER };
  }
  return null;
}

// ---- DescribeConfigs ----

/**
 * DescribeConfigs of topics (their Kafka configs: values, sources, synonyms, types) and of this
 * broker (its static configs by Kafka's names). Synonyms and documentation only when asked for.
 * Each resource needs DESCRIBE_CONFIGS (configRefusal), checked before it is looked up.
 */
export async function handleDescribeConfigs(context: BrokerContext, request: DescribeConfigsRequest, session: Session = LOCAL_SESSION): Promise<DescribeConfigsResponse> {
  const results = await Promise.all(
    request.resources.map((resource) => {
      const refusal = configRefusal(context, session, AclOperation.DESCRIBE_CONFIGS, resource.resourceType, resource.resourceName);
      if (refusal !== null) return { ...refusal, resourceType: resource.resourceType, resourceName: resource.resourceName, configs: [] };
      return describeResource(context, request, resource);
    }),
  );
  return { throttleTimeMs: 0, results };
}

async function describeResource(context: BrokerContext, request: DescribeConfigsRequest, resource: DescribeConfigsRequest['resources'][number]): Promise<DescribeConfigsResult> {
  const { resourceType, resourceName } = resource;
  const failed = (errorCode: number, errorMessage: string): DescribeConfigsResult => ({ errorCode, errorMessage, resourceType, resourceName, configs: [] });
  const wanted = (name: string) => resource.configurationKeys === null || resource.configurationKeys.includes(name);
  if (resourceType === ConfigResourceType.TOPIC) {
    let entries: TopicConfigEntry[] | null;
    try {
      entries = await context.topology.describeTopicConfigs(resourceName);
    } catch (error) {
      return failed(errorCodeOf(error), messageOf(error));
    }
    if (entries === null) return failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic ${resourceName} does not exist`);
    return { errorCode: ErrorCode.NONE, errorMessage: null, resourceType, resourceName, configs: entries.filter((e) => wanted(e.name)).map((e) => topicEntry(request, e)) };
  }
  if (resourceType === ConfigResourceType.BROKER) {
    if (!isThisBroker(context, resourceName)) return failed(ErrorCode.INVALID_REQUEST, `broker ${resourceName} is not this broker (${context.nodeId}): ask it`);
    const entries = brokerConfigEntries({ ...context, topicDefaults: context.engine.brokerTopicDefaults() });
    return { errorCode: ErrorCode.NONE, errorMessage: null, resourceType, resourceName, configs: entries.filter((e) => wanted(e.name)).map((e) => brokerEntry(request, e)) };
  }
  return failed(ErrorCode.INVALID_REQUEST, `resource type ${resourceType} is not supported (topics ${ConfigResourceType.TOPIC} and brokers ${ConfigResourceType.BROKER} are)`);
}

function topicEntry(request: DescribeConfigsRequest, entry: TopicConfigEntry): DescribeConfigsResourceResult {
  return {
    name: entry.name,
    value: entry.value,
    readOnly: entry.readOnly,
    isDefault: entry.isDefault,
    configSource: CONFIG_SOURCE_CODES[entry.source],
    isSensitive: entry.isSensitive,
    synonyms: request.includeSynonyms ? entry.synonyms.map((s) => ({ name: s.name, value: s.value, source: CONFIG_SOURCE_CODES[s.source] })) : [],
    configType: CONFIG_TYPE_CODES[entry.type],
    documentation: request.includeDocumentation ? entry.documentation : null,
  };
}

function brokerEntry(request: DescribeConfigsRequest, entry: BrokerConfigEntry): DescribeConfigsResourceResult {
  const source = CONFIG_SOURCE_CODES[entry.source];
  return {
    name: entry.name,
    value: entry.value,
    readOnly: true,
    isDefault: entry.source === 'DEFAULT_CONFIG',
    configSource: source,
    isSensitive: false,
    synonyms: request.includeSynonyms ? [{ name: entry.name, value: entry.value, source }] : [],
    configType: CONFIG_TYPE_CODES[entry.type],
    documentation: request.includeDocumentation ? entry.documentation : null,
  };
}

// ---- AlterConfigs and IncrementalAlterConfigs ----

type AlterResource = { resourceType: number; resourceName: string };

/**
 * A resource's alteration: topics through the topology (a cluster's topic record, so that every
 * broker takes it), checked whole first (a bad config changes nothing: INVALID_CONFIG). Broker
 * configs are static, so their alteration is refused.
 */
async function alterResource(context: BrokerContext, resource: AlterResource, validateOnly: boolean, alteration: ConfigAlteration): Promise<AlterConfigsResourceResponse> {
  const { resourceType, resourceName } = resource;
  const answer = (errorCode: number, errorMessage: string | null) => ({ errorCode, errorMessage, resourceType, resourceName });
  if (resourceType === ConfigResourceType.BROKER) return answer(ErrorCode.INVALID_CONFIG, STATIC_BROKER_CONFIGS);
  if (resourceType !== ConfigResourceType.TOPIC) return answer(ErrorCode.INVALID_REQUEST, `resource type ${resourceType} cannot be altered here`);
  try {
    if ((await context.topology.partitionCount(resourceName)) === null) return answer(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic ${resourceName} does not exist`);
    await context.topology.alterTopicConfig(resourceName, alteration, validateOnly);
    return answer(ErrorCode.NONE, null);
  } catch (error) {
    return answer(alterationErrorCodeOf(error), messageOf(error));
  }
}

/**
 * A failed alteration's answer. A storage or store failure is REQUEST_TIMED_OUT: Kafka's answer
 * when its controller did not commit the change in time, which may still have happened (a write
 * whose answer was lost); IncrementalAlterConfigs never answers KAFKA_STORAGE_ERROR, a partition's
 * error (sim seed 4, issue 25: a lone broker on a full disk).
 */
function alterationErrorCodeOf(error: unknown): number {
  const code = errorCodeOf(error);
  return code === ErrorCode.KAFKA_STORAGE_ERROR ? ErrorCode.REQUEST_TIMED_OUT : code;
}

/** A resource named twice in one request is refused each time, as Kafka does (the outcome would depend on order). */
function duplicates(resources: readonly AlterResource[]): Set<string> {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const { resourceType, resourceName } of resources) {
    const key = `${resourceType}\u0000${resourceName}`;
    if (seen.has(key)) twice.add(key);
    seen.add(key);
  }
  return twice;
}

function duplicateAnswer(resource: AlterResource): AlterConfigsResourceResponse {
  return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Duplicate resource ${resource.resourceName} in the request`, resourceType: resource.resourceType, resourceName: resource.resourceName };
}

/** ALTER_CONFIGS on the resource, checked after the duplicates as Kafka's ControllerApis does; null if allowed. */
function alterRefusal(context: BrokerContext, session: Session, resource: AlterResource): AlterConfigsResourceResponse | null {
  const refusal = configRefusal(context, session, AclOperation.ALTER_CONFIGS, resource.resourceType, resource.resourceName);
  return refusal === null ? null : { ...refusal, resourceType: resource.resourceType, resourceName: resource.resourceName };
}

/**
 * AlterConfigs: each resource's dynamic configs become exactly those given (the others go back to
 * their defaults). Each resource needs ALTER_CONFIGS (configRefusal).
 */
export async function handleAlterConfigs(context: BrokerContext, request: AlterConfigsRequest, session: Session = LOCAL_SESSION): Promise<AlterConfigsResponse> {
  const twice = duplicates(request.resources);
  const responses = await Promise.all(
    request.resources.map((resource) => {
      if (twice.has(`${resource.resourceType}\u0000${resource.resourceName}`)) return duplicateAnswer(resource);
      const refusal = alterRefusal(context, session, resource);
      if (refusal !== null) return refusal;
      // Worked out from the topic's configs as the alteration applies them (in a cluster, the topic record read in its compare-and-swap).
      const wanted = resource.configs.map((config) => [config.name, config.value] as const);
      return alterResource(context, resource, request.validateOnly, (current) => replaceAllChanges(current, wanted));
    }),
  );
  return { throttleTimeMs: 0, responses };
}

/**
 * IncrementalAlterConfigs (KIP-339): SET, DELETE, APPEND and SUBTRACT single configs, the rest as
 * they are. Each resource needs ALTER_CONFIGS (configRefusal), checked before its operations.
 */
export async function handleIncrementalAlterConfigs(context: BrokerContext, request: IncrementalAlterConfigsRequest, session: Session = LOCAL_SESSION): Promise<IncrementalAlterConfigsResponse> {
  const twice = duplicates(request.resources);
  const responses = await Promise.all(
    request.resources.map((resource) => {
      if (twice.has(`${resource.resourceType}\u0000${resource.resourceName}`)) return duplicateAnswer(resource);
      const refusal = alterRefusal(context, session, resource);
      if (refusal !== null) return refusal;
      const bad = resource.configs.find((config) => OPERATIONS[config.configOperation] === undefined);
      if (bad !== undefined)
        return {
          errorCode: ErrorCode.INVALID_REQUEST,
          errorMessage: `config operation ${bad.configOperation} of ${bad.name} is not one of 0 (SET), 1 (DELETE), 2 (APPEND), 3 (SUBTRACT)`,
          resourceType: resource.resourceType,
          resourceName: resource.resourceName,
        };
      return alterResource(
        context,
        resource,
        request.validateOnly,
        resource.configs.map((config) => ({ name: config.name, op: OPERATIONS[config.configOperation]!, value: config.value })),
      );
    }),
  );
  return { throttleTimeMs: 0, responses };
}
