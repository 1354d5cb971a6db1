import type { SaslServerFactory } from '../../security/sasl/mechanism.ts';
import type { SecurityProtocol } from '../../security/session.ts';
import type { SslPrincipalMapper } from '../../security/tls/ssl-principal.ts';
import type { TlsServerOptionsSource } from '../../util/network.ts';

/**
 * Kafka's sasl.server.max.receive.size: the largest frame a client may send before it has
 * authenticated (SaslHandshake, SaslAuthenticate, a v0 token). An unauthenticated client can
 * make the broker hold this much per connection; authenticated ones get socket.request.max.bytes.
 */
export const SASL_RECEIVE_BYTES_MAX_DEFAULT = 512 * 1024;
/**
 * Kafka's connection.failed.authentication.delay.ms: a refused authentication is answered and the
 * connection closed only after this long, so that a client guessing passwords makes one guess per
 * delay per connection (and per-IP limits bound the connections). Longer slows guessing, and
 * holds each refused connection (a descriptor) that long.
 */
export const FAILED_AUTHENTICATION_DELAY_MS_DEFAULT = 100;

/** How a listener's connections establish who they are. */
export interface ListenerSecurity {
  /** The listener's name (upper case): Metadata answers with the brokers' endpoints of this name. */
  readonly name: string;
  readonly protocol: SecurityProtocol;
  /** TLS listeners (SSL, SASL_SSL): the options each new connection's handshake takes (swapped on reload). */
  readonly tls: TlsServerOptionsSource | null;
  /**
   * SSL listeners: how a verified client certificate's distinguished name becomes the principal
   * (ssl.principal.mapping.rules); a client without a certificate is ANONYMOUS. Null elsewhere
   * (SASL_SSL takes its principal from SASL).
   */
  readonly sslPrincipal: SslPrincipalMapper | null;
  /** SASL listeners (SASL_PLAINTEXT, SASL_SSL): the mechanisms enabled; null elsewhere. */
  readonly sasl: SaslListener | null;
}

export interface SaslListener {
  /** sasl.enabled.mechanisms, by their names (PLAIN, SCRAM-SHA-256, ...), each with its server. */
  readonly mechanisms: ReadonlyMap<string, SaslServerFactory>;
  /**
   * connections.max.reauth.ms for a mechanism (KIP-368; listener.name.<l>.<mechanism>. form
   * included): a session ends this long after it authenticated, or when its credential expires if
   * sooner, unless the client re-authenticates; 0 lets sessions run without end.
   */
  reauthMs(mechanism: string): number;
  /** sasl.server.max.receive.size. */
  readonly receiveBytesMax: number;
}
