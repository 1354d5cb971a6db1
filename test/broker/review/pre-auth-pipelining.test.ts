// Adversarial review of issue 13, finding 1: an unauthenticated client held up to
// CONNECTION_REQUEST_BYTES_MAX (32 MiB) of the broker's request budget per connection, not one
// sasl.server.max.receive.size (512 KiB). sasl.server.max.receive.size bounds each frame, but the
// connection went on reading and reserving the frames that followed while one was being handled
// or answered. A client on a SASL listener that stops reading its answers (after enough
// ApiVersions at an unsupported version, which are answered any number of times before
// authentication, as in Kafka) holds its connection's reservations until connections.max.idle.ms
// (10 minutes): four such connections took the broker's whole queued.max.request.bytes, and every
// authenticated client's request waited behind them. Kafka's SaslServerAuthenticator reads one
// request at a time until the client authenticated.
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Socket } from 'bun';
import type { Broker } from '../../../src/broker/broker.ts';
import { REQUEST_BYTES_MAX } from '../../../src/broker/connection.ts';
import { SASL_RECEIVE_BYTES_MAX_DEFAULT } from '../../../src/broker/auth/listener-security.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { PlainSaslClient } from '../../../src/security/sasl/plain.ts';
import { batchOf } from '../../support/batches.ts';
import { SASL_LISTENER, type SecureBroker, startSecureBroker, stopBrokers } from '../auth/brokers.ts';
import { answers, authenticateFramed, frames, nextId, sized, type WireClient, wireClient } from '../auth/wire.ts';

const TOPIC = 'pre-auth-pipelining';
/** Connections that each try to hold 32 MiB: four take more than the 100 MiB budget. */
const ATTACKERS = 4;
/** Unsupported ApiVersions each attacker sends first: their answers (~250 bytes each) fill the socket buffers it never reads. */
const FILLERS = 40_000;
/** Frames of sasl.server.max.receive.size each attacker pipelines after them. */
const LARGE_FRAMES = 64;
const running: Broker[] = [];
const open: { end(): void }[] = [];
let secure: SecureBroker;

beforeAll(async () => {
  // the smallest budget a broker takes (one largest request): four attackers need 128 MiB of it
  secure = await startSecureBroker({ queuedMaxRequestBytes: REQUEST_BYTES_MAX }, running);
  await secure.broker.context.topology.createTopic(TOPIC, 1, 1, {});
});

afterAll(async () => {
  for (const socket of open) socket.end();
  await stopBrokers(running);
});

/** ApiVersions at a version no broker has: answered UNSUPPORTED_VERSION before authentication, as often as sent. */
function unsupportedApiVersions(correlationId: number, bytes = 10): Uint8Array {
  const body = new Uint8Array(bytes);
  const view = new DataView(body.buffer);
  view.setInt16(0, 18); // ApiVersions
  view.setInt16(2, 999);
  view.setInt32(4, correlationId);
  view.setInt16(8, -1); // no client id
  return sized(body);
}

/** A client that writes everything it is given (waiting for drain) and reads nothing. */
async function deafClient(port: number): Promise<{ write(bytes: Uint8Array): void; end(): void }> {
  const pending: Uint8Array[] = [];
  let socket: Socket<undefined>;
  const flush = () => {
    while (pending.length > 0) {
      const chunk = pending[0]!;
      const written = socket.write(chunk);
      if (written >= chunk.length) pending.shift();
      else return void (pending[0] = chunk.subarray(Math.max(0, written)));
    }
  };
  socket = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {}, drain: flush } });
  socket.pause(); // reads nothing: the broker's answers pile up in the socket buffers
  const client = { write: (bytes: Uint8Array) => void (pending.push(bytes), flush()), end: () => void socket.end() };
  open.push(client);
  return client;
}

async function produced(client: WireClient, timeoutMs: number): Promise<number | null> {
  const index = client.frames.length;
  client.send(frames.produce(nextId(), TOPIC, batchOf('victim')));
  const answer = await client.frame(index, timeoutMs);
  return answer === null ? null : answers.produce(answer.bytes).body.responses[0].partitionResponses[0].errorCode;
}

test('unauthenticated connections that stop reading hold one frame each, not the request budget', async () => {
  const victim = await wireClient(secure.port(SASL_LISTENER));
  open.push(victim);
  await authenticateFramed(victim, new PlainSaslClient('alice', 'alice-secret'));
  expect(await produced(victim, 10_000)).toBe(ErrorCode.NONE);

  for (let a = 0; a < ATTACKERS; a++) {
    const attacker = await deafClient(secure.port(SASL_LISTENER));
    const fillers = new Uint8Array(FILLERS * 14);
    for (let i = 0; i < FILLERS; i++) fillers.set(unsupportedApiVersions(i), i * 14);
    attacker.write(fillers);
    for (let i = 0; i < LARGE_FRAMES; i++) attacker.write(unsupportedApiVersions(FILLERS + i, SASL_RECEIVE_BYTES_MAX_DEFAULT));
  }
  await Bun.sleep(3_000); // the broker answers the fillers until its writes stall, and reads on

  // An authenticated client's produce is answered at once: the budget is not the attackers'.
  expect(await produced(victim, 5_000)).toBe(ErrorCode.NONE);
}, 30_000);
