import { describe, expect, test } from 'bun:test';
import { CorruptRecordError } from '../../src/errors.ts';
import { readVarint, readVarlong, sizeOfVarint, sizeOfVarlong, VarintCursor, writeVarint, writeVarlong } from '../../src/format/varint.ts';
import { SeededRandom } from '../../src/util/random.ts';

// Seeded so a failure replays exactly.
const seeded = new SeededRandom(1176);
const random = (): number => seeded.next();

const INT32_MIN = -0x8000_0000;
const INT32_MAX = 0x7fff_ffff;

function roundTripVarint(value: number): void {
  const bytes = new Uint8Array(8);
  const end = writeVarint(value, bytes, 1);
  expect(end - 1).toBe(sizeOfVarint(value));
  const cursor = new VarintCursor(1, end);
  expect(readVarint(bytes, cursor, 'v')).toBe(value);
  expect(cursor.position).toBe(end);
}

function roundTripVarlong(value: number): void {
  const bytes = new Uint8Array(12);
  const end = writeVarlong(value, bytes, 2);
  expect(end - 2).toBe(sizeOfVarlong(value));
  const cursor = new VarintCursor(2, bytes.length);
  expect(readVarlong(bytes, cursor, 'v')).toBe(value);
  expect(cursor.position).toBe(end);
}

/** Reference zigzag varlong via BigInt, independent of the code under test. */
function referenceVarlong(value: number): number[] {
  let raw = BigInt.asUintN(64, (BigInt(value) << 1n) ^ (BigInt(value) >> 63n));
  const out: number[] = [];
  while (raw > 0x7fn) {
    out.push(Number(raw & 0x7fn) | 0x80);
    raw >>= 7n;
  }
  out.push(Number(raw));
  return out;
}

function corruptField(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CorruptRecordError);
    return (error as CorruptRecordError).field;
  }
  throw new Error('expected a CorruptRecordError');
}

describe('varint (int32)', () => {
  test('round trips edge values', () => {
    for (const value of [0, 1, -1, 63, -64, 64, -65, 8191, 8192, INT32_MIN, INT32_MAX, INT32_MIN + 1, INT32_MAX - 1]) {
      roundTripVarint(value);
    }
  });

  test('round trips random values', () => {
    for (let index = 0; index < 10_000; index++) roundTripVarint((random() * 2 ** 32) | 0);
  });

  test('known encodings and sizes', () => {
    const bytes = new Uint8Array(5);
    expect(writeVarint(0, bytes, 0)).toBe(1);
    expect(bytes[0]).toBe(0);
    writeVarint(-1, bytes, 0);
    expect(bytes[0]).toBe(1);
    writeVarint(1, bytes, 0);
    expect(bytes[0]).toBe(2);
    expect(sizeOfVarint(63)).toBe(1);
    expect(sizeOfVarint(64)).toBe(2);
    expect(sizeOfVarint(-64)).toBe(1);
    expect(sizeOfVarint(-65)).toBe(2);
    expect(sizeOfVarint(INT32_MAX)).toBe(5);
    expect(sizeOfVarint(INT32_MIN)).toBe(5);
    expect(Array.from(bytes.subarray(0, writeVarint(INT32_MIN, bytes, 0)))).toEqual(referenceVarlong(INT32_MIN));
  });

  test('rejects a sixth byte', () => {
    const bytes = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
    expect(corruptField(() => readVarint(bytes, new VarintCursor(0, bytes.length), 'keyLength'))).toBe('keyLength');
  });

  test('rejects a varint running past the end of its record', () => {
    const bytes = new Uint8Array([0x80, 0x80, 0x01]);
    expect(corruptField(() => readVarint(bytes, new VarintCursor(0, 2), 'offsetDelta'))).toBe('offsetDelta');
    expect(corruptField(() => readVarint(bytes, new VarintCursor(3, 3), 'offsetDelta'))).toBe('offsetDelta');
    // The cursor's end never lets a read pass the array either.
    expect(corruptField(() => readVarint(bytes.subarray(0, 2), new VarintCursor(0, 10), 'offsetDelta'))).toBe('offsetDelta');
  });

  test('errors report the cursor errorPosition and name the byte', () => {
    const bytes = new Uint8Array([0x80]);
    try {
      readVarint(bytes, new VarintCursor(0, 1, 4096), 'length');
      throw new Error('unreachable');
    } catch (error) {
      const corrupt = error as CorruptRecordError;
      expect(corrupt.position).toBe(4096);
      expect(corrupt.message).toContain('byte 0');
    }
  });
});

describe('varlong (int64 as a safe number)', () => {
  const edges = [
    0,
    1,
    -1,
    63,
    -64,
    64,
    INT32_MIN,
    INT32_MAX,
    INT32_MIN - 1,
    INT32_MAX + 1,
    2 ** 32,
    -(2 ** 32),
    1_700_000_000_000,
    -1_700_000_000_000,
    Number.MAX_SAFE_INTEGER,
    Number.MIN_SAFE_INTEGER,
    Number.MAX_SAFE_INTEGER - 1,
    Number.MIN_SAFE_INTEGER + 1,
    2 ** 52,
    -(2 ** 52),
  ];

  test('round trips edge values and matches a BigInt reference encoding', () => {
    for (const value of edges) {
      roundTripVarlong(value);
      const bytes = new Uint8Array(12);
      const end = writeVarlong(value, bytes, 0);
      expect(Array.from(bytes.subarray(0, end))).toEqual(referenceVarlong(value));
    }
  });

  test('round trips random values across magnitudes', () => {
    for (let index = 0; index < 10_000; index++) {
      const magnitude = 2 ** Math.floor(random() * 53);
      const value = Math.floor(random() * magnitude) * (random() < 0.5 ? -1 : 1);
      roundTripVarlong(value === 0 ? 0 : value);
    }
  });

  test('reads non-canonical but legal Kafka encodings of safe values', () => {
    // 10-byte encoding of 0 with padding groups, as some encoders could emit.
    const bytes = new Uint8Array([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]);
    expect(readVarlong(bytes, new VarintCursor(0, bytes.length), 'v')).toBe(0);
  });

  test('rejects an eleventh byte, truncation, and values beyond the safe range', () => {
    const tooLong = new Uint8Array(11).fill(0x80);
    tooLong[10] = 0;
    expect(corruptField(() => readVarlong(tooLong, new VarintCursor(0, 11), 'timestampDelta'))).toBe('timestampDelta');
    const truncated = new Uint8Array([0xff, 0xff]);
    expect(corruptField(() => readVarlong(truncated, new VarintCursor(0, 2), 'timestampDelta'))).toBe('timestampDelta');
    for (const big of [2n ** 53n, -(2n ** 53n), 2n ** 62n, -(2n ** 63n)]) {
      let raw = BigInt.asUintN(64, (big << 1n) ^ (big >> 63n));
      const out: number[] = [];
      while (raw > 0x7fn) {
        out.push(Number(raw & 0x7fn) | 0x80);
        raw >>= 7n;
      }
      out.push(Number(raw));
      const bytes = Uint8Array.from(out);
      expect(corruptField(() => readVarlong(bytes, new VarintCursor(0, bytes.length), 'timestampDelta'))).toBe('timestampDelta');
    }
  });
});
