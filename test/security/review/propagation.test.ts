// Adversarial review of issue 13, guarantee 6, over real sockets with the default refresh (1 s):
// an ACL removed through one broker stops working on another within the refresh, and a SCRAM
// credential revoked through one broker stops logging in on another within it. Kept as a
// regression test: the attack (use what was revoked elsewhere, past the bound) held.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import { AclOperationTypes, AclPermissionTypes, AclResourceTypes, Kafka, logLevel, ResourcePatternTypes } from 'kafkajs';
import { Broker } from '../../../src/broker/broker.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { PlainSaslClient } from '../../../src/security/sasl/plain.ts';
import { ScramSaslClient } from '../../../src/security/sasl/scram-client.ts';
import { saltedPasswordOf } from '../../../src/security/scram/credential.ts';
import { SCRAM_SHA_256 } from '../../../src/security/scram/mechanism.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { answers, authenticateFramed, call, frames, nextId, wireClient } from '../../broker/auth/wire.ts';

setDefaultTimeout(60_000);

const TOPIC = 'propagated';
const LISTENER = 'CLIENT';
const USERS = new Map([
  ['admin', 'admin-secret'],
  ['alice', 'alice-secret'],
]);
/** The refresh interval (1 s) and a margin for a loaded machine. */
const BOUND_MS = 2_500;
const brokers: Broker[] = [];
let first: Broker;
let second: Broker;

async function startBroker(store: MemoryStore, nodeId: number): Promise<Broker> {
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId,
    log: () => {},
    listeners: [{ name: LISTENER, protocol: 'SASL_PLAINTEXT', host: '127.0.0.1', port: 0, sasl: { mechanisms: ['PLAIN', 'SCRAM-SHA-256'], plainUsers: () => USERS } }],
    security: { authorizer: { superUsers: ['User:admin'] } },
    cluster: { store, leaseMs: 2000, scanIntervalMs: 50 },
    engine: { directory: tempDir(), log: { flush: { kind: 'none' } }, wal: { store, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 2 } } },
  });
  brokers.push(broker);
  return broker;
}

beforeAll(async () => {
  const store = new MemoryStore();
  first = await startBroker(store, 1);
  second = await startBroker(store, 2);
  await first.context.topology.createTopic(TOPIC, 1, 1, {});
});

afterAll(async () => {
  for (const broker of brokers.splice(0)) await broker.stop().catch(() => {});
});

function admin(through: Broker) {
  return new Kafka({
    clientId: 'propagation',
    brokers: [`127.0.0.1:${through.portOf(LISTENER)}`],
    sasl: { mechanism: 'plain', username: 'admin', password: 'admin-secret' },
    logLevel: logLevel.NOTHING,
  }).admin();
}

/** alice's Metadata for the topic from `broker`: its error code. */
async function aliceSees(broker: Broker): Promise<number> {
  const client = await wireClient(broker.portOf(LISTENER)!);
  try {
    await authenticateFramed(client, new PlainSaslClient('alice', 'alice-secret'));
    const answer = await call(client, frames.metadata(nextId(), [TOPIC]));
    return answers.metadata(answer!).body.topics[0].errorCode;
  } finally {
    client.end();
  }
}

/** Whether `carol` logs in with SCRAM-SHA-256 on `broker`. */
async function carolLogsIn(broker: Broker, password: string): Promise<boolean> {
  const client = await wireClient(broker.portOf(LISTENER)!);
  try {
    await authenticateFramed(client, new ScramSaslClient(SCRAM_SHA_256, 'carol', password));
    return true;
  } catch {
    return false;
  } finally {
    client.end();
  }
}

/** How long until `condition` holds, polled; fails past `limitMs` twice over. */
async function msUntil(condition: () => Promise<boolean>, limitMs: number): Promise<number> {
  const started = performance.now();
  while (!(await condition())) {
    if (performance.now() - started > 2 * limitMs) break;
    await Bun.sleep(50);
  }
  return performance.now() - started;
}

test('an ACL created and then deleted through one broker is granted, then withdrawn, on the other within the refresh', async () => {
  const acl = {
    resourceType: AclResourceTypes.TOPIC,
    resourceName: TOPIC,
    resourcePatternType: ResourcePatternTypes.LITERAL,
    principal: 'User:alice',
    host: '*',
    operation: AclOperationTypes.DESCRIBE,
    permissionType: AclPermissionTypes.ALLOW,
  };
  expect(await aliceSees(second)).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
  const client = admin(first);
  await client.connect();
  try {
    await client.createAcls({ acl: [acl] });
    expect(await msUntil(async () => (await aliceSees(second)) === ErrorCode.NONE, BOUND_MS)).toBeLessThan(BOUND_MS);
    await client.deleteAcls({ filters: [acl] });
    expect(await msUntil(async () => (await aliceSees(second)) === ErrorCode.TOPIC_AUTHORIZATION_FAILED, BOUND_MS)).toBeLessThan(BOUND_MS);
  } finally {
    await client.disconnect();
  }
});

test('a SCRAM credential set and then deleted through one broker logs in, then no longer, on the other within the refresh', async () => {
  const salt = randomBytes(32);
  const set = await first.context.security.scram.alter(
    [],
    [{ name: 'carol', mechanism: SCRAM_SHA_256.type, iterations: 4096, salt, saltedPassword: saltedPasswordOf(SCRAM_SHA_256, 'carol-secret', salt, 4096) }],
  );
  expect(set[0]?.errorCode).toBe(0);
  expect(await msUntil(() => carolLogsIn(second, 'carol-secret'), BOUND_MS)).toBeLessThan(BOUND_MS);
  const deleted = await first.context.security.scram.alter([{ name: 'carol', mechanism: SCRAM_SHA_256.type }], []);
  expect(deleted[0]?.errorCode).toBe(0);
  expect(await msUntil(async () => !(await carolLogsIn(second, 'carol-secret')), BOUND_MS)).toBeLessThan(BOUND_MS);
});
