import { decodeProtectedHeader, jwtVerify, type JWTPayload, type JWTVerifyOptions } from 'jose';
import type { Clock } from '../../util/clock.ts';
import type { JwksFileKeySet } from './oauthbearer-jwks.ts';
import { CLAIM_TIME_MS_MAX, TokenValidationError, type TokenValidator, type ValidatedToken } from './oauthbearer-token.ts';

/**
 * Kafka's BrokerJwtValidator (KIP-768), with jose in jose4j's place:
 *
 *  1. the token has three non-empty dot-separated sections (Kafka's SerializedJwt);
 *  2. its `alg` is not `none` nor an HMAC one, and the JWKS key its `kid` names (or the one key of
 *     its type when it names none) verifies the signature;
 *  3. `exp` and `iat` are present numbers; `exp` is after now minus the skew, `nbf` if present is
 *     not after now plus the skew (jose4j checks no more of `iat`, nor does this);
 *  4. with an expected audience, `aud` holds one of them; without one, a token with an `aud` is
 *     refused (jose4j's default audience check, which Kafka keeps);
 *  5. with an expected issuer, `iss` is it;
 *  6. the principal claim is a string, not blank (trimmed); the scope claim is a string (one
 *     scope) or an array of strings, none blank, no duplicates; anything else is no scope.
 *
 * Every refusal is a TokenValidationError whose message says why (for the log).
 */
export interface BrokerValidatorOptions {
  readonly clockSkewSeconds: number;
  readonly expectedAudience: readonly string[];
  readonly expectedIssuer: string | null;
  readonly subClaimName: string;
  readonly scopeClaimName: string;
}

/** The signature algorithms a JWKS key may verify: the asymmetric ones jose knows. */
export const JWKS_ALGORITHMS: readonly string[] = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

export class BrokerJwtValidator implements TokenValidator {
  constructor(
    private readonly keySet: JwksFileKeySet,
    private readonly clock: Clock,
    private readonly options: BrokerValidatorOptions,
  ) {}

  async validate(tokenValue: string): Promise<ValidatedToken> {
    const token = checkSerialized(tokenValue);
    const payload = await this.#verify(token);
    const scope = scopeOf(payload[this.options.scopeClaimName], this.options.scopeClaimName);
    const expiresAtMs = nonNegativeSecondsToMs(payload.exp, 'exp');
    const principalName = subjectOf(payload[this.options.subClaimName], this.options.subClaimName);
    const issuedAtMs = nonNegativeSecondsToMs(payload.iat, 'iat');
    return { principalName, scope, expiresAtMs, issuedAtMs };
  }

  async #verify(token: string): Promise<JWTPayload> {
    refuseUnsignedAlgorithm(token);
    const options: JWTVerifyOptions = {
      algorithms: [...JWKS_ALGORITHMS],
      requiredClaims: ['exp', 'iat'],
      clockTolerance: this.options.clockSkewSeconds,
      currentDate: new Date(this.clock.nowMs()),
    };
    if (this.options.expectedAudience.length > 0) options.audience = [...this.options.expectedAudience];
    if (this.options.expectedIssuer !== null) options.issuer = this.options.expectedIssuer;
    let payload: JWTPayload;
    try {
      payload = (await jwtVerify(token, await this.keySet.resolver(), options)).payload;
    } catch (error) {
      throw new TokenValidationError(`Could not validate the access token: ${(error as Error).message}`);
    }
    if (this.options.expectedAudience.length === 0 && payload.aud !== undefined) {
      throw new TokenValidationError(
        `Could not validate the access token: Audience (aud) claim ${JSON.stringify(payload.aud)} present in the JWT but no expected audience value(s) were provided to the JWT Consumer.`,
      );
    }
    return payload;
  }
}

/** Kafka's SerializedJwt: trimmed, three sections, none empty. */
function checkSerialized(tokenValue: string): string {
  const token = tokenValue.trim();
  if (token === '') throw new TokenValidationError('Empty JWT provided; expected three sections (header, payload, and signature)');
  const sections = token.split('.');
  if (sections.length !== 3) throw new TokenValidationError(`Malformed JWT provided; expected three sections (header, payload, and signature), but ${sections.length} sections provided`);
  const names = ['header', 'payload', 'signature'];
  for (const [index, section] of sections.entries()) {
    if (section.trim() === '') throw new TokenValidationError(`Malformed JWT provided; expected at least three sections (header, payload, and signature), but ${names[index]} section missing`);
  }
  return token;
}

/** jose4j's AlgorithmConstraints.DISALLOW_NONE, said before jose is asked (which refuses it too). */
function refuseUnsignedAlgorithm(token: string): void {
  let alg: unknown;
  try {
    alg = decodeProtectedHeader(token).alg;
  } catch (error) {
    throw new TokenValidationError(`Could not validate the access token: ${(error as Error).message}`);
  }
  if (typeof alg === 'string' && alg.toLowerCase() === 'none') throw new TokenValidationError("Could not validate the access token: 'none' via alg header not permitted");
}

/** Kafka's ClaimValidationUtils.validateScopes over the claim as BrokerJwtValidator reads it. */
function scopeOf(raw: unknown, claimName: string): ReadonlySet<string> {
  const values = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? raw : [];
  const scope = new Set<string>();
  for (const value of values) {
    if (typeof value !== 'string') throw new TokenValidationError(`Could not extract the '${claimName}' claim from the access token`);
    const trimmed = nonBlank(value, claimName);
    if (scope.has(trimmed)) throw new TokenValidationError(`${claimName} value must not contain duplicates - ${trimmed} already present`);
    scope.add(trimmed);
  }
  return scope;
}

/** Kafka's ClaimValidationUtils.validateSubject: a string claim, not blank, trimmed. */
function subjectOf(raw: unknown, claimName: string): string {
  if (raw !== undefined && raw !== null && typeof raw !== 'string') throw new TokenValidationError(`Could not extract the '${claimName}' claim from the access token`);
  return nonBlank(raw ?? null, claimName);
}

function nonBlank(value: string | null, claimName: string): string {
  if (value === null) throw new TokenValidationError(`${claimName} value must be non-null`);
  if (value === '') throw new TokenValidationError(`${claimName} value must be non-empty`);
  const trimmed = value.trim();
  if (trimmed === '') throw new TokenValidationError(`${claimName} value must not contain only whitespace`);
  return trimmed;
}

/** jose4j's NumericDate in ms (whole seconds × 1000), refused when negative (ClaimValidationUtils). */
function nonNegativeSecondsToMs(seconds: unknown, claimName: string): number {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) throw new TokenValidationError(`${claimName} value must be non-null`);
  const ms = Math.trunc(seconds) * 1000;
  if (ms < 0) throw new TokenValidationError(`${claimName} value must be non-negative; value given was "${ms}"`);
  if (ms > CLAIM_TIME_MS_MAX) throw new TokenValidationError(`${claimName} value is past the latest time Ferry takes; value given was "${ms}"`);
  return ms;
}
