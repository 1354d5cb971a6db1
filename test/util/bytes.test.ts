import { expect, test } from 'bun:test';
import { concatBytes, copyBytes } from '../../src/util/bytes.ts';

// copyBytes takes unzeroed memory: each of these must still hold exactly the source's bytes, so
// no stale bytes of an earlier buffer can reach a caller.
test('copyBytes returns exactly the bytes of the range, clamped to the source, in memory of its own', () => {
  for (let round = 0; round < 50; round++) {
    Buffer.allocUnsafeSlow(4096).fill(0xee); // freed memory with a pattern the copy must not show
    const source = Uint8Array.from({ length: 1000 }, (_, i) => i % 251);
    expect(copyBytes(source)).toEqual(source);
    expect(copyBytes(source, 10, 20)).toEqual(source.subarray(10, 20));
    expect(copyBytes(source, 990, 5000)).toEqual(source.subarray(990));
    expect(copyBytes(source, 1000)).toEqual(new Uint8Array(0));
    const copy = copyBytes(source, 5, 15);
    copy.fill(0);
    expect(source[5]).toBe(5); // the copy shares nothing with its source
  }
});

test('a copy of a pooled Buffer view is a plain Uint8Array of its own', () => {
  const pooled = Buffer.from('a view into the shared pool');
  const copy = copyBytes(pooled, 2, 6);
  expect(copy.constructor).toBe(Uint8Array);
  expect(new TextDecoder().decode(copy)).toBe('view');
  expect(copy.buffer.byteLength).toBe(4);
  expect(concatBytes([pooled.subarray(0, 1), pooled.subarray(2, 6)])).toEqual(new TextEncoder().encode('aview'));
});
