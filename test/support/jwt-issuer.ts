import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { type Clock, systemClock } from '../../src/util/clock.ts';

/**
 * A stand-in identity provider for OAUTHBEARER tests: an RSA (RS256) and an EC (ES256) key pair, a
 * JWKS file with their public halves (sasl.oauthbearer.jwks.endpoint.url = `jwksUrl`), and tokens
 * signed with chosen claims. Times come from the clock given (a ManualClock in unit tests).
 *
 *   const issuer = await JwtIssuer.create(tempDir(), { clock });
 *   const token = await issuer.sign({ sub: 'alice' });               // RS256, iat now, exp in an hour
 *   const ec = await issuer.sign({ sub: 'bob', aud: 'kafka' }, { key: 'ec' });
 *   await issuer.rotate();                                           // new keys, new kids, file rewritten
 */
export type IssuerKeyName = 'rsa' | 'ec';

export interface SignOptions {
  /** Which key signs (default `rsa`). */
  readonly key?: IssuerKeyName;
  /** The header's kid (default: the key's own; null leaves it out). */
  readonly kid?: string | null;
  /** Seconds from now to `exp` when the claims have no `exp` (default 3600). */
  readonly lifetimeSeconds?: number;
}

interface IssuerKey {
  readonly alg: 'RS256' | 'ES256';
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

const ALGORITHMS: Record<IssuerKeyName, 'RS256' | 'ES256'> = { rsa: 'RS256', ec: 'ES256' };

export class JwtIssuer {
  readonly jwksPath: string;
  #keys: Record<IssuerKeyName, IssuerKey>;
  #generation: number;

  private constructor(
    jwksPath: string,
    keys: Record<IssuerKeyName, IssuerKey>,
    private readonly clock: Clock,
    private readonly defaults: JWTPayload,
  ) {
    this.jwksPath = jwksPath;
    this.#keys = keys;
    this.#generation = 1;
  }

  /** Makes the keys and writes `<directory>/jwks.json`. `claims` are added to every token (e.g. iss, aud). */
  static async create(directory: string, options: { clock?: Clock; claims?: JWTPayload } = {}): Promise<JwtIssuer> {
    const issuer = new JwtIssuer(join(directory, 'jwks.json'), await makeKeys(1), options.clock ?? systemClock, options.claims ?? {});
    issuer.writeJwks();
    return issuer;
  }

  /** The JWKS file as a `file:` URL. */
  get jwksUrl(): string {
    return pathToFileURL(this.jwksPath).href;
  }

  kid(key: IssuerKeyName = 'rsa'): string {
    return this.#keys[key].kid;
  }

  /** The public JWKS document now in the file. */
  jwks(): { keys: JWK[] } {
    return { keys: [this.#keys.rsa.publicJwk, this.#keys.ec.publicJwk] };
  }

  /**
   * A signed JWT with the issuer's default claims, then `claims`; `iat` (now) and `exp` (now plus
   * the lifetime) are added unless `claims` has them (a claim set to undefined is left out).
   */
  async sign(claims: JWTPayload, options: SignOptions = {}): Promise<string> {
    const key = this.#keys[options.key ?? 'rsa'];
    const nowSeconds = Math.floor(this.clock.nowMs() / 1000);
    const payload: JWTPayload = { iat: nowSeconds, exp: nowSeconds + (options.lifetimeSeconds ?? 3600), ...this.defaults, ...claims };
    for (const name of Object.keys(payload)) if (payload[name] === undefined) delete payload[name];
    const kid = options.kid === undefined ? key.kid : options.kid;
    const header = kid === null ? { alg: key.alg } : { alg: key.alg, kid };
    return new SignJWT(payload).setProtectedHeader(header).sign(key.privateKey);
  }

  /** Replaces both key pairs by new ones with new kids and rewrites the JWKS file (the old keys leave it). */
  async rotate(): Promise<void> {
    this.#generation += 1;
    this.#keys = await makeKeys(this.#generation);
    this.writeJwks();
  }

  /** Writes the JWKS file atomically (a temporary file renamed over it), as a key server's deploy would. */
  writeJwks(document: unknown = this.jwks()): void {
    const temporary = `${this.jwksPath}.tmp`;
    writeFileSync(temporary, JSON.stringify(document));
    renameSync(temporary, this.jwksPath);
  }
}

/**
 * An unsigned token as librdkafka 2.x makes it for `enable.sasl.oauthbearer.unsecure.jwt=true` and
 * `sasl.oauthbearer.config=principal=<principal> scope=<a,b> lifeSeconds=<n>` (its
 * create_jws_compact_serialization): header `{"alg":"none"}`, claims with iat and exp to the ms
 * (3 decimals), scope as an array, base64url without padding, an empty signature.
 */
export function librdkafkaUnsecuredToken(options: { principal: string; scope?: readonly string[]; lifeSeconds?: number; nowMs: number }): string {
  const nowSeconds = options.nowMs / 1000;
  const scope = options.scope === undefined || options.scope.length === 0 ? '' : `,"scope":[${options.scope.map((s) => `"${s}"`).join(',')}]`;
  const claims = `{"sub":"${options.principal}","iat":${nowSeconds.toFixed(3)},"exp":${(nowSeconds + (options.lifeSeconds ?? 3600)).toFixed(3)}${scope}}`;
  return `eyJhbGciOiJub25lIn0.${Buffer.from(claims).toString('base64url')}.`;
}

async function makeKeys(generation: number): Promise<Record<IssuerKeyName, IssuerKey>> {
  const make = async (name: IssuerKeyName): Promise<IssuerKey> => {
    const alg = ALGORITHMS[name];
    const kid = `${name}-${generation}`;
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
    return { alg, kid, privateKey, publicJwk };
  };
  return { rsa: await make('rsa'), ec: await make('ec') };
}

/**
 * The OAUTHBEARER client first message Kafka's client sends (OAuthBearerClientInitialResponse.toBytes):
 * `n,[a=<authzid>],%x01auth=Bearer <token>[%x01k=v...]%x01%x01`.
 */
export function oauthBearerInitialResponse(token: string, options: { authorizationId?: string; extensions?: Record<string, string> } = {}): Uint8Array {
  const authzid = options.authorizationId === undefined ? '' : `a=${options.authorizationId}`;
  const extensions = Object.entries(options.extensions ?? {})
    .map(([key, value]) => `\x01${key}=${value}`)
    .join('');
  return new TextEncoder().encode(`n,${authzid},\x01auth=Bearer ${token}${extensions}\x01\x01`);
}
