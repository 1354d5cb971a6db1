/**
 * A TLS listener's (or a TLS client's) settings by Kafka's names, PEM only (KIP-651): where the
 * key and certificates are, whom to trust, whether to ask clients for certificates.
 */

/** Kafka's ssl.client.auth. */
export type ClientAuth = 'none' | 'requested' | 'required';

export const CLIENT_AUTH_VALUES: readonly ClientAuth[] = ['none', 'requested', 'required'];
/** The TLS versions Bun's BoringSSL speaks; Kafka's default ssl.enabled.protocols is these two. */
export const TLS_PROTOCOLS = ['TLSv1.2', 'TLSv1.3'] as const;
export type TlsProtocol = (typeof TLS_PROTOCOLS)[number];

export interface TlsSettings {
  /** ssl.keystore.location: a PEM file holding the private key and the certificate chain (ssl.keystore.type=PEM). */
  readonly keystoreLocation: string | null;
  /** ssl.keystore.certificate.chain: the chain as PEM text (instead of a file). */
  readonly keystoreCertificateChain: string | null;
  /** ssl.keystore.key: the private key as PEM text (instead of a file). */
  readonly keystoreKey: string | null;
  /** ssl.key.password: the passphrase of an encrypted private key. */
  readonly keyPassword: string | null;
  /** ssl.truststore.location: a PEM file of the CA certificates trusted (client certificates on a server, the server's on a client). */
  readonly truststoreLocation: string | null;
  /** ssl.truststore.certificates: the same as PEM text. */
  readonly truststoreCertificates: string | null;
  /** ferry.ssl.crl.location: a PEM file of certificate revocation lists; a listed certificate does not verify. */
  readonly crlLocation: string | null;
  readonly clientAuth: ClientAuth;
  readonly enabledProtocols: readonly TlsProtocol[];
  /** ssl.cipher.suites, as an OpenSSL cipher list; null: the library's defaults. */
  readonly cipherSuites: string | null;
  /** ssl.principal.mapping.rules (Kafka's DEFAULT: the certificate's distinguished name as is). */
  readonly principalMappingRules: string;
}

export const DEFAULT_TLS_SETTINGS: TlsSettings = {
  keystoreLocation: null,
  keystoreCertificateChain: null,
  keystoreKey: null,
  keyPassword: null,
  truststoreLocation: null,
  truststoreCertificates: null,
  crlLocation: null,
  clientAuth: 'none',
  enabledProtocols: TLS_PROTOCOLS,
  cipherSuites: null,
  principalMappingRules: 'DEFAULT',
};
