import type { OAuthBearerConfig } from '../../security/sasl/oauthbearer.ts';
import type { SecurityProtocol } from '../../security/session.ts';
import type { TlsSettings } from '../../security/tls/tls-settings.ts';

/** A broker listener as configured (Kafka's listeners, advertised.listeners and their ssl./sasl. settings), before anything is read. */
export interface ListenerConfig {
  /** Kafka's listener name (upper case): PLAINTEXT, SASL_SSL, INTERNAL, ... */
  readonly name: string;
  /** Its security protocol: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL. */
  readonly protocol: SecurityProtocol;
  /** The address to listen on. */
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** What clients of this listener are told to connect to; the listen address by default. */
  readonly advertisedHost?: string;
  /** See advertisedHost; the listen port by default. */
  readonly advertisedPort?: number;
  /** SSL and SASL_SSL listeners: the key, certificates and client authentication. */
  readonly tls?: TlsSettings;
  /** SASL_PLAINTEXT and SASL_SSL listeners. */
  readonly sasl?: SaslListenerConfig;
}

/** A SASL listener's mechanisms and how each checks credentials (docs/security.md). */
export interface SaslListenerConfig {
  /** sasl.enabled.mechanisms: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER. */
  readonly mechanisms: readonly string[];
  /**
   * PLAIN's users and passwords (the JAAS `user_NAME="password"` options), asked again on each
   * reload (SIGHUP) so a credentials file can change without a restart.
   */
  readonly plainUsers?: () => Promise<ReadonlyMap<string, string>> | ReadonlyMap<string, string>;
  /** OAUTHBEARER's token validation. */
  readonly oauthBearer?: OAuthBearerConfig;
  /** connections.max.reauth.ms, per mechanism where a listener.name.<l>.<mechanism>. form set it; 0: sessions do not end. */
  readonly reauthMs?: number | ReadonlyMap<string, number>;
  /** sasl.server.max.receive.size. */
  readonly receiveBytesMax?: number;
}

export const SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'] as const;
