import { expect, test } from 'bun:test';
import { heapStats } from 'bun:jsc';
import type { Socket } from 'bun';
import { CONNECTION_REQUEST_BYTES_MAX, Connection, type FrameHandler, QUEUED_REQUEST_BYTES_MAX_DEFAULT } from '../../src/broker/connection.ts';
import { RequestMemory } from '../../src/broker/request-memory.ts';
import { ManualClock } from '../../src/util/clock.ts';

interface FakeSocket {
  readonly socket: Socket<unknown>;
  readonly written: Uint8Array[];
  readonly paused: () => boolean;
  readonly ended: () => boolean;
}

/** A socket that takes every write at once and records it, and whether it is paused or ended. */
function fakeSocket(): FakeSocket {
  const written: Uint8Array[] = [];
  let paused = false;
  let ended = false;
  const socket = {
    write: (bytes: Uint8Array) => (written.push(Uint8Array.from(bytes)), bytes.length),
    end: () => void (ended = true),
    pause: () => void (paused = true),
    resume: () => void (paused = false),
  } as unknown as Socket<unknown>;
  return { socket, written, paused: () => paused, ended: () => ended };
}

/** Lets promise callbacks run: the connection's work is driven by promises, not by time. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

function frame(apiKey: number, tag: number): Uint8Array {
  const bytes = new Uint8Array(8);
  const view = new DataView(bytes.buffer);
  view.setInt32(0, 4);
  view.setInt16(4, apiKey);
  view.setInt16(6, tag);
  return bytes;
}

function sizePrefix(size: number): Uint8Array {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setInt32(0, size);
  return bytes;
}

const MIB = 1024 * 1024;
/** The body bytes a test sends, in chunks of this view (the same memory each time: the test itself stays small). */
const CHUNK = new Uint8Array(64 * 1024);

/** Sends `bytes` bytes of a frame body in CHUNK-sized pieces. */
function sendBody(connection: Connection, bytes: number): void {
  for (let sent = 0; sent < bytes; sent += CHUNK.length) connection.received(CHUNK.subarray(0, Math.min(CHUNK.length, bytes - sent)));
}

const never: FrameHandler = () => new Promise(() => {});

test('produce requests overlap; any other request waits for everything before it; responses keep request order', async () => {
  const { socket, written } = fakeSocket();
  const events: string[] = [];
  const finish = new Map<number, () => void>();
  const connection = new Connection(
    socket,
    (request) => {
      const tag = new DataView(request.buffer, request.byteOffset).getInt16(2);
      events.push(`start ${tag}`);
      return new Promise((resolve) =>
        finish.set(tag, () => {
          events.push(`end ${tag}`);
          resolve([Uint8Array.of(tag)]);
        }),
      );
    },
    () => {},
    { clock: new ManualClock() },
  );
  connection.received(Buffer.concat([frame(0, 1), frame(0, 2), frame(1, 3), frame(0, 4)])); // produce, produce, fetch, produce
  await settle();
  expect(events).toEqual(['start 1', 'start 2']); // two produces at once; the fetch waits
  finish.get(2)!(); // the second finishes first...
  await settle();
  expect(written.length).toBe(0); // ...but its response waits for the first's
  finish.get(1)!();
  await settle();
  expect(events.slice(-1)).toEqual(['start 3']); // the fetch starts once both produces are done
  finish.get(3)!();
  await settle();
  finish.get(4)!();
  await settle();
  expect(written.map((bytes) => bytes.at(-1))).toEqual([1, 2, 3, 4]);
});

test('a frame declaring 95 MB and arriving slowly is not allocated up front: the connection holds only what arrived', () => {
  const { socket } = fakeSocket();
  const connection = new Connection(socket, never, () => {}, { clock: new ManualClock() });
  Bun.gc(true);
  const before = heapStats().extraMemorySize;
  connection.received(sizePrefix(95 * MIB));
  sendBody(connection, 256 * 1024);
  Bun.gc(true); // the heap accounts for buffers at a collection; the connection keeps what it allocated alive
  const grownBytes = heapStats().extraMemorySize - before;
  expect(grownBytes).toBeLessThan(16 * MIB); // a 95 MB buffer allocated at the size prefix would show here
  expect(connection.bufferedBytes).toBe(256 * 1024);
  connection.close();
});

test("four connections each streaming 95 MB: past the broker's request budget, connections stop being read", async () => {
  const memory = new RequestMemory(QUEUED_REQUEST_BYTES_MAX_DEFAULT);
  const finishers: (() => void)[] = [];
  const handler: FrameHandler = () => new Promise((resolve) => finishers.push(() => resolve([])));
  const sockets = [fakeSocket(), fakeSocket(), fakeSocket(), fakeSocket()];
  const connections = sockets.map(({ socket }) => new Connection(socket, handler, () => {}, { memory, clock: new ManualClock() }));
  const size = 95 * MIB;
  for (const connection of connections) connection.received(sizePrefix(size));
  expect(sockets.map((s) => s.paused())).toEqual([false, false, true, true]); // two fit in 256 MiB; the others wait
  expect(memory.reservedBytes).toBe(2 * size);
  for (const connection of connections.slice(0, 2)) sendBody(connection, size);
  expect(finishers.length).toBe(2);
  connections[2]!.received(CHUNK); // Bun may hand over what it read before the pause: kept, not parsed
  expect(connections[2]!.bufferedBytes).toBe(CHUNK.length);
  expect(memory.reservedBytes).toBeLessThanOrEqual(memory.bytesMax);
  finishers[0]!(); // the first request is handled: its bytes are released, the third connection reads again
  await settle();
  expect(sockets.map((s) => s.paused())).toEqual([false, false, false, true]);
  expect(memory.reservedBytes).toBe(2 * size);
  for (const connection of connections) connection.close();
  await settle();
  finishers[1]!();
  await settle();
  expect(memory.reservedBytes).toBe(0); // every reservation given back, the closed connections' included
});

test('one connection pipelining large requests waits for its earlier ones past its share', async () => {
  const finishers: (() => void)[] = [];
  const { socket, paused } = fakeSocket();
  const connection = new Connection(
    socket,
    () => new Promise((resolve) => finishers.push(() => resolve([]))),
    () => {},
    { clock: new ManualClock() },
  );
  const size = CONNECTION_REQUEST_BYTES_MAX / 2;
  for (let i = 0; i < 3; i++) {
    connection.received(sizePrefix(size));
    if (!paused()) sendBody(connection, size);
  }
  expect(finishers.length).toBe(2);
  expect(paused()).toBe(true);
  finishers[0]!();
  await settle();
  expect(paused()).toBe(false);
  connection.close();
});

test('a truncated frame is dropped after connections.max.idle.ms of silence, on the injected clock', () => {
  const clock = new ManualClock();
  const memory = new RequestMemory(QUEUED_REQUEST_BYTES_MAX_DEFAULT);
  const { socket, ended } = fakeSocket();
  const idleMs = 600_000;
  const connection = new Connection(socket, never, () => {}, { memory, clock, idleMs });
  connection.received(Uint8Array.of(0, 0, 0, 100, 0, 18)); // promises 100 bytes, sends 2
  clock.advance(idleMs / 2);
  connection.received(Uint8Array.of(0)); // a byte more: not idle
  clock.advance(idleMs - 1);
  expect(ended()).toBe(false);
  clock.advance(1);
  expect(ended()).toBe(true);
  expect(connection.closed).toBe(true);
  expect(memory.reservedBytes).toBe(0);
});

test('a connection with a request in hand is not idle, however long the request takes', async () => {
  const clock = new ManualClock();
  const { socket, ended } = fakeSocket();
  let finish!: () => void;
  const connection = new Connection(
    socket,
    () => new Promise((resolve) => (finish = () => resolve([]))),
    () => {},
    { clock, idleMs: 1000 },
  );
  connection.received(frame(1, 1));
  clock.advance(5000);
  expect(ended()).toBe(false);
  finish();
  await settle();
  clock.advance(999);
  expect(ended()).toBe(false);
  clock.advance(1000);
  expect(ended()).toBe(true);
  expect(connection.closed).toBe(true);
});
