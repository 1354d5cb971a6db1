// sasl.server.max.receive.size (docs/security.md [A1]): until a SASL client authenticated, a frame
// declaring more than the limit closes the connection as soon as its size prefix arrives, before
// anything of it is held; once authenticated, socket.request.max.bytes applies again.
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Broker } from '../../../src/broker/broker.ts';
import { REQUEST_BYTES_MAX } from '../../../src/broker/connection.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { PlainSaslClient } from '../../../src/security/sasl/plain.ts';
import { batchOf } from '../../support/batches.ts';
import { SASL_LISTENER, type SecureBroker, startSecureBroker, stopBrokers } from './brokers.ts';
import { answers, authenticateBare, authenticateFramed, call, frames, nextId, type WireClient, wireClient } from './wire.ts';

/** sasl.server.max.receive.size here: small, so that an ordinary produce exceeds it. */
const RECEIVE_BYTES_MAX = 4096;
const TOPIC = 'frame-limit';
const MIB = 1024 * 1024;
const running: Broker[] = [];
const clients: WireClient[] = [];
let secure: SecureBroker;

beforeAll(async () => {
  // Sessions end (after a minute): a re-authentication is taken only for a session that ends (KIP-368).
  secure = await startSecureBroker({ sasl: { receiveBytesMax: RECEIVE_BYTES_MAX, reauthMs: 60_000 }, security: { failedAuthenticationDelayMs: 0 } }, running);
  await secure.broker.context.topology.createTopic(TOPIC, 1, 1, {});
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

function sizePrefix(size: number): Uint8Array {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setInt32(0, size);
  return bytes;
}

/** A SaslHandshake v1 frame of exactly `bytes` bytes (its mechanism name padded to fit). */
function handshakeOfSize(bytes: number): Uint8Array {
  const bare = frames.handshake(1, '').length;
  const frame = frames.handshake(nextId(), 'X'.repeat(bytes - bare));
  expect(frame.length).toBe(bytes);
  return frame;
}

test('a frame of exactly sasl.server.max.receive.size is read; one byte more closes the connection unanswered', async () => {
  const atLimit = await connect();
  const answer = await call(atLimit, handshakeOfSize(RECEIVE_BYTES_MAX));
  expect(answers.handshake(answer!).body.errorCode).toBe(ErrorCode.UNSUPPORTED_SASL_MECHANISM);

  const over = await connect();
  expect(await call(over, handshakeOfSize(RECEIVE_BYTES_MAX + 1))).toBeNull();
  expect(await over.waitClosed()).toBe(true);
  expect(secure.logs.some((line) => line.includes(`request of ${RECEIVE_BYTES_MAX + 1} bytes is outside [0, ${RECEIVE_BYTES_MAX}]`))).toBe(true);
});

test('size prefixes of 100 MiB from unauthenticated clients: each closed at its prefix, and the broker holds none of it', async () => {
  const attackers: WireClient[] = [];
  for (let i = 0; i < 20; i++) attackers.push(await connect());
  const rssBefore = process.memoryUsage().rss;
  const junk = new Uint8Array(MIB).fill(0x41);
  for (const attacker of attackers) {
    attacker.sendRaw(sizePrefix(REQUEST_BYTES_MAX));
    attacker.sendRaw(junk); // what would have been the start of the body
  }
  for (const attacker of attackers) expect(await attacker.waitClosed()).toBe(true);
  expect(attackers.every((attacker) => attacker.frames.length === 0)).toBe(true);
  // Reserving or buffering by declared size would be 2 GB; 20 MiB was sent in all.
  expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * MIB);

  // The request budget was not taken: an authenticated client's produce goes through at once.
  const client = await connect();
  await authenticateFramed(client, new PlainSaslClient('alice', 'alice-secret'));
  const answer = await call(client, frames.produce(nextId(), TOPIC, batchOf('after-attack')));
  expect(answers.produce(answer!).body.responses[0].partitionResponses[0].errorCode).toBe(ErrorCode.NONE);
});

test('a bare token after SaslHandshake v0 is bounded the same way', async () => {
  const client = await connect();
  await call(client, frames.handshake(nextId(), 'PLAIN', 0));
  client.send(new Uint8Array(RECEIVE_BYTES_MAX + 1));
  expect(await client.waitClosed()).toBe(true);
  expect(client.frames).toHaveLength(1);
});

test('once authenticated (framed or bare), a produce far past the limit is taken', async () => {
  for (const authenticate of [authenticateFramed, authenticateBare]) {
    const client = await connect();
    await authenticate(client, new PlainSaslClient('bob', 'bob-secret'));
    const records = batchOf('large', 4, undefined, 150 * 1024); // 600 KiB, under max.message.bytes
    expect(records.length).toBeGreaterThan(100 * RECEIVE_BYTES_MAX);
    const answer = await call(client, frames.produce(nextId(), TOPIC, records));
    expect(answer).not.toBeNull();
    expect(answers.produce(answer!).body.responses[0].partitionResponses[0].errorCode).toBe(ErrorCode.NONE);
  }
});

test('during a re-authentication the limit holds again', async () => {
  const client = await connect();
  await authenticateFramed(client, new PlainSaslClient('alice', 'alice-secret'));
  await call(client, frames.handshake(nextId(), 'PLAIN'));
  expect(await call(client, frames.authenticate(nextId(), new Uint8Array(RECEIVE_BYTES_MAX)))).toBeNull();
  expect(await client.waitClosed()).toBe(true);
});
