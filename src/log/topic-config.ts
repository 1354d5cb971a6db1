/**
 * Kafka's topic-level configs as Ferry knows them: each name with Kafka's type, its default, its
 * broker-level synonym, a line of documentation, how a value is parsed and checked, and whether it
 * takes effect here. Topic configs are kept by their Kafka names with normalized string values
 * (TopicConfigs), as Kafka keeps them; `topicSettingsOf` turns them into the log's settings.
 *
 * What Ferry does with each name (`support`):
 * - `effective`: the value changes the log's behaviour, live (retention, rolling, sizes, ...).
 * - `harmless`: accepted and described, but there is nothing here it could change (a compaction
 *   tuning knob while only `delete` exists, a hint like preallocate): any valid value is safe.
 * - `fixed`: only Kafka's default is accepted; another value would ask for behaviour Ferry lacks,
 *   and accepting it would silently not take effect, so it is refused with the reason.
 */
import { FerryError } from '../errors.ts';
import { RECORD_BATCH_HEADER_BYTES } from '../format/record-batch.ts';
import { LOCAL_RETENTION_AS_RETENTION, type LogConfig } from './config.ts';

/** Kafka's ConfigDef.Type names (DescribeConfigs reports them). */
export type ConfigType = 'BOOLEAN' | 'STRING' | 'INT' | 'SHORT' | 'LONG' | 'DOUBLE' | 'LIST' | 'CLASS' | 'PASSWORD';

/** A topic's configs set on it: Kafka names to normalized values (only what was set; defaults are absent). */
export type TopicConfigs = Readonly<Record<string, string>>;

/**
 * The longest config value: Kafka's protocol STRING (DescribeConfigs must be able to answer it,
 * and an APPEND to a list config could otherwise grow one past it).
 */
export const CONFIG_VALUE_BYTES_MAX = 32_767;

export type TopicConfigSupport = 'effective' | 'harmless' | 'fixed';

export type TimestampType = 'CreateTime' | 'LogAppendTime';

/** What a topic's configs ask of its partitions. */
export interface TopicSettings {
  /** Overrides of the engine's log settings. */
  readonly log: Partial<LogConfig>;
  /** acks=all waits for this many replicas, the leader included; absent: the broker's setting. */
  readonly minInsyncReplicas?: number;
}

export interface TopicConfigDefinition {
  readonly name: string;
  readonly type: ConfigType;
  /** Kafka's default, as DescribeConfigs shows it (Ferry's own where it differs, said in `documentation`). */
  readonly defaultValue: string;
  /** The broker config whose value is the default for every topic (Kafka's synonym); null: none. */
  readonly brokerSynonym: string | null;
  readonly documentation: string;
  readonly support: TopicConfigSupport;
  /** `fixed`: why another value cannot take effect here. */
  readonly fixedReason?: string;
  /** Checks a trimmed value and returns it normalized; throws the reason (without the name) when invalid. */
  readonly parse: (value: string) => string;
  /** `effective`: the settings a (normalized) value gives. */
  readonly settings?: (value: string) => TopicSettings;
}

/** Kafka's Long.MAX_VALUE, the "never" of its time and size configs. */
const LONG_MAX = 2n ** 63n - 1n;
const LONG_MIN = -(2n ** 63n);
const INT_MAX = 2 ** 31 - 1;
const INT_MIN = -(2 ** 31);
const MS_PER_DAY = 24 * 60 * 60 * 1000;
/** Kafka 4.0's floor for segment.bytes (KIP-1030): smaller segments cost a file per few batches. */
const SEGMENT_BYTES_MIN = 1024 * 1024;
/** zstd's level range as Kafka checks it (compression.zstd.level). */
const ZSTD_LEVEL_MIN = -131072;
const ZSTD_LEVEL_MAX = 22;

/** A value Kafka's ConfigDef would reject: becomes "Invalid value v for configuration n: reason". */
class InvalidValue extends Error {}

function invalid(reason: string): never {
  throw new InvalidValue(reason);
}

/** An integer of a Kafka type (Long.parseLong and friends: optional sign, digits only). */
function integerOf(value: string, type: 'LONG' | 'INT', min: bigint, max: bigint): bigint {
  if (!/^[+-]?\d+$/.test(value)) invalid(`Not a number of type ${type}`);
  const parsed = BigInt(value);
  if (parsed < min || parsed > max) invalid(`Not a number of type ${type}`);
  return parsed;
}

/** Kafka's ConfigDef.Range checks, with its messages. */
function inRange(parsed: bigint | number, min: bigint | number | null, max: bigint | number | null): void {
  if (min !== null && parsed < min) invalid(`Value must be at least ${min}`);
  if (max !== null && parsed > max) invalid(`Value must be no more than ${max}`);
}

function long(min: bigint | null = null, max: bigint | null = null): (value: string) => string {
  return (value) => {
    const parsed = integerOf(value, 'LONG', LONG_MIN, LONG_MAX);
    inRange(parsed, min, max);
    return parsed.toString();
  };
}

function int(min: number | null = null, max: number | null = null): (value: string) => string {
  return (value) => {
    const parsed = integerOf(value, 'INT', BigInt(INT_MIN), BigInt(INT_MAX));
    inRange(parsed, min === null ? null : BigInt(min), max === null ? null : BigInt(max));
    return parsed.toString();
  };
}

function double(min: number, max: number): (value: string) => string {
  return (value) => {
    const parsed = Number(value);
    if (value === '' || !Number.isFinite(parsed)) invalid('Not a number of type DOUBLE');
    inRange(parsed, min, max);
    return String(parsed);
  };
}

function boolean(value: string): string {
  const lower = value.toLowerCase();
  if (lower !== 'true' && lower !== 'false') invalid('Expected value to be either true or false');
  return lower;
}

function oneOf(...allowed: string[]): (value: string) => string {
  return (value) => {
    if (!allowed.includes(value)) invalid(`String must be one of: ${allowed.join(', ')}`);
    return value;
  };
}

/** A LIST's items, trimmed, as Kafka splits them (commas; an empty value is the empty list). */
export function listItems(value: string): string[] {
  return value.trim() === '' ? [] : value.split(',').map((item) => item.trim());
}

/** cleanup.policy: Kafka's ValidList of compact and delete; only delete works here until compaction exists. */
function cleanupPolicy(value: string): string {
  const items = listItems(value);
  for (const item of items) if (item !== 'compact' && item !== 'delete') invalid(`Invalid value ${item} for configuration cleanup.policy: String must be one of: compact, delete`);
  if (items.includes('compact')) invalid('Ferry does not compact logs yet: cleanup.policy may only be delete');
  if (items.length === 0) invalid('cleanup.policy must name at least delete: Ferry has no other policy');
  return [...new Set(items)].join(',');
}

/** The throttled-replicas lists: "*" or partition:broker pairs (Kafka's ThrottledReplicaListValidator). */
function throttledReplicas(value: string): string {
  const items = listItems(value);
  if (items.length === 1 && items[0] === '*') return '*';
  for (const item of items) if (!/^\d+:\d+$/.test(item)) invalid('Must be the wildcard (*) or of the form partitionId:brokerId,... (comma separated)');
  return items.join(',');
}

/** A number of ms or bytes for the log's settings: Long.MAX_VALUE and anything past 2^53 mean "never", as far as a JS number goes. */
function safeNumber(value: string): number {
  const parsed = BigInt(value);
  return parsed > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(parsed);
}

function logSetting<K extends keyof LogConfig>(field: K, of: (value: string) => LogConfig[K]): (value: string) => TopicSettings {
  return (value) => ({ log: { [field]: of(value) } as Partial<LogConfig> });
}

function effective(
  name: string,
  type: ConfigType,
  defaultValue: string,
  brokerSynonym: string | null,
  documentation: string,
  parse: (value: string) => string,
  settings: (value: string) => TopicSettings,
): TopicConfigDefinition {
  return { name, type, defaultValue, brokerSynonym, documentation, support: 'effective', parse, settings };
}

function harmless(name: string, type: ConfigType, defaultValue: string, brokerSynonym: string | null, documentation: string, parse: (value: string) => string): TopicConfigDefinition {
  return { name, type, defaultValue, brokerSynonym, documentation, support: 'harmless', parse };
}

function fixed(
  name: string,
  type: ConfigType,
  defaultValue: string,
  brokerSynonym: string | null,
  documentation: string,
  parse: (value: string) => string,
  fixedReason: string,
): TopicConfigDefinition {
  return { name, type, defaultValue, brokerSynonym, documentation, support: 'fixed', parse, fixedReason };
}

const DEFINITIONS: readonly TopicConfigDefinition[] = [
  effective('cleanup.policy', 'LIST', 'delete', 'log.cleanup.policy', 'What happens to old segments: delete removes them by retention (compact is not supported yet).', cleanupPolicy, () => ({
    log: {},
  })),
  effective(
    'retention.ms',
    'LONG',
    String(7 * MS_PER_DAY),
    'log.retention.ms',
    'How long a segment is kept after its newest record; -1 keeps segments forever.',
    long(-1n),
    logSetting('retentionMs', safeNumber),
  ),
  effective(
    'retention.bytes',
    'LONG',
    '-1',
    'log.retention.bytes',
    'The largest a partition may grow before its oldest segments are deleted; -1 for no limit.',
    long(),
    logSetting('retentionBytes', (v) => Math.max(-1, safeNumber(v))),
  ),
  effective('segment.bytes', 'INT', String(1024 * 1024 * 1024), 'log.segment.bytes', 'The size at which the active segment is rolled.', int(SEGMENT_BYTES_MIN), logSetting('segmentBytes', Number)),
  effective(
    'segment.ms',
    'LONG',
    String(7 * MS_PER_DAY),
    'log.roll.ms',
    'The age of its first record at which the active segment is rolled, full or not.',
    long(1n),
    logSetting('segmentMs', safeNumber),
  ),
  effective(
    'max.message.bytes',
    'INT',
    String(1024 * 1024 + 12),
    'message.max.bytes',
    'The largest record batch a producer may append, its 12-byte log overhead included.',
    int(RECORD_BATCH_HEADER_BYTES),
    logSetting('maxBatchBytes', Number),
  ),
  effective(
    'message.timestamp.type',
    'STRING',
    'CreateTime',
    'log.message.timestamp.type',
    'Whose clock stamps a batch: the producer (CreateTime) or the leader when it appends (LogAppendTime).',
    oneOf('CreateTime', 'LogAppendTime'),
    logSetting('messageTimestampType', (v) => v as TimestampType),
  ),
  effective('min.insync.replicas', 'INT', '1', 'min.insync.replicas', 'How many replicas, the leader included, must hold a batch before acks=all is answered.', int(1), (v) => ({
    log: {},
    minInsyncReplicas: Number(v),
  })),
  effective(
    'remote.storage.enable',
    'BOOLEAN',
    'true',
    null,
    "Whether rolled segments are copied to the long-term tier (Ferry's default is true, Kafka's false: a stateless broker needs the tier).",
    boolean,
    logSetting('remoteStorageEnable', (v) => v === 'true'),
  ),
  effective(
    'local.retention.ms',
    'LONG',
    String(LOCAL_RETENTION_AS_RETENTION),
    'log.local.retention.ms',
    'How long local disk keeps segments already tiered; -2 for retention.ms.',
    long(BigInt(LOCAL_RETENTION_AS_RETENTION)),
    logSetting('localRetentionMs', safeNumber),
  ),
  effective(
    'local.retention.bytes',
    'LONG',
    String(LOCAL_RETENTION_AS_RETENTION),
    'log.local.retention.bytes',
    'How many bytes of tiered segments local disk keeps; -2 for retention.bytes.',
    long(BigInt(LOCAL_RETENTION_AS_RETENTION)),
    logSetting('localRetentionBytes', safeNumber),
  ),
  effective(
    'index.interval.bytes',
    'INT',
    '4096',
    'log.index.interval.bytes',
    'Bytes of log between two offset-index entries (for segments rolled after a change).',
    int(0),
    logSetting('indexIntervalBytes', Number),
  ),
  harmless('compression.gzip.level', 'INT', '-1', 'compression.gzip.level', 'The gzip level a broker recompresses with; Ferry stores batches as sent, so it never applies.', gzipLevel),
  harmless('compression.lz4.level', 'INT', '9', 'compression.lz4.level', 'The lz4 level a broker recompresses with; Ferry stores batches as sent, so it never applies.', int(1, 17)),
  harmless(
    'compression.zstd.level',
    'INT',
    '3',
    'compression.zstd.level',
    'The zstd level a broker recompresses with; Ferry stores batches as sent, so it never applies.',
    int(ZSTD_LEVEL_MIN, ZSTD_LEVEL_MAX),
  ),
  harmless('delete.retention.ms', 'LONG', String(MS_PER_DAY), 'log.cleaner.delete.retention.ms', 'How long a compacted topic keeps delete markers (no compaction here: unused).', long(0n)),
  harmless('min.compaction.lag.ms', 'LONG', '0', 'log.cleaner.min.compaction.lag.ms', 'The least time a record stays uncompacted (no compaction here: unused).', long(0n)),
  harmless('max.compaction.lag.ms', 'LONG', LONG_MAX.toString(), 'log.cleaner.max.compaction.lag.ms', 'The most time a record stays uncompacted (no compaction here: unused).', long(1n)),
  harmless('min.cleanable.dirty.ratio', 'DOUBLE', '0.5', 'log.cleaner.min.cleanable.ratio', 'How dirty a log must be before it is compacted (no compaction here: unused).', double(0, 1)),
  harmless('preallocate', 'BOOLEAN', 'false', 'log.preallocate', 'Whether segment files are preallocated on disk; a hint Ferry does not need.', boolean),
  harmless('segment.index.bytes', 'INT', String(10 * 1024 * 1024), 'log.index.size.max.bytes', "The largest an offset index may grow; Ferry's indexes grow as needed.", int(4)),
  harmless(
    'unclean.leader.election.enable',
    'BOOLEAN',
    'false',
    'unclean.leader.election.enable',
    'Whether an out-of-sync replica may lead; a Ferry leader rebuilds from object storage, so none is ever unclean.',
    boolean,
  ),
  harmless('leader.replication.throttled.replicas', 'LIST', '', null, 'Replicas whose replication the leader throttles; Ferry replicates through object storage.', throttledReplicas),
  harmless('follower.replication.throttled.replicas', 'LIST', '', null, 'Replicas whose replication the follower throttles; Ferry replicates through object storage.', throttledReplicas),
  fixed(
    'compression.type',
    'STRING',
    'producer',
    'compression.type',
    'The codec batches are stored in: producer keeps them as sent.',
    oneOf('uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'),
    'Ferry stores batches as the producer sent them (docs/design.md contract 1) and never recompresses',
  ),
  fixed('file.delete.delay.ms', 'LONG', '60000', 'log.segment.delete.delay.ms', 'How long a deleted segment file lingers before removal.', long(0n), 'Ferry removes a deleted segment at once'),
  fixed(
    'flush.messages',
    'LONG',
    LONG_MAX.toString(),
    'log.flush.interval.messages',
    'Records between forced flushes.',
    long(1n),
    "Ferry's flush policy is the broker's (group commit), not per topic",
  ),
  fixed('flush.ms', 'LONG', LONG_MAX.toString(), 'log.flush.interval.ms', 'Time between forced flushes.', long(0n), "Ferry's flush policy is the broker's (group commit), not per topic"),
  fixed('segment.jitter.ms', 'LONG', '0', 'log.roll.jitter.ms', 'Random time taken off segment.ms per segment.', long(0n), 'Ferry rolls segments without jitter'),
  fixed(
    'message.timestamp.after.max.ms',
    'LONG',
    String(60 * 60 * 1000),
    'log.message.timestamp.after.max.ms',
    "How far ahead of the leader's clock a CreateTime may be.",
    long(0n),
    'Ferry holds this limit at its default for every topic',
  ),
  fixed(
    'message.timestamp.before.max.ms',
    'LONG',
    LONG_MAX.toString(),
    'log.message.timestamp.before.max.ms',
    "How far behind the leader's clock a CreateTime may be.",
    long(0n),
    'Ferry holds this limit at its default for every topic',
  ),
  fixed('remote.log.copy.disable', 'BOOLEAN', 'false', null, 'Stops copying segments to the tier while keeping what is there.', boolean, 'use remote.storage.enable: Ferry has no copy-only switch'),
  fixed('remote.log.delete.on.disable', 'BOOLEAN', 'false', null, 'Deletes the tiered data when remote storage is disabled.', boolean, 'Ferry keeps tiered data when remote storage is disabled'),
];

function gzipLevel(value: string): string {
  const level = int()(value);
  if (level !== '-1' && (Number(level) < 1 || Number(level) > 9)) invalid('Value must be -1 (default) or in [1, 9]');
  return level;
}

/** Every topic config name Ferry knows, in Kafka's alphabetical order (as DescribeConfigs lists them). */
export const TOPIC_CONFIGS: ReadonlyMap<string, TopicConfigDefinition> = new Map([...DEFINITIONS].sort((a, b) => a.name.localeCompare(b.name)).map((definition) => [definition.name, definition]));

for (const definition of DEFINITIONS) {
  // Every default must pass its own check, or describing a topic would show a value it cannot be set to.
  if (definition.parse(definition.defaultValue) !== definition.defaultValue) throw new Error(`topic config ${definition.name}: its default ${definition.defaultValue} is not normalized`);
}

export function invalidConfig(message: string): FerryError {
  return new FerryError('InvalidConfig', message);
}

/** The definition of `name`; InvalidConfig "Unknown topic config name: x" for a name Ferry does not know. */
export function topicConfigDefinition(name: string): TopicConfigDefinition {
  const definition = TOPIC_CONFIGS.get(name);
  if (definition === undefined) throw invalidConfig(`Unknown topic config name: ${name}`);
  return definition;
}

/**
 * One value for `name`, checked as Kafka checks it and normalized (trimmed, canonical numbers);
 * InvalidConfig "Invalid value v for configuration n: reason" when it is not valid, or when it is
 * valid in Kafka but cannot take effect here (a `fixed` config set to anything but its default).
 */
export function parseTopicConfig(name: string, value: string | null): string {
  const definition = topicConfigDefinition(name);
  if (value === null) throw invalidConfig(`Invalid value null for configuration ${name}: a topic config needs a value (delete it to use the default)`);
  const valueBytes = Buffer.byteLength(value, 'utf8');
  if (valueBytes > CONFIG_VALUE_BYTES_MAX) throw invalidConfig(`Invalid value for configuration ${name}: ${valueBytes} bytes, more than a config value holds (${CONFIG_VALUE_BYTES_MAX})`);
  let normalized: string;
  try {
    normalized = definition.parse(value.trim());
  } catch (error) {
    if (!(error instanceof InvalidValue)) throw error;
    throw invalidConfig(error.message.startsWith('Invalid value') ? error.message : `Invalid value ${value} for configuration ${name}: ${error.message}`);
  }
  if (definition.support === 'fixed' && normalized !== definition.defaultValue) {
    throw invalidConfig(`Invalid value ${value} for configuration ${name}: only ${definition.defaultValue} is supported: ${definition.fixedReason}`);
  }
  return normalized;
}

/** Every entry of `configs` parsed (parseTopicConfig); the first bad one throws, so a bad set changes nothing. */
export function parseTopicConfigs(configs: Iterable<readonly [string, string | null]>): TopicConfigs {
  const parsed: Record<string, string> = {};
  for (const [name, value] of configs) {
    if (Object.hasOwn(parsed, name)) throw invalidConfig(`Invalid config ${name}: it is given more than once`);
    parsed[name] = parseTopicConfig(name, value);
  }
  return parsed;
}

/** What a topic's (parsed) configs ask of its partitions: the effective ones' settings, merged. */
export function topicSettingsOf(configs: TopicConfigs): TopicSettings {
  let log: Partial<LogConfig> = {};
  let minInsyncReplicas: number | undefined;
  for (const [name, value] of Object.entries(configs)) {
    const settings = topicConfigDefinition(name).settings?.(value);
    if (settings === undefined) continue;
    log = { ...log, ...settings.log };
    if (settings.minInsyncReplicas !== undefined) minInsyncReplicas = settings.minInsyncReplicas;
  }
  return minInsyncReplicas === undefined ? { log } : { log, minInsyncReplicas };
}

/** The log setting each effective Kafka name sets (min.insync.replicas and cleanup.policy set none). */
const LOG_FIELDS: Readonly<Record<string, keyof LogConfig>> = {
  'retention.ms': 'retentionMs',
  'retention.bytes': 'retentionBytes',
  'segment.bytes': 'segmentBytes',
  'segment.ms': 'segmentMs',
  'max.message.bytes': 'maxBatchBytes',
  'message.timestamp.type': 'messageTimestampType',
  'remote.storage.enable': 'remoteStorageEnable',
  'local.retention.ms': 'localRetentionMs',
  'local.retention.bytes': 'localRetentionBytes',
  'index.interval.bytes': 'indexIntervalBytes',
};

/** The Kafka name of a log setting; null for one that has none (the flush policy). */
export function kafkaNameOfLogField(field: string): string | null {
  return Object.entries(LOG_FIELDS).find(([, candidate]) => candidate === field)?.[0] ?? null;
}

/** The Kafka value of a log setting, for the names that have one (describing an engine's settings); null otherwise. */
export function configValueOfLogSetting(name: string, config: LogConfig): string | null {
  const field = LOG_FIELDS[name];
  return field === undefined ? null : String(config[field]);
}

/**
 * Kafka's checks between configs (LogConfig.validateLocalRetention*), on the settings a topic ends
 * up with: local disk may not keep more of the tiered log than the whole log keeps.
 */
export function checkTopicSettingsTogether(config: LogConfig): void {
  checkLocalRetention('local.retention.ms', config.localRetentionMs, 'retention.ms', config.retentionMs);
  checkLocalRetention('local.retention.bytes', config.localRetentionBytes, 'retention.bytes', config.retentionBytes);
}

/**
 * A topic's settings before and after an alteration on an engine with a tier, checked as a change.
 * Turning remote.storage.enable off on a topic that had it on is refused, as Kafka refuses it without
 * remote.log.delete.on.disable (KIP-950), which Ferry does not have: the tier would keep what it
 * holds with no retention running over it, local retention would then delete segments never
 * tiered, and a new leader would rebuild from the tier's end what the leader before had deleted.
 */
export function checkTopicSettingsChange(before: LogConfig, after: LogConfig): void {
  if (before.remoteStorageEnable && !after.remoteStorageEnable) {
    throw invalidConfig(
      'It is invalid to disable remote storage without deleting remote data, and Ferry cannot delete it on disable (remote.log.delete.on.disable): keep remote.storage.enable=true, or delete and re-create the topic.',
    );
  }
}

function checkLocalRetention(localName: string, local: number, totalName: string, total: number): void {
  if (local === LOCAL_RETENTION_AS_RETENTION || total === -1) return;
  if (local === -1) throw invalidConfig(`Invalid value -1 for configuration ${localName}: Value must not be -1 as ${totalName} value is set as ${total}.`);
  if (local > total) throw invalidConfig(`Invalid value ${local} for configuration ${localName}: Value must not be more than ${totalName} property value: ${total}`);
}
