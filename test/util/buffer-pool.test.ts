import { expect, test } from 'bun:test';
import { BufferPool } from '../../src/util/buffer-pool.ts';

test('large buffers come back from the pool by size class; small ones are never pooled', () => {
  const pool = new BufferPool(1);
  const first = pool.acquire(300_000);
  expect(first.length).toBe(300_000);
  expect(first.buffer.byteLength).toBe(512 * 1024);
  pool.release(first);
  const second = pool.acquire(400_000);
  expect(second.buffer).toBe(first.buffer); // same class: reused
  expect(second.length).toBe(400_000);
  const third = pool.acquire(400_000);
  expect(third.buffer).not.toBe(first.buffer); // the one pooled buffer is taken
  pool.release(second);
  pool.release(third); // over perClassMax: dropped
  expect([pool.acquire(500_000).buffer, pool.acquire(500_000).buffer].filter((b) => b === second.buffer).length).toBe(1);
  const small = pool.acquire(1000);
  pool.release(small);
  expect(pool.acquire(1000).buffer).not.toBe(small.buffer);
});
