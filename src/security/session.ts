import type { KafkaPrincipal } from './principal.ts';

/** Kafka's security protocols, one per listener (listener.security.protocol.map). */
export type SecurityProtocol = 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL';

export const SECURITY_PROTOCOLS: readonly SecurityProtocol[] = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'];

export function usesTls(protocol: SecurityProtocol): boolean {
  return protocol === 'SSL' || protocol === 'SASL_SSL';
}

export function usesSasl(protocol: SecurityProtocol): boolean {
  return protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL';
}

/**
 * Who sent a request and how it arrived: what authorization (ACLs), quotas and logs need. Fixed
 * for a connection once it authenticated (a re-authentication keeps the principal, KIP-368).
 */
export interface Session {
  readonly principal: KafkaPrincipal;
  /** The client's IP address, as ACLs' host field and max.connections.per.ip match it. */
  readonly clientAddress: string;
  /** The listener the connection arrived on (upper case, as Kafka names listeners). */
  readonly listenerName: string;
  readonly securityProtocol: SecurityProtocol;
  /** The SASL mechanism it authenticated with; null without SASL. */
  readonly saslMechanism: string | null;
}
