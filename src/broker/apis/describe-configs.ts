import { type DescribeConfigsRequest, describeConfigsRequestSchema, type DescribeConfigsResponse, describeConfigsResponseSchema } from '../../protocol/messages/describe-configs.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/describe-configs.ts';

/** resource_type values (Kafka's ConfigResource.Type). */
export const ConfigResourceType = {
  UNKNOWN: 0,
  TOPIC: 2,
  BROKER: 4,
  BROKER_LOGGER: 8,
} as const;

/** config_source values (Kafka's DescribeConfigsResponse.ConfigSource). */
export const ConfigSource = {
  UNKNOWN: 0,
  TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
  DYNAMIC_BROKER_LOGGER_CONFIG: 6,
} as const;

/** DescribeConfigs (key 32). */
export const describeConfigsCodec = schemaApi<DescribeConfigsRequest, DescribeConfigsResponse>({
  name: 'DescribeConfigs',
  minVersion: 0,
  maxVersion: 4,
  request: describeConfigsRequestSchema,
  response: describeConfigsResponseSchema,
});
