/**
 * A config file's security settings by Kafka's names (docs/security.md): every listener's TLS and
 * SASL (with Kafka's `listener.name.<listener>.` and `listener.name.<listener>.<mechanism>.`
 * overrides), authorization, the inter-broker client and the abuse limits, read into the
 * broker's ListenerConfig and BrokerSecurityOptions. Every error is one line naming the key.
 */
import { readFileSync } from 'node:fs';
import type { BrokerSecurityOptions, InterBrokerClient } from '../broker/auth/broker-security.ts';
import type { ListenerConfig, SaslListenerConfig } from '../broker/auth/listener-config.ts';
import { SASL_MECHANISMS } from '../broker/auth/listener-config.ts';
import { isFerryError } from '../errors.ts';
import { authorizerOptionsFromProperties } from '../security/acl/authorizer.ts';
import { type JaasLoginModule, ownCredentialsOf, PLAIN_LOGIN_MODULE, parseJaasFile, parseSaslJaasConfig, plainUsersOf, SCRAM_LOGIN_MODULE } from '../security/sasl/jaas.ts';
import type { OAuthBearerConfig } from '../security/sasl/oauthbearer.ts';
import { type SecurityProtocol, usesSasl, usesTls } from '../security/session.ts';
import { CLIENT_AUTH_VALUES, type ClientAuth, DEFAULT_TLS_SETTINGS, TLS_PROTOCOLS, type TlsProtocol, type TlsSettings } from '../security/tls/tls-settings.ts';
import { CliError } from './args.ts';
import type { HostPort, RawSetting } from './broker-settings.ts';
import { integerValue } from './broker-settings.ts';
import type { Listener } from './listeners.ts';

/** Kafka's authorizers, both of which Ferry's ACLs stand in for (StandardAuthorizer in KRaft, AclAuthorizer before it). */
const AUTHORIZER_CLASSES = ['org.apache.kafka.metadata.authorizer.StandardAuthorizer', 'kafka.security.authorizer.AclAuthorizer', 'kafka.security.auth.SimpleAclAuthorizer'];
const DEFAULT_PRINCIPAL_BUILDER = 'org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder';
/** KIP-768's validator: signed tokens checked against sasl.oauthbearer.jwks.endpoint.url. */
const JWKS_VALIDATOR_CLASS = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler';
/** Kafka's default OAUTHBEARER validator: unsigned tokens (development only); Ferry takes it only when named. */
const UNSECURED_VALIDATOR_CLASS = 'org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredValidatorCallbackHandler';
const OAUTHBEARER_LOGIN_MODULE = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule';
const PEM = 'PEM';
/** The mechanisms a broker's own client speaks to another broker's inter-broker listener (src/broker/auth/broker-security.ts connectorOf). */
const INTER_BROKER_MECHANISMS: readonly string[] = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'];
/** Kafka's JAAS file sections: `<listener>.KafkaServer` first, then `KafkaServer`. */
const JAAS_SERVER_SECTION = 'KafkaServer';

/** Keys of the security families: read here, never among the ignored Kafka keys or typos. */
const SECURITY_KEYS = new Set([
  'super.users',
  'authorizer.class.name',
  'allow.everyone.if.no.acl.found',
  'max.connections.per.ip',
  'max.connections.per.ip.overrides',
  'connection.failed.authentication.delay.ms',
  'connections.max.reauth.ms',
  'inter.broker.listener.name',
  'security.inter.broker.protocol',
  'principal.builder.class',
  'ferry.sasl.jaas.file',
  'ferry.ssl.crl.location',
]);
const SECURITY_PREFIXES = ['ssl.', 'sasl.', 'listener.name.'];

/** Settings of these families Ferry has no use for (Java's key managers, Kerberos, client-side login): listed in the warning line. */
const IGNORED_SECURITY_KEYS = new Set([
  'ssl.keymanager.algorithm',
  'ssl.trustmanager.algorithm',
  'ssl.secure.random.implementation',
  'ssl.provider',
  'ssl.allow.dn.changes',
  'ssl.allow.san.changes',
  'ssl.keystore.password',
  'ssl.truststore.password',
]);
const IGNORED_SECURITY_PREFIXES = [
  'sasl.kerberos.',
  'sasl.login.',
  'sasl.client.',
  'sasl.oauthbearer.jwks.endpoint.refresh',
  'sasl.oauthbearer.jwks.endpoint.retry',
  'sasl.oauthbearer.token.endpoint',
  'sasl.oauthbearer.scope',
];

export function isSecurityKey(key: string): boolean {
  return SECURITY_KEYS.has(key) || SECURITY_PREFIXES.some((prefix) => key.startsWith(prefix));
}

export interface SecuritySettingsInput {
  /** The file, for messages. */
  readonly path: string;
  readonly properties: ReadonlyMap<string, RawSetting>;
  /** The file's broker listeners with their protocols; null when it names none (one PLAINTEXT listener). */
  readonly listeners: readonly (Listener & { readonly protocol: SecurityProtocol })[] | null;
  /** advertised.listeners as written, or null. */
  readonly advertised: readonly Listener[] | null;
  /** The first listener's address after flags and variables (--listen, --advertised). */
  readonly firstListen: HostPort;
  readonly firstAdvertised: HostPort | null;
  /** The machine's name, advertised for an empty host. */
  readonly hostname: string;
}

export interface SecuritySettings {
  /** null: the file names no listeners (one PLAINTEXT listener at --listen). */
  readonly listeners: readonly ListenerConfig[] | null;
  readonly security: BrokerSecurityOptions;
  /** Keys of these families Ferry has no use for, for the warning line. */
  readonly ignored: readonly string[];
}

/** Reads the security settings; a CliError names the key at fault. */
export function securitySettingsOf(input: SecuritySettingsInput): SecuritySettings {
  const read = new SecurityReader(input.properties);
  const listeners = input.listeners?.map((listener, index) => listenerConfigOf(read, input, listener, index)) ?? null;
  const security: BrokerSecurityOptions = {
    ...authorizerOf(read),
    ...interBrokerOf(read, input, listeners),
    ...limitsOf(read),
  };
  read.principalBuilder();
  return { listeners, security, ignored: read.unread() };
}

function listenerConfigOf(read: SecurityReader, input: SecuritySettingsInput, listener: Listener & { readonly protocol: SecurityProtocol }, index: number): ListenerConfig {
  const advertised = index === 0 ? input.firstAdvertised : advertisedOf(input, listener.name);
  const address = index === 0 ? input.firstListen : { host: listener.host === '' ? '0.0.0.0' : listener.host, port: listener.port };
  return {
    name: listener.name,
    protocol: listener.protocol,
    host: address.host,
    port: address.port,
    ...(advertised === null ? {} : { advertisedHost: advertised.host, advertisedPort: advertised.port }),
    ...(usesTls(listener.protocol) ? { tls: read.tls(listener.name, 'server') } : {}),
    ...(usesSasl(listener.protocol) ? { sasl: saslOf(read, listener.name) } : {}),
  };
}

function advertisedOf(input: SecuritySettingsInput, name: string): HostPort | null {
  const entry = input.advertised?.find((candidate) => candidate.name === name);
  if (entry === undefined) return null;
  return { host: entry.host === '' ? input.hostname : entry.host, port: entry.port };
}

function saslOf(read: SecurityReader, listener: string): SaslListenerConfig {
  const mechanisms = read.list(listener, 'sasl.enabled.mechanisms');
  if (mechanisms === null || mechanisms.length === 0)
    throw new CliError(
      `${read.where(listener, 'sasl.enabled.mechanisms')}: listener ${listener} uses SASL: list its mechanisms (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER; Ferry has no GSSAPI)`,
    );
  for (const mechanism of mechanisms) {
    if (!(SASL_MECHANISMS as readonly string[]).includes(mechanism))
      throw new CliError(`${read.where(listener, 'sasl.enabled.mechanisms')}: ${mechanism} is not a mechanism Ferry serves (${SASL_MECHANISMS.join(', ')})`);
  }
  const reauth = new Map(mechanisms.map((mechanism) => [mechanism, read.integer(listener, 'connections.max.reauth.ms', 0, mechanism) ?? 0]));
  const receiveBytesMax = read.integer(listener, 'sasl.server.max.receive.size', 1);
  return {
    mechanisms,
    reauthMs: reauth,
    ...(receiveBytesMax === null ? {} : { receiveBytesMax }),
    ...(mechanisms.includes('PLAIN') ? { plainUsers: plainUsersSource(read, listener) } : {}),
    ...(mechanisms.includes('OAUTHBEARER') ? { oauthBearer: oauthBearerOf(read, listener) } : {}),
  };
}

/** PLAIN's users: the listener's PlainLoginModule `user_NAME` options; from a JAAS file they are read again on each reload. */
function plainUsersSource(read: SecurityReader, listener: string): () => ReadonlyMap<string, string> {
  const modules = () => read.jaas(listener, 'PLAIN', PLAIN_LOGIN_MODULE);
  const users = plainUsersOf(modules()); // checked now, so a broken file stops the start
  if (users.size === 0)
    throw new CliError(`${read.where(listener, 'sasl.jaas.config', 'PLAIN')}: PLAIN on listener ${listener} has no users: give them as user_NAME="password" options of PlainLoginModule`);
  return read.jaasFromFile(listener, 'PLAIN') ? () => plainUsersOf(modules()) : () => users;
}

function oauthBearerOf(read: SecurityReader, listener: string): OAuthBearerConfig {
  const mechanism = 'OAUTHBEARER';
  const validator = read.text(listener, 'sasl.server.callback.handler.class', mechanism);
  const jwks = read.text(listener, 'sasl.oauthbearer.jwks.endpoint.url', mechanism);
  if (validator === UNSECURED_VALIDATOR_CLASS) {
    const options = read.jaasOptions(listener, mechanism, OAUTHBEARER_LOGIN_MODULE);
    const skew = options.get('unsecuredValidatorAllowableClockSkewMs');
    return {
      mode: 'unsecured',
      ...(options.has('unsecuredValidatorPrincipalClaimName') ? { principalClaimName: options.get('unsecuredValidatorPrincipalClaimName')! } : {}),
      ...(options.has('unsecuredValidatorScopeClaimName') ? { scopeClaimName: options.get('unsecuredValidatorScopeClaimName')! } : {}),
      ...(options.has('unsecuredValidatorRequiredScope')
        ? {
            requiredScope: options
              .get('unsecuredValidatorRequiredScope')!
              .split(/\s+/)
              .filter((scope) => scope !== ''),
          }
        : {}),
      ...(skew === undefined ? {} : { allowableClockSkewMs: integerValue(skew, `${read.where(listener, 'sasl.jaas.config', mechanism)}: unsecuredValidatorAllowableClockSkewMs`) }),
    };
  }
  if (validator !== null && validator !== JWKS_VALIDATOR_CLASS)
    throw new CliError(
      `${read.where(listener, 'sasl.server.callback.handler.class', mechanism)} must be ${JWKS_VALIDATOR_CLASS} (or, for development only, ${UNSECURED_VALIDATOR_CLASS}), got '${validator}'`,
    );
  if (jwks === null)
    throw new CliError(
      `${read.where(listener, 'sasl.oauthbearer.jwks.endpoint.url', mechanism)}: OAUTHBEARER on listener ${listener} needs a JWKS file to validate tokens with (a file: URL or path); unsigned tokens are taken only with sasl.server.callback.handler.class=${UNSECURED_VALIDATOR_CLASS}`,
    );
  const audience = read.list(listener, 'sasl.oauthbearer.expected.audience', mechanism);
  const issuer = read.text(listener, 'sasl.oauthbearer.expected.issuer', mechanism);
  const sub = read.text(listener, 'sasl.oauthbearer.sub.claim.name', mechanism);
  const scope = read.text(listener, 'sasl.oauthbearer.scope.claim.name', mechanism);
  const skew = read.integer(listener, 'sasl.oauthbearer.clock.skew.seconds', 0, mechanism);
  return {
    mode: 'jwks',
    jwksEndpointUrl: jwks,
    ...(audience === null ? {} : { expectedAudience: audience }),
    ...(issuer === null ? {} : { expectedIssuer: issuer }),
    ...(sub === null ? {} : { subClaimName: sub }),
    ...(scope === null ? {} : { scopeClaimName: scope }),
    ...(skew === null ? {} : { clockSkewSeconds: skew }),
  };
}

function authorizerOf(read: SecurityReader): Pick<BrokerSecurityOptions, 'authorizer'> {
  const authorizer = read.text(null, 'authorizer.class.name');
  const superUsers = read.text(null, 'super.users');
  const allowEveryone = read.text(null, 'allow.everyone.if.no.acl.found');
  if (authorizer === null || authorizer === '') {
    if (superUsers !== null || allowEveryone !== null)
      throw new CliError(`${read.where(null, superUsers !== null ? 'super.users' : 'allow.everyone.if.no.acl.found')} needs an authorizer: set authorizer.class.name=${AUTHORIZER_CLASSES[0]}`);
    return {};
  }
  if (!AUTHORIZER_CLASSES.includes(authorizer)) throw new CliError(`${read.where(null, 'authorizer.class.name')} must be ${AUTHORIZER_CLASSES[0]} (Kafka's ACLs), got '${authorizer}'`);
  if (allowEveryone !== null && !/^(true|false)$/i.test(allowEveryone)) throw new CliError(`${read.where(null, 'allow.everyone.if.no.acl.found')} must be true or false, got '${allowEveryone}'`);
  try {
    return { authorizer: authorizerOptionsFromProperties({ 'super.users': superUsers ?? undefined, 'allow.everyone.if.no.acl.found': allowEveryone ?? undefined }) };
  } catch (error) {
    if (isFerryError(error)) throw new CliError(`${read.where(null, 'super.users')}: ${error.message}`);
    throw error;
  }
}

/**
 * inter.broker.listener.name (or the listener named after security.inter.broker.protocol, Kafka's
 * default PLAINTEXT; without either and without a PLAINTEXT listener, the first): what brokers
 * dial each other at, with that listener's TLS and, for SASL, sasl.mechanism.inter.broker.protocol
 * and the JAAS `username`/`password` of that mechanism's login module.
 */
function interBrokerOf(read: SecurityReader, input: SecuritySettingsInput, listeners: readonly ListenerConfig[] | null): Pick<BrokerSecurityOptions, 'interBroker'> {
  const byName = read.text(null, 'inter.broker.listener.name')?.toUpperCase() ?? null;
  const byProtocol = read.text(null, 'security.inter.broker.protocol')?.toUpperCase() ?? null;
  if (listeners === null) {
    if (byName !== null || byProtocol !== null)
      throw new CliError(`${read.where(null, byName !== null ? 'inter.broker.listener.name' : 'security.inter.broker.protocol')} names a listener, but config ${input.path} sets no listeners`);
    return {};
  }
  if (byName !== null && byProtocol !== null) throw new CliError(`config ${input.path}: inter.broker.listener.name and security.inter.broker.protocol are both set (Kafka allows one)`);
  const wanted = byName ?? byProtocol;
  const listener = wanted === null ? (listeners.find((candidate) => candidate.name === 'PLAINTEXT') ?? listeners[0]!) : listeners.find((candidate) => candidate.name === wanted);
  if (listener === undefined) throw new CliError(`${read.where(null, byName !== null ? 'inter.broker.listener.name' : 'security.inter.broker.protocol')}: no listener is named ${wanted}`);
  const client: InterBrokerClient = { listener: listener.name, tls: listener.tls ?? null, sasl: listener.sasl === undefined ? null : interBrokerSasl(read, listener.name, listener.sasl.mechanisms) };
  return { interBroker: client };
}

function interBrokerSasl(read: SecurityReader, listener: string, enabled: readonly string[]): InterBrokerClient['sasl'] {
  const chosen = read.text(null, 'sasl.mechanism.inter.broker.protocol') ?? (enabled.length === 1 ? enabled[0]! : null);
  if (chosen === null) throw new CliError(`config: sasl.mechanism.inter.broker.protocol must say which of ${enabled.join(', ')} brokers authenticate to each other with`);
  if (!enabled.includes(chosen))
    throw new CliError(`${read.where(null, 'sasl.mechanism.inter.broker.protocol')}: ${chosen} is not enabled on the inter-broker listener ${listener} (${enabled.join(', ')})`);
  if (!INTER_BROKER_MECHANISMS.includes(chosen))
    throw new CliError(
      `${read.where(null, 'sasl.mechanism.inter.broker.protocol')}: ${chosen} on the inter-broker listener ${listener}: brokers log in to each other with ${INTER_BROKER_MECHANISMS.slice(0, -1).join(', ')} or ${INTER_BROKER_MECHANISMS.at(-1)} (Ferry's broker has no ${chosen} client): enable one of them there, or name another listener with inter.broker.listener.name`,
    );
  const module = chosen === 'PLAIN' ? PLAIN_LOGIN_MODULE : SCRAM_LOGIN_MODULE;
  const credentials = ownCredentialsOf(read.jaas(listener, chosen, module), module);
  if (credentials === null)
    throw new CliError(
      `${read.where(listener, 'sasl.jaas.config', chosen)}: the inter-broker listener's ${chosen} login module needs username and password: the principal this broker authenticates as`,
    );
  return { mechanism: chosen, username: credentials.username, password: credentials.password };
}

function limitsOf(read: SecurityReader): Pick<BrokerSecurityOptions, 'failedAuthenticationDelayMs' | 'maxConnectionsPerIp' | 'maxConnectionsPerIpOverrides'> {
  const delay = read.integer(null, 'connection.failed.authentication.delay.ms', 0);
  const perIp = read.integer(null, 'max.connections.per.ip', 0);
  const overrides = read.text(null, 'max.connections.per.ip.overrides');
  return {
    ...(delay === null ? {} : { failedAuthenticationDelayMs: delay }),
    ...(perIp === null ? {} : { maxConnectionsPerIp: perIp }),
    ...(overrides === null || overrides === '' ? {} : { maxConnectionsPerIpOverrides: perIpOverridesOf(overrides, read.where(null, 'max.connections.per.ip.overrides')) }),
  };
}

/** `address:count,address:count` (an IPv6 address keeps its colons: the count is after the last one). */
function perIpOverridesOf(text: string, source: string): ReadonlyMap<string, number> {
  const overrides = new Map<string, number>();
  for (const entry of text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')) {
    const colon = entry.lastIndexOf(':');
    if (colon <= 0) throw new CliError(`${source}: '${entry}' is not address:count`);
    const count = integerValue(entry.slice(colon + 1), `${source}: the count of ${entry.slice(0, colon)}`);
    if (count < 0) throw new CliError(`${source}: the count of ${entry.slice(0, colon)} must not be negative`);
    overrides.set(entry.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), count);
  }
  return overrides;
}

/** Looks up keys with Kafka's listener and mechanism prefixes, remembering which were read. */
class SecurityReader {
  readonly #properties: ReadonlyMap<string, RawSetting>;
  readonly #read = new Set<string>();
  readonly #jaasFiles = new Map<string, Map<string, JaasLoginModule[]>>();

  constructor(properties: ReadonlyMap<string, RawSetting>) {
    this.#properties = properties;
  }

  /** The key that gives this setting: `listener.name.<l>.<mechanism>.<key>`, `listener.name.<l>.<key>`, then `<key>`. */
  #find(listener: string | null, key: string, mechanism?: string): { key: string; setting: RawSetting } | null {
    const candidates = [
      ...(listener !== null && mechanism !== undefined ? [`listener.name.${listener.toLowerCase()}.${mechanism.toLowerCase()}.${key}`] : []),
      ...(listener !== null ? [`listener.name.${listener.toLowerCase()}.${key}`] : []),
      key,
    ];
    for (const candidate of candidates) {
      const setting = this.#properties.get(candidate);
      if (setting === undefined) continue;
      this.#read.add(candidate);
      return { key: candidate, setting };
    }
    return null;
  }

  /** Where a setting comes from, for messages: the key that gave it, or the plain key. */
  where(listener: string | null, key: string, mechanism?: string): string {
    return this.#find(listener, key, mechanism)?.setting.source ?? `config: ${key}`;
  }

  text(listener: string | null, key: string, mechanism?: string): string | null {
    const found = this.#find(listener, key, mechanism);
    return found === null ? null : String(found.setting.value).trim();
  }

  list(listener: string | null, key: string, mechanism?: string): string[] | null {
    const text = this.text(listener, key, mechanism);
    return text === null
      ? null
      : text
          .split(',')
          .map((item) => item.trim())
          .filter((item) => item !== '');
  }

  integer(listener: string | null, key: string, min: number, mechanism?: string): number | null {
    const found = this.#find(listener, key, mechanism);
    if (found === null) return null;
    const value = integerValue(found.setting.value, found.setting.source);
    if (value < min) throw new CliError(`${found.setting.source} must be at least ${min}, got ${value}`);
    return value;
  }

  /** A listener's TLS settings (PEM only); `side` server: its listener, client: the inter-broker client. */
  tls(listener: string, _side: 'server'): TlsSettings {
    for (const key of ['ssl.keystore.type', 'ssl.truststore.type']) {
      const type = this.text(listener, key);
      if (type !== null && type.toUpperCase() !== PEM)
        throw new CliError(`${this.where(listener, key)} must be PEM (Ferry reads PEM files: convert a JKS or PKCS12 store with keytool -importkeystore and openssl pkcs12), got '${type}'`);
    }
    const protocol = this.text(listener, 'ssl.protocol');
    if (protocol !== null && !['TLS', ...TLS_PROTOCOLS].includes(protocol)) throw new CliError(`${this.where(listener, 'ssl.protocol')} must be TLS, TLSv1.2 or TLSv1.3, got '${protocol}'`);
    const identification = this.text(listener, 'ssl.endpoint.identification.algorithm');
    if (identification !== null && identification.toLowerCase() !== 'https')
      throw new CliError(`${this.where(listener, 'ssl.endpoint.identification.algorithm')} must be https (Ferry always checks a broker's certificate names its host), got '${identification}'`);
    const engine = this.text(listener, 'ssl.engine.factory.class');
    if (engine !== null && engine !== '') throw new CliError(`${this.where(listener, 'ssl.engine.factory.class')}: Ferry has no pluggable SSL engines (its TLS is Bun's)`);
    return {
      ...DEFAULT_TLS_SETTINGS,
      keystoreLocation: this.text(listener, 'ssl.keystore.location'),
      keystoreCertificateChain: this.text(listener, 'ssl.keystore.certificate.chain'),
      keystoreKey: this.text(listener, 'ssl.keystore.key'),
      keyPassword: this.text(listener, 'ssl.key.password'),
      truststoreLocation: this.text(listener, 'ssl.truststore.location'),
      truststoreCertificates: this.text(listener, 'ssl.truststore.certificates'),
      crlLocation: this.text(listener, 'ferry.ssl.crl.location'),
      clientAuth: this.#clientAuth(listener),
      enabledProtocols: this.#protocols(listener),
      cipherSuites: this.text(listener, 'ssl.cipher.suites'),
      principalMappingRules: this.text(listener, 'ssl.principal.mapping.rules') ?? DEFAULT_TLS_SETTINGS.principalMappingRules,
    };
  }

  #clientAuth(listener: string): ClientAuth {
    const value = this.text(listener, 'ssl.client.auth')?.toLowerCase() ?? 'none';
    const found = CLIENT_AUTH_VALUES.find((known) => known === value);
    if (found === undefined) throw new CliError(`${this.where(listener, 'ssl.client.auth')} must be one of ${CLIENT_AUTH_VALUES.join(', ')}, got '${value}'`);
    return found;
  }

  #protocols(listener: string): readonly TlsProtocol[] {
    const listed = this.list(listener, 'ssl.enabled.protocols');
    if (listed === null) return TLS_PROTOCOLS;
    const protocols = listed.map((protocol) => {
      const found = TLS_PROTOCOLS.find((known) => known === protocol);
      if (found === undefined) throw new CliError(`${this.where(listener, 'ssl.enabled.protocols')}: ${protocol} is not one Ferry speaks (${TLS_PROTOCOLS.join(', ')})`);
      return found;
    });
    if (protocols.length === 0) throw new CliError(`${this.where(listener, 'ssl.enabled.protocols')} enables no protocol`);
    return protocols;
  }

  /**
   * The login modules of a listener's mechanism: `listener.name.<l>.<mechanism>.sasl.jaas.config`
   * (or `sasl.jaas.config`), else the JAAS file's `<l>.KafkaServer` or `KafkaServer` section.
   */
  jaas(listener: string, mechanism: string, loginModule: string): JaasLoginModule[] {
    const found = this.#find(listener, 'sasl.jaas.config', mechanism);
    if (found !== null) {
      try {
        return [parseSaslJaasConfig(String(found.setting.value))];
      } catch (error) {
        if (isFerryError(error)) throw new CliError(`${found.setting.source}: ${error.message}`);
        throw error;
      }
    }
    const sections = this.#jaasFile();
    const modules = sections === null ? [] : (sections.get(`${listener.toLowerCase()}.${JAAS_SERVER_SECTION}`) ?? sections.get(JAAS_SERVER_SECTION) ?? []);
    const matching = modules.filter((module) => module.loginModule === loginModule);
    if (matching.length === 0)
      throw new CliError(
        `config: listener ${listener} enables ${mechanism}: give listener.name.${listener.toLowerCase()}.${mechanism.toLowerCase()}.sasl.jaas.config (${loginModule} required ...;) or a JAAS file (ferry.sasl.jaas.file) with a KafkaServer section`,
      );
    return matching;
  }

  /** The options of a listener's login module for a mechanism; none when it has no JAAS config. */
  jaasOptions(listener: string, mechanism: string, loginModule: string): ReadonlyMap<string, string> {
    try {
      return this.jaas(listener, mechanism, loginModule)[0]?.options ?? new Map();
    } catch (error) {
      if (error instanceof CliError) return new Map();
      throw error;
    }
  }

  /** Whether the listener's JAAS config for the mechanism comes from the JAAS file (re-read on reload). */
  jaasFromFile(listener: string, mechanism: string): boolean {
    return this.#find(listener, 'sasl.jaas.config', mechanism) === null;
  }

  /** ferry.sasl.jaas.file, read now (each call: a reload reads it again). */
  #jaasFile(): Map<string, JaasLoginModule[]> | null {
    const found = this.#find(null, 'ferry.sasl.jaas.file');
    if (found === null) return null;
    const path = String(found.setting.value);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new CliError(`${found.setting.source}: ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    try {
      const sections = parseJaasFile(text);
      this.#jaasFiles.set(path, sections);
      return sections;
    } catch (error) {
      if (isFerryError(error)) throw new CliError(`${found.setting.source}: ${path}: ${error.message}`);
      throw error;
    }
  }

  /** principal.builder.class: only Kafka's default (the DN of a certificate, the SASL name) is built. */
  principalBuilder(): void {
    const builder = this.text(null, 'principal.builder.class');
    if (builder !== null && builder !== '' && builder !== DEFAULT_PRINCIPAL_BUILDER)
      throw new CliError(`${this.where(null, 'principal.builder.class')} must be Kafka's default ${DEFAULT_PRINCIPAL_BUILDER} (use ssl.principal.mapping.rules to shape certificate principals)`);
  }

  /**
   * The keys never read: settings Ferry has no use for are returned for the warning line; any
   * other (a typo, an override of a listener that does not exist, a mechanism's key on a listener
   * without it) stops the start.
   */
  unread(): string[] {
    const ignored: string[] = [];
    for (const [key, setting] of this.#properties) {
      if (this.#read.has(key)) continue;
      const bare = key.replace(/^listener\.name\.[^.]+\.(?:(?:plain|scram-sha-256|scram-sha-512|oauthbearer|gssapi)\.)?/, '');
      if (IGNORED_SECURITY_KEYS.has(bare) || IGNORED_SECURITY_PREFIXES.some((prefix) => bare.startsWith(prefix))) ignored.push(key);
      else throw new CliError(`${setting.source} is not a setting any listener here uses (check the listener name and its protocol, and the key's spelling)`);
    }
    return ignored;
  }
}
