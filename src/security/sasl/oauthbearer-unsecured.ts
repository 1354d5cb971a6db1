import type { Clock } from '../../util/clock.ts';
import { CLAIM_TIME_MS_MAX, TokenValidationError, type TokenValidator, type ValidatedToken } from './oauthbearer-token.ts';

/**
 * Kafka's OAuthBearerUnsecuredValidatorCallbackHandler (over OAuthBearerUnsecuredJws): accepts
 * unsigned JWTs (`alg: none`, empty signature), for development only. librdkafka makes such tokens
 * with `enable.sasl.oauthbearer.unsecure.jwt=true` and `sasl.oauthbearer.config=principal=alice
 * scope=a,b lifeSeconds=600`:
 *
 *   eyJhbGciOiJub25lIn0.<base64url {"sub":"alice","iat":1700000000.123,"exp":1700000600.123,"scope":["a","b"]}>.
 *
 * The checks, in Kafka's order: no `..`; three sections; header and claims are base64url JSON
 * objects; `alg` is `none`; the signature is empty; the scope claim is a string or an array (each
 * item trimmed, blank ones dropped); `exp` is a number; the principal claim is a non-blank string
 * (kept as sent); `iat` if present is a number and not after now plus the skew; now minus the skew
 * is before `exp`; `exp` is after `iat`; every required scope is in the token's scope, else
 * `insufficient_scope`.
 *
 * Kafka decodes the sections with Java's basic Base64 decoder, which refuses the `-` and `_` of
 * base64url that librdkafka (rightly, RFC 7515) writes: this reads base64url.
 */
export interface UnsecuredValidatorOptions {
  readonly principalClaimName: string;
  readonly scopeClaimName: string;
  readonly requiredScope: readonly string[];
  readonly allowableClockSkewMs: number;
}

/** Kafka's OAuthBearerScopeUtils: a scope item is 1*( %x21 / %x23-5B / %x5D-7E ) (RFC 6749 §3.3). */
export const SCOPE_ITEM = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

const BASE64URL = /^[A-Za-z0-9_-]*$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

type Claims = Readonly<Record<string, unknown>>;

export class UnsecuredJwtValidator implements TokenValidator {
  constructor(
    private readonly clock: Clock,
    private readonly options: UnsecuredValidatorOptions,
  ) {}

  async validate(tokenValue: string): Promise<ValidatedToken> {
    const claims = parseUnsecuredJws(tokenValue);
    const { principalClaimName, scopeClaimName, allowableClockSkewMs } = this.options;
    const scope = scopeOf(claims[scopeClaimName], scopeClaimName);
    const expSeconds = claims.exp;
    if (expSeconds === undefined || expSeconds === null) throw new TokenValidationError('No expiration time in JWT');
    const exp = numberClaim(expSeconds, 'exp');
    const principalName = principalOf(claims[principalClaimName], principalClaimName);
    const iat = claims.iat === undefined || claims.iat === null ? null : numberClaim(claims.iat, 'iat');
    const nowMs = this.clock.nowMs();
    if (iat !== null && 1000 * iat > nowMs + allowableClockSkewMs) {
      throw new TokenValidationError(`The Issued At value (${iat.toFixed(6)} seconds) was after the indicated time (${nowMs} ms) plus allowable clock skew (${allowableClockSkewMs} ms)`);
    }
    if (nowMs - allowableClockSkewMs >= 1000 * exp) {
      throw new TokenValidationError(`The indicated time (${nowMs} ms) minus allowable clock skew (${allowableClockSkewMs} ms) was on or after the Expiration Time value (${exp.toFixed(6)} seconds)`);
    }
    if (iat !== null && exp <= iat) {
      throw new TokenValidationError(`The Expiration Time time (${exp.toFixed(6)} seconds) was not after the Issued At time (${iat.toFixed(6)} seconds)`);
    }
    this.#checkScope(scope);
    return { principalName, scope, expiresAtMs: secondsToMs(exp, 'exp'), issuedAtMs: iat === null ? null : secondsToMs(iat, 'iat') };
  }

  #checkScope(scope: ReadonlySet<string>): void {
    const required = this.options.requiredScope;
    for (const item of required) {
      if (!scope.has(item)) {
        const requiredText = javaList(required);
        throw new TokenValidationError(
          `The provided scope (${javaList([...scope])}) was missing a required scope (${item}).  All required scope elements: ${requiredText}`,
          'insufficient_scope',
          requiredText,
        );
      }
    }
  }
}

/** OAuthBearerUnsecuredJws's parse: the claims of an unsigned JWS, or a TokenValidationError. */
export function parseUnsecuredJws(token: string): Claims {
  if (token.includes('..')) throw new TokenValidationError("Malformed compact serialization contains '..'");
  const sections = token.split('.');
  if (sections.length !== 3) throw new TokenValidationError('Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values');
  const [headerSection = '', claimsSection = '', signature = ''] = sections;
  const header = jsonObject(headerSection);
  const claims = jsonObject(claimsSection);
  if (header.alg === undefined || header.alg === null) throw new TokenValidationError('JWS header must have an Algorithm value');
  if (header.alg !== 'none') throw new TokenValidationError("Unsecured JWS must have 'none' for an algorithm");
  if (signature !== '') throw new TokenValidationError('Unsecured JWS must not contain a digital signature');
  return claims;
}

function jsonObject(section: string): Claims {
  if (!BASE64URL.test(section) || section.length % 4 === 1) throw new TokenValidationError('malformed Base64 URL encoded value');
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(Buffer.from(section, 'base64url')));
  } catch {
    throw new TokenValidationError('malformed JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TokenValidationError('malformed JSON');
  return value as Claims;
}

/** OAuthBearerUnsecuredJws.calculateScope: a string is one scope (none if blank); an array, its non-blank items. */
function scopeOf(raw: unknown, claimName: string): ReadonlySet<string> {
  const scope = new Set<string>();
  if (raw === undefined || raw === null) return scope;
  if (typeof raw === 'string') {
    if (raw.trim() !== '') scope.add(raw.trim());
    return scope;
  }
  if (!Array.isArray(raw)) throw new TokenValidationError(`The '${claimName}' claim was not of type List: ${javaType(raw)}`);
  for (const item of raw) {
    const text = typeof item === 'string' ? item : typeof item === 'number' || typeof item === 'boolean' ? String(item) : '';
    if (text.trim() !== '') scope.add(text.trim());
  }
  return scope;
}

function principalOf(raw: unknown, claimName: string): string {
  if (raw !== undefined && raw !== null && typeof raw !== 'string') throw new TokenValidationError(`The '${claimName}' claim was not of type String: ${javaType(raw)}`);
  if (typeof raw !== 'string' || raw.trim() === '') throw new TokenValidationError(`No principal name in JWT claim: ${claimName}`);
  return raw;
}

function numberClaim(raw: unknown, claimName: string): number {
  if (typeof raw !== 'number') throw new TokenValidationError(`The '${claimName}' claim was not of type Number: ${javaType(raw)}`);
  return raw;
}

/** Kafka's convertClaimTimeInSecondsToMs: Math.round(seconds × 1000). */
function secondsToMs(seconds: number, claimName: string): number {
  const ms = Math.round(seconds * 1000);
  if (!Number.isSafeInteger(ms) || ms > CLAIM_TIME_MS_MAX) throw new TokenValidationError(`The '${claimName}' claim is past the latest time Ferry takes: ${seconds}`);
  return ms;
}

/** The simple name of the Java class Jackson would have made of a JSON value, for Kafka's messages. */
function javaType(value: unknown): string {
  if (typeof value === 'string') return 'String';
  if (typeof value === 'number') return Number.isInteger(value) ? 'Integer' : 'Double';
  if (Array.isArray(value)) return 'ArrayList';
  return 'String';
}

/** java.util.List.toString: `[a, b]`. */
function javaList(items: readonly string[]): string {
  return `[${items.join(', ')}]`;
}
