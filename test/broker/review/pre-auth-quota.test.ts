// Adversarial review of issue 13, finding 5: requests a client sends before it authenticated on a
// SASL listener (ApiVersions, answered as often as sent at a version the broker lacks) were
// recorded against the client quotas of User:ANONYMOUS, the session's principal until the
// exchange completes. With a request_percentage quota for the default user (a usual setting),
// every unauthenticated connection of every client shared that one rate: one unauthenticated
// client sending ApiVersions in a loop pushed it past the quota, and each new client's ApiVersions
// was then answered with a throttle and its connection muted for it (up to a window, 1 s), so its
// login waited. Kafka answers the requests of a SASL exchange in its network threads, before any
// quota (SaslServerAuthenticator): they are never recorded or throttled.
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Broker } from '../../../src/broker/broker.ts';
import { PlainSaslClient } from '../../../src/security/sasl/plain.ts';
import { SASL_LISTENER, type SecureBroker, startSecureBroker, stopBrokers } from '../auth/brokers.ts';
import { answers, authenticateFramed, call, frames, nextId, sized, type WireClient, wireClient } from '../auth/wire.ts';

const running: Broker[] = [];
const clients: WireClient[] = [];
let secure: SecureBroker;
/** ApiVersions the unauthenticated client sends. */
const FLOOD = 5_000;

beforeAll(async () => {
  secure = await startSecureBroker({}, running);
  const [result] = await secure.broker.context.security.quotas.alter(
    [{ entity: [{ entityType: 'user', entityName: null }], ops: [{ key: 'request_percentage', value: 0.0001, remove: false }] }],
    false,
  );
  expect(result?.errorCode).toBe(0);
});

afterAll(async () => {
  for (const client of clients) client.end();
  await stopBrokers(running);
});

async function connect(): Promise<WireClient> {
  const client = await wireClient(secure.port(SASL_LISTENER));
  clients.push(client);
  return client;
}

/** ApiVersions at a version no broker has: answered before authentication as often as sent. */
function unsupportedApiVersions(correlationId: number): Uint8Array {
  const body = new Uint8Array(10);
  const view = new DataView(body.buffer);
  view.setInt16(0, 18);
  view.setInt16(2, 999);
  view.setInt32(4, correlationId);
  view.setInt16(8, -1);
  return sized(body);
}

test("an unauthenticated client's requests use no one's quota: a new client's ApiVersions is not throttled, its login not held", async () => {
  const flooder = await connect();
  const burst = new Uint8Array(FLOOD * 14);
  for (let i = 0; i < FLOOD; i++) burst.set(unsupportedApiVersions(i), i * 14);
  flooder.sendRaw(burst);
  expect(await flooder.frame(FLOOD - 1)).not.toBeNull();

  const client = await connect();
  const answer = await call(client, frames.apiVersions(nextId()));
  expect(answers.apiVersions(answer!).body.throttleTimeMs).toBe(0);
  const started = performance.now();
  await authenticateFramed(client, new PlainSaslClient('alice', 'alice-secret'));
  expect(performance.now() - started).toBeLessThan(500);
});
