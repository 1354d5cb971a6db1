import { describe, expect, test } from 'bun:test';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { SaslAuthenticationError, type SaslServerFactory, type SaslStep } from '../../../src/security/sasl/mechanism.ts';
import { OAuthBearerConfigError, oauthBearerServerFactory, type OAuthBearerJwksConfig, type OAuthBearerServerFactory } from '../../../src/security/sasl/oauthbearer.ts';
import {
  AUTH_NOT_SPECIFIED,
  INITIAL_RESPONSE_SIZE_MAX_BYTES,
  INVALID_AUTH_FORMAT,
  INVALID_FIRST_MESSAGE,
  InvalidInitialResponseError,
  parseClientInitialResponse,
} from '../../../src/security/sasl/oauthbearer-initial-response.ts';
import { JWKS_FILE_CHECK_INTERVAL_MS } from '../../../src/security/sasl/oauthbearer-jwks.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { JwtIssuer, librdkafkaUnsecuredToken, oauthBearerInitialResponse } from '../../support/jwt-issuer.ts';
import { tempDir } from '../../support/temp-dir.ts';

const ISSUER = 'https://idp.example';
const AUDIENCE = 'kafka-cluster';
const INVALID_TOKEN = '{"status":"invalid_token"}';
const ASCII = new TextEncoder();

async function setup(config: Partial<OAuthBearerJwksConfig> = {}) {
  const clock = new ManualClock();
  const directory = tempDir('ferry-oauth-');
  const issuer = await JwtIssuer.create(directory, { clock, claims: { iss: ISSUER, aud: AUDIENCE } });
  const factory = oauthBearerServerFactory({ mode: 'jwks', jwksEndpointUrl: issuer.jwksUrl, expectedAudience: [AUDIENCE], expectedIssuer: ISSUER, ...config }, clock);
  return { clock, directory, issuer, factory };
}

async function authenticate(factory: SaslServerFactory, token: string, authorizationId?: string): Promise<SaslStep> {
  return factory.create().evaluate(oauthBearerInitialResponse(token, authorizationId === undefined ? {} : { authorizationId }));
}

async function expectAccepted(factory: SaslServerFactory, token: string, name: string): Promise<Extract<SaslStep, { done: true }>> {
  const step = await authenticate(factory, token);
  if (!step.done) throw new Error(`refused: ${new TextDecoder().decode(step.challenge)}`);
  expect(step.principal).toEqual({ type: 'User', name });
  expect(step.response).toEqual(new Uint8Array(0));
  return step;
}

/** Kafka's exchange for a refused token: the JSON challenge, the client's %x01, the failure with the JSON. */
async function expectRefused(factory: SaslServerFactory, token: string, json = INVALID_TOKEN): Promise<SaslAuthenticationError> {
  const server = factory.create();
  const step = await server.evaluate(oauthBearerInitialResponse(token));
  expect(step.done).toBe(false);
  if (step.done) throw new Error('accepted');
  expect(new TextDecoder().decode(step.challenge)).toBe(json);
  const error = await rejection(server.evaluate(Uint8Array.of(0x01)));
  expect(error.message).toBe(json);
  return error;
}

/** The SaslAuthenticationError `evaluation` fails with. */
async function rejection(evaluation: Promise<SaslStep>): Promise<SaslAuthenticationError> {
  const error = await evaluation.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SaslAuthenticationError);
  return error as SaslAuthenticationError;
}

function decodePart(token: string, index: number): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[index] ?? '', 'base64url').toString('utf8'));
}

function withPayload(token: string, payload: Record<string, unknown>): string {
  const [header = '', , signature = ''] = token.split('.');
  return `${header}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${signature}`;
}

describe('OAUTHBEARER with a JWKS file (KIP-768)', () => {
  test('a good RS256 or ES256 token authenticates User:<sub> until its exp', async () => {
    const { clock, issuer, factory } = await setup();
    expect(factory.mechanism).toBe('OAUTHBEARER');
    for (const key of ['rsa', 'ec'] as const) {
      const token = await issuer.sign({ sub: `alice-${key}` }, { key, lifetimeSeconds: 600 });
      expect(decodePart(token, 0)).toEqual({ alg: key === 'rsa' ? 'RS256' : 'ES256', kid: issuer.kid(key) });
      const step = await expectAccepted(factory, token, `alice-${key}`);
      expect(step.credentialExpiresAtMs).toBe((Math.floor(clock.nowMs() / 1000) + 600) * 1000);
    }
  });

  test('an expired token is refused, past the 30 s clock skew; within it, accepted', async () => {
    const { clock, issuer, factory } = await setup();
    const token = await issuer.sign({ sub: 'alice' }, { lifetimeSeconds: 60 });
    clock.advance(60_000 + 29_000);
    await expectAccepted(factory, token, 'alice');
    clock.advance(1_000);
    const error = await expectRefused(factory, token);
    expect(error.detail).toContain('"exp" claim timestamp check failed');
  });

  test('sasl.oauthbearer.clock.skew.seconds sets the skew', async () => {
    const { clock, issuer, factory } = await setup({ clockSkewSeconds: 0 });
    const token = await issuer.sign({ sub: 'alice' }, { lifetimeSeconds: 60 });
    clock.advance(59_000);
    await expectAccepted(factory, token, 'alice');
    clock.advance(1_000);
    await expectRefused(factory, token);
  });

  test('a token not yet valid (nbf past now plus the skew) is refused', async () => {
    const { clock, issuer, factory } = await setup();
    const nowSeconds = Math.floor(clock.nowMs() / 1000);
    await expectRefused(factory, await issuer.sign({ sub: 'alice', nbf: nowSeconds + 31 }));
    await expectAccepted(factory, await issuer.sign({ sub: 'alice', nbf: nowSeconds + 30 }), 'alice');
  });

  test('exp and iat are required (Kafka: setRequireExpirationTime, setRequireIssuedAt)', async () => {
    const { issuer, factory } = await setup();
    await expectRefused(factory, await issuer.sign({ sub: 'alice', exp: undefined }));
    await expectRefused(factory, await issuer.sign({ sub: 'alice', iat: undefined }));
    await expectRefused(factory, await issuer.sign({ sub: 'alice', exp: 'tomorrow' as unknown as number }));
  });

  test('a wrong audience is refused; one matching audience of several is enough', async () => {
    const { issuer, factory } = await setup();
    await expectRefused(factory, await issuer.sign({ sub: 'alice', aud: 'another-service' }));
    await expectRefused(factory, await issuer.sign({ sub: 'alice', aud: undefined }));
    await expectAccepted(factory, await issuer.sign({ sub: 'alice', aud: ['another-service', AUDIENCE] }), 'alice');
    const { factory: twoAudiences, issuer: issuer2 } = await setup({ expectedAudience: ['a', AUDIENCE] });
    await expectAccepted(twoAudiences, await issuer2.sign({ sub: 'alice' }), 'alice');
  });

  test('without an expected audience, a token that has an aud is refused (jose4j default, as in Kafka)', async () => {
    const { issuer, factory } = await setup({ expectedAudience: [] });
    const error = await expectRefused(factory, await issuer.sign({ sub: 'alice' }));
    expect(error.detail).toContain('present in the JWT but no expected audience value(s) were provided');
    await expectAccepted(factory, await issuer.sign({ sub: 'alice', aud: undefined }), 'alice');
  });

  test('a wrong or missing issuer is refused; without an expected issuer none is checked', async () => {
    const { issuer, factory } = await setup();
    await expectRefused(factory, await issuer.sign({ sub: 'alice', iss: 'https://evil.example' }));
    await expectRefused(factory, await issuer.sign({ sub: 'alice', iss: undefined }));
    const { issuer: issuer2, factory: anyIssuer } = await setup({ expectedIssuer: null });
    await expectAccepted(anyIssuer, await issuer2.sign({ sub: 'alice', iss: 'https://whoever.example' }), 'alice');
  });

  test('an unknown kid is refused', async () => {
    const { issuer, factory } = await setup();
    const error = await expectRefused(factory, await issuer.sign({ sub: 'alice' }, { kid: 'no-such-key' }));
    expect(error.detail).toContain('no applicable key found in the JSON Web Key Set');
  });

  test('without a kid, the one key of the right type verifies', async () => {
    const { issuer, factory } = await setup();
    await expectAccepted(factory, await issuer.sign({ sub: 'alice' }, { kid: null }), 'alice');
    await expectAccepted(factory, await issuer.sign({ sub: 'alice' }, { key: 'ec', kid: null }), 'alice');
  });

  test('a token signed with another key under a known kid is refused', async () => {
    const { issuer, factory } = await setup();
    const impostor = await JwtIssuer.create(tempDir('ferry-oauth-impostor-'), { claims: { iss: ISSUER, aud: AUDIENCE } });
    const error = await expectRefused(factory, await impostor.sign({ sub: 'alice' }, { kid: issuer.kid('rsa') }));
    expect(error.detail).toContain('signature verification failed');
  });

  test('alg none is refused in JWKS mode, with or without a kid', async () => {
    const { clock, issuer, factory } = await setup();
    await expectRefused(factory, librdkafkaUnsecuredToken({ principal: 'alice', nowMs: clock.nowMs() }));
    const nowSeconds = Math.floor(clock.nowMs() / 1000);
    const claims = Buffer.from(JSON.stringify({ sub: 'alice', iss: ISSUER, aud: AUDIENCE, iat: nowSeconds, exp: nowSeconds + 60 })).toString('base64url');
    for (const header of [{ alg: 'none', kid: issuer.kid() }, { alg: 'NONE' }]) {
      const encoded = Buffer.from(JSON.stringify(header)).toString('base64url');
      const error = await expectRefused(factory, `${encoded}.${claims}.`);
      expect(error.detail).toContain('Malformed JWT');
      await expectRefused(factory, `${encoded}.${claims}.AAAA`);
    }
  });

  test('an HMAC token is refused even if the JWKS held a secret key', async () => {
    const { issuer, factory } = await setup();
    issuer.writeJwks({ keys: [...issuer.jwks().keys, { kty: 'oct', k: 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTEyMzQ', kid: 'hmac', alg: 'HS256' }] });
    await factory.reload();
    const { SignJWT } = await import('jose');
    const token = await new SignJWT({ sub: 'alice', iss: ISSUER, aud: AUDIENCE })
      .setProtectedHeader({ alg: 'HS256', kid: 'hmac' })
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(Buffer.from('secret-secret-secret-secret-1234'));
    await expectRefused(factory, token);
  });

  test('a tampered payload is refused', async () => {
    const { issuer, factory } = await setup();
    const token = await issuer.sign({ sub: 'alice' });
    await expectAccepted(factory, token, 'alice');
    const error = await expectRefused(factory, withPayload(token, { ...decodePart(token, 1), sub: 'admin' }));
    expect(error.detail).toContain('signature verification failed');
  });

  test('a JWKS file rotated: the new key is accepted after reload and the old one refused', async () => {
    const { issuer, factory } = await setup();
    const oldToken = await issuer.sign({ sub: 'alice' });
    await issuer.rotate();
    const newToken = await issuer.sign({ sub: 'bob' });
    // the file is looked at once per interval: until then, the keys read at startup
    await expectAccepted(factory, oldToken, 'alice');
    await expectRefused(factory, newToken);
    await factory.reload();
    await expectAccepted(factory, newToken, 'bob');
    await expectRefused(factory, oldToken);
  });

  test('a JWKS file rotated is read again at the next check, without a reload', async () => {
    const { clock, issuer, factory } = await setup();
    const oldToken = await issuer.sign({ sub: 'alice' });
    await issuer.rotate();
    const newToken = await issuer.sign({ sub: 'bob' });
    clock.advance(JWKS_FILE_CHECK_INTERVAL_MS - 1);
    await expectRefused(factory, newToken);
    clock.advance(1);
    await expectAccepted(factory, newToken, 'bob');
    await expectRefused(factory, oldToken);
  });

  test('a JWKS file rewritten badly keeps the previous keys, and is read again once good', async () => {
    const { clock, issuer } = await setup();
    const logs: string[] = [];
    const factoryWithLog = oauthBearerServerFactory({ mode: 'jwks', jwksEndpointUrl: issuer.jwksPath, expectedAudience: [AUDIENCE], expectedIssuer: ISSUER, log: (m) => logs.push(m) }, clock);
    const token = await issuer.sign({ sub: 'alice' });
    issuer.writeJwks('{"keys": [');
    await factoryWithLog.reload();
    expect(logs.join('\n')).toContain('kept the previous JWKS');
    await expectAccepted(factoryWithLog, token, 'alice');
    await issuer.rotate();
    clock.advance(JWKS_FILE_CHECK_INTERVAL_MS);
    await expectAccepted(factoryWithLog, await issuer.sign({ sub: 'bob' }), 'bob');
  });

  test('a missing or blank sub is refused; sasl.oauthbearer.sub.claim.name picks another claim', async () => {
    const { issuer, factory } = await setup();
    const missing = await expectRefused(factory, await issuer.sign({ email: 'alice@example.com' }));
    expect(missing.detail).toContain('sub value must be non-null');
    await expectRefused(factory, await issuer.sign({ sub: '   ' }));
    await expectRefused(factory, await issuer.sign({ sub: 42 as unknown as string }));
    await expectAccepted(factory, await issuer.sign({ sub: ' alice ' }), 'alice');
    const { issuer: issuer2, factory: byEmail } = await setup({ subClaimName: 'email' });
    await expectAccepted(byEmail, await issuer2.sign({ sub: 'x', email: 'alice@example.com' }), 'alice@example.com');
  });

  test('the scope claim: a string, an array of distinct strings, or absent; blank or repeated items refuse', async () => {
    const { issuer, factory } = await setup();
    await expectAccepted(factory, await issuer.sign({ sub: 'alice', scope: 'read write' }), 'alice');
    await expectAccepted(factory, await issuer.sign({ sub: 'alice', scope: ['read', 'write'] }), 'alice');
    await expectRefused(factory, await issuer.sign({ sub: 'alice', scope: ['read', 'read'] }));
    await expectRefused(factory, await issuer.sign({ sub: 'alice', scope: ['read', ' '] }));
    await expectRefused(factory, await issuer.sign({ sub: 'alice', scope: [1] }));
    const { issuer: issuer2, factory: byScp } = await setup({ scopeClaimName: 'scp' });
    await expectRefused(byScp, await issuer2.sign({ sub: 'alice', scp: '' }));
  });

  test('the error exchange: JSON challenge, %x01, then the failure; a new first message instead is evaluated afresh', async () => {
    const { issuer, factory } = await setup();
    const server = factory.create();
    const bad = await server.evaluate(oauthBearerInitialResponse('not.a.jwt'));
    expect(bad).toEqual({ done: false, challenge: ASCII.encode(INVALID_TOKEN) });
    const good = await server.evaluate(oauthBearerInitialResponse(await issuer.sign({ sub: 'alice' })));
    expect(good.done).toBe(true);
    // after the end, any token is refused
    await rejection(server.evaluate(Uint8Array.of(0x01)));
    // %x01 without an error challenge before it is just a malformed first message
    const error = await rejection(factory.create().evaluate(Uint8Array.of(0x01)));
    expect(error.message).toBe('Authentication failed during authentication due to invalid credentials with SASL mechanism OAUTHBEARER');
    expect(error.invalidCredentials).toBe(true);
    expect(error.detail).toBe(INVALID_FIRST_MESSAGE);
  });

  test('after the failure the exchange is over', async () => {
    const { factory } = await setup();
    const server = factory.create();
    await server.evaluate(oauthBearerInitialResponse('a.b.c'));
    await expect(server.evaluate(Uint8Array.of(1))).rejects.toThrow(INVALID_TOKEN);
    await expect(server.evaluate(Uint8Array.of(1))).rejects.toBeInstanceOf(SaslAuthenticationError);
  });

  test("an authzid must be the token's principal name (Kafka's message otherwise)", async () => {
    const { issuer, factory } = await setup();
    const token = await issuer.sign({ sub: 'alice' });
    expect((await authenticate(factory, token, 'alice')).done).toBe(true);
    const error = await rejection(authenticate(factory, token, 'admin'));
    expect(error.message).toBe("Authentication failed: Client requested an authorization id (admin) that is different from the token's principal name (alice)");
  });

  test('extensions are accepted', async () => {
    const { issuer, factory } = await setup();
    const token = await issuer.sign({ sub: 'alice' });
    const step = await factory.create().evaluate(oauthBearerInitialResponse(token, { extensions: { logicalCluster: 'lkc-123', traceId: 'a b=c' } }));
    expect(step.done).toBe(true);
  });

  test('a JWKS endpoint that cannot be used stops the broker from starting', async () => {
    const clock = new ManualClock();
    const directory = tempDir('ferry-oauth-');
    const config = (jwksEndpointUrl: string) => ({ mode: 'jwks' as const, jwksEndpointUrl });
    expect(() => oauthBearerServerFactory(config(join(directory, 'missing.json')), clock)).toThrow(OAuthBearerConfigError);
    expect(() => oauthBearerServerFactory(config('https://idp.example/keys'), clock)).toThrow(OAuthBearerConfigError);
    writeFileSync(join(directory, 'bad.json'), '{"keys": {}}');
    expect(() => oauthBearerServerFactory(config(join(directory, 'bad.json')), clock)).toThrow(OAuthBearerConfigError);
    writeFileSync(join(directory, 'empty.json'), '{"keys": []}');
    expect(() => oauthBearerServerFactory({ ...config(join(directory, 'empty.json')), clockSkewSeconds: -1 }, clock)).toThrow(OAuthBearerConfigError);
    expect(() => oauthBearerServerFactory({ ...config(join(directory, 'empty.json')), subClaimName: ' ' }, clock)).toThrow(OAuthBearerConfigError);
    renameSync(join(directory, 'empty.json'), join(directory, 'keys.json'));
    expect(oauthBearerServerFactory(config(`file://${join(directory, 'keys.json')}`), clock).mechanism).toBe('OAUTHBEARER');
  });
});

describe('OAUTHBEARER with unsecured tokens (development)', () => {
  function unsecuredSetup(config: { requiredScope?: string[]; allowableClockSkewMs?: number; principalClaimName?: string } = {}) {
    const clock = new ManualClock(1_700_000_000_123);
    const factory: OAuthBearerServerFactory = oauthBearerServerFactory({ mode: 'unsecured', ...config }, clock);
    return { clock, factory };
  }

  test("librdkafka's token (sasl.oauthbearer.config principal=alice scope=read,write lifeSeconds=600) authenticates", async () => {
    const { clock, factory } = unsecuredSetup({ requiredScope: ['read'] });
    const token = librdkafkaUnsecuredToken({ principal: 'alice', scope: ['read', 'write'], lifeSeconds: 600, nowMs: clock.nowMs() });
    expect(token.startsWith('eyJhbGciOiJub25lIn0.')).toBe(true);
    expect(token.endsWith('.')).toBe(true);
    expect(decodePart(token, 1)).toEqual({ sub: 'alice', iat: 1700000000.123, exp: 1700000600.123, scope: ['read', 'write'] });
    const step = await expectAccepted(factory, token, 'alice');
    expect(step.credentialExpiresAtMs).toBe(1_700_000_600_123);
  });

  test('an expired token is refused, with unsecuredValidatorAllowableClockSkewMs', async () => {
    const { clock, factory } = unsecuredSetup({ allowableClockSkewMs: 1000 });
    const token = librdkafkaUnsecuredToken({ principal: 'alice', lifeSeconds: 60, nowMs: clock.nowMs() });
    clock.advance(60_999);
    await expectAccepted(factory, token, 'alice');
    clock.advance(1);
    const error = await expectRefused(factory, token);
    expect(error.detail).toContain('was on or after the Expiration Time value');
  });

  test('a token issued in the future, past the skew, is refused', async () => {
    const { clock, factory } = unsecuredSetup();
    await expectRefused(factory, librdkafkaUnsecuredToken({ principal: 'alice', nowMs: clock.nowMs() + 1 }));
    await expectAccepted(factory, librdkafkaUnsecuredToken({ principal: 'alice', nowMs: clock.nowMs() }), 'alice');
  });

  test('a missing required scope is insufficient_scope, with the scope in the challenge', async () => {
    const { clock, factory } = unsecuredSetup({ requiredScope: ['read', 'admin'] });
    const token = librdkafkaUnsecuredToken({ principal: 'alice', scope: ['read'], nowMs: clock.nowMs() });
    await expectRefused(factory, token, '{"status":"insufficient_scope", "scope":"[read, admin]"}');
  });

  test('signed tokens, signatures and malformed tokens are refused', async () => {
    const { clock, factory } = unsecuredSetup();
    const issuer = await JwtIssuer.create(tempDir('ferry-oauth-'), { clock });
    const signed = await issuer.sign({ sub: 'alice' });
    expect((await expectRefused(factory, signed)).detail).toBe("Unsecured JWS must have 'none' for an algorithm");
    const token = librdkafkaUnsecuredToken({ principal: 'alice', nowMs: clock.nowMs() });
    expect((await expectRefused(factory, `${token}AAAA`)).detail).toBe('Unsecured JWS must not contain a digital signature');
    expect((await expectRefused(factory, token.slice(0, -1))).detail).toContain('3 dot-separated');
    const claims = (payload: object) => `eyJhbGciOiJub25lIn0.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.`;
    const nowSeconds = clock.nowMs() / 1000;
    expect((await expectRefused(factory, claims({ sub: 'alice' }))).detail).toBe('No expiration time in JWT');
    expect((await expectRefused(factory, claims({ exp: nowSeconds + 60 }))).detail).toBe('No principal name in JWT claim: sub');
    expect((await expectRefused(factory, claims({ sub: 'a', exp: String(nowSeconds + 60) }))).detail).toBe("The 'exp' claim was not of type Number: String");
    expect((await expectRefused(factory, claims({ sub: 'a', exp: nowSeconds + 60, iat: nowSeconds + 61 }))).detail).toContain('Issued At');
    expect((await expectRefused(factory, claims({ sub: 'a', exp: 1e308 }))).detail).toContain('latest time');
  });

  test('unsecuredValidatorPrincipalClaimName picks the principal claim', async () => {
    const { clock, factory } = unsecuredSetup({ principalClaimName: 'user' });
    const nowSeconds = clock.nowMs() / 1000;
    const token = `eyJhbGciOiJub25lIn0.${Buffer.from(JSON.stringify({ user: 'carol', exp: nowSeconds + 60 })).toString('base64url')}.`;
    await expectAccepted(factory, token, 'carol');
  });

  test('an unusable option stops the broker from starting', () => {
    const clock = new ManualClock();
    expect(() => oauthBearerServerFactory({ mode: 'unsecured', requiredScope: ['a"b'] }, clock)).toThrow(OAuthBearerConfigError);
    expect(() => oauthBearerServerFactory({ mode: 'unsecured', allowableClockSkewMs: -1 }, clock)).toThrow(OAuthBearerConfigError);
  });
});

describe('the client first message (Kafka OAuthBearerClientInitialResponse)', () => {
  const parse = (text: string) => parseClientInitialResponse(ASCII.encode(text));
  const refusal = (text: string) => {
    try {
      parse(text);
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidInitialResponseError);
      return (error as Error).message;
    }
    return null;
  };

  test('the forms Kafka, librdkafka and kafkajs send', () => {
    expect(parse('n,,\x01auth=Bearer abc.def.ghi\x01\x01')).toEqual({ tokenValue: 'abc.def.ghi', authorizationId: '', extensions: new Map() });
    const full = parse('n,a=user=2Cname,\x01auth=bearer  t0k-_~+/.en==\x01ext=one two\x01other=x=y\x01\x01');
    expect(full.tokenValue).toBe('t0k-_~+/.en==');
    expect(full.authorizationId).toBe('user=2Cname');
    expect([...full.extensions]).toEqual([
      ['ext', 'one two'],
      ['other', 'x=y'],
    ]);
    expect(parse('n,,\x01auth=Bearer a\x01auth=Bearer b\x01\x01').tokenValue).toBe('b');
  });

  test("Kafka's refusals", () => {
    expect(refusal('n,,\x01\x01')).toBe(AUTH_NOT_SPECIFIED);
    expect(refusal('n,,\x01ext=x\x01\x01')).toBe(AUTH_NOT_SPECIFIED);
    expect(refusal('n,,\x01auth=Bearer\x01\x01')).toBe(INVALID_AUTH_FORMAT);
    expect(refusal('n,,\x01auth=Bearer a b\x01\x01')).toBe(INVALID_AUTH_FORMAT);
    expect(refusal('n,,\x01auth=Basic abc\x01\x01')).toBe('Invalid scheme in OAUTHBEARER client first message: Basic');
    for (const text of [
      '',
      'n,,',
      'y,,\x01auth=Bearer a\x01\x01',
      'n,a=,\x01auth=Bearer a\x01\x01',
      'n,a=x=y,\x01auth=Bearer a\x01\x01',
      'n,,\x01auth=Bearer a\x01',
      'n,,auth=Bearer a\x01\x01',
      'n,,\x01auth=Bearer a\x01x1=y\x01\x01',
      'n,,\x01auth=Bearer a\x01e=\x01\x01',
      'n,,\x01auth=Bearer a\x01e=\x00\x01\x01',
      'n,,\x01auth=Bearer é\x01\x01',
    ]) {
      expect(refusal(text)).toBe(INVALID_FIRST_MESSAGE);
    }
    expect(refusal(`n,,\x01auth=Bearer ${'a'.repeat(INITIAL_RESPONSE_SIZE_MAX_BYTES)}\x01\x01`)).toBe(INVALID_FIRST_MESSAGE);
    const manyExtensions = Array.from({ length: 100 }, (_, i) => `e${'a'.repeat(i)}=x\x01`)
      .join('')
      .replace(/[0-9]/g, '');
    expect(refusal(`n,,\x01auth=Bearer a\x01${manyExtensions}\x01`)).toBe(INVALID_FIRST_MESSAGE);
  });

  /** Kafka's CLIENT_INITIAL_RESPONSE_PATTERN, in JavaScript: the oracle for which messages are well formed. */
  const KAFKA_PATTERN = /^n,(?:a=(?:[\x01-\x2B\x2D-\x3C\x3E-\x7F]|=2C|=3D)+)?,\x01(?:[A-Za-z]+=[\x21-\x7E \t\r\n]+\x01)*\x01$/;
  const PIECES = ['n', ',', 'a=', '=', '\x01', 'auth', '=Bearer ', 'Bearer', ' ', 'x', 'Q', '2C', '3D', '.', 'tok.en', '-', '~', '\x00', '\t', '\x7f', 'é', 'e=v'];
  const messages = fc.oneof(
    fc.array(fc.constantFrom(...PIECES), { maxLength: 24 }).map((pieces) => pieces.join('')),
    fc
      .tuple(fc.constantFrom('n,,', 'n,a=x,', 'n,a==3D,', 'n,a=', 'y,,'), fc.array(fc.constantFrom(...PIECES), { maxLength: 12 }))
      .map(([head, pieces]) => `${head}\x01auth=Bearer t${pieces.join('')}\x01\x01`),
  );

  test("fuzz: a message is malformed exactly when Kafka's pattern does not match it", () => {
    fc.assert(
      fc.property(messages, (text) => {
        const bytes = new TextEncoder().encode(text);
        const matches = bytes.every((b) => b < 0x80) && KAFKA_PATTERN.test(text);
        const reason = (() => {
          try {
            parseClientInitialResponse(bytes);
            return null;
          } catch (error) {
            if (!(error instanceof InvalidInitialResponseError)) throw error;
            return error.message;
          }
        })();
        expect(reason === INVALID_FIRST_MESSAGE).toBe(!matches);
      }),
      { numRuns: 5_000, seed: 13 },
    );
  });

  test('fuzz: any bytes give a step or a SaslAuthenticationError, in both modes', async () => {
    const { factory } = await setup();
    const unsecured = oauthBearerServerFactory({ mode: 'unsecured' }, new ManualClock());
    const inputs = fc.oneof(
      fc.uint8Array({ maxLength: 512 }),
      messages.map((text) => new TextEncoder().encode(text)),
      fc.string({ maxLength: 200 }).map((token) => oauthBearerInitialResponse(token.replace(/[\x00-\x20\x7f-\uffff]/g, 'x') || 'x')),
      fc.tuple(fc.string(), fc.string()).map(([header, claims]) => oauthBearerInitialResponse(`${Buffer.from(header).toString('base64url')}.${Buffer.from(claims).toString('base64url')}.`)),
    );
    await fc.assert(
      fc.asyncProperty(inputs, fc.boolean(), async (bytes, secured) => {
        const server = (secured ? factory : unsecured).create();
        for (const token of [bytes, Uint8Array.of(1)]) {
          try {
            if ((await server.evaluate(token)).done) return;
          } catch (error) {
            expect(error).toBeInstanceOf(SaslAuthenticationError);
            return;
          }
        }
      }),
      { numRuns: 2_000, seed: 7 },
    );
  });
});
