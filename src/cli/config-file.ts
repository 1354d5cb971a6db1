/**
 * A `ferry broker --config` file read into settings: a Java properties file (server.properties)
 * or JSON. Its keys are Kafka's, `ferry.` ones or (JSON) the flags' camelCase names; a Kafka key
 * Ferry has no use for is collected for one warning, any other key stops the start.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isFerryError } from '../errors.ts';
import { parseTopicConfig, TOPIC_CONFIGS } from '../log/topic-config.ts';
import { CliError } from './args.ts';
import type { RawSetting, RawSettings, SettingName } from './broker-settings.ts';
import { type ConfigFormat, type ConfigKey, configKeys, type FileContext, type FileValue, impliedAdvertised } from './config-keys.ts';
import { isKafkaBrokerKey, KAFKA_BROKER_KEYS } from './kafka-broker-keys.ts';
import { brokerListeners, type Listener, parseListeners } from './listeners.ts';
import { nearest } from './nearest.ts';
import { isSecurityKey } from './security-settings.ts';
import type { SecurityProtocol } from '../security/session.ts';
import { parseProperties, PropertiesError } from './properties.ts';

/** What a config file says. */
export interface ConfigFile {
  readonly settings: RawSettings;
  /** Its security keys (ssl., sasl., listener.name., authorization, limits): read by security-settings.ts. */
  readonly security: ReadonlyMap<string, RawSetting>;
  /** Its broker listeners with their protocols, and advertised.listeners; null when it sets no `listeners`. */
  readonly listeners: { readonly brokers: readonly (Listener & { readonly protocol: SecurityProtocol })[]; readonly advertised: readonly Listener[] | null } | null;
  /** Kafka keys Ferry has no use for, in file order. */
  readonly ignored: readonly string[];
  /** Lines an operator should read (listeners left out). */
  readonly notes: readonly string[];
  /** What to advertise if nothing else says: an empty listen host's machine name (null: the listen address). */
  readonly impliedAdvertised: RawSetting | null;
}

interface FileEntry {
  readonly key: string;
  readonly value: FileValue;
}

/** Reads `path`: JSON if it ends in .json or starts with `{`, else a properties file. */
export function readConfigFile(path: string): ConfigFile {
  if (!existsSync(path)) throw new CliError(`config file ${path} does not exist`);
  const text = readFileSync(path, 'utf8');
  const format: ConfigFormat = path.endsWith('.json') || text.trimStart().startsWith('{') ? 'json' : 'properties';
  return configOf(path, format, format === 'json' ? jsonEntries(path, text) : propertiesEntries(path, text));
}

function propertiesEntries(path: string, text: string): FileEntry[] {
  try {
    return parseProperties(text);
  } catch (error) {
    if (error instanceof PropertiesError) throw new CliError(`config ${path} (read as a properties file: it does not end in .json or start with '{') ${error.message}`);
    throw error;
  }
}

function jsonEntries(path: string, text: string): FileEntry[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new CliError(`config ${path} (read as JSON: it ends in .json or starts with '{') is not JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new CliError(`config ${path} must hold a JSON object of settings`);
  return Object.entries(parsed).map(([key, value]) => {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
      throw new CliError(`config ${path}: ${key} must be a string, number or boolean, got ${JSON.stringify(value)}`);
    return { key, value };
  });
}

/** Sorts a file's entries into settings, ignored Kafka keys and typos, then converts each setting's winning key. */
export function configOf(path: string, format: ConfigFormat, entries: readonly FileEntry[]): ConfigFile {
  const known = configKeys(format);
  const bySetting = new Map<SettingName, { spec: ConfigKey; value: FileValue }[]>();
  const ignored: string[] = [];
  const checks: { spec: ConfigKey; value: FileValue }[] = [];
  const security = new Map<string, RawSetting>();
  for (const { key, value: given } of entries) {
    const value = typeof given === 'string' ? given.trim() : given; // Kafka trims every value it parses
    const spec = known.get(key);
    if (spec === undefined && isSecurityKey(key)) {
      security.set(key, { value, source: `config ${path}: ${key}` });
    } else if (spec === undefined) {
      if (!isKafkaBrokerKey(key)) throw new CliError(`config ${path}: ${unknownKeyMessage(key, known)}`);
      checkIgnored(path, key, value);
      ignored.push(key);
    } else if (spec.setting === null) {
      checks.push({ spec, value });
    } else {
      bySetting.set(spec.setting, [...(bySetting.get(spec.setting) ?? []), { spec, value }]);
    }
  }
  const context = contextOf(entries);
  for (const { spec, value } of checks) spec.convert?.(value, `config ${path}: ${spec.key}`, context);
  const settings: RawSettings = {};
  for (const [setting, given] of bySetting) {
    const { spec, value } = winner(path, given);
    const source = `config ${path}: ${spec.key}`;
    const converted = spec.convert === undefined ? value : spec.convert(value, source, context);
    if (converted !== null) settings[setting] = { value: converted, source };
  }
  return { settings, security, listeners: listenersOf(path, context), ignored, notes: [], impliedAdvertised: implied(path, context, settings) };
}

/** Kafka's precedence among keys of one setting; keys without one must agree. */
function winner(path: string, given: readonly { spec: ConfigKey; value: FileValue }[]): { spec: ConfigKey; value: FileValue } {
  const ranked = [...given].sort((a, b) => (b.spec.rank ?? 0) - (a.spec.rank ?? 0));
  const first = ranked[0]!;
  const clash = ranked.find((entry) => entry.spec.rank === undefined && String(entry.value) !== String(first.value));
  if (clash !== undefined) throw new CliError(`config ${path}: ${first.spec.key} and ${clash.spec.key} set the same thing to different values ('${first.value}', '${clash.value}')`);
  return first;
}

function contextOf(entries: readonly FileEntry[]): FileContext {
  const text = (key: string) => {
    const entry = entries.find((candidate) => candidate.key === key);
    return entry === undefined ? null : String(entry.value).trim();
  };
  return {
    listeners: { listeners: text('listeners'), protocolMap: text('listener.security.protocol.map'), controllerNames: text('controller.listener.names') },
    advertisedListeners: text('advertised.listeners'),
  };
}

/** Every broker listener of the file, with advertised.listeners. */
function listenersOf(path: string, context: FileContext): ConfigFile['listeners'] {
  if (context.listeners.listeners === null) return null;
  const brokers = brokerListeners(context.listeners, `config ${path}: listeners`);
  const advertisedText = context.advertisedListeners;
  return { brokers, advertised: advertisedText === null ? null : parseListeners(advertisedText, `config ${path}: advertised.listeners`) };
}

function implied(path: string, context: FileContext, settings: RawSettings): RawSetting | null {
  if (settings.advertised !== undefined || settings.listen === undefined) return null;
  const address = impliedAdvertised(context, settings.listen.source);
  return address === null ? null : { value: address, source: `config ${path}: listeners` };
}

/** A Kafka key Ferry ignores may still say something Ferry cannot be: a node without the broker role. */
/** Topic configs by their broker-level name (compression.type, log.flush.interval.ms, ...): the broker's key sets the topics' default. */
const TOPIC_CONFIG_BY_BROKER_KEY = new Map([...TOPIC_CONFIGS.values()].filter((d) => d.brokerSynonym !== null).map((d) => [d.brokerSynonym!, d]));
/** Broker keys that ask for a behaviour Ferry does not have unless they hold Kafka's default. */
const FIXED_BROKER_KEYS: ReadonlyMap<string, { readonly value: string; readonly why: string }> = new Map([['delete.topic.enable', { value: 'true', why: 'Ferry always lets topics be deleted' }]]);

/**
 * A Kafka key Ferry has no setting for is accepted only where it asks for nothing Ferry would not
 * do: the broker form of a topic config is checked as that config is (a bad value, or another than
 * Kafka's default for one that could not take effect here, stops the start), and the keys of
 * FIXED_BROKER_KEYS must hold their default.
 */
function checkIgnored(path: string, key: string, value: FileValue): void {
  const source = `config ${path}: ${key}`;
  if (
    key === 'process.roles' &&
    !String(value)
      .split(',')
      .map((role) => role.trim())
      .includes('broker')
  ) {
    throw new CliError(`config ${path}: process.roles is '${value}': Ferry runs the broker role (a KRaft controller has no Ferry equivalent)`);
  }
  const fixedKey = FIXED_BROKER_KEYS.get(key);
  if (fixedKey !== undefined && String(value).trim().toLowerCase() !== fixedKey.value) throw new CliError(`${source} must be ${fixedKey.value} (${fixedKey.why}), got '${value}'`);
  const topicConfig = TOPIC_CONFIG_BY_BROKER_KEY.get(key);
  if (topicConfig === undefined) return;
  try {
    parseTopicConfig(topicConfig.name, String(value));
  } catch (error) {
    if (isFerryError(error, 'InvalidConfig')) throw new CliError(`${source} (the topics' default ${topicConfig.name}): ${error.message}`);
    throw error;
  }
}

function unknownKeyMessage(key: string, known: ReadonlyMap<string, ConfigKey>): string {
  const suggestion = nearest(key, [...known.keys(), ...KAFKA_BROKER_KEYS]);
  return `${key} is not a Kafka or Ferry setting${suggestion === null ? '' : ` (did you mean ${suggestion}?)`}`;
}
