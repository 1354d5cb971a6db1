import type { KafkaPrincipal } from '../principal.ts';

/**
 * What every SASL mechanism implements (PLAIN, SCRAM-SHA-256/512, OAUTHBEARER), on both sides of
 * a connection. The broker's authenticator (SaslHandshake, SaslAuthenticate, KIP-368
 * re-authentication) drives a SaslServer token by token; a broker connecting to another drives a
 * SaslClient. Mechanisms know nothing of frames, versions or sockets.
 */

/** One step of a server's exchange: a challenge to send and wait on, or the end with who it was. */
export type SaslStep =
  | { readonly done: false; readonly challenge: Uint8Array }
  | {
      readonly done: true;
      /** The last bytes to send (SCRAM's server-final message); empty when the mechanism has none. */
      readonly response: Uint8Array;
      readonly principal: KafkaPrincipal;
      /** When the credential stops being valid (an OAuth token's exp), null if it does not expire. */
      readonly credentialExpiresAtMs: number | null;
    };

/**
 * One connection's exchange on the server side. `evaluate` takes each token the client sent, in
 * order, and is called again only after the previous call settled. It never throws anything but
 * SaslAuthenticationError, whatever bytes it is given; after a throw or a done step the exchange
 * is over (a further call throws SaslAuthenticationError).
 */
export interface SaslServer {
  readonly mechanism: string;
  evaluate(token: Uint8Array): Promise<SaslStep>;
}

export interface SaslServerFactory {
  readonly mechanism: string;
  create(): SaslServer;
}

/**
 * One exchange on the client side (a broker authenticating to another). `start` gives the first
 * token (both PLAIN and SCRAM speak first); `evaluate` takes each server answer and gives the next
 * token, or null once the exchange completed and the server proved itself where the mechanism
 * can (SCRAM's server signature). A refusal or a malformed answer throws SaslAuthenticationError.
 */
export interface SaslClient {
  readonly mechanism: string;
  start(): Uint8Array;
  evaluate(challenge: Uint8Array): Uint8Array | null;
  /** Whether the exchange completed (evaluate returned null). */
  readonly complete: boolean;
}

/**
 * An exchange that failed. `message` is what the broker tells the client (SaslAuthenticate's
 * error message): Kafka's own wording, and nothing a client must not learn (whether a user
 * exists). `detail` is for the broker's log only: why it failed, never a password.
 * `invalidCredentials` marks Kafka's generic answer (`invalidCredentialsMessage`), which names the
 * phase: an authenticator that is re-authenticating (KIP-368) answers
 * `invalidCredentialsMessage(mechanism, true)` in its place.
 */
export class SaslAuthenticationError extends Error {
  override name = 'SaslAuthenticationError';
  readonly detail: string;
  readonly invalidCredentials: boolean;

  constructor(message: string, options?: { detail?: string; invalidCredentials?: boolean; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.detail = options?.detail ?? message;
    this.invalidCredentials = options?.invalidCredentials ?? false;
  }
}

/**
 * Kafka's answer when a mechanism refuses without a message of its own (a malformed token, an
 * unknown user, a wrong proof): SaslServerAuthenticator.handleSaslToken names only the phase and
 * the mechanism, so that nothing about the user leaks.
 */
export function invalidCredentialsMessage(mechanism: string, reauthentication = false): string {
  return `Authentication failed during ${reauthentication ? 're-authentication' : 'authentication'} due to invalid credentials with SASL mechanism ${mechanism}`;
}

/** A refusal with Kafka's generic message; `detail` says why, for the log. */
export function invalidCredentials(mechanism: string, detail: string, cause?: unknown): SaslAuthenticationError {
  return new SaslAuthenticationError(invalidCredentialsMessage(mechanism), { detail, invalidCredentials: true, cause });
}

/** Kafka's answer to a token after the exchange ended (its IllegalSaslStateException). */
export function unexpectedToken(mechanism: string, state: string): SaslAuthenticationError {
  return new SaslAuthenticationError(`Unexpected challenge in Sasl server state ${state}`, { detail: `${mechanism}: a token after the exchange ended (${state})` });
}

/**
 * The strict UTF-8 text of a token, or null if it is not UTF-8 (Java would decode with
 * replacement characters; a mechanism refuses such a token instead).
 */
export function utf8Text(bytes: Uint8Array): string | null {
  try {
    return UTF8_STRICT.decode(bytes);
  } catch {
    return null;
  }
}

const UTF8_STRICT = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
