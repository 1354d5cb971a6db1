/**
 * What the OAUTHBEARER validators give back: Kafka's OAuthBearerToken for a good token, or the
 * RFC 7628 §3.2.2 error status for a refused one (Kafka's OAuthBearerValidatorCallback.error).
 */

/** A token that passed validation. */
export interface ValidatedToken {
  /** The principal claim's value (Kafka's principalName): the connection is `User:<principalName>`. */
  readonly principalName: string;
  readonly scope: ReadonlySet<string>;
  /** The `exp` claim in ms since the epoch (Kafka's lifetimeMs). */
  readonly expiresAtMs: number;
  /** The `iat` claim in ms since the epoch (Kafka's startTimeMs), null when absent. */
  readonly issuedAtMs: number | null;
}

/**
 * The latest claim time taken, in ms: past it a number of ms is no longer exact (2^53 ms is some
 * 285,000 years away). A later `exp` (or `iat`) is refused, so a session's end is always a safe
 * integer; Kafka reads the claims into a Java long and has no such case to handle.
 */
export const CLAIM_TIME_MS_MAX = Number.MAX_SAFE_INTEGER;

/** RFC 7628 §3.2.2 / RFC 6750 §3.1 error codes a validator answers with. */
export type TokenErrorStatus = 'invalid_token' | 'insufficient_scope';

/**
 * A refused token. `message` is the reason, for the broker's log only (Kafka logs it and sends the
 * client nothing but `status` and `scope`).
 */
export class TokenValidationError extends Error {
  override name = 'TokenValidationError';
  constructor(
    message: string,
    readonly status: TokenErrorStatus = 'invalid_token',
    /** The scope the client lacked, as Kafka writes it in the error (a Java list: `[a, b]`). */
    readonly scope: string | null = null,
  ) {
    super(message);
  }
}

export interface TokenValidator {
  /** The token, or a TokenValidationError; never any other error for any token value. */
  validate(tokenValue: string): Promise<ValidatedToken>;
}

/**
 * Kafka's OAuthBearerSaslServer.jsonErrorResponse, byte for byte: `{"status":"invalid_token"}`, with
 * `, "scope":"..."` when a scope was missing (note Kafka's space after the comma).
 */
export function jsonErrorResponse(status: TokenErrorStatus, scope: string | null): string {
  let json = `{"status":"${status}"`;
  if (scope !== null) json += `, "scope":"${scope}"`;
  return `${json}}`;
}
