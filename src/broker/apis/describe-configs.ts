import type { KafkaReader } from '../protocol/reader.ts';
import type { KafkaWriter } from '../protocol/writer.ts';
import type { ApiCodec } from './api.ts';

// DescribeConfigs (key 32), versions 0-3; 4 is the first flexible version (not supported).
// Request v0:   resources [resource_type INT8, resource_name STRING, configuration_keys NULLABLE_ARRAY[STRING]]
// Request v1-2: as v0, then include_synonyms BOOLEAN
// Request v3:   as v0, then include_synonyms BOOLEAN, include_documentation BOOLEAN
// Response v0-3: throttle_time_ms INT32,
//   results [error_code INT16, error_message NULLABLE_STRING, resource_type INT8, resource_name STRING,
//            configs [name STRING, value NULLABLE_STRING, read_only BOOLEAN,
//                     is_default BOOLEAN (v0 only), config_source INT8 (v1+), is_sensitive BOOLEAN,
//                     synonyms (v1+) [name STRING, value NULLABLE_STRING, source INT8],
//                     config_type INT8 (v3+), documentation NULLABLE_STRING (v3+)]]

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

/** One resource on the wire: resource_type INT8 + resource_name length INT16 + configuration_keys length INT32. */
const RESOURCE_BYTES_MIN = 1 + 2 + 4;
/** One configuration key: its length INT16. */
const CONFIGURATION_KEY_BYTES_MIN = 2;

export interface DescribeConfigsResource {
  readonly resourceType: number;
  readonly resourceName: string;
  /** null: every configuration of the resource. */
  readonly configurationKeys: readonly string[] | null;
}

export interface DescribeConfigsRequest {
  readonly resources: readonly DescribeConfigsResource[];
  /** v1+; false in v0. */
  readonly includeSynonyms: boolean;
  /** v3+; false before. */
  readonly includeDocumentation: boolean;
}

export interface DescribeConfigsSynonym {
  readonly name: string;
  readonly value: string | null;
  readonly source: number;
}

export interface DescribeConfigsResourceResult {
  readonly name: string;
  readonly value: string | null;
  readonly readOnly: boolean;
  /** Written in v0 only (v1+ say it with configSource DEFAULT_CONFIG). */
  readonly isDefault: boolean;
  /** Written in v1+ only: a ConfigSource value. */
  readonly configSource: number;
  readonly isSensitive: boolean;
  /** Written in v1+ only. */
  readonly synonyms: readonly DescribeConfigsSynonym[];
  /** Written in v3+ only: BOOLEAN 1, STRING 2, INT 3, SHORT 4, LONG 5, DOUBLE 6, LIST 7, CLASS 8, PASSWORD 9. */
  readonly configType: number;
  /** Written in v3+ only. */
  readonly documentation: string | null;
}

export interface DescribeConfigsResult {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly resourceType: number;
  readonly resourceName: string;
  readonly configs: readonly DescribeConfigsResourceResult[];
}

export interface DescribeConfigsResponse {
  readonly throttleTimeMs: number;
  readonly results: readonly DescribeConfigsResult[];
}

export const describeConfigsCodec: ApiCodec<DescribeConfigsRequest, DescribeConfigsResponse> = {
  key: 32,
  name: 'DescribeConfigs',
  minVersion: 0,
  maxVersion: 3,
  flexibleFrom: 4,
  decodeRequest(reader: KafkaReader, version: number): DescribeConfigsRequest {
    const resources = reader.array(readResource, RESOURCE_BYTES_MIN);
    const includeSynonyms = version >= 1 ? reader.boolean() : false;
    const includeDocumentation = version >= 3 ? reader.boolean() : false;
    return { resources, includeSynonyms, includeDocumentation };
  },
  encodeResponse(writer: KafkaWriter, version: number, response: DescribeConfigsResponse): void {
    writer.int32(response.throttleTimeMs);
    writer.array(response.results, (w, result) => {
      w.int16(result.errorCode).nullableString(result.errorMessage);
      w.int8(result.resourceType).string(result.resourceName);
      w.array(result.configs, (cw, config) => writeConfig(cw, version, config));
    });
  },
};

function readResource(reader: KafkaReader): DescribeConfigsResource {
  const resourceType = reader.int8();
  const resourceName = reader.string();
  const count = reader.arrayLength(CONFIGURATION_KEY_BYTES_MIN);
  const configurationKeys = count < 0 ? null : Array.from({ length: count }, () => reader.string());
  return { resourceType, resourceName, configurationKeys };
}

function writeConfig(writer: KafkaWriter, version: number, config: DescribeConfigsResourceResult): void {
  writer.string(config.name).nullableString(config.value).boolean(config.readOnly);
  if (version === 0) writer.boolean(config.isDefault);
  if (version >= 1) writer.int8(config.configSource);
  writer.boolean(config.isSensitive);
  if (version >= 1) {
    writer.array(config.synonyms, (w, synonym) => {
      w.string(synonym.name).nullableString(synonym.value).int8(synonym.source);
    });
  }
  if (version >= 3) writer.int8(config.configType).nullableString(config.documentation);
}
