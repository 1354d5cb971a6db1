/**
 * The keys a `ferry broker` config file may hold: Kafka's broker setting names where a concept
 * matches, `ferry.` names for Ferry's own settings (one per flag without a Kafka name), and, in
 * JSON only, the camelCase keys of the flags (the form JSON configs had first). Each maps to one
 * Ferry setting, with `convert` where Kafka's unit or form differs.
 */
import { CliError } from './args.ts';
import { FLAG_SETTINGS, integerValue as integer, type SettingName, SWITCH_SETTINGS } from './broker-settings.ts';
import { advertisedAddress, defaultAdvertisedAddress, listenAddress, listenerName, type ListenerSettings, pickListener } from './listeners.ts';

/** A value as a config file holds it: always a string in properties, any scalar in JSON. */
export type FileValue = string | number | boolean;

/** What a conversion may read of the rest of the file (listeners read their protocol map). */
export interface FileContext {
  readonly listeners: ListenerSettings;
  /** advertised.listeners as written, or null. */
  readonly advertisedListeners: string | null;
}

export interface ConfigKey {
  readonly key: string;
  /** The setting it sets; null: a Kafka setting Ferry checks (it must say what Ferry does) but needs nothing from. */
  readonly setting: SettingName | null;
  /** For --help and README: what the key is to Ferry. */
  readonly help: string;
  /** The file's value in the setting's form (a unit change, a listener picked); throws a CliError naming `source`. */
  readonly convert?: (value: FileValue, source: string, context: FileContext) => FileValue | null;
  /**
   * Kafka's precedence among keys of one setting (log.retention.ms over .minutes over .hours):
   * the highest rank given wins. Keys of one setting without a rank must agree.
   */
  readonly rank?: number;
}

const MS_PER_MINUTE = 60_000;
const MS_PER_HOUR = 60 * MS_PER_MINUTE;

/** Kafka's retention in minutes or hours: a negative value keeps everything (-1 ms). */
const retentionIn =
  (unitMs: number) =>
  (value: FileValue, source: string): FileValue => {
    const count = integer(value, source);
    return count < 0 ? -1 : count * unitMs;
  };

/** log.roll.hours: at least 1, as in Kafka. */
function rollHours(value: FileValue, source: string): FileValue {
  const hours = integer(value, source);
  if (hours < 1) throw new CliError(`${source} must be a positive integer, got '${value}'`);
  return hours * MS_PER_HOUR;
}

/** queued.max.request.bytes: Kafka's -1 (no limit) keeps Ferry's bound, which a broker needs to hold requests in memory. */
function queuedBytes(value: FileValue, source: string): FileValue | null {
  return integer(value, source) === -1 ? null : value;
}

/** log.dirs / log.dir: Ferry keeps one log directory. */
function oneDirectory(value: FileValue, source: string): FileValue {
  const directories = String(value)
    .split(',')
    .map((directory) => directory.trim())
    .filter((directory) => directory !== '');
  if (directories.length !== 1) throw new CliError(`${source} must name one directory (Ferry keeps one log directory), got '${value}'`);
  return directories[0]!;
}

function listeners(_value: FileValue, source: string, context: FileContext): FileValue {
  return listenAddress(pickListener(context.listeners, source).listener);
}

/** advertised.listeners' entry for the listener Ferry listens on; without one, an empty listen host is advertised as the machine's name. */
function advertisedListeners(value: FileValue, source: string, context: FileContext): FileValue | null {
  return advertisedAddress(String(value), listenerName(context.listeners, source), source);
}

function onlyValue(expected: string, why: string) {
  return (value: FileValue, source: string): null => {
    if (String(value).trim().toLowerCase() !== expected.toLowerCase()) throw new CliError(`${source} must be ${expected} (${why}), got '${value}'`);
    return null;
  };
}

/** Kafka's names for Ferry's settings. */
const KAFKA_KEYS: readonly ConfigKey[] = [
  { key: 'listeners', setting: 'listen', help: 'every broker listener (controller listeners skipped), each with its protocol; --listen changes the first', convert: listeners },
  { key: 'advertised.listeners', setting: 'advertised', help: 'what clients of each listener are told; --advertised changes the first', convert: advertisedListeners },
  { key: 'node.id', setting: 'nodeId', help: '--node-id' },
  { key: 'broker.id', setting: 'nodeId', help: '--node-id (must equal node.id if both are set)' },
  { key: 'broker.rack', setting: 'rack', help: '--rack' },
  { key: 'log.dirs', setting: 'data', help: '--data (one directory)', convert: oneDirectory, rank: 2 },
  { key: 'log.dir', setting: 'data', help: '--data (one directory; log.dirs wins)', convert: oneDirectory, rank: 1 },
  { key: 'num.partitions', setting: 'partitions', help: '--partitions' },
  { key: 'default.replication.factor', setting: 'replicationFactor', help: '--replication-factor' },
  { key: 'min.insync.replicas', setting: 'minInsyncReplicas', help: '--min-insync-replicas' },
  { key: 'auto.create.topics.enable', setting: 'autoCreate', help: 'false is --no-auto-create' },
  { key: 'remote.log.storage.system.enable', setting: 'tier', help: 'false is --no-tier (Ferry tiers by default)' },
  { key: 'max.connections', setting: 'maxConnections', help: '--max-connections' },
  { key: 'connections.max.idle.ms', setting: 'connectionsMaxIdleMs', help: '--connections-max-idle-ms' },
  { key: 'queued.max.request.bytes', setting: 'queuedMaxRequestBytes', help: "--queued-max-request-bytes (-1, Kafka's no limit: Ferry's default)", convert: queuedBytes },
  { key: 'offsets.retention.minutes', setting: 'offsetsRetentionMinutes', help: '--offsets-retention-minutes' },
  { key: 'log.segment.bytes', setting: 'segmentBytes', help: "topics' default segment.bytes" },
  { key: 'log.roll.ms', setting: 'segmentMs', help: "topics' default segment.ms", rank: 2 },
  { key: 'log.roll.hours', setting: 'segmentMs', help: 'segment.ms in hours (log.roll.ms wins)', convert: rollHours, rank: 1 },
  { key: 'log.retention.ms', setting: 'retentionMs', help: "topics' default retention.ms (-1: keep everything)", rank: 3 },
  { key: 'log.retention.minutes', setting: 'retentionMs', help: 'retention.ms in minutes (log.retention.ms wins)', convert: retentionIn(MS_PER_MINUTE), rank: 2 },
  { key: 'log.retention.hours', setting: 'retentionMs', help: 'retention.ms in hours (.ms and .minutes win)', convert: retentionIn(MS_PER_HOUR), rank: 1 },
  { key: 'log.retention.bytes', setting: 'retentionBytes', help: "topics' default retention.bytes (-1: no limit)" },
  { key: 'log.local.retention.ms', setting: 'localRetentionMs', help: "topics' default local.retention.ms (-2: as retention.ms)" },
  { key: 'log.local.retention.bytes', setting: 'localRetentionBytes', help: "topics' default local.retention.bytes (-2: as retention.bytes)" },
  { key: 'log.index.interval.bytes', setting: 'indexIntervalBytes', help: "topics' default index.interval.bytes" },
  { key: 'message.max.bytes', setting: 'maxMessageBytes', help: "topics' default max.message.bytes (largest record batch)" },
  { key: 'log.retention.check.interval.ms', setting: 'retentionCheckIntervalMs', help: 'how often retention runs' },
  { key: 'replica.lag.time.max.ms', setting: 'replicaLagTimeMaxMs', help: 'a follower behind this long leaves the ISR' },
  { key: 'log.message.timestamp.type', setting: 'messageTimestampType', help: "topics' default message.timestamp.type (CreateTime or LogAppendTime)" },
  { key: 'log.cleanup.policy', setting: null, help: 'delete only (no compaction yet)', convert: onlyValue('delete', 'Ferry has no log compaction yet') },
  { key: 'listener.security.protocol.map', setting: null, help: "each listener's protocol: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL" },
  { key: 'controller.listener.names', setting: null, help: 'read to skip controller listeners' },
];

/** Ferry's own settings: `ferry.` and the flag's name with dots for dashes. */
const FERRY_KEYS: readonly ConfigKey[] = [
  { key: 'ferry.wal.store', setting: 'walStore', help: '--wal-store' },
  { key: 'ferry.tier.store', setting: 'tierStore', help: '--tier-store' },
  { key: 'ferry.writer.id', setting: 'writerId', help: '--writer-id' },
  { key: 'ferry.upload.bytes', setting: 'uploadBytes', help: '--upload-bytes' },
  { key: 'ferry.upload.interval.ms', setting: 'uploadIntervalMs', help: '--upload-interval-ms' },
  { key: 'ferry.upload.when.idle', setting: 'uploadWhenIdle', help: 'false is --no-upload-when-idle' },
  { key: 'ferry.cluster.store', setting: 'clusterStore', help: '--cluster-store' },
  { key: 'ferry.lease.ms', setting: 'leaseMs', help: '--lease-ms' },
  { key: 'ferry.scan.interval.ms', setting: 'scanIntervalMs', help: '--scan-interval-ms' },
  { key: 'ferry.peer.port', setting: 'peerPort', help: '--peer-port' },
  { key: 'ferry.metrics', setting: 'metrics', help: '--metrics' },
  { key: 'ferry.unsafe.store', setting: 'unsafeStore', help: 'true is --unsafe-store' },
  { key: 'ferry.create.store', setting: 'createStore', help: 'true is --create-store' },
  { key: 'ferry.log.level', setting: 'logLevel', help: '--log-level' },
];

/** The JSON form's first keys: a flag's name in camelCase (and tier, autoCreate, unsafeStore, createStore for the switches). */
const JSON_CAMEL_CASE_KEYS: readonly SettingName[] = [...FLAG_SETTINGS, ...SWITCH_SETTINGS];

export type ConfigFormat = 'properties' | 'json';

/** The keys a file of `format` may hold, by name. */
export function configKeys(format: ConfigFormat): ReadonlyMap<string, ConfigKey> {
  const camelCase = format === 'json' ? JSON_CAMEL_CASE_KEYS.map((setting) => ({ key: setting, setting, help: 'the flag' })) : [];
  return new Map([...KAFKA_KEYS, ...FERRY_KEYS, ...camelCase].map((entry) => [entry.key, entry]));
}

/** Kafka names and ferry. names with what each is, for --help and README. */
export function configKeysHelp(): string[] {
  const width = Math.max(...[...KAFKA_KEYS, ...FERRY_KEYS].map((entry) => entry.key.length)) + 2;
  return [...KAFKA_KEYS, ...FERRY_KEYS].map((entry) => `${entry.key.padEnd(width)}${entry.help}`);
}

/** When listening on every interface without an advertised listener, the machine's name is advertised (Kafka's canonical host name). */
export function impliedAdvertised(context: FileContext, source: string): string | null {
  return context.listeners.listeners === null ? null : defaultAdvertisedAddress(pickListener(context.listeners, source).listener);
}
