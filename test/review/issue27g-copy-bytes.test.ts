// Review 27g: copyBytes (src/util/bytes.ts) takes unzeroed memory since 34c0d4d, "every byte is
// set". That holds only while [start, end) lies inside the source: subarray clamps, set copies the
// clamped bytes, and the rest of the new buffer is whatever the allocator last held there (before
// 34c0d4d: zeros). No caller in src/ or test/ passes such a range today (every one copies a whole
// buffer or a range resolveRange clamped), so this is latent; the FINDING tests fail at 34c0d4d.
import { describe, expect, test } from 'bun:test';
import { copyBytes, uninitializedBytes } from '../../src/util/bytes.ts';

/** Leaves freed memory full of 0xab behind, where the next allocations of `size` are likely to land. */
function dirtyTheAllocator(size: number): void {
  let junk: Uint8Array[] = [];
  for (let i = 0; i < 2000; i++) junk.push(uninitializedBytes(size).fill(0xab));
  junk = [];
  Bun.gc(true);
}

/**
 * copyBytes(source, start, end), then the bytes of its result that were not copied from `source`
 * and are not zero: 0 too when it refuses the range by throwing (a fix may clamp, zero or throw).
 */
function uncopiedNonZero(source: Uint8Array, start: number, end: number): number {
  let copy: Uint8Array;
  try {
    copy = copyBytes(source, start, end);
  } catch {
    return 0;
  }
  const copied = source.subarray(start, end);
  expect(Array.from(copy.subarray(0, copied.length))).toEqual(Array.from(copied));
  let count = 0;
  for (let i = copied.length; i < copy.length; i++) if (copy[i] !== 0) count++;
  return count;
}

describe('copyBytes', () => {
  test('FINDING: an end past the source gives no byte that was not copied (before 34c0d4d: zeros)', () => {
    const source = new Uint8Array([1, 2, 3, 4]);
    let dirty = 0;
    for (let round = 0; round < 20 && dirty === 0; round++) {
      dirtyTheAllocator(128);
      for (let i = 0; i < 1000; i++) dirty += uncopiedNonZero(source, 0, 128);
    }
    expect(dirty).toBe(0);
  });

  test('FINDING: a start past the source gives no byte that was not copied', () => {
    const source = new Uint8Array([1, 2, 3, 4]);
    let dirty = 0;
    for (let round = 0; round < 20 && dirty === 0; round++) {
      dirtyTheAllocator(96);
      for (let i = 0; i < 1000; i++) dirty += uncopiedNonZero(source, 10, 106);
    }
    expect(dirty).toBe(0);
  });

  test('a range inside the source: exactly those bytes, in a buffer of its own', () => {
    const source = new Uint8Array(256).map((_, i) => i);
    for (const [start, end] of [
      [0, 256],
      [0, 0],
      [17, 17],
      [255, 256],
      [3, 200],
    ] as const) {
      const copy = copyBytes(source, start, end);
      expect(Array.from(copy)).toEqual(Array.from(source.subarray(start, end)));
      expect(copy.byteOffset).toBe(0);
      expect(copy.buffer.byteLength).toBe(end - start);
      expect(copy.constructor).toBe(Uint8Array);
      copy.fill(0xff);
      expect(source[start]).toBe(start % 256);
    }
  });

  test('a Buffer that is a view of a slab (Bun pools no small Buffer: a read slab is the case): only its bytes, and a copy of them', () => {
    const slab = Buffer.alloc(4096, 0x2e);
    slab.write('neighbour-before', 0);
    slab.write('the bytes that matter', 100);
    slab.write('neighbour-after', 121);
    const view = slab.subarray(100, 121);
    expect(view.byteOffset).toBe(100);
    const copy = copyBytes(view);
    expect(Buffer.from(copy).toString()).toBe('the bytes that matter');
    expect(copy.buffer).not.toBe(slab.buffer);
    expect(copy.buffer.byteLength).toBe(view.length);
    copy.fill(0x21);
    expect(view.toString()).toBe('the bytes that matter');
    expect(slab.subarray(0, 16).toString()).toBe('neighbour-before');
    expect(slab.subarray(121, 136).toString()).toBe('neighbour-after');
    expect(Buffer.from(copyBytes(view, 4, 9)).toString()).toBe('bytes');
    expect(Buffer.from(copyBytes(view, 4)).toString()).toBe('bytes that matter'); // end defaults to the view's length, not the slab's
  });

  test('start after end: a throw (before 34c0d4d and at it) or nothing, never bytes', () => {
    let result: Uint8Array | null = null;
    try {
      result = copyBytes(new Uint8Array(8), 5, 2);
    } catch {
      result = null;
    }
    expect(result === null || result.length === 0).toBe(true);
  });
});
