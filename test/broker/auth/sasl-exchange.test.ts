// The SASL exchange over real sockets, against Kafka's SaslServerAuthenticator (docs/security.md
// [A1]-[A4], [A6]): SaslHandshake v0 with bare tokens, v1 with SaslAuthenticate v0-v2, SCRAM by
// hand, what may come before authentication and what closes the connection, and refusals delayed
// by connection.failed.authentication.delay.ms.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Broker } from '../../../src/broker/broker.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { PlainSaslClient } from '../../../src/security/sasl/plain.ts';
import { ScramSaslClient } from '../../../src/security/sasl/scram-client.ts';
import { SCRAM_SHA_256, SCRAM_SHA_512 } from '../../../src/security/scram/mechanism.ts';
import { batchOf } from '../../support/batches.ts';
import { authenticationCount, PLAINTEXT_LISTENER_NAME, SASL_LISTENER, type SecureBroker, startSecureBroker, stopBrokers } from './brokers.ts';
import { answers, authenticateBare, authenticateFramed, call, frames, nextId, utf8, type WireClient, wireClient } from './wire.ts';

/** connection.failed.authentication.delay.ms here: long enough to tell from an immediate answer. */
const FAILED_DELAY_MS = 400;
const TOPIC = 'exchange';
const running: Broker[] = [];
let secure: SecureBroker;
const clients: WireClient[] = [];

beforeAll(async () => {
  secure = await startSecureBroker({ security: { failedAuthenticationDelayMs: FAILED_DELAY_MS } }, running);
  await secure.broker.context.topology.createTopic(TOPIC, 1, 1, {});
});

afterAll(async () => {
  for (const client of clients) client.end();
  await stopBrokers(running);
});

async function connect(listener = SASL_LISTENER): Promise<WireClient> {
  const client = await wireClient(secure.port(listener));
  clients.push(client);
  return client;
}

/** Whether the connection serves requests: a Metadata request is answered with the broker in it. */
async function servesMetadata(client: WireClient): Promise<boolean> {
  const answer = await call(client, frames.metadata(nextId()));
  return answer !== null && answers.metadata(answer).body.brokers.length === 1;
}

async function producesOnce(client: WireClient, tag: string): Promise<number> {
  const answer = await call(client, frames.produce(nextId(), TOPIC, batchOf(tag)));
  expect(answer).not.toBeNull();
  const partition = answers.produce(answer!).body.responses[0].partitionResponses[0];
  expect(partition.errorCode).toBe(ErrorCode.NONE);
  return Number(partition.baseOffset);
}

describe('authenticating', () => {
  test('SaslHandshake v0, then the PLAIN token as a bare frame: an empty bare answer, then requests flow', async () => {
    const client = await connect();
    await authenticateBare(client, new PlainSaslClient('alice', 'alice-secret'));
    expect(client.frames.at(-1)!.bytes.length).toBe(0); // PLAIN's empty server answer, as a frame of its own
    expect(await servesMetadata(client)).toBe(true);
    await producesOnce(client, 'bare-plain');
  });

  for (const version of [0, 1, 2]) {
    test(`SaslHandshake v1, then PLAIN in SaslAuthenticate v${version}`, async () => {
      const client = await connect();
      const last = await authenticateFramed(client, new PlainSaslClient('bob', 'bob-secret'), version);
      expect(last.errorCode).toBe(ErrorCode.NONE);
      expect(last.authBytes.length).toBe(0);
      if (version >= 1) expect(Number(last.sessionLifetimeMs)).toBe(0); // connections.max.reauth.ms unset: no lifetime
      expect(await servesMetadata(client)).toBe(true);
    });
  }

  for (const mechanism of [SCRAM_SHA_256, SCRAM_SHA_512]) {
    test(`${mechanism.name} by hand, in SaslAuthenticate and as bare tokens: the server's signature verifies`, async () => {
      const framed = await connect();
      const client = new ScramSaslClient(mechanism, 'carol', 'carol-scram');
      await authenticateFramed(framed, client);
      expect(client.complete).toBe(true); // the client checked the server-final signature
      expect(await servesMetadata(framed)).toBe(true);

      const bare = await connect();
      const bareClient = new ScramSaslClient(mechanism, 'dave', 'dave-scram');
      await authenticateBare(bare, bareClient);
      expect(bareClient.complete).toBe(true);
      await producesOnce(bare, `bare-${mechanism.name}`);
    });
  }

  test('one ApiVersions may come before SaslHandshake; it lists SaslHandshake and SaslAuthenticate', async () => {
    const client = await connect();
    const answer = await call(client, frames.apiVersions(nextId()));
    const keys = answers.apiVersions(answer!).body.apiKeys.map((key: { apiKey: number }) => key.apiKey);
    expect(keys).toContain(17);
    expect(keys).toContain(36);
    await authenticateFramed(client, new PlainSaslClient('alice', 'alice-secret'));
    expect(await servesMetadata(client)).toBe(true);
  });

  test("an ApiVersions at a version the broker lacks (a Kafka 4 client's v4) is answered UNSUPPORTED_VERSION, and the retry at a lower version is taken (KIP-511)", async () => {
    const client = await connect();
    const first = await call(client, frames.apiVersions(nextId(), 4));
    expect(first).not.toBeNull();
    expect(answers.apiVersions(first!, 0).body.errorCode).toBe(ErrorCode.UNSUPPORTED_VERSION);
    const retry = await call(client, frames.apiVersions(nextId(), 3));
    expect(retry).not.toBeNull();
    expect(answers.apiVersions(retry!, 3).body.errorCode).toBe(ErrorCode.NONE);
    await authenticateFramed(client, new PlainSaslClient('alice', 'alice-secret'));
    expect(await servesMetadata(client)).toBe(true);
  });

  test('the successes are counted by listener, mechanism and result', async () => {
    const before = authenticationCount(secure.broker, { listener: SASL_LISTENER, mechanism: 'PLAIN', result: 'succeeded' });
    const client = await connect();
    await authenticateFramed(client, new PlainSaslClient('alice', 'alice-secret'));
    expect(authenticationCount(secure.broker, { listener: SASL_LISTENER, mechanism: 'PLAIN', result: 'succeeded' })).toBe(before + 1);
  });
});

describe('what closes an unauthenticated connection', () => {
  test('a second ApiVersions before SaslHandshake', async () => {
    const client = await connect();
    expect(await call(client, frames.apiVersions(nextId()))).not.toBeNull();
    expect(await call(client, frames.apiVersions(nextId()))).toBeNull();
    expect(await client.waitClosed()).toBe(true);
  });

  test('any other API before authentication: "Unexpected Kafka request of type ..." in the log, no answer', async () => {
    for (const [name, body] of [
      ['Metadata', frames.metadata(nextId())],
      ['Produce', frames.produce(nextId(), TOPIC, batchOf('early'))],
    ] as const) {
      const client = await connect();
      expect(await call(client, body)).toBeNull();
      expect(await client.waitClosed()).toBe(true);
      expect(secure.logs.some((line) => line.includes(`Unexpected Kafka request of type ${name} during SASL handshake`))).toBe(true);
    }
    const produced = secure.broker.context.engine.logEndOffset(TOPIC, 0);
    expect(secure.broker.context.engine.logEndOffset(TOPIC, 0)).toBe(produced); // the early Produce wrote nothing
  });

  test('a request other than SaslAuthenticate once the exchange started: its own error response, ILLEGAL_SASL_STATE (each topic it names too), after the delay, then the close, as Kafka', async () => {
    const client = await connect();
    const handshake = await call(client, frames.handshake(nextId(), 'SCRAM-SHA-256'));
    expect(answers.handshake(handshake!).body.errorCode).toBe(ErrorCode.NONE);
    const sentAtMs = performance.now();
    const answer = await call(client, frames.metadata(nextId(), [TOPIC]));
    const { body } = answers.metadata(answer!);
    expect(body.brokers).toEqual([]);
    expect(body.topics.map((topic: { name: string; errorCode: number; partitions: unknown[] }) => [topic.name, topic.errorCode, topic.partitions.length])).toEqual([
      [TOPIC, ErrorCode.ILLEGAL_SASL_STATE, 0],
    ]);
    expect(client.frames.at(-1)!.atMs - sentAtMs).toBeGreaterThanOrEqual(FAILED_DELAY_MS - 1);
    expect(await client.waitClosed()).toBe(true);
    expect(secure.logs.some((line) => line.includes('Unexpected Kafka request of type Metadata during SASL authentication'))).toBe(true);
    const produced = secure.broker.context.engine.logEndOffset(TOPIC, 0);
    const other = await connect();
    await call(other, frames.handshake(nextId(), 'PLAIN'));
    expect(await call(other, frames.produce(nextId(), TOPIC, batchOf('mid-exchange')))).not.toBeNull(); // answered (an empty Produce response)
    expect(await other.waitClosed()).toBe(true);
    expect(secure.broker.context.engine.logEndOffset(TOPIC, 0)).toBe(produced); // never appended
  });

  test('SaslAuthenticate before SaslHandshake', async () => {
    const client = await connect();
    expect(await call(client, frames.authenticate(nextId(), new PlainSaslClient('alice', 'alice-secret').start()))).toBeNull();
    expect(await client.waitClosed()).toBe(true);
  });

  test('an unknown mechanism: UNSUPPORTED_SASL_MECHANISM with the enabled list (after the delay), then the close', async () => {
    for (const version of [0, 1]) {
      const client = await connect();
      const sentAtMs = performance.now();
      const answer = await call(client, frames.handshake(nextId(), 'GSSAPI', version));
      const { body } = answers.handshake(answer!, version);
      expect(body).toEqual({ errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms: ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] });
      expect(client.frames[0]!.atMs - sentAtMs).toBeGreaterThanOrEqual(FAILED_DELAY_MS - 1);
      expect(await client.waitClosed()).toBe(true);
    }
  });
});

describe('what a client chooses does not reach labels or log lines as it is', () => {
  test('unknown mechanism names are counted under one label (a client cannot add metric series), and logged on one line, cut short', async () => {
    const failedSeries = () =>
      secure.broker.metrics
        .renderPrometheus()
        .split('\n')
        .filter((line) => line.startsWith(`ferry_broker_authentications_total{listener="${SASL_LISTENER}"`) && line.includes('result="failed"')).length;
    const before = failedSeries();
    const names = ['MADE-UP-1', 'MADE-UP-2', `forged\nauthentication from 10.0.0.1 on ${SASL_LISTENER} succeeded`, 'X'.repeat(10_000)];
    for (const name of names) {
      const client = await connect();
      const answer = await call(client, frames.handshake(nextId(), name));
      expect(answers.handshake(answer!).body.errorCode).toBe(ErrorCode.UNSUPPORTED_SASL_MECHANISM);
    }
    expect(failedSeries()).toBeLessThanOrEqual(before + 1);
    expect(secure.logs.every((line) => !line.includes('\n'))).toBe(true);
    expect(Math.max(...secure.logs.map((line) => line.length))).toBeLessThan(1_000);
  });
});

describe('refusals', () => {
  const failedPlain = () => authenticationCount(secure.broker, { listener: SASL_LISTENER, mechanism: 'PLAIN', result: 'failed' });

  test('a wrong PLAIN password: SASL_AUTHENTICATION_FAILED no sooner than the delay, then closed; counted and logged without the password', async () => {
    const before = failedPlain();
    const client = await connect();
    await call(client, frames.handshake(nextId(), 'PLAIN'));
    const sentAtMs = performance.now();
    const answer = await call(client, frames.authenticate(nextId(), new PlainSaslClient('alice', 'not-her-password').start()));
    const { body } = answers.authenticate(answer!);
    expect(body.errorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
    expect(body.errorMessage).toBe('Authentication failed: Invalid username or password');
    expect(client.frames.at(-1)!.atMs - sentAtMs).toBeGreaterThanOrEqual(FAILED_DELAY_MS - 1);
    expect(await client.waitClosed()).toBe(true);
    expect(failedPlain()).toBe(before + 1);
    const logged = secure.logs.filter((line) => line.includes('failed') && line.includes(SASL_LISTENER));
    expect(logged.length).toBeGreaterThan(0);
    expect(secure.logs.some((line) => line.includes('not-her-password'))).toBe(false);
  });

  test('SCRAM: an unknown user and a wrong password get the same answer', async () => {
    const messages: (string | null)[] = [];
    for (const [user, password] of [
      ['carol', 'wrong'],
      ['nobody', 'wrong'],
    ]) {
      const client = await connect();
      await call(client, frames.handshake(nextId(), 'SCRAM-SHA-256'));
      const scram = new ScramSaslClient(SCRAM_SHA_256, user!, password!);
      const first = answers.authenticate((await call(client, frames.authenticate(nextId(), scram.start())))!).body;
      expect(first.errorCode).toBe(ErrorCode.NONE); // the fake salt for an unknown user
      const final = answers.authenticate((await call(client, frames.authenticate(nextId(), scram.evaluate(first.authBytes)!)))!).body;
      expect(final.errorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
      messages.push(final.errorMessage);
      expect(await client.waitClosed()).toBe(true);
    }
    expect(messages[0]).toBe(messages[1]!);
    expect(messages[0]).toBe('Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256');
  });

  test('a wrong password after SaslHandshake v0: the connection closes without an answer, after the delay', async () => {
    const client = await connect();
    await call(client, frames.handshake(nextId(), 'PLAIN', 0));
    const sentAtMs = performance.now();
    client.send(new PlainSaslClient('bob', 'wrong').start());
    expect(await client.waitClosed()).toBe(true);
    expect(client.frames).toHaveLength(1); // the handshake's answer only
    expect(client.closedAtMs! - sentAtMs).toBeGreaterThanOrEqual(FAILED_DELAY_MS - 1);
  });
});

describe('SASL state errors that keep the connection', () => {
  test('SaslHandshake on a PLAINTEXT listener: ILLEGAL_SASL_STATE, and the connection goes on', async () => {
    const client = await connect(PLAINTEXT_LISTENER_NAME);
    const answer = await call(client, frames.handshake(nextId(), 'PLAIN'));
    expect(answers.handshake(answer!).body).toEqual({ errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] });
    expect(await servesMetadata(client)).toBe(true);
  });

  test("SaslAuthenticate after a successful exchange: ILLEGAL_SASL_STATE with Kafka's message, the connection goes on", async () => {
    const client = await connect();
    await authenticateFramed(client, new PlainSaslClient('alice', 'alice-secret'));
    const answer = await call(client, frames.authenticate(nextId(), utf8('\0alice\0alice-secret')));
    const { body } = answers.authenticate(answer!);
    expect(body.errorCode).toBe(ErrorCode.ILLEGAL_SASL_STATE);
    expect(body.errorMessage).toBe('SaslAuthenticate request received after successful authentication');
    expect(await servesMetadata(client)).toBe(true);
  });
});
