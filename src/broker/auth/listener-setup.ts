import { FerryError } from '../../errors.ts';
import type { SaslServerFactory } from '../../security/sasl/mechanism.ts';
import { oauthBearerServerFactory, OAuthBearerConfigError, type OAuthBearerServerFactory } from '../../security/sasl/oauthbearer.ts';
import { PlainSaslServerFactory } from '../../security/sasl/plain.ts';
import { ScramSaslServerFactory } from '../../security/sasl/scram-server.ts';
import type { ScramCredentialLookup } from '../../security/scram/credential.ts';
import { scramMechanismNamed } from '../../security/scram/mechanism.ts';
import { usesSasl, usesTls } from '../../security/session.ts';
import { SslPrincipalMapper } from '../../security/tls/ssl-principal.ts';
import { loadTlsMaterial, type TlsMaterial } from '../../security/tls/tls-material.ts';
import type { Clock } from '../../util/clock.ts';
import type { ListenerConfig, SaslListenerConfig } from './listener-config.ts';
import { type ListenerSecurity, SASL_RECEIVE_BYTES_MAX_DEFAULT, type SaslListener } from './listener-security.ts';

/** What a listener's SASL servers need from the broker. */
export interface ListenerDependencies {
  /** SCRAM credentials (the control records' ScramCredentialStore). */
  readonly scram: ScramCredentialLookup;
  /** The cluster's shared secret an unknown SCRAM user's fake salt comes from. */
  readonly scramUnknownUserSecret: Uint8Array;
  readonly clock: Clock;
  readonly log: (message: string) => void;
}

/** A listener's security, built from its config, and how to read its files again. */
export interface OpenedListener {
  readonly security: ListenerSecurity;
  /** One line for the start log: protocol, mechanisms, certificate (no secrets). */
  readonly summary: string;
  /**
   * SIGHUP: reads the certificates, the CRL, PLAIN's users and the JWKS again; new connections
   * take them, open ones keep theirs. A file that no longer reads keeps the old material (and
   * says so in the error); nothing is half-applied.
   */
  reload(): Promise<void>;
}

/** Reads what a listener needs (FerryError InvalidArgument, one line naming the setting, when something is wrong). */
export async function openListener(config: ListenerConfig, dependencies: ListenerDependencies): Promise<OpenedListener> {
  const where = `listener ${config.name}`;
  let material: TlsMaterial | null = null;
  if (usesTls(config.protocol)) {
    if (config.tls === undefined) throw new FerryError('InvalidArgument', `${where} (${config.protocol}) needs TLS settings: ssl.keystore.location at least`);
    material = await loadTlsMaterial(config.tls, 'server', where);
  }
  const sasl = usesSasl(config.protocol) ? await saslOf(config.sasl, where, dependencies) : null;
  const mapper = config.protocol === 'SSL' ? SslPrincipalMapper.parse(config.tls?.principalMappingRules ?? 'DEFAULT') : null;
  const tlsHolder = { material };
  const security: ListenerSecurity = {
    name: config.name,
    protocol: config.protocol,
    tls: material === null ? null : () => tlsHolder.material!.options,
    sslPrincipal: mapper,
    sasl: sasl?.listener ?? null,
  };
  const parts = [config.protocol, ...(sasl === null ? [] : [`SASL ${[...sasl.listener.mechanisms.keys()].join(', ')}`]), ...(material === null ? [] : [material.summary])];
  return {
    security,
    summary: parts.join('; '),
    async reload() {
      const next = material === null ? null : await loadTlsMaterial(config.tls!, 'server', where);
      await sasl?.reload();
      if (next !== null) tlsHolder.material = next;
    },
  };
}

interface OpenedSasl {
  readonly listener: SaslListener;
  reload(): Promise<void>;
}

async function saslOf(config: SaslListenerConfig | undefined, where: string, dependencies: ListenerDependencies): Promise<OpenedSasl> {
  if (config === undefined || config.mechanisms.length === 0)
    throw new FerryError('InvalidArgument', `${where} uses SASL: set sasl.enabled.mechanisms (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER; Ferry has no GSSAPI)`);
  const mechanisms = new Map<string, SaslServerFactory>();
  const reloads: (() => Promise<void>)[] = [];
  for (const name of config.mechanisms) {
    if (name === 'PLAIN') {
      const users = { table: await plainUsersOf(config, where) };
      mechanisms.set(name, new PlainSaslServerFactory({ passwordOf: (user) => users.table.get(user) ?? null }));
      reloads.push(async () => void (users.table = await plainUsersOf(config, where)));
    } else if (name === 'OAUTHBEARER') {
      const factory = oauthBearerOf(config, where, dependencies);
      mechanisms.set(name, factory);
      reloads.push(() => factory.reload());
    } else {
      const scram = scramMechanismNamed(name);
      if (scram === null) throw new FerryError('InvalidArgument', `${where}: SASL mechanism ${name} is not one Ferry serves (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)`);
      mechanisms.set(name, new ScramSaslServerFactory(scram, { credentials: dependencies.scram, unknownUserSecret: dependencies.scramUnknownUserSecret }));
    }
  }
  const reauth = config.reauthMs ?? 0;
  return {
    listener: {
      mechanisms,
      reauthMs: (mechanism) => (typeof reauth === 'number' ? reauth : (reauth.get(mechanism) ?? 0)),
      receiveBytesMax: config.receiveBytesMax ?? SASL_RECEIVE_BYTES_MAX_DEFAULT,
    },
    async reload() {
      for (const reload of reloads) await reload();
    },
  };
}

async function plainUsersOf(config: SaslListenerConfig, where: string): Promise<ReadonlyMap<string, string>> {
  if (config.plainUsers === undefined)
    throw new FerryError('InvalidArgument', `${where}: PLAIN needs its users: user_NAME="password" entries in listener.name.<listener>.plain.sasl.jaas.config or a JAAS file (ferry.sasl.jaas.file)`);
  return config.plainUsers();
}

function oauthBearerOf(config: SaslListenerConfig, where: string, dependencies: ListenerDependencies): OAuthBearerServerFactory {
  if (config.oauthBearer === undefined) throw new FerryError('InvalidArgument', `${where}: OAUTHBEARER needs sasl.oauthbearer.jwks.endpoint.url (a JWKS file) to validate tokens with`);
  try {
    return oauthBearerServerFactory(config.oauthBearer.mode === 'jwks' ? { ...config.oauthBearer, log: dependencies.log } : config.oauthBearer, dependencies.clock);
  } catch (error) {
    if (error instanceof OAuthBearerConfigError) throw new FerryError('InvalidArgument', `${where}: ${error.message}`);
    throw error;
  }
}
