/**
 * `ferry broker`'s settings: each as one source gave it (a flag, a FERRY_* variable, a config file
 * key), remembering that source so an error names what the user wrote, then checked and typed
 * into a BrokerConfig. Layers merge later over earlier: defaults < config file < env < flags.
 */
import { LOG_LEVEL_DEFAULT, parseLogLevel } from './log-output.ts';
import type { LogThreshold } from '../observability/logger.ts';
import { CONNECTIONS_MAX_IDLE_MS_DEFAULT, QUEUED_REQUEST_BYTES_MAX_DEFAULT, REQUEST_BYTES_MAX } from '../broker/connection.ts';
import { OFFSETS_RETENTION_MINUTES_DEFAULT } from '../broker/groups/offset-expiry.ts';
import { MAX_CONNECTIONS_DEFAULT } from '../broker/server.ts';
import { FerryError } from '../errors.ts';
import { RECORD_BATCH_HEADER_BYTES } from '../format/record-batch.ts';
import { LOCAL_RETENTION_AS_RETENTION, type LogConfig, resolveLogConfig } from '../log/config.ts';
import { fileStoreDirectory } from '../store/url.ts';
import { DEFAULT_WAL_WRITER_CONFIG } from '../wal/writer.ts';
import { CliError } from './args.ts';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { BrokerSecurityOptions } from '../broker/auth/broker-security.ts';
import type { ListenerConfig } from '../broker/auth/listener-config.ts';

/** The settings a flag or FERRY_* variable also sets (the JSON config's camelCase keys). */
export const FLAG_SETTINGS = [
  'listen',
  'advertised',
  'nodeId',
  'rack',
  'data',
  'walStore',
  'tierStore',
  'writerId',
  'uploadBytes',
  'uploadIntervalMs',
  'partitions',
  'replicationFactor',
  'minInsyncReplicas',
  'metrics',
  'clusterStore',
  'leaseMs',
  'scanIntervalMs',
  'peerPort',
  'maxConnections',
  'connectionsMaxIdleMs',
  'queuedMaxRequestBytes',
  'offsetsRetentionMinutes',
  'logLevel',
] as const;
/** Settings that are on/off: `--no-tier`, `--no-auto-create`, `--unsafe-store`, `--create-store`, `--no-upload-when-idle`. */
export const SWITCH_SETTINGS = ['tier', 'autoCreate', 'unsafeStore', 'createStore', 'uploadWhenIdle'] as const;
/** Topic-level defaults and engine settings only a config file sets, by their Kafka names. */
export const FILE_ONLY_SETTINGS = [
  'segmentBytes',
  'segmentMs',
  'retentionBytes',
  'retentionMs',
  'localRetentionBytes',
  'localRetentionMs',
  'indexIntervalBytes',
  'maxMessageBytes',
  'messageTimestampType',
  'retentionCheckIntervalMs',
  'replicaLagTimeMaxMs',
] as const;

export type SettingName = (typeof FLAG_SETTINGS)[number] | (typeof SWITCH_SETTINGS)[number] | (typeof FILE_ONLY_SETTINGS)[number];

/** A setting's value before it is checked, and who gave it: `--partitions`, `FERRY_PARTITIONS`, `config f: num.partitions`. */
export interface RawSetting {
  readonly value: string | number | boolean;
  readonly source: string;
}

export type RawSettings = Partial<Record<SettingName, RawSetting>>;

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** Everything `ferry broker` starts with, checked. */
export interface BrokerConfig {
  readonly listen: HostPort;
  /** What clients are told to connect to; null: the listen address. */
  readonly advertised: HostPort | null;
  readonly nodeId: number;
  readonly rack: string | null;
  /** The log directory as given (relative to the working directory). */
  readonly data: string;
  /** null: a file store under the data directory. */
  readonly walStore: string | null;
  /** null: the WAL store (unless tier is off). */
  readonly tierStore: string | null;
  readonly tier: boolean;
  readonly writerId: string;
  readonly uploadBytes: number;
  readonly uploadIntervalMs: number;
  /** [W8] an idle WAL writer uploads at once (docs/wal-protocol.md); off: only at the size or the interval. */
  readonly uploadWhenIdle: boolean;
  readonly partitions: number;
  readonly replicationFactor: number;
  readonly minInsyncReplicas: number;
  /** null: no metrics endpoint. */
  readonly metrics: HostPort | null;
  /** null: a single broker. */
  readonly cluster: { readonly store: string; readonly leaseMs: number; readonly scanIntervalMs: number; readonly peerPort: number | null } | null;
  /** Without a cluster store: the lease and scan of the cluster of one the broker is over its WAL store (docs/cluster-protocol.md). */
  readonly lone: { readonly leaseMs: number; readonly scanIntervalMs: number } | null;
  readonly maxConnections: number;
  readonly connectionsMaxIdleMs: number;
  readonly queuedMaxRequestBytes: number;
  readonly offsetsRetentionMs: number;
  readonly autoCreate: boolean;
  readonly unsafeStore: boolean;
  /** A `file:` store whose directory is missing is created (else refused, unless it is the default under the data directory). */
  readonly createStore: boolean;
  /** The engine's default log config: what the settings gave, over Kafka's defaults, flush left to the WAL. */
  readonly log: Partial<LogConfig>;
  /** null: the engine's default (Kafka's 5 minutes). */
  readonly retentionCheckIntervalMs: number | null;
  /** null: the engine's default (Kafka's 30 s). */
  readonly replicaLagTimeMaxMs: number | null;
  /** The config file's listeners with their security (the first at `listen`/`advertised`); null: one PLAINTEXT listener. */
  readonly listeners: readonly ListenerConfig[] | null;
  /** Authorization, the inter-broker client, per-IP limits (docs/security.md). */
  readonly security: BrokerSecurityOptions;
  /** The lowest level of log line written (`silent`: none). */
  readonly logLevel: LogThreshold;
}

const DEFAULT_LISTEN = '127.0.0.1:9092';
const DEFAULT_METRICS = '127.0.0.1:9644';
const DEFAULT_DATA = './data';
/** The WAL store's directory under the data directory when no --wal-store is given (src/cli/broker.ts). */
export const DEFAULT_STORE_DIRECTORY = 'objects';
const DEFAULT_NODE_ID = 1;
const DEFAULT_LEASE_MS = 10_000;
const DEFAULT_SCAN_INTERVAL_MS = 1000;
const MS_PER_MINUTE = 60_000;
const PORT_MAX = 65535;
/** Kafka's int settings: positions and sizes in the log are int32. */
const INT32_MAX = 2 ** 31 - 1;
/** KIP-1030 (Kafka 4.0): segment.bytes is at least 1 MiB. */
const SEGMENT_BYTES_MIN = 1024 * 1024;
/** -1 keeps everything (retention.bytes, retention.ms); Kafka reads any negative value so. */
const KEEP_EVERYTHING = -1;
/** S3 Express One Zone directory buckets are named `<base>--<zone id>--x-s3`. */
const S3_EXPRESS_BUCKET = /^s3:\/\/[^/?]+--x-s3(?:[/?]|$)/;

/** The FERRY_* variable of a setting: FERRY_NODE_ID for nodeId. */
export function envName(setting: SettingName): string {
  return `FERRY_${setting.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
}

/** The flag of a setting: --node-id for nodeId. */
export function flagName(setting: SettingName): string {
  return setting.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** FERRY_* variables (FERRY_UNSAFE_STORE and FERRY_CREATE_STORE are 1, true or yes to be on). */
export function settingsFromEnv(env: Readonly<Record<string, string | undefined>>): RawSettings {
  const settings: RawSettings = {};
  for (const setting of FLAG_SETTINGS) {
    const value = env[envName(setting)];
    if (value !== undefined) settings[setting] = { value, source: envName(setting) };
  }
  const unsafe = env.FERRY_UNSAFE_STORE;
  if (unsafe !== undefined) settings.unsafeStore = { value: /^(1|true|yes)$/i.test(unsafe), source: 'FERRY_UNSAFE_STORE' };
  const create = env.FERRY_CREATE_STORE;
  if (create !== undefined) settings.createStore = { value: /^(1|true|yes)$/i.test(create), source: 'FERRY_CREATE_STORE' };
  const whenIdle = env.FERRY_UPLOAD_WHEN_IDLE;
  if (whenIdle !== undefined) settings.uploadWhenIdle = { value: whenIdle, source: 'FERRY_UPLOAD_WHEN_IDLE' };
  return settings;
}

/** Command-line flags, as parseArgs gives them. */
export function settingsFromFlags(values: { readonly [name: string]: string | boolean | undefined }): RawSettings {
  const settings: RawSettings = {};
  for (const setting of FLAG_SETTINGS) {
    const value = values[flagName(setting)];
    if (typeof value === 'string') settings[setting] = { value, source: `--${flagName(setting)}` };
  }
  if (values['no-auto-create'] === true) settings.autoCreate = { value: false, source: '--no-auto-create' };
  if (values['no-tier'] === true) settings.tier = { value: false, source: '--no-tier' };
  if (values['unsafe-store'] === true) settings.unsafeStore = { value: true, source: '--unsafe-store' };
  if (values['create-store'] === true) settings.createStore = { value: true, source: '--create-store' };
  if (values['no-upload-when-idle'] === true) settings.uploadWhenIdle = { value: false, source: '--no-upload-when-idle' };
  return settings;
}

/** --log-level, FERRY_LOG_LEVEL or ferry.log.level, checked. */
function logLevelOf(read: SettingReader): LogThreshold {
  const given = read.sourced('logLevel');
  return given === null ? LOG_LEVEL_DEFAULT : parseLogLevel(given.value, given.source);
}

/** Checks and types merged settings; every error names the setting's source. */
export function brokerConfigOf(settings: RawSettings): BrokerConfig {
  const read = new SettingReader(settings);
  const nodeId = read.integer('nodeId', DEFAULT_NODE_ID, 1);
  const clusterStore = read.text('clusterStore');
  const config: BrokerConfig = {
    listen: read.hostPort('listen', DEFAULT_LISTEN)!,
    advertised: read.hostPort('advertised', null),
    nodeId,
    rack: read.text('rack'),
    data: read.text('data') ?? DEFAULT_DATA,
    walStore: read.text('walStore'),
    tierStore: read.text('tierStore'),
    tier: read.switch('tier', true),
    writerId: read.text('writerId') ?? `broker-${nodeId}`,
    uploadBytes: read.integer('uploadBytes', DEFAULT_WAL_WRITER_CONFIG.uploadBytes, 1),
    uploadIntervalMs: read.integer('uploadIntervalMs', DEFAULT_WAL_WRITER_CONFIG.uploadIntervalMs, 1),
    uploadWhenIdle: read.switch('uploadWhenIdle', DEFAULT_WAL_WRITER_CONFIG.uploadWhenIdle),
    partitions: read.integer('partitions', 1, 1),
    replicationFactor: read.integer('replicationFactor', 1, 1),
    minInsyncReplicas: read.integer('minInsyncReplicas', 1, 1),
    metrics: read.hostPort('metrics', DEFAULT_METRICS, 'off'),
    cluster:
      clusterStore === null
        ? null
        : { store: clusterStore, leaseMs: read.integer('leaseMs', DEFAULT_LEASE_MS, 1), scanIntervalMs: read.integer('scanIntervalMs', DEFAULT_SCAN_INTERVAL_MS, 1), peerPort: read.peerPort() },
    lone: clusterStore !== null ? null : { leaseMs: read.integer('leaseMs', DEFAULT_LEASE_MS, 1), scanIntervalMs: read.integer('scanIntervalMs', DEFAULT_SCAN_INTERVAL_MS, 1) },
    maxConnections: read.integer('maxConnections', MAX_CONNECTIONS_DEFAULT, 1),
    connectionsMaxIdleMs: read.integer('connectionsMaxIdleMs', CONNECTIONS_MAX_IDLE_MS_DEFAULT, 1),
    queuedMaxRequestBytes: read.integer('queuedMaxRequestBytes', QUEUED_REQUEST_BYTES_MAX_DEFAULT, REQUEST_BYTES_MAX, 'the largest request'),
    offsetsRetentionMs: read.integer('offsetsRetentionMinutes', OFFSETS_RETENTION_MINUTES_DEFAULT, 1) * MS_PER_MINUTE,
    autoCreate: read.switch('autoCreate', true),
    unsafeStore: read.switch('unsafeStore', false),
    createStore: read.switch('createStore', false),
    log: logConfigOf(read),
    logLevel: logLevelOf(read),
    retentionCheckIntervalMs: read.optionalInteger('retentionCheckIntervalMs', 1),
    replicaLagTimeMaxMs: read.optionalInteger('replicaLagTimeMaxMs', 1),
    listeners: null,
    security: {},
  };
  checkTierStore(config, settings);
  checkStoreDirectories(config, settings);
  return config;
}

/** Kafka's message.timestamp.type values (log.message.timestamp.type at broker level). */
const TIMESTAMP_TYPES = ['CreateTime', 'LogAppendTime'] as const;

/** The topic-level defaults that were set, flush left to the WAL (durability comes from the WAL objects, KIP-1176). */
function logConfigOf(read: SettingReader): Partial<LogConfig> {
  const log: Partial<Record<keyof LogConfig, unknown>> = { flush: { kind: 'none' } };
  const set = (field: keyof LogConfig, value: number | null) => value !== null && (log[field] = value);
  set('segmentBytes', read.optionalInteger('segmentBytes', SEGMENT_BYTES_MIN, INT32_MAX));
  set('segmentMs', read.optionalInteger('segmentMs', 1));
  set('retentionBytes', read.retention('retentionBytes'));
  set('retentionMs', read.retention('retentionMs'));
  set('localRetentionBytes', read.optionalInteger('localRetentionBytes', LOCAL_RETENTION_AS_RETENTION));
  set('localRetentionMs', read.optionalInteger('localRetentionMs', LOCAL_RETENTION_AS_RETENTION));
  set('indexIntervalBytes', read.optionalInteger('indexIntervalBytes', 0, INT32_MAX));
  set('maxBatchBytes', read.optionalInteger('maxMessageBytes', RECORD_BATCH_HEADER_BYTES, INT32_MAX, 'a record batch header'));
  const timestampType = read.optionalChoice('messageTimestampType', TIMESTAMP_TYPES);
  if (timestampType !== null) log.messageTimestampType = timestampType;
  try {
    resolveLogConfig(log as Partial<LogConfig>); // what relates settings to each other (local retention within retention)
  } catch (error) {
    if (error instanceof FerryError) throw new CliError(`log settings: ${error.message}`);
    throw error;
  }
  return log as Partial<LogConfig>;
}

/** An S3 Express WAL bucket needs a tier store of its own: said before any store is opened. */
function checkTierStore(config: BrokerConfig, settings: RawSettings): void {
  if (config.tier && config.tierStore === null && config.walStore !== null && S3_EXPRESS_BUCKET.test(config.walStore)) {
    throw new CliError(`${settings.walStore!.source} ${config.walStore} is an S3 Express One Zone bucket: give rolled segments a --tier-store (S3 Standard), or --no-tier`);
  }
}

/** The store settings a `file:` URL may be given in. */
const STORE_SETTINGS = ['walStore', 'tierStore', 'clusterStore'] as const;

/**
 * A `file:` store's directory must exist, unless --create-store asks for a new one or it is the
 * default under the data directory (created with it): a typo in a store URL would otherwise start
 * an empty store beside the real one, and with a cluster store a second, empty cluster.
 */
function checkStoreDirectories(config: BrokerConfig, settings: RawSettings): void {
  if (config.createStore) return;
  const defaultDirectory = resolve(config.data, DEFAULT_STORE_DIRECTORY);
  for (const name of STORE_SETTINGS) {
    const setting = settings[name];
    const directory = setting === undefined ? null : fileStoreDirectory(String(setting.value));
    if (directory === null || existsSync(directory) || resolve(directory) === defaultDirectory) continue;
    throw new CliError(
      `${setting!.source} ${setting!.value}: the directory ${resolve(directory)} does not exist; check the path (a new directory is a new, empty store), or give --create-store to create it`,
    );
  }
}

/** Reads one setting at a time, in the form it must have, with errors naming its source. */
class SettingReader {
  readonly #settings: RawSettings;

  constructor(settings: RawSettings) {
    this.#settings = settings;
  }

  /** A text setting with who gave it (for an error naming the source), or null. */
  sourced(name: SettingName): { readonly value: string; readonly source: string } | null {
    const value = this.text(name);
    return value === null ? null : { value, source: this.#settings[name]!.source };
  }

  text(name: SettingName): string | null {
    const setting = this.#settings[name];
    if (setting === undefined) return null;
    if (typeof setting.value === 'boolean' || setting.value === '') throw new CliError(`${setting.source} must be a non-empty string, got '${setting.value}'`);
    return String(setting.value);
  }

  switch(name: SettingName, fallback: boolean): boolean {
    const setting = this.#settings[name];
    if (setting === undefined) return fallback;
    if (typeof setting.value === 'boolean') return setting.value;
    const text = String(setting.value).trim().toLowerCase();
    if (text !== 'true' && text !== 'false') throw new CliError(`${setting.source} must be true or false, got '${setting.value}'`);
    return text === 'true';
  }

  /** An integer in [min, max]; `minWhat` names what the minimum is, when it is not a plain bound. */
  integer(name: SettingName, fallback: number, min: number, minWhat?: string, max = Number.MAX_SAFE_INTEGER): number {
    return this.optionalInteger(name, min, max, minWhat) ?? fallback;
  }

  optionalInteger(name: SettingName, min: number, max = Number.MAX_SAFE_INTEGER, minWhat?: string): number | null {
    const setting = this.#settings[name];
    if (setting === undefined) return null;
    const value = integerOf(setting);
    if (value < min && minWhat !== undefined) throw new CliError(`${setting.source} must be at least ${minWhat}, ${min}, got ${value}`);
    if (value < min || value > max) throw new CliError(`${setting.source} must be ${rangeText(min, max)}, got '${setting.value}'`);
    return value;
  }

  /** One of `choices`, as Kafka spells it (matched without regard to case, as Kafka's enum configs are). */
  optionalChoice<T extends string>(name: SettingName, choices: readonly T[]): T | null {
    const setting = this.#settings[name];
    if (setting === undefined) return null;
    const chosen = choices.find((choice) => choice.toLowerCase() === String(setting.value).trim().toLowerCase());
    if (chosen === undefined) throw new CliError(`${setting.source} must be one of ${choices.join(', ')}, got '${setting.value}'`);
    return chosen;
  }

  /** retention.bytes / retention.ms: any negative value keeps everything, as in Kafka. */
  retention(name: SettingName): number | null {
    const setting = this.#settings[name];
    if (setting === undefined) return null;
    return Math.max(integerOf(setting), KEEP_EVERYTHING);
  }

  /** HOST:PORT, or null for `off` where `off` is allowed. */
  hostPort(name: SettingName, fallback: string | null, off?: string): HostPort | null {
    const setting = this.#settings[name];
    const text = setting === undefined ? fallback : String(setting.value);
    if (text === null || (off !== undefined && text === off)) return null;
    const match = /^(.+):(\d{1,5})$/.exec(text);
    const port = Number(match?.[2]);
    if (match === null || port > PORT_MAX) throw new CliError(`${setting?.source ?? name} must be HOST:PORT${off === undefined ? '' : ` or '${off}'`}, got '${text}'`);
    return { host: match[1]!, port };
  }

  /** --peer-port: 'off' (no peer links), 0 (any free port) or a port. */
  peerPort(): number | null {
    const setting = this.#settings.peerPort;
    if (setting === undefined) return 0;
    if (setting.value === 'off') return null;
    const port = Number(setting.value);
    if (typeof setting.value === 'boolean' || !Number.isSafeInteger(port) || port < 0 || port > PORT_MAX)
      throw new CliError(`${setting.source} must be a port (0 for any free one) or 'off', got '${setting.value}'`);
    return port;
  }
}

function integerOf(setting: RawSetting): number {
  return integerValue(setting.value, setting.source);
}

/** A string of digits (flags, env, properties) or a JSON number; an error names `source` otherwise. */
export function integerValue(value: string | number | boolean, source: string): number {
  const number = typeof value === 'number' ? value : typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(number)) throw new CliError(`${source} must be an integer, got '${value}'`);
  return number;
}

function rangeText(min: number, max: number): string {
  if (min === 1 && max === Number.MAX_SAFE_INTEGER) return 'a positive integer';
  if (max === Number.MAX_SAFE_INTEGER) return `an integer of at least ${min}`;
  return `an integer in [${min}, ${max}]`;
}
