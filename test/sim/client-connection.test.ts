/** The client connection on a hand-driven clock and a scripted network: framing, pipelining, timeouts, loss. */
import { expect, test } from 'bun:test';
import { KafkaReader } from '../../src/protocol/reader.ts';
import { KafkaWriter } from '../../src/protocol/writer.ts';
import type { ClientApi } from '../../src/sim/client/api.ts';
import { ClientConnection, type Reply, type Throttle } from '../../src/sim/client/connection.ts';
import { ManualClock } from '../../src/util/clock.ts';
import type { NetSocket, Network, SocketHandlers } from '../../src/util/network.ts';

/** A made-up API: the request is an int32, so is the answer. */
const echoApi: ClientApi<number, number> = {
  key: 99,
  name: 'Echo',
  version: 0,
  flexible: false,
  encodeRequest: (writer, value) => void writer.int32(value),
  decodeResponse: (reader) => reader.int32(),
};

interface Peer {
  readonly written: Uint8Array[];
  handlers: SocketHandlers;
  socket: NetSocket;
  terminated: boolean;
  /** Bytes taken by each write; the rest waits for drain. */
  writeLimit: number;
}

function scriptedNetwork(): { network: Network; peer: () => Peer } {
  let peer: Peer | null = null;
  const network: Network = {
    listen: () => {
      throw new Error('unused');
    },
    resolve: async (host) => [host],
    connect: async (_host, _port, handlers) => {
      const state: Peer = { written: [], handlers, socket: null!, terminated: false, writeLimit: Number.MAX_SAFE_INTEGER };
      state.socket = {
        remoteAddress: 'peer',
        write: (bytes) => {
          const taken = Math.min(bytes.length, state.writeLimit);
          state.written.push(bytes.slice(0, taken));
          return taken;
        },
        end: () => {},
        terminate: () => void (state.terminated = true),
        pause: () => {},
        resume: () => {},
      };
      peer = state;
      return state.socket;
    },
  };
  return { network, peer: () => peer! };
}

/** The requests the peer received: [correlation id, value]. */
function requestsOf(peer: Peer): [number, number][] {
  const bytes = Buffer.concat(peer.written);
  const reader = new KafkaReader(bytes);
  const requests: [number, number][] = [];
  while (reader.remaining > 0) {
    const size = reader.int32();
    const end = reader.position + size;
    expect([reader.int16(), reader.int16()]).toEqual([99, 0]);
    const correlationId = reader.int32();
    expect(reader.nullableString()).toBe('client');
    requests.push([correlationId, reader.int32()]);
    expect(reader.position).toBe(end);
  }
  return requests;
}

function answer(correlationId: number, value: number): Uint8Array {
  const body = new KafkaWriter().int32(correlationId).int32(value);
  return Buffer.concat([Buffer.concat(new KafkaWriter().int32(body.length).chunks()), Buffer.concat(body.chunks())]);
}

async function opened(onThrottle?: (throttle: Throttle) => void) {
  const clock = new ManualClock();
  const { network, peer } = scriptedNetwork();
  const connection = (await ClientConnection.open({ network, clock, host: 'h', port: 1, clientId: 'client', requestTimeoutMs: 1_000, ...(onThrottle === undefined ? {} : { onThrottle }) }))!;
  return { clock, connection, peer: peer() };
}

/** The made-up API again, its answer read as a throttle time (as every Kafka answer carries throttle_time_ms). */
const throttledApi: ClientApi<number, { throttleTimeMs: number }> = { ...echoApi, decodeResponse: (reader) => ({ throttleTimeMs: reader.int32() }) };

test('an answer with a throttle time holds the next requests that long (KIP-219), their timeout starting when they go out', async () => {
  const throttles: Throttle[] = [];
  const { clock, connection, peer } = await opened((throttle) => throttles.push(throttle));
  const answeredMs = clock.nowMs();
  const first = connection.send(throttledApi, 1);
  peer.handlers.data(peer.socket, answer(0, 300));
  expect(await first).toEqual({ answered: true, response: { throttleTimeMs: 300 } });
  clock.advance(100);
  const second = connection.send(echoApi, 2);
  clock.advance(199);
  expect(requestsOf(peer)).toEqual([[0, 1]]);
  clock.advance(1);
  expect(requestsOf(peer)).toEqual([
    [0, 1],
    [1, 2],
  ]);
  expect(throttles).toEqual([{ api: 'Echo', answeredMs, throttleMs: 300, nextSentMs: answeredMs + 300 }]);
  clock.advance(999); // its timeout runs from when it went out
  expect(connection.closed).toBe(false);
  peer.handlers.data(peer.socket, answer(1, 7));
  expect(await second).toEqual({ answered: true, response: 7 });
});

test('pipelined requests are answered by correlation id, across frames split and joined in chunks', async () => {
  const { connection, peer } = await opened();
  const replies = [connection.send(echoApi, 10), connection.send(echoApi, 11), connection.send(echoApi, 12)];
  expect(connection.inFlight).toBe(3);
  expect(requestsOf(peer)).toEqual([
    [0, 10],
    [1, 11],
    [2, 12],
  ]);
  const stream = Buffer.concat([answer(0, 100), answer(1, 101), answer(2, 102)]);
  peer.handlers.data(peer.socket, stream.subarray(0, 5));
  peer.handlers.data(peer.socket, stream.subarray(5, 20));
  peer.handlers.data(peer.socket, stream.subarray(20));
  expect(await Promise.all(replies)).toEqual([100, 101, 102].map((response) => ({ answered: true, response })));
  expect(connection.inFlight).toBe(0);
});

test('a request that times out ends as a timeout; the connection closes and the others end unanswered', async () => {
  const { clock, connection, peer } = await opened();
  const first = connection.send(echoApi, 1);
  clock.advance(500);
  const second = connection.send(echoApi, 2);
  clock.advance(499);
  expect(connection.closed).toBe(false);
  clock.advance(1);
  expect(await first).toEqual({ answered: false, error: 'timeout' });
  expect(await second).toEqual({ answered: false, error: 'disconnected' });
  expect(peer.terminated).toBe(true);
  expect(await connection.send(echoApi, 3)).toEqual({ answered: false, error: 'not-sent' }); // it never left: surely without effect
});

test('a lost connection fails every request in flight', async () => {
  const { connection, peer } = await opened();
  const replies: Promise<Reply<number>>[] = [connection.send(echoApi, 1), connection.send(echoApi, 2)];
  peer.handlers.data(peer.socket, answer(0, 5));
  peer.handlers.close?.(peer.socket);
  expect(await Promise.all(replies)).toEqual([
    { answered: true, response: 5 },
    { answered: false, error: 'disconnected' },
  ]);
  expect(connection.sendWithoutAnswer(echoApi, 3)).toBe(false);
});

test('bytes the socket did not take go out on drain, in order', async () => {
  const { connection, peer } = await opened();
  peer.writeLimit = 3;
  connection.sendWithoutAnswer(echoApi, 7);
  void connection.send(echoApi, 8);
  expect(Buffer.concat(peer.written).length).toBe(3); // the rest waits for drain
  peer.writeLimit = Number.MAX_SAFE_INTEGER;
  peer.handlers.drain?.(peer.socket);
  expect(requestsOf(peer)).toEqual([
    [0, 7],
    [1, 8],
  ]);
});

test('an answer to no request breaks the connection', async () => {
  const { connection, peer } = await opened();
  const reply = connection.send(echoApi, 1);
  peer.handlers.data(peer.socket, answer(42, 0));
  expect(await reply).toEqual({ answered: false, error: 'disconnected' });
  expect(peer.terminated).toBe(true);
});

test('a connect that hangs gives up after the request timeout, and a socket that opens late is closed', async () => {
  const clock = new ManualClock();
  let openLate: (socket: NetSocket) => void = () => {};
  const network: Network = {
    listen: () => {
      throw new Error('unused');
    },
    connect: () => new Promise((resolve) => void (openLate = resolve)),
    resolve: async (host) => [host],
  };
  const opening = ClientConnection.open({ network, clock, host: 'h', port: 1, clientId: 'client', requestTimeoutMs: 1_000 });
  clock.advance(999);
  let result: ClientConnection | null | undefined;
  void opening.then((connection) => void (result = connection));
  await Promise.resolve();
  expect(result).toBeUndefined();
  clock.advance(1);
  expect(await opening).toBeNull();
  let terminated = false;
  openLate({ remoteAddress: 'late', write: (b) => b.length, end: () => {}, terminate: () => void (terminated = true), pause: () => {}, resume: () => {} });
  await Promise.resolve();
  await Promise.resolve();
  expect(terminated).toBe(true);
});
