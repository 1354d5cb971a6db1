// A Connection writes a response of large views (a Fetch's segment reads) across short writes, in
// order and whole, and gives the memory the response read into back to the pool only once the
// socket took every byte, or the connection closed and the handler settled (RB1,
// src/broker/read-buffer-pool.ts).
import { expect, test } from 'bun:test';
import type { Socket } from 'bun';
import { Connection, type FrameHandler } from '../../src/broker/connection.ts';
import { ReadBufferPool } from '../../src/broker/read-buffer-pool.ts';
import { ManualClock } from '../../src/util/clock.ts';

/** The most a write takes before the kernel buffer is "full" until the next drain. */
const WRITE_BYTES_MAX = 1000;
const VIEW_BYTES = 64 * 1024;

/** A socket that takes up to WRITE_BYTES_MAX bytes, then nothing until drained. */
function shortWriteSocket() {
  const written: number[] = [];
  let room = WRITE_BYTES_MAX;
  const socket = {
    write(bytes: Uint8Array) {
      const take = Math.min(room, bytes.length);
      for (let index = 0; index < take; index++) written.push(bytes[index]!);
      room -= take;
      return take;
    },
    end: () => {},
    pause: () => {},
    resume: () => {},
  } as unknown as Socket<unknown>;
  return { socket, written, makeRoom: () => void (room = WRITE_BYTES_MAX) };
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

/** A Fetch-shaped request frame (API key 1): handled alone, as every non-Produce request. */
const FETCH_FRAME = Uint8Array.of(0, 0, 0, 4, 0, 1, 0, 0);
const HEADER = Uint8Array.from({ length: 10 }, (_, index) => index + 1);
const TRAILER = Uint8Array.of(9, 8, 7, 6, 5);

/** Answers with a header, a view of memory from the response's buffers filled with a pattern, and a trailer. */
function fetchLike(release: Promise<void> = Promise.resolve()): FrameHandler {
  return async (_frame, responseBuffers) => {
    const view = responseBuffers.allocate(VIEW_BYTES);
    for (let index = 0; index < view.length; index++) view[index] = index % 251;
    await release;
    return [HEADER, view, TRAILER];
  };
}

function expected(): number[] {
  const view = Array.from({ length: VIEW_BYTES }, (_, index) => index % 251);
  const size = HEADER.length + VIEW_BYTES + TRAILER.length;
  return [size >>> 24, (size >>> 16) & 0xff, (size >>> 8) & 0xff, size & 0xff, ...HEADER, ...view, ...TRAILER];
}

test('a response of views goes out whole and in order across short writes; its memory comes back after the last byte', async () => {
  const { socket, written, makeRoom } = shortWriteSocket();
  const pool = new ReadBufferPool(4);
  const connection = new Connection(socket, fetchLike(), () => {}, { clock: new ManualClock(), readBuffers: pool });
  connection.received(FETCH_FRAME);
  await settle();
  expect(written.length).toBe(WRITE_BYTES_MAX);
  for (let drains = 0; written.length < expected().length && drains < 1000; drains++) {
    expect(pool.freeSlabs).toBe(0); // RB1: the socket has not taken every byte yet
    makeRoom();
    connection.drain();
    await settle();
  }
  expect(written).toEqual(expected());
  expect(pool.freeSlabs).toBe(1);
});

test('a connection closed mid-response writes nothing more and gives the memory back', async () => {
  const { socket, written, makeRoom } = shortWriteSocket();
  const pool = new ReadBufferPool(4);
  const connection = new Connection(socket, fetchLike(), () => {}, { clock: new ManualClock(), readBuffers: pool });
  connection.received(FETCH_FRAME);
  await settle();
  connection.close();
  await settle();
  expect(pool.freeSlabs).toBe(1);
  makeRoom();
  connection.drain();
  await settle();
  expect(written.length).toBe(WRITE_BYTES_MAX);
});

test('a connection closed while its handler runs gives the memory back only once the handler settled', async () => {
  const { socket } = shortWriteSocket();
  const pool = new ReadBufferPool(4);
  const handlerDone = Promise.withResolvers<void>();
  const connection = new Connection(socket, fetchLike(handlerDone.promise), () => {}, { clock: new ManualClock(), readBuffers: pool });
  connection.received(FETCH_FRAME);
  await settle();
  connection.close();
  await settle();
  expect(pool.freeSlabs).toBe(0); // the handler may still read into it
  handlerDone.resolve();
  await settle();
  expect(pool.freeSlabs).toBe(1);
});
