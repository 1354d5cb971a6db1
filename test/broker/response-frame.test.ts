// A response as the socket gets it (src/broker/response-frame.ts): the size prefix and the chunks
// in order, small chunks copied together, large ones (record batches) handed on as the same views.
import { expect, test } from 'bun:test';
import { COPY_BELOW_BYTES, responseParts } from '../../src/broker/response-frame.ts';

const bytes = (length: number, seed: number) => Buffer.from(Array.from({ length }, (_, index) => (index * 7 + seed) % 256));
const sizePrefixOf = (parts: readonly Uint8Array[]) => Buffer.from(parts[0]!.subarray(0, 4)).readInt32BE(0);

test('a response of small chunks is one part: its size, then the chunks', () => {
  const chunks = [bytes(10, 1), bytes(0, 2), bytes(300, 3)];
  const parts = responseParts(chunks);
  expect(parts.length).toBe(1);
  expect(sizePrefixOf(parts)).toBe(310);
  expect(Buffer.from(parts[0]!)).toEqual(Buffer.concat([Buffer.from([0, 0, 1, 54]), ...chunks]));
});

test('a large chunk goes out as the view it is, between the small parts around it', () => {
  const batches = bytes(COPY_BELOW_BYTES * 4, 4);
  const header = bytes(40, 5);
  const trailer = bytes(12, 6);
  const parts = responseParts([header, batches.subarray(100), trailer]);
  expect(parts.length).toBe(3);
  expect(parts[1]!.buffer).toBe(batches.buffer);
  expect(parts[1]!.byteOffset).toBe(batches.byteOffset + 100);
  expect(sizePrefixOf(parts)).toBe(40 + batches.length - 100 + 12);
  expect(Buffer.concat(parts)).toEqual(Buffer.concat([Buffer.alloc(4), header, batches.subarray(100), trailer]).fill(Buffer.from(parts[0]!.subarray(0, 4)), 0, 4));
});

test('no chunks: the size prefix alone; no part is ever empty', () => {
  expect(responseParts([]).map((part) => [...part])).toEqual([[0, 0, 0, 0]]);
  const large = bytes(COPY_BELOW_BYTES, 7);
  const parts = responseParts([large, new Uint8Array(0)]);
  expect(parts.every((part) => part.length > 0)).toBe(true);
  expect(Buffer.concat(parts).length).toBe(4 + COPY_BELOW_BYTES);
});
