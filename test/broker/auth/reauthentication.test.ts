// KIP-368 over real sockets (docs/security.md [A3], [A5]): session_lifetime_ms from
// connections.max.reauth.ms (and a credential's expiry), the connection closed by a request after
// the session ended, re-authentication on the same connection extending it, a change of principal
// or mechanism refused, and pipelined Produce requests around a re-authentication kept in order.
// Time jumps with a JumpClock, so no test waits a session out.
import { afterEach, expect, test } from 'bun:test';
import type { Broker } from '../../../src/broker/broker.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { PlainSaslClient } from '../../../src/security/sasl/plain.ts';
import { ScramSaslClient } from '../../../src/security/sasl/scram-client.ts';
import { SCRAM_SHA_256 } from '../../../src/security/scram/mechanism.ts';
import { batchOf } from '../../support/batches.ts';
import { JwtIssuer } from '../../support/jwt-issuer.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { authenticationCount, JumpClock, SASL_LISTENER, type SecureBroker, startSecureBroker, stopBrokers } from './brokers.ts';
import { answers, authenticateFramed, call, frames, nextId, sized, utf8, type WireClient, wireClient } from './wire.ts';

/** connections.max.reauth.ms: long in real time, so that only the clock's jumps end a session. */
const REAUTH_MS = 60_000;
const FAILED_DELAY_MS = 50;
/** Far past every jump of the clock here: these tests are of sessions, not of the broker's lease. */
const LEASE_MS = 24 * 60 * 60_000;
const running: Broker[] = [];
const clients: WireClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.end();
  await stopBrokers(running);
});

async function start(sasl: Parameters<typeof startSecureBroker>[0]['sasl'] = { reauthMs: REAUTH_MS }): Promise<SecureBroker & { clock: JumpClock }> {
  const clock = new JumpClock();
  const secure = await startSecureBroker({ clock, sasl, security: { failedAuthenticationDelayMs: FAILED_DELAY_MS }, leaseMs: LEASE_MS }, running);
  return { ...secure, clock };
}

async function connect(secure: SecureBroker): Promise<WireClient> {
  const client = await wireClient(secure.port(SASL_LISTENER));
  clients.push(client);
  return client;
}

async function servesMetadata(client: WireClient): Promise<boolean> {
  const answer = await call(client, frames.metadata(nextId()));
  return answer !== null && answers.metadata(answer).body.brokers.length === 1;
}

test('session_lifetime_ms is connections.max.reauth.ms in SaslAuthenticate v1 and v2 (v0 has no such field)', async () => {
  const secure = await start();
  for (const version of [1, 2]) {
    const last = await authenticateFramed(await connect(secure), new PlainSaslClient('alice', 'alice-secret'), version);
    expect(Number(last.sessionLifetimeMs)).toBe(REAUTH_MS);
  }
  const scram = await authenticateFramed(await connect(secure), new ScramSaslClient(SCRAM_SHA_256, 'carol', 'carol-scram'), 1);
  expect(Number(scram.sessionLifetimeMs)).toBe(REAUTH_MS);
});

test('a per-mechanism connections.max.reauth.ms (listener.name.<l>.<mechanism>. form) applies to that mechanism only', async () => {
  const secure = await start({
    reauthMs: new Map([
      ['PLAIN', 5_000],
      ['SCRAM-SHA-256', 0],
    ]),
  });
  const plain = await authenticateFramed(await connect(secure), new PlainSaslClient('alice', 'alice-secret'));
  expect(Number(plain.sessionLifetimeMs)).toBe(5_000);
  const scram = await authenticateFramed(await connect(secure), new ScramSaslClient(SCRAM_SHA_256, 'carol', 'carol-scram'));
  expect(Number(scram.sessionLifetimeMs)).toBe(0);
});

test('a request after the session ended closes the connection (v0 clients too, which were never told the lifetime)', async () => {
  const secure = await start();
  const told = await connect(secure);
  await authenticateFramed(told, new PlainSaslClient('alice', 'alice-secret'), 2);
  const untold = await connect(secure);
  await authenticateFramed(untold, new PlainSaslClient('bob', 'bob-secret'), 0);
  expect(await servesMetadata(told)).toBe(true);
  expect(await servesMetadata(untold)).toBe(true);
  secure.clock.jump(REAUTH_MS + 1);
  for (const client of [told, untold]) {
    expect(await call(client, frames.metadata(nextId()))).toBeNull();
    expect(await client.waitClosed()).toBe(true);
  }
  expect(secure.logs.some((line) => line.includes('expired (connections.max.reauth.ms'))).toBe(true);
});

test('re-authentication before the end (SaslHandshake v1 + SaslAuthenticate on the same connection) starts a new session; counted as reauthenticated', async () => {
  const secure = await start();
  const client = await connect(secure);
  await authenticateFramed(client, new PlainSaslClient('alice', 'alice-secret'));
  secure.clock.jump(REAUTH_MS * 0.75);
  const counted = authenticationCount(secure.broker, { listener: SASL_LISTENER, mechanism: 'PLAIN', result: 'reauthenticated' });
  const again = await authenticateFramed(client, new PlainSaslClient('alice', 'alice-secret'));
  expect(Number(again.sessionLifetimeMs)).toBe(REAUTH_MS);
  expect(authenticationCount(secure.broker, { listener: SASL_LISTENER, mechanism: 'PLAIN', result: 'reauthenticated' })).toBe(counted + 1);
  secure.clock.jump(REAUTH_MS * 0.75); // past the first session's end, within the second's
  expect(await servesMetadata(client)).toBe(true);
  secure.clock.jump(REAUTH_MS * 0.25 + 1); // past the second's
  expect(await call(client, frames.metadata(nextId()))).toBeNull();
});

test("a session that never ends has nothing to re-authenticate, and one re-authentication a second is the most: SaslHandshake answered ILLEGAL_SASL_STATE, the connection goes on (Kafka's maybeBeginServerReauthentication)", async () => {
  const endless = await start({ reauthMs: 0 });
  const client = await connect(endless);
  await authenticateFramed(client, new PlainSaslClient('alice', 'alice-secret'));
  expect(answers.handshake((await call(client, frames.handshake(nextId(), 'PLAIN')))!).body.errorCode).toBe(ErrorCode.ILLEGAL_SASL_STATE);
  expect(await servesMetadata(client)).toBe(true);

  const secure = await start();
  const busy = await connect(secure);
  await authenticateFramed(busy, new PlainSaslClient('alice', 'alice-secret'));
  await authenticateFramed(busy, new PlainSaslClient('alice', 'alice-secret')); // the first re-authentication
  expect(answers.handshake((await call(busy, frames.handshake(nextId(), 'PLAIN')))!).body.errorCode).toBe(ErrorCode.ILLEGAL_SASL_STATE);
  expect(await servesMetadata(busy)).toBe(true);
  secure.clock.jump(1_000);
  await authenticateFramed(busy, new PlainSaslClient('alice', 'alice-secret')); // a second later: taken
  expect(await servesMetadata(busy)).toBe(true);
});

test('re-authentication after the end is still taken (SaslHandshake is the one request an ended session may send)', async () => {
  const secure = await start();
  const client = await connect(secure);
  await authenticateFramed(client, new ScramSaslClient(SCRAM_SHA_256, 'carol', 'carol-scram'));
  secure.clock.jump(REAUTH_MS + 1);
  await authenticateFramed(client, new ScramSaslClient(SCRAM_SHA_256, 'carol', 'carol-scram'));
  expect(await servesMetadata(client)).toBe(true);
});

test('re-authentication as another user: SASL_AUTHENTICATION_FAILED "Cannot change principals ...", then closed', async () => {
  const secure = await start();
  const client = await connect(secure);
  await authenticateFramed(client, new PlainSaslClient('alice', 'alice-secret'));
  await call(client, frames.handshake(nextId(), 'PLAIN'));
  const answer = await call(client, frames.authenticate(nextId(), new PlainSaslClient('bob', 'bob-secret').start()));
  const { body } = answers.authenticate(answer!);
  expect(body.errorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
  // Kafka's text: SaslServerAuthenticator.ReauthInfo.ensurePrincipalUnchanged ("%s.%s: %s.%s")
  expect(body.errorMessage).toBe('Cannot change principals during re-authentication from User.alice: User.bob');
  expect(await client.waitClosed()).toBe(true);
});

test("re-authentication with a wrong password: Kafka's re-authentication message, then closed", async () => {
  const secure = await start();
  const client = await connect(secure);
  await authenticateFramed(client, new ScramSaslClient(SCRAM_SHA_256, 'carol', 'carol-scram'));
  await call(client, frames.handshake(nextId(), 'SCRAM-SHA-256'));
  const scram = new ScramSaslClient(SCRAM_SHA_256, 'carol', 'wrong');
  const first = answers.authenticate((await call(client, frames.authenticate(nextId(), scram.start())))!).body;
  const final = answers.authenticate((await call(client, frames.authenticate(nextId(), scram.evaluate(first.authBytes)!)))!).body;
  expect(final.errorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
  expect(final.errorMessage).toBe('Authentication failed during re-authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256');
  expect(await client.waitClosed()).toBe(true);
});

test('re-authentication with another mechanism is refused (UNSUPPORTED_SASL_MECHANISM), then closed', async () => {
  const secure = await start();
  const client = await connect(secure);
  await authenticateFramed(client, new PlainSaslClient('alice', 'alice-secret'));
  const answer = await call(client, frames.handshake(nextId(), 'SCRAM-SHA-256'));
  expect(answer).not.toBeNull();
  expect(answers.handshake(answer!).body.errorCode).toBe(ErrorCode.UNSUPPORTED_SASL_MECHANISM);
  expect(await client.waitClosed()).toBe(true);
});

test('re-authentication needs SaslHandshake v1: v0 on an authenticated connection closes it', async () => {
  const secure = await start();
  const client = await connect(secure);
  await authenticateFramed(client, new PlainSaslClient('alice', 'alice-secret'));
  expect(await call(client, frames.handshake(nextId(), 'PLAIN', 0))).toBeNull();
  expect(await client.waitClosed()).toBe(true);
});

test('Produce requests pipelined before and after a re-authentication: every one answered, in order, none lost', async () => {
  const secure = await start();
  const topic = 'reauth-pipeline';
  await secure.broker.context.topology.createTopic(topic, 1, 1, {});
  const client = await connect(secure);
  await authenticateFramed(client, new PlainSaslClient('alice', 'alice-secret'));
  const ids: number[] = [];
  const batch: Uint8Array[] = [];
  const produce = (tag: string) => {
    const id = nextId();
    ids.push(id);
    batch.push(sized(frames.produce(id, topic, batchOf(tag, 3))));
  };
  for (let i = 0; i < 8; i++) produce(`before-${i}`);
  const handshakeId = nextId();
  const authenticateId = nextId();
  ids.push(handshakeId, authenticateId);
  batch.push(sized(frames.handshake(handshakeId, 'PLAIN')), sized(frames.authenticate(authenticateId, new PlainSaslClient('alice', 'alice-secret').start())));
  for (let i = 0; i < 8; i++) produce(`after-${i}`);
  client.sendRaw(Buffer.concat(batch)); // one write: every request is in the broker before the first answer
  const last = await client.frame(ids.length - 1);
  expect(last).not.toBeNull();
  expect(client.closed).toBe(false);
  const correlationIds = client.frames.slice(-ids.length).map((frame) => new DataView(frame.bytes.buffer, frame.bytes.byteOffset).getInt32(0));
  expect(correlationIds).toEqual(ids);
  const offsets: number[] = [];
  for (const frame of client.frames.slice(-ids.length)) {
    const id = new DataView(frame.bytes.buffer, frame.bytes.byteOffset).getInt32(0);
    if (id === handshakeId) expect(answers.handshake(frame.bytes).body.errorCode).toBe(ErrorCode.NONE);
    else if (id === authenticateId) expect(Number(answers.authenticate(frame.bytes).body.sessionLifetimeMs)).toBe(REAUTH_MS);
    else {
      const partition = answers.produce(frame.bytes).body.responses[0].partitionResponses[0];
      expect(partition.errorCode).toBe(ErrorCode.NONE);
      offsets.push(Number(partition.baseOffset));
    }
  }
  expect(offsets).toEqual(Array.from({ length: 16 }, (_, i) => i * 3));
  const values = secure.broker.context.engine.fetch(topic, 0, 0, { maxBytes: 1 << 20 });
  expect(values.highWatermark).toBe(48);
});

test('OAUTHBEARER: the session ends with the token (its exp) even without connections.max.reauth.ms, as in Kafka', async () => {
  const clock = new JumpClock();
  const issuer = await JwtIssuer.create(tempDir(), { clock });
  const secure = await startSecureBroker(
    { clock, sasl: { mechanisms: ['OAUTHBEARER'], oauthBearer: { mode: 'jwks', jwksEndpointUrl: issuer.jwksUrl } }, security: { failedAuthenticationDelayMs: FAILED_DELAY_MS } },
    running,
  );
  const token = await issuer.sign({ sub: 'erin' }, { lifetimeSeconds: 600 });
  const client = await connect({ ...secure });
  await call(client, frames.handshake(nextId(), 'OAUTHBEARER'));
  const answer = await call(client, frames.authenticate(nextId(), utf8(`n,,\u0001auth=Bearer ${token}\u0001\u0001`)));
  const { body } = answers.authenticate(answer!);
  expect(body.errorCode).toBe(ErrorCode.NONE);
  const lifetimeMs = Number(body.sessionLifetimeMs);
  expect(lifetimeMs).toBeGreaterThan(590_000); // the token's remaining life (SaslServerAuthenticator.calcCompletionTimesAndReturnSessionLifetimeMs)
  expect(lifetimeMs).toBeLessThanOrEqual(600_000);
  expect(await servesMetadata(client)).toBe(true);
  clock.jump(600_000 + 1_000);
  expect(await call(client, frames.metadata(nextId()))).toBeNull();
});

test('OAUTHBEARER with connections.max.reauth.ms: the lifetime is the shorter of the two', async () => {
  const clock = new JumpClock();
  const issuer = await JwtIssuer.create(tempDir(), { clock });
  const secure = await startSecureBroker({ clock, sasl: { mechanisms: ['OAUTHBEARER'], reauthMs: REAUTH_MS, oauthBearer: { mode: 'jwks', jwksEndpointUrl: issuer.jwksUrl } } }, running);
  for (const [lifetimeSeconds, expected] of [
    [600, REAUTH_MS],
    [30, 30_000],
  ] as const) {
    const token = await issuer.sign({ sub: 'erin' }, { lifetimeSeconds });
    const client = await connect(secure);
    await call(client, frames.handshake(nextId(), 'OAUTHBEARER'));
    const body = answers.authenticate((await call(client, frames.authenticate(nextId(), utf8(`n,,\u0001auth=Bearer ${token}\u0001\u0001`))))!).body;
    expect(body.errorCode).toBe(ErrorCode.NONE);
    expect(Number(body.sessionLifetimeMs)).toBeGreaterThan(expected - 2_000);
    expect(Number(body.sessionLifetimeMs)).toBeLessThanOrEqual(expected);
  }
});
