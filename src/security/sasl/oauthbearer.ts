import { assert } from '../../util/assert.ts';
import type { Clock } from '../../util/clock.ts';
import { userPrincipal } from '../principal.ts';
import { invalidCredentials, SaslAuthenticationError, unexpectedToken, type SaslServer, type SaslServerFactory, type SaslStep } from './mechanism.ts';
import { BrokerJwtValidator } from './oauthbearer-broker-validator.ts';
import { InvalidInitialResponseError, parseClientInitialResponse } from './oauthbearer-initial-response.ts';
import { JwksConfigError, JwksFileKeySet } from './oauthbearer-jwks.ts';
import { jsonErrorResponse, TokenValidationError, type TokenValidator } from './oauthbearer-token.ts';
import { SCOPE_ITEM, UnsecuredJwtValidator } from './oauthbearer-unsecured.ts';

/**
 * SASL/OAUTHBEARER (RFC 7628, KIP-255), the broker side, as Kafka's OAuthBearerSaslServer runs it:
 *
 *  1. The client's first message carries `auth=Bearer <token>` and extensions
 *     (oauthbearer-initial-response.ts). A malformed one fails at once, with Kafka's generic
 *     message (invalidCredentials: Kafka throws a SaslException, whose text it keeps from the client).
 *  2. The token is validated: in `jwks` mode against a JWKS file (KIP-768, Kafka's
 *     OAuthBearerValidatorCallbackHandler + BrokerJwtValidator), in `unsecured` mode as an unsigned
 *     JWT (Kafka's default OAuthBearerUnsecuredValidatorCallbackHandler; development only).
 *  3. A refused token is answered with a challenge, Kafka's JSON error (`{"status":"invalid_token"}`),
 *     and the exchange stays open: the client answers %x01 (its OAuthBearerSaslClient does) and
 *     authentication then fails with that JSON as the message. (A client that answers with a new
 *     first message instead gets it evaluated afresh, as in Kafka.)
 *  4. A good token completes the exchange with an empty response: the principal is
 *     `User:<principal claim>`, and the session ends with the token (`credentialExpiresAtMs` = its
 *     `exp`, for KIP-368). A client authzid (`n,a=alice,`) must equal the principal name.
 *
 * Extensions are read and checked but, as in both Kafka validators, every one is accepted and none
 * is used.
 */

export const OAUTHBEARER_MECHANISM = 'OAUTHBEARER';

/** Kafka's defaults (SaslConfigs). */
export const DEFAULT_CLOCK_SKEW_SECONDS = 30;
export const DEFAULT_SUB_CLAIM_NAME = 'sub';
export const DEFAULT_SCOPE_CLAIM_NAME = 'scope';
/** The largest clock skew taken, in either mode: a day. More is a misconfiguration, not a skew. */
export const CLOCK_SKEW_SECONDS_MAX = 24 * 60 * 60;

/** Validation against a JWKS file: what a production listener uses. */
export interface OAuthBearerJwksConfig {
  readonly mode: 'jwks';
  /**
   * `sasl.oauthbearer.jwks.endpoint.url`: a `file:` URL or a path to a JWKS JSON file (Kafka also
   * takes https: URLs; Ferry does not). Read at startup, again when it changes (JwksFileKeySet).
   */
  readonly jwksEndpointUrl: string;
  /** `sasl.oauthbearer.clock.skew.seconds`: allowed skew with the identity provider, for exp and nbf (default 30). */
  readonly clockSkewSeconds?: number;
  /**
   * `sasl.oauthbearer.expected.audience` (a comma-separated list in Kafka): the token's `aud` must
   * hold one of them. Empty (the default): a token that has an `aud` at all is refused, as in Kafka.
   */
  readonly expectedAudience?: readonly string[];
  /** `sasl.oauthbearer.expected.issuer`: the token's `iss` must be exactly this (default: not checked). */
  readonly expectedIssuer?: string | null;
  /** `sasl.oauthbearer.sub.claim.name`: the claim that names the principal (default `sub`). */
  readonly subClaimName?: string;
  /** `sasl.oauthbearer.scope.claim.name`: the claim that holds the scope (default `scope`). */
  readonly scopeClaimName?: string;
  /** Where JWKS reload failures are told (default: nowhere). */
  readonly log?: (message: string) => void;
}

/**
 * Unsigned JWTs, for development only (Kafka's default handler, librdkafka's
 * `enable.sasl.oauthbearer.unsecure.jwt`): anyone can claim to be anyone. Chosen only by saying so.
 * The options are Kafka's JAAS options of OAuthBearerLoginModule.
 */
export interface OAuthBearerUnsecuredConfig {
  readonly mode: 'unsecured';
  /** `unsecuredValidatorPrincipalClaimName` (default `sub`). */
  readonly principalClaimName?: string;
  /** `unsecuredValidatorScopeClaimName` (default `scope`). */
  readonly scopeClaimName?: string;
  /** `unsecuredValidatorRequiredScope` (space-delimited in Kafka): every one must be in the token's scope (default none). */
  readonly requiredScope?: readonly string[];
  /** `unsecuredValidatorAllowableClockSkewMs` (default 0). */
  readonly allowableClockSkewMs?: number;
}

export type OAuthBearerConfig = OAuthBearerJwksConfig | OAuthBearerUnsecuredConfig;

/** A config Ferry cannot run with: the broker must not start (Kafka's ConfigException). */
export class OAuthBearerConfigError extends Error {
  override name = 'OAuthBearerConfigError';
}

export interface OAuthBearerServerFactory extends SaslServerFactory {
  readonly mechanism: typeof OAUTHBEARER_MECHANISM;
  /** Reads the JWKS file again now (`jwks` mode; nothing to do in `unsecured` mode). */
  reload(): Promise<void>;
}

/** The factory of a listener's OAUTHBEARER servers; in `jwks` mode reads the JWKS file now (OAuthBearerConfigError if it cannot). */
export function oauthBearerServerFactory(config: OAuthBearerConfig, clock: Clock): OAuthBearerServerFactory {
  if (config.mode === 'unsecured') {
    const validator = new UnsecuredJwtValidator(clock, unsecuredOptions(config));
    return { mechanism: OAUTHBEARER_MECHANISM, create: () => new OAuthBearerSaslServer(validator), reload: async () => {} };
  }
  if (config.mode !== 'jwks') throw new OAuthBearerConfigError(`OAUTHBEARER mode must be jwks or unsecured, not ${String((config as { mode: unknown }).mode)}`);
  let keySet: JwksFileKeySet;
  try {
    keySet = new JwksFileKeySet(config.jwksEndpointUrl, clock, config.log);
  } catch (error) {
    if (error instanceof JwksConfigError) throw new OAuthBearerConfigError(error.message);
    throw error;
  }
  const validator = new BrokerJwtValidator(keySet, clock, jwksOptions(config));
  return { mechanism: OAUTHBEARER_MECHANISM, create: () => new OAuthBearerSaslServer(validator), reload: () => keySet.reload() };
}

function jwksOptions(config: OAuthBearerJwksConfig) {
  const clockSkewSeconds = config.clockSkewSeconds ?? DEFAULT_CLOCK_SKEW_SECONDS;
  if (!Number.isInteger(clockSkewSeconds) || clockSkewSeconds < 0 || clockSkewSeconds > CLOCK_SKEW_SECONDS_MAX) {
    throw new OAuthBearerConfigError(`sasl.oauthbearer.clock.skew.seconds must be an integer in [0, ${CLOCK_SKEW_SECONDS_MAX}]: ${clockSkewSeconds}`);
  }
  const expectedAudience = (config.expectedAudience ?? []).map((audience) => audience.trim()).filter((audience) => audience !== '');
  const expectedIssuer = config.expectedIssuer?.trim() || null;
  return {
    clockSkewSeconds,
    expectedAudience,
    expectedIssuer,
    subClaimName: claimName(config.subClaimName, DEFAULT_SUB_CLAIM_NAME, 'sasl.oauthbearer.sub.claim.name'),
    scopeClaimName: claimName(config.scopeClaimName, DEFAULT_SCOPE_CLAIM_NAME, 'sasl.oauthbearer.scope.claim.name'),
  };
}

function unsecuredOptions(config: OAuthBearerUnsecuredConfig) {
  const allowableClockSkewMs = config.allowableClockSkewMs ?? 0;
  if (!Number.isInteger(allowableClockSkewMs) || allowableClockSkewMs < 0 || allowableClockSkewMs > CLOCK_SKEW_SECONDS_MAX * 1000) {
    throw new OAuthBearerConfigError(`unsecuredValidatorAllowableClockSkewMs must be an integer in [0, ${CLOCK_SKEW_SECONDS_MAX * 1000}]: ${allowableClockSkewMs}`);
  }
  const requiredScope = config.requiredScope ?? [];
  for (const item of requiredScope) if (!SCOPE_ITEM.test(item)) throw new OAuthBearerConfigError(`Invalid scope value: ${item}`);
  return {
    principalClaimName: config.principalClaimName?.trim() || DEFAULT_SUB_CLAIM_NAME,
    scopeClaimName: config.scopeClaimName?.trim() || DEFAULT_SCOPE_CLAIM_NAME,
    requiredScope,
    allowableClockSkewMs,
  };
}

/** Kafka's ClaimValidationUtils.validateClaimNameOverride: trimmed, not blank. */
function claimName(value: string | undefined, fallback: string, key: string): string {
  if (value === undefined) return fallback;
  if (value.trim() === '') throw new OAuthBearerConfigError(`${key} must not be blank`);
  return value.trim();
}

const CONTROL_A = 0x01;
const EMPTY = new Uint8Array(0);
/** Kafka's text for a validator that failed rather than refused (its handleCallbackError); the client gets the generic message. */
const INTERNAL_ERROR_ON_SERVER = 'Authentication could not be performed due to an internal error on the server';

/** One connection's exchange (Kafka's OAuthBearerSaslServer). */
class OAuthBearerSaslServer implements SaslServer {
  readonly mechanism = OAUTHBEARER_MECHANISM;
  /** The JSON error sent as the last challenge, awaiting the client's %x01; null otherwise. */
  #errorMessage: string | null = null;
  /** Why the token was refused: the detail of the final error, for the log. */
  #errorReason = '';
  #state: 'open' | 'complete' | 'failed' = 'open';

  constructor(private readonly validator: TokenValidator) {}

  async evaluate(token: Uint8Array): Promise<SaslStep> {
    if (this.#state !== 'open') throw unexpectedToken(OAUTHBEARER_MECHANISM, this.#state.toUpperCase());
    try {
      const step = await this.#step(token);
      if (step.done) this.#state = 'complete';
      return step;
    } catch (error) {
      this.#state = 'failed';
      throw error;
    }
  }

  async #step(token: Uint8Array): Promise<SaslStep> {
    if (token.length === 1 && token[0] === CONTROL_A && this.#errorMessage !== null) {
      throw new SaslAuthenticationError(this.#errorMessage, { detail: this.#errorReason });
    }
    this.#errorMessage = null;
    let response: ReturnType<typeof parseClientInitialResponse>;
    try {
      response = parseClientInitialResponse(token);
    } catch (error) {
      if (error instanceof InvalidInitialResponseError) throw invalidCredentials(OAUTHBEARER_MECHANISM, error.message);
      throw error;
    }
    let validated: Awaited<ReturnType<typeof this.validator.validate>>;
    try {
      validated = await this.validator.validate(response.tokenValue);
    } catch (error) {
      if (!(error instanceof TokenValidationError)) throw invalidCredentials(OAUTHBEARER_MECHANISM, `${INTERNAL_ERROR_ON_SERVER}: ${(error as Error).message}`, error);
      this.#errorMessage = jsonErrorResponse(error.status, error.scope);
      this.#errorReason = error.message;
      return { done: false, challenge: new TextEncoder().encode(this.#errorMessage) };
    }
    const { principalName, expiresAtMs } = validated;
    if (response.authorizationId !== '' && response.authorizationId !== principalName) {
      throw new SaslAuthenticationError(
        `Authentication failed: Client requested an authorization id (${response.authorizationId}) that is different from the token's principal name (${principalName})`,
      );
    }
    return { done: true, response: EMPTY, principal: userPrincipal(principalName), credentialExpiresAtMs: expiresAtMs };
  }
}

assert(DEFAULT_CLOCK_SKEW_SECONDS <= CLOCK_SKEW_SECONDS_MAX, 'the default clock skew is within the limit');
