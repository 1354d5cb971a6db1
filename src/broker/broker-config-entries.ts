import type { ListenerEndpoint } from '../cluster/endpoints.ts';
import { TOPIC_CONFIGS, type TopicConfigs } from '../log/topic-config.ts';
import type { ConfigType } from '../log/topic-config.ts';
import type { ConfigSource } from '../log/topic-config-describe.ts';

/**
 * A broker's own configs as DescribeConfigs shows them for the broker resource, by Kafka's names:
 * the broker-level synonyms of the topic configs (log.retention.ms, log.segment.bytes, ...) with
 * this broker's defaults, and the broker settings a client asks about. Ferry's broker configs are
 * static (server.properties, flags, FERRY_* variables): each is read-only, from
 * STATIC_BROKER_CONFIG where it differs from Kafka's default, else DEFAULT_CONFIG.
 */
export interface BrokerConfigEntry {
  readonly name: string;
  readonly value: string | null;
  readonly source: ConfigSource;
  readonly type: ConfigType;
  readonly documentation: string;
}

export interface BrokerSettings {
  readonly nodeId: number;
  readonly rack: string | null;
  readonly advertisedHost: string;
  readonly advertisedPort: number;
  /** Every listener's advertised endpoint; absent: one PLAINTEXT listener at advertisedHost:advertisedPort. */
  readonly endpoints?: readonly ListenerEndpoint[];
  readonly defaultPartitions: number;
  readonly autoCreateTopics: boolean;
  /** The broker's topic defaults that differ from the catalog's (Ferry.brokerTopicDefaults). */
  readonly topicDefaults: TopicConfigs;
}

interface BrokerOnlyConfig {
  readonly name: string;
  readonly type: ConfigType;
  readonly kafkaDefault: string | null;
  readonly value: (settings: BrokerSettings) => string | null;
  readonly documentation: string;
}

const BROKER_ONLY: readonly BrokerOnlyConfig[] = [
  { name: 'node.id', type: 'INT', kafkaDefault: '-1', value: (s) => String(s.nodeId), documentation: "This broker's id." },
  { name: 'broker.id', type: 'INT', kafkaDefault: '-1', value: (s) => String(s.nodeId), documentation: "This broker's id (node.id's older name)." },
  { name: 'broker.rack', type: 'STRING', kafkaDefault: null, value: (s) => s.rack, documentation: "This broker's rack or availability zone, for consumers' client.rack (KIP-392)." },
  { name: 'advertised.listeners', type: 'STRING', kafkaDefault: null, value: advertisedListeners, documentation: 'Where clients of each listener are told to connect.' },
  { name: 'num.partitions', type: 'INT', kafkaDefault: '1', value: (s) => String(s.defaultPartitions), documentation: 'Partitions of a topic created on first use.' },
  { name: 'auto.create.topics.enable', type: 'BOOLEAN', kafkaDefault: 'true', value: (s) => String(s.autoCreateTopics), documentation: 'Whether a topic is created when a client first names it.' },
];

export function brokerConfigEntries(settings: BrokerSettings): BrokerConfigEntry[] {
  const entries: BrokerConfigEntry[] = [];
  const sourceOf = (value: string | null, kafkaDefault: string | null): ConfigSource => (value === kafkaDefault ? 'DEFAULT_CONFIG' : 'STATIC_BROKER_CONFIG');
  for (const config of BROKER_ONLY) {
    const value = config.value(settings);
    entries.push({ name: config.name, value, source: sourceOf(value, config.kafkaDefault), type: config.type, documentation: config.documentation });
  }
  for (const definition of TOPIC_CONFIGS.values()) {
    if (definition.brokerSynonym === null) continue;
    const value = settings.topicDefaults[definition.name] ?? definition.defaultValue;
    entries.push({
      name: definition.brokerSynonym,
      value,
      source: sourceOf(value, definition.defaultValue),
      type: definition.type,
      documentation: `The default of the topic config ${definition.name}: ${definition.documentation}`,
    });
  }
  return entries;
}

/** advertised.listeners as Kafka writes it: `NAME://host:port` per listener, comma-separated. */
function advertisedListeners(settings: BrokerSettings): string {
  const endpoints = settings.endpoints ?? [{ listener: 'PLAINTEXT', host: settings.advertisedHost, port: settings.advertisedPort }];
  return endpoints.map((endpoint) => `${endpoint.listener}://${endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host}:${endpoint.port}`).join(',');
}
