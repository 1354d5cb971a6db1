import { FerryError } from '../errors.ts';
import { DEFAULT_LOG_CONFIG, type LogConfig, resolveLogConfig } from '../log/config.ts';
import { checkTopicSettingsChange, checkTopicSettingsTogether, configValueOfLogSetting, kafkaNameOfLogField, TOPIC_CONFIGS, type TopicConfigs, topicSettingsOf } from '../log/topic-config.ts';
import { describeTopicConfigs, type TopicConfigEntry } from '../log/topic-config-describe.ts';
import { unknownTopic } from './partition-table.ts';
import type { TopicRegistry } from './topic-registry.ts';

/** What a topic's settings are made of, besides its own configs: the engine's. */
export interface TopicSettingsDefaults {
  /** EngineOptions.log: the engine's log settings, under every topic's own. */
  readonly log: Partial<LogConfig> | undefined;
  /** EngineOptions.minInsyncReplicas: the broker's min.insync.replicas. */
  readonly minInsyncReplicas: number | undefined;
  /** Whether the engine tiers: only then may remote.storage.enable not be turned off again. */
  readonly tiered: boolean;
}

/**
 * Each topic's settings as its partitions take them: the engine's log settings, the topic's own
 * overrides (the embedded API's LogConfig), then its Kafka configs (the registry's, or in managed
 * mode the cluster's topic record's); acks=all's required followers; and the checks a change of
 * configs passes (InvalidConfig).
 */
export class TopicSettings {
  readonly #registry: TopicRegistry;
  readonly #log: Partial<LogConfig> | undefined;
  readonly #minInsyncReplicas: number | undefined;
  readonly #tiered: boolean;
  /**
   * Managed mode: each topic's Kafka configs as the cluster's topic record has them (takeClusterConfigs),
   * by name, kept across a delete: the node hands a name's configs over only when they change, and a
   * new incarnation's may equal the old one's. One small entry per topic name seen.
   */
  readonly #clusterConfigs = new Map<string, TopicConfigs>();
  /** Managed mode: the replication factor each led partition was adopted with (min.insync.replicas is capped by it). */
  readonly #replicationFactors = new Map<string, number>();

  constructor(registry: TopicRegistry, defaults: TopicSettingsDefaults) {
    this.#registry = registry;
    this.#log = defaults.log;
    this.#minInsyncReplicas = defaults.minInsyncReplicas;
    this.#tiered = defaults.tiered;
  }

  /** Managed mode: the cluster's topic record holds `configs` for `name` now. Returns whether they differ from the ones held before. */
  takeClusterConfigs(name: string, configs: TopicConfigs): boolean {
    const changed = !sameConfigs(this.#clusterConfigs.get(name) ?? {}, configs);
    this.#clusterConfigs.set(name, configs);
    return changed;
  }

  /** Managed mode: `topic`-`index` was adopted with `replicationFactor` replicas (null: let go of). */
  noteReplicationFactor(topic: string, index: number, replicationFactor: number | null): void {
    if (replicationFactor === null) this.#replicationFactors.delete(`${topic}/${index}`);
    else this.#replicationFactors.set(`${topic}/${index}`, replicationFactor);
  }

  /** The Kafka configs set on a topic (managed mode: as the cluster's record has them); UnknownTopicOrPartition if it is not here. */
  topicConfigs(name: string): TopicConfigs {
    const managed = this.#clusterConfigs.get(name);
    if (managed !== undefined) return managed;
    const topic = this.#registry.get(name);
    if (topic === undefined) throw unknownTopic(name);
    return topic.configs ?? {};
  }
  /** The broker's own topic defaults, by Kafka topic config name, where they differ from the catalog's (DescribeConfigs' STATIC_BROKER_CONFIG). */
  brokerTopicDefaults(): TopicConfigs {
    const log = resolveLogConfig(this.#log);
    const defaults: Record<string, string> = {};
    for (const definition of TOPIC_CONFIGS.values()) {
      const value = definition.name === 'min.insync.replicas' ? String(this.#minInsyncReplicas ?? 1) : configValueOfLogSetting(definition.name, log);
      if (value !== null && value !== definition.defaultValue) defaults[definition.name] = value;
    }
    return defaults;
  }
  /** DescribeConfigs of a topic here: every known config with its value, source and synonyms (src/log/topic-config-describe.ts). */
  describeTopicConfigs(name: string): TopicConfigEntry[] {
    const topic = this.#registry.get(name);
    const configs = this.topicConfigs(name);
    // The embedded API's LogConfig overrides count as set on the topic too.
    const own: Record<string, string> = {};
    const legacy = resolveLogConfig({ ...this.#log, ...topic?.config });
    for (const field of Object.keys(topic?.config ?? {})) {
      const kafkaName = kafkaNameOfLogField(field);
      if (kafkaName !== null) own[kafkaName] = configValueOfLogSetting(kafkaName, legacy)!;
    }
    return describeTopicConfigs({ ...own, ...configs }, this.brokerTopicDefaults());
  }
  /** The log settings of `topic`'s partitions: the engine's, the topic's own overrides, then its Kafka configs. */
  logConfigOf(name: string): Partial<LogConfig> {
    const managed = this.#clusterConfigs.get(name);
    const topic = this.#registry.get(name);
    return { ...this.#log, ...topic?.config, ...topicSettingsOf(managed ?? topic?.configs ?? {}).log };
  }
  /** acks=all's followers: min.insync.replicas (the topic's, else the engine's) less the leader, capped by the replicas a cluster gave the partition. */
  requiredFollowers(name: string, index: number): number {
    const configs = this.#clusterConfigs.get(name) ?? this.#registry.get(name)?.configs ?? {};
    const minInsync = topicSettingsOf(configs).minInsyncReplicas ?? this.#minInsyncReplicas ?? 1;
    const replicas = this.#replicationFactors.get(`${name}/${index}`) ?? Infinity;
    return Math.min(minInsync, replicas) - 1;
  }
  /**
   * Kafka configs (each already parsed) checked as a whole over this engine's defaults: InvalidConfig
   * when they clash (local.retention.* above retention.*), or, given the configs `before` an
   * alteration, when they change what may not change (remote.storage.enable turned off).
   */
  checkTopicConfigs(configs: TopicConfigs, before?: TopicConfigs): void {
    this.check({}, configs, before);
  }
  /** Configs that are each valid may still clash (local.retention.* above retention.*): InvalidConfig then. */
  check(config: Partial<LogConfig>, configs: TopicConfigs, before?: TopicConfigs): void {
    try {
      const settingsOf = (kafkaConfigs: TopicConfigs) => ({ ...this.#log, ...config, ...topicSettingsOf(kafkaConfigs).log });
      const settings = settingsOf(configs);
      checkTopicSettingsTogether({ ...DEFAULT_LOG_CONFIG, ...settings }); // Kafka's words first
      // Without a tier nothing was ever copied: remote.storage.enable may be turned off freely.
      if (before !== undefined && this.#tiered) checkTopicSettingsChange({ ...DEFAULT_LOG_CONFIG, ...settingsOf(before) }, { ...DEFAULT_LOG_CONFIG, ...settings });
      resolveLogConfig(settings);
    } catch (error) {
      if (error instanceof FerryError && error.kind === 'InvalidArgument') throw new FerryError('InvalidConfig', `Invalid topic configs: ${error.message}`);
      throw error;
    }
  }
}

export function sameConfigs(a: TopicConfigs, b: TopicConfigs): boolean {
  const names = Object.keys(a);
  return names.length === Object.keys(b).length && names.every((name) => a[name] === b[name]);
}
