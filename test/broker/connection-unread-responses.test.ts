// A client that pipelines requests and never reads the responses (finding 17, adversarial review):
// its first response sits in the socket unwritten, the frames behind it keep their reservations,
// and the connection is "busy" in the idle check's eyes, so it was never closed. A few such
// clients held the whole broker-wide request budget for as long as they kept their sockets open,
// and every other client's requests waited behind them. Kafka's connections.max.idle.ms closes a
// connection that makes no progress either way (nothing read, nothing written) for that long.
import { expect, test } from 'bun:test';
import type { Socket } from 'bun';
import { CONNECTION_REQUEST_BYTES_MAX, Connection, type FrameHandler } from '../../src/broker/connection.ts';
import { RequestMemory } from '../../src/broker/request-memory.ts';
import { ManualClock } from '../../src/util/clock.ts';

/** A socket whose peer never reads: the kernel buffer is full, every write takes nothing, no drain comes. */
function unreadSocket(): { socket: Socket<unknown>; ended: () => boolean } {
  let ended = false;
  const socket = { write: () => 0, end: () => void (ended = true), pause: () => {}, resume: () => {} } as unknown as Socket<unknown>;
  return { socket, ended: () => ended };
}

/** A socket that takes every write. */
function readingSocket(): Socket<unknown> {
  return { write: (bytes: Uint8Array) => bytes.length, end: () => {}, pause: () => {}, resume: () => {} } as unknown as Socket<unknown>;
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

/** A Metadata-like request (API key 3): not a Produce, so what follows it waits for its response to be written. */
function metadataFrame(): Uint8Array {
  return Uint8Array.of(0, 0, 0, 4, 0, 3, 0, 0);
}

function sizePrefix(size: number): Uint8Array {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setInt32(0, size);
  return bytes;
}

const CHUNK = new Uint8Array(64 * 1024);
/** The first chunk of a large frame: its API key is 3 (not a Produce, which would start at once and give its reservation back). */
const FIRST_CHUNK = Uint8Array.from(CHUNK).fill(3, 1, 2);
const answers: FrameHandler = async () => [Uint8Array.of(1, 2, 3)];

test("clients that never read their responses cannot hold the broker's request budget past connections.max.idle.ms", async () => {
  const clock = new ManualClock();
  const idleMs = 1000;
  const memory = new RequestMemory(2 * CONNECTION_REQUEST_BYTES_MAX);
  const stuck = [unreadSocket(), unreadSocket()];
  for (const { socket } of stuck) {
    const connection = new Connection(socket, answers, () => {}, { memory, clock, idleMs });
    connection.received(metadataFrame()); // answered at once, but the answer never leaves
    await settle();
    // three half-share requests behind it: the first is answered (its answer waits too), the
    // other two queue, holding their reservations: the connection's whole share
    for (let frame = 0; frame < 3; frame++) {
      connection.received(sizePrefix(CONNECTION_REQUEST_BYTES_MAX / 2));
      connection.received(FIRST_CHUNK);
      for (let sent = CHUNK.length; sent < CONNECTION_REQUEST_BYTES_MAX / 2; sent += CHUNK.length) connection.received(CHUNK);
      await settle();
    }
    await settle();
  }
  expect(memory.reservedBytes).toBe(memory.bytesMax); // the two unread clients hold the whole budget

  let served = 0;
  const polite = new Connection(
    readingSocket(),
    async () => (served++, [Uint8Array.of(9)]),
    () => {},
    { memory, clock, idleMs },
  );
  polite.received(metadataFrame());
  await settle();
  expect(served).toBe(0); // waits for room, as it should for a while

  for (let i = 0; i < 10; i++) {
    clock.advance(idleMs);
    await settle();
  }
  // Ten idle periods without a byte read or written: the stuck connections are closed and give the budget back.
  for (const { ended } of stuck) expect(ended()).toBe(true);
  expect(served).toBe(1);
  polite.close();
  await settle();
  expect(memory.reservedBytes).toBe(0);
});

test('clients that never read their responses and then wait for the budget they hold themselves are closed too', async () => {
  const clock = new ManualClock();
  const idleMs = 1000;
  const half = CONNECTION_REQUEST_BYTES_MAX / 2;
  const memory = new RequestMemory(CONNECTION_REQUEST_BYTES_MAX);
  const stuck = [unreadSocket(), unreadSocket()];
  const connections: Connection[] = [];
  for (const { socket } of stuck) {
    const connection = new Connection(socket, answers, () => {}, { memory, clock, idleMs });
    connections.push(connection);
    connection.received(metadataFrame()); // answered at once, never read
    await settle();
    for (let frame = 0; frame < 2; frame++) {
      // the first is answered, the second queues behind the unread answers
      connection.received(sizePrefix(half));
      connection.received(FIRST_CHUNK);
      for (let sent = CHUNK.length; sent < half; sent += CHUNK.length) connection.received(CHUNK);
      await settle();
    }
  }
  // each holds half the budget and now declares one more half: within its share, but the budget is full
  for (const connection of connections) connection.received(sizePrefix(half));
  expect(connections.every((connection) => connection.paused)).toBe(true);
  expect(memory.reservedBytes).toBe(memory.bytesMax);

  for (let i = 0; i < 10; i++) {
    clock.advance(idleMs);
    await settle();
  }
  for (const { ended } of stuck) expect(ended()).toBe(true);
  expect(memory.reservedBytes).toBe(0);
});
