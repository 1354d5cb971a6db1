/**
 * A topic's configs as DescribeConfigs reports them (Kafka's DescribeConfigsResult entries): every
 * known name with its value, where the value comes from, and its synonyms in Kafka's order.
 */
import { TOPIC_CONFIGS, type ConfigType, type TopicConfigs } from './topic-config.ts';

/** Kafka's DescribeConfigs ConfigSource (the wire values are in parentheses). */
export type ConfigSource =
  | 'TOPIC_CONFIG' // (1) set on the topic
  | 'DYNAMIC_BROKER_CONFIG' // (2)
  | 'DYNAMIC_DEFAULT_BROKER_CONFIG' // (3)
  | 'STATIC_BROKER_CONFIG' // (4) the broker's configuration (server.properties, flags) sets it
  | 'DEFAULT_CONFIG' // (5) Kafka's default
  | 'DYNAMIC_BROKER_LOGGER_CONFIG'; // (6)

export interface ConfigSynonym {
  readonly name: string;
  readonly value: string;
  readonly source: ConfigSource;
}

export interface TopicConfigEntry {
  readonly name: string;
  readonly value: string;
  readonly source: ConfigSource;
  /** False for every topic config: each may be altered (a fixed one only to its default). */
  readonly readOnly: boolean;
  readonly isDefault: boolean;
  readonly isSensitive: boolean;
  /** The topic's own value, then the broker's, then the default: those that apply, most specific first. */
  readonly synonyms: readonly ConfigSynonym[];
  readonly type: ConfigType;
  readonly documentation: string;
}

/**
 * Every known topic config of a topic with `configs` set on it, on a broker whose own defaults are
 * `brokerDefaults` (Kafka topic names to values, only those that differ from the catalog's default).
 */
export function describeTopicConfigs(configs: TopicConfigs, brokerDefaults: TopicConfigs): TopicConfigEntry[] {
  const entries: TopicConfigEntry[] = [];
  for (const definition of TOPIC_CONFIGS.values()) {
    const synonyms: ConfigSynonym[] = [];
    const own = configs[definition.name];
    if (own !== undefined) synonyms.push({ name: definition.name, value: own, source: 'TOPIC_CONFIG' });
    const broker = brokerDefaults[definition.name];
    if (broker !== undefined && broker !== definition.defaultValue) synonyms.push({ name: definition.brokerSynonym ?? definition.name, value: broker, source: 'STATIC_BROKER_CONFIG' });
    synonyms.push({ name: definition.brokerSynonym ?? definition.name, value: definition.defaultValue, source: 'DEFAULT_CONFIG' });
    const { value, source } = synonyms[0]!;
    entries.push({
      name: definition.name,
      value,
      source,
      readOnly: false,
      isDefault: source === 'DEFAULT_CONFIG',
      isSensitive: definition.type === 'PASSWORD',
      synonyms,
      type: definition.type,
      documentation: definition.documentation,
    });
  }
  return entries;
}

/** DescribeConfigs' config_source wire values (Kafka's DescribeConfigsResponse.ConfigSource). */
export const CONFIG_SOURCE_CODES: Readonly<Record<ConfigSource, number>> = {
  TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
  DYNAMIC_BROKER_LOGGER_CONFIG: 6,
};

/** DescribeConfigs' config_type wire values (v3+; 0 is UNKNOWN). */
export const CONFIG_TYPE_CODES: Readonly<Record<ConfigType, number>> = {
  BOOLEAN: 1,
  STRING: 2,
  INT: 3,
  SHORT: 4,
  LONG: 5,
  DOUBLE: 6,
  LIST: 7,
  CLASS: 8,
  PASSWORD: 9,
};
