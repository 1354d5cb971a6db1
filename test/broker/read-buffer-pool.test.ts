// The memory Fetch responses read into (src/broker/read-buffer-pool.ts): RB1, a slab is lent to one
// response at a time and comes back only when that response releases it; small reads share a slab;
// a read larger than a slab, or after release, gets memory of its own.
import { expect, test } from 'bun:test';
import { READ_SLAB_BYTES, ReadBufferPool } from '../../src/broker/read-buffer-pool.ts';

test('consecutive reads of one response share a slab; a full slab takes the next', () => {
  const pool = new ReadBufferPool(4);
  const buffers = pool.forResponse();
  const a = buffers.allocate(1000);
  const b = buffers.allocate(2000);
  expect(b.buffer).toBe(a.buffer);
  expect(b.byteOffset).toBe(a.byteOffset + 1000);
  const c = buffers.allocate(READ_SLAB_BYTES - 2000);
  expect(c.buffer).not.toBe(a.buffer);
  expect(c.length).toBe(READ_SLAB_BYTES - 2000);
});

test('RB1: two responses in flight never share memory; a released slab is lent again, warm', () => {
  const pool = new ReadBufferPool(4);
  const first = pool.forResponse();
  const second = pool.forResponse();
  const a = first.allocate(READ_SLAB_BYTES);
  const b = second.allocate(100);
  expect(b.buffer).not.toBe(a.buffer);
  expect(pool.freeSlabs).toBe(0);
  first.release();
  expect(pool.freeSlabs).toBe(1);
  first.release(); // the connection's writer and its close may both release: once counts
  expect(pool.freeSlabs).toBe(1);
  const third = pool.forResponse();
  expect(third.allocate(10).buffer).toBe(a.buffer);
  expect(pool.freeSlabs).toBe(0);
});

test('a read larger than a slab, or made after release, gets memory of its own', () => {
  const pool = new ReadBufferPool(4);
  const buffers = pool.forResponse();
  expect(buffers.allocate(0).length).toBe(0); // an empty read takes no slab
  const large = buffers.allocate(READ_SLAB_BYTES + 1);
  expect(large.length).toBe(READ_SLAB_BYTES + 1);
  buffers.release();
  expect(pool.freeSlabs).toBe(0); // nothing was lent
  const held = pool.forResponse();
  const slab = held.allocate(10);
  const late = buffers.allocate(10); // a handler still running after its connection closed
  expect(late.buffer).not.toBe(slab.buffer);
  held.release();
  expect(pool.freeSlabs).toBe(1);
});

test('the pool keeps at most its bound of idle slabs', () => {
  const pool = new ReadBufferPool(2);
  const responses = [pool.forResponse(), pool.forResponse(), pool.forResponse()];
  for (const buffers of responses) buffers.allocate(READ_SLAB_BYTES);
  for (const buffers of responses) buffers.release();
  expect(pool.freeSlabs).toBe(2);
});
