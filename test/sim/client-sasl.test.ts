/**
 * The simulated clients' SASL (issue 13) against a real broker's SASL_PLAINTEXT listener over real
 * sockets: PLAIN and SCRAM with SaslHandshake v1 and v0, every exchange recorded; a wrong password
 * refused and nothing sent; KIP-368 re-authentication keeping one connection through several
 * session lifetimes; and an intruder's requests before and after a refusal never answered.
 */
import { afterEach, expect, test } from 'bun:test';
import type { Broker } from '../../src/broker/broker.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import { AclStore } from '../../src/security/acl/acl-store.ts';
import { Authorizer } from '../../src/security/acl/authorizer.ts';
import { AclOperation, MATCH_ALL_FILTER } from '../../src/security/acl/model.ts';
import { SimAdmin, SimConsumer, SimProducer } from '../../src/sim/client/index.ts';
import { SimIntruder } from '../../src/sim/client/intruder.ts';
import type { ClientSasl } from '../../src/sim/client/sasl.ts';
import type { AclChangeOp, AuthenticateOp, ClientOp, IntruderKind, IntruderOp } from '../../src/sim/history.ts';
import { simAcl } from '../../src/sim/security-setup.ts';
import { systemClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { systemNetwork } from '../../src/util/system-network.ts';
import { PLAIN_USERS, SASL_LISTENER, SCRAM_USERS, startSecureBroker, stopBrokers } from '../broker/auth/brokers.ts';
import { GatedStore } from '../support/gated-store.ts';
import { until } from '../support/until.ts';

const running: Broker[] = [];
const stops: (() => unknown)[] = [];
let ops: ClientOp[] = [];

afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
  await stopBrokers(running);
  ops = [];
});

function sasl(mechanism: string, username: string, password: string, bareTokens = false): ClientSasl {
  return { mechanism, username, password, bareTokens, random: new SeededRandom(5) };
}

function common(name: string, port: number, credentials: ClientSasl) {
  return {
    name,
    network: systemNetwork,
    clock: systemClock,
    random: new SeededRandom(7),
    record: (op: ClientOp) => void ops.push(op),
    bootstrap: [{ host: '127.0.0.1', port }],
    requestTimeoutMs: 3_000,
    retryBackoffMs: 20,
    sasl: credentials,
  };
}

function started<T extends { start(): void; stop(): unknown }>(client: T): T {
  client.start();
  stops.push(() => client.stop());
  return client;
}

const authentications = (client: string) => ops.filter((op): op is AuthenticateOp => op.kind === 'authenticate' && op.client === client);

test('PLAIN and SCRAM clients, v1 and v0, authenticate, write and read back', async () => {
  const { port } = await startSecureBroker({}, running);
  const listener = port(SASL_LISTENER);
  const admin = started(new SimAdmin(common('admin', listener, sasl('PLAIN', 'alice', PLAIN_USERS.get('alice')!))));
  expect(await admin.createTopic('t', 1, 1)).toEqual({ ok: true });
  const producer = started(new SimProducer({ ...common('p', listener, sasl('SCRAM-SHA-512', 'carol', SCRAM_USERS.get('carol')!)), idempotent: true, acks: -1 }));
  const written = await producer.produce('t', 0, 2);
  expect(written.ok).toBe(true);
  const consumer = started(new SimConsumer({ ...common('c', listener, sasl('SCRAM-SHA-256', 'dave', SCRAM_USERS.get('dave')!, true)), topic: 't', partition: 0, startOffset: 0 }));
  await until(() => ops.some((op) => op.kind === 'fetch' && op.client === 'c' && op.records.length === 2), 'the consumer reading both records');
  void consumer;
  for (const [client, mechanism, version] of [
    ['admin', 'PLAIN', 1],
    ['p', 'SCRAM-SHA-512', 1],
    ['c', 'SCRAM-SHA-256', 0],
  ] as const) {
    const done = authentications(client);
    expect(done.length).toBeGreaterThan(0);
    expect(done.every((op) => op.outcome.ok && op.mechanism === mechanism && op.handshakeVersion === version && !op.reauthentication)).toBe(true);
  }
}, 20_000);

test('a wrong password is refused with SASL_AUTHENTICATION_FAILED and nothing is sent', async () => {
  const { port } = await startSecureBroker({}, running);
  const producer = started(new SimProducer({ ...common('p', port(SASL_LISTENER), sasl('SCRAM-SHA-256', 'carol', 'not-her-password')), idempotent: false, acks: -1, maxAttempts: 1 }));
  const result = await producer.produce('t', 0, 1);
  expect(result.ok).toBe(false);
  expect(authentications('p').map((op) => op.outcome)).toContainEqual({ ok: false, error: 'SASL_AUTHENTICATION_FAILED', answered: true });
  expect(ops.filter((op) => op.kind === 'metadata' || op.kind === 'produce').every((op) => !op.outcome.ok)).toBe(true);
}, 20_000);

test('KIP-368: a client re-authenticates within each session lifetime, and its requests all go through', async () => {
  const { port } = await startSecureBroker({ sasl: { reauthMs: 1_500 } }, running);
  const listener = port(SASL_LISTENER);
  const admin = started(new SimAdmin(common('admin', listener, sasl('PLAIN', 'bob', PLAIN_USERS.get('bob')!))));
  expect(await admin.createTopic('t', 1, 1)).toEqual({ ok: true });
  const producer = started(new SimProducer({ ...common('p', listener, sasl('SCRAM-SHA-256', 'dave', SCRAM_USERS.get('dave')!)), idempotent: false, acks: -1 }));
  const results = [];
  for (let i = 0; i < 16; i++) {
    results.push(await producer.produce('t', 0, 1));
    await Bun.sleep(250);
  }
  expect(results.every((result) => result.ok)).toBe(true); // a connection the broker closed at expiry (timers late on a loaded machine) is retried
  const done = authentications('p');
  expect(done.filter((op) => op.reauthentication && op.outcome.ok).length).toBeGreaterThanOrEqual(2);
  expect(done.every((op) => op.outcome.ok && op.sessionLifetimeMs === 1_500)).toBe(true);
}, 20_000);

test('a DeleteAcls whose deletion failed is recorded as failed: the DENY still stands (sim seeds 50082, 50149)', async () => {
  const gated = new GatedStore();
  const { port } = await startSecureBroker({ store: gated.store, security: { authorizer: { superUsers: ['User:alice'] } } }, running);
  const admin = started(new SimAdmin(common('admin', port(SASL_LISTENER), sasl('PLAIN', 'alice', PLAIN_USERS.get('alice')!))));
  const deny = simAcl('carol', 'topic', 't', AclOperation.WRITE, 'deny');
  expect(await admin.createAcl(deny)).toEqual({ ok: true });
  // The broker answers the filter without error and lists the ACL with the failed write's error (Kafka's DeleteAcls).
  gated.fail('control/security/acls/');
  const failed = await admin.deleteAcl(deny);
  expect(failed).toEqual({ ok: false, error: 'REQUEST_TIMED_OUT', answered: true });
  const stored = new AclStore(new ControlStore(gated.inner, ''), new Authorizer());
  await stored.refresh();
  expect(stored.acls(MATCH_ALL_FILTER).map(({ entry }) => entry.principal)).toEqual(['User:carol']);
  gated.heal('control/security/acls/');
  expect(await admin.deleteAcl(deny)).toEqual({ ok: true });
  const deletes = ops.filter((op): op is AclChangeOp => op.kind === 'delete-acl');
  expect(deletes.map((op) => op.outcome.ok)).toEqual([false, true]);
}, 20_000);

async function intruderOps(kind: IntruderKind, username: string, password: string): Promise<IntruderOp[]> {
  const { port } = await startSecureBroker({}, running);
  const intruder = started(
    new SimIntruder({
      name: `x-${kind}`,
      kind,
      network: systemNetwork,
      clock: systemClock,
      now: () => systemClock.nowMs(),
      random: new SeededRandom(11),
      record: (op) => void ops.push(op),
      targets: [{ node: 1, host: '127.0.0.1', port: port(SASL_LISTENER), listener: SASL_LISTENER, mechanisms: ['PLAIN', 'SCRAM-SHA-256'] }],
      username,
      password,
      topics: () => [['t', 1]],
      group: 'g',
    }),
  );
  await until(() => ops.filter((op) => op.kind === 'intruder' && !op.authentication).length >= 4, 'four data requests of the intruder');
  await intruder.stop();
  return ops.filter((op): op is IntruderOp => op.kind === 'intruder');
}

test('an intruder with a wrong password is refused, and none of its data requests is answered', async () => {
  const seen = await intruderOps('wrong-password', 'alice', 'guess');
  expect(seen.filter((op) => op.authentication).every((op) => !op.outcome.ok)).toBe(true);
  expect(seen.filter((op) => op.authentication).some((op) => !op.outcome.ok && op.outcome.answered && op.outcome.error === 'SASL_AUTHENTICATION_FAILED')).toBe(true);
  expect(seen.filter((op) => !op.authentication).every((op) => !op.outcome.ok && !op.outcome.answered)).toBe(true);
}, 30_000);

test('an unauthenticated intruder gets ApiVersions answered, and nothing else', async () => {
  const seen = await intruderOps('unauthenticated', '', '');
  expect(seen.filter((op) => !op.authentication).every((op) => !op.outcome.ok && !op.outcome.answered)).toBe(true);
}, 30_000);
