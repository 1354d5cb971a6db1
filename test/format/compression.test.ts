import { describe, expect, test } from 'bun:test';
import { CorruptRecordError, type FerryError } from '../../src/errors.ts';
import { COMPRESSION_CODECS, compress, compressionCodecOf, compressionIdOf, decompress } from '../../src/format/compression.ts';

describe('compression', () => {
  test('codec ids are Kafka’s', () => {
    expect(COMPRESSION_CODECS.map(compressionIdOf)).toEqual([0, 1, 2, 3, 4]);
    expect(compressionCodecOf(4)).toBe('zstd');
    expect(compressionCodecOf(5)).toBeUndefined();
  });

  test('round trips gzip and zstd as plain Uint8Arrays', () => {
    const data = new TextEncoder().encode('ferry '.repeat(1000));
    for (const codec of ['gzip', 'zstd'] as const) {
      const output = decompress(codec, compress(codec, data), 0);
      expect(output.constructor).toBe(Uint8Array);
      expect(Buffer.compare(output, data)).toBe(0);
    }
  });

  test('refuses to expand past the limit (decompression bombs)', () => {
    const zeros = new Uint8Array(1024 * 1024);
    for (const codec of ['gzip', 'zstd'] as const) {
      try {
        decompress(codec, compress(codec, zeros), 77, 64 * 1024);
        throw new Error('unreachable');
      } catch (error) {
        expect((error as FerryError).kind).toBe('RecordTooLarge');
        expect((error as Error).message).toContain('byte 77');
      }
    }
  });

  test('garbage is a CorruptRecordError on the records field', () => {
    for (const codec of ['gzip', 'zstd'] as const) {
      try {
        decompress(codec, new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]), 5);
        throw new Error('unreachable');
      } catch (error) {
        expect(error).toBeInstanceOf(CorruptRecordError);
        expect((error as CorruptRecordError).field).toBe('records');
        expect((error as CorruptRecordError).position).toBe(5);
      }
    }
  });
});
