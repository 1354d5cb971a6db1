import { describe, expect, test } from 'bun:test';
import { FerryError } from '../../src/errors.ts';
import { buildRecordBatch, type ProducerRecord } from '../../src/format/batch-builder.ts';
import { parseBatchAt } from '../../src/format/batch-parse.ts';
import { crc32c } from '../../src/format/crc32c/index.ts';
import { RecordBatch } from '../../src/format/record-batch.ts';

const NOW_MS = 1_700_000_000_000;
const MAX_BATCH_BYTES = 64 * 1024 * 1024;
const utf8 = new TextEncoder();
const text = new TextDecoder();

/** Hex byte pairs; `#` starts a comment to the end of the line. */
function hex(annotated: string): Uint8Array {
  const pairs = annotated
    .replace(/#[^\n]*/g, '')
    .trim()
    .split(/\s+/);
  return Uint8Array.from(pairs.map((pair) => Number.parseInt(pair, 16)));
}

/**
 * One record (key "k", value "v", header h=x, timestamp 1_700_000_000_000 = 0x0000018bcfe56800)
 * laid out by hand from the Kafka record batch v2 spec. The CRC was computed separately with a
 * bit-at-a-time CRC32C (polynomial 0x82F63B78) over bytes 21..74.
 */
const FIXTURE = hex(`
  00 00 00 00 00 00 00 00   # baseOffset 0
  00 00 00 3e               # batchLength 62 = 74 - 12
  ff ff ff ff               # partitionLeaderEpoch -1
  02                        # magic
  5e 93 53 8d               # crc
  00 00                     # attributes: none, CreateTime
  00 00 00 00               # lastOffsetDelta 0
  00 00 01 8b cf e5 68 00   # baseTimestamp
  00 00 01 8b cf e5 68 00   # maxTimestamp
  ff ff ff ff ff ff ff ff   # producerId -1
  ff ff                     # producerEpoch -1
  ff ff ff ff               # baseSequence -1
  00 00 00 01               # recordCount 1
  18                        # length 12 (zigzag 24)
  00                        # attributes
  00                        # timestampDelta 0
  00                        # offsetDelta 0
  02 6b                     # keyLength 1, "k"
  02 76                     # valueLen 1, "v"
  02                        # headerCount 1
  02 68                     # headerKeyLength 1, "h"
  02 78                     # headerValueLength 1, "x"
`);

describe('buildRecordBatch', () => {
  test('writes exactly the hand-assembled Kafka bytes', () => {
    expect(FIXTURE.length).toBe(74);
    const built = buildRecordBatch([{ key: 'k', value: 'v', headers: [{ key: 'h', value: 'x' }] }], { nowMs: NOW_MS });
    expect(Array.from(built)).toEqual(Array.from(FIXTURE));
    const view = new DataView(FIXTURE.buffer);
    expect(view.getUint32(17)).toBe(crc32c(FIXTURE.subarray(21)));
    // Object-form headers and explicit timestamps give the same bytes.
    const again = buildRecordBatch([{ key: utf8.encode('k'), value: 'v', headers: { h: 'x' }, timestamp: NOW_MS }], { nowMs: 0 });
    expect(Array.from(again)).toEqual(Array.from(FIXTURE));
  });

  test('round trips every header field', () => {
    const built = buildRecordBatch([{ value: 'a', timestamp: NOW_MS + 5 }, { value: 'b', timestamp: NOW_MS - 3 }, { value: 'c' }], {
      nowMs: NOW_MS,
      baseOffset: 1_000_000_000_000,
      partitionLeaderEpoch: 7,
      producerId: 2 ** 40 + 3,
      producerEpoch: 12,
      baseSequence: 99,
      isTransactional: true,
    });
    const batch = parseBatchAt(built, 0, MAX_BATCH_BYTES)!;
    expect(batch.baseOffset).toBe(1_000_000_000_000);
    expect(batch.lastOffsetDelta).toBe(2);
    expect(batch.lastOffset).toBe(1_000_000_000_002);
    expect(batch.nextOffset).toBe(1_000_000_000_003);
    expect(batch.batchLength).toBe(built.length - 12);
    expect(batch.sizeInBytes).toBe(built.length);
    expect(batch.partitionLeaderEpoch).toBe(7);
    expect(batch.magic).toBe(2);
    expect(batch.crc).toBe(batch.computeCrc());
    expect(batch.isCrcValid()).toBe(true);
    expect(batch.attributes).toBe(0x10);
    expect(batch.compression).toBe('none');
    expect(batch.timestampType).toBe('CreateTime');
    expect(batch.isTransactional).toBe(true);
    expect(batch.isControl).toBe(false);
    expect(batch.baseTimestamp).toBe(NOW_MS + 5);
    expect(batch.maxTimestamp).toBe(NOW_MS + 5);
    expect(batch.producerId).toBe(2 ** 40 + 3);
    expect(batch.producerEpoch).toBe(12);
    expect(batch.baseSequence).toBe(99);
    expect(batch.recordCount).toBe(3);
    const records = [...batch.records()];
    expect(records.map((record) => record.offset)).toEqual([1_000_000_000_000, 1_000_000_000_001, 1_000_000_000_002]);
    expect(records.map((record) => record.timestamp)).toEqual([NOW_MS + 5, NOW_MS - 3, NOW_MS]);
  });

  const CONTENT: ProducerRecord[] = [
    { key: null, value: null },
    { key: 'key', value: '' },
    {
      value: 'héllo wörld ✓ 😀 \u{10ffff}',
      headers: [
        { key: 'ключ', value: null },
        { key: 'dup', value: 'x' },
        { key: 'dup', value: utf8.encode('y') },
      ],
    },
    { key: new Uint8Array([0, 255, 1]), value: new Uint8Array(0), headers: {} },
    { value: 'lone surrogate \ud800 here' },
  ];

  for (const compression of ['none', 'gzip', 'zstd'] as const) {
    test(`records() yields what was built (${compression})`, () => {
      const built = buildRecordBatch(CONTENT, { nowMs: NOW_MS, compression });
      const batch = parseBatchAt(built, 0, MAX_BATCH_BYTES)!;
      expect(batch.compression).toBe(compression);
      expect(batch.isCrcValid()).toBe(true);
      const records = [...batch.records()];
      expect(records.length).toBe(CONTENT.length);
      expect(records[0]).toEqual({ offset: 0, timestamp: NOW_MS, key: null, value: null, headers: [] });
      expect(text.decode(records[1]!.key!)).toBe('key');
      expect(records[1]!.value!.length).toBe(0);
      expect(text.decode(records[2]!.value!)).toBe('héllo wörld ✓ 😀 \u{10ffff}');
      expect(records[2]!.key).toBeNull();
      expect(records[2]!.headers.map((header) => header.key)).toEqual(['ключ', 'dup', 'dup']);
      expect(records[2]!.headers[0]!.value).toBeNull();
      expect(records[2]!.headers.slice(1).map((header) => text.decode(header.value!))).toEqual(['x', 'y']);
      expect(Array.from(records[3]!.key!)).toEqual([0, 255, 1]);
      expect(records[3]!.value!.length).toBe(0);
      expect(text.decode(records[4]!.value!)).toBe('lone surrogate \ufffd here');
    });
  }

  test('strings are written as TextEncoder writes them, short and long, surrogates included', () => {
    let state = 1176;
    const nextUnit = (): number => {
      state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
      const pick = state >>> 16;
      // Mostly ASCII, some 2- and 3-byte, some surrogate halves (paired or lone).
      if (pick % 4 === 0) return 0x80 + (pick % 0x780);
      if (pick % 4 === 1) return 0xd7f0 + (pick % 0x40);
      return 0x20 + (pick % 0x5f);
    };
    for (let length = 0; length < 200; length++) {
      const key = String.fromCharCode(...Array.from({ length }, nextUnit));
      const built = buildRecordBatch([{ key, value: null, headers: [{ key, value: key }] }], { nowMs: NOW_MS });
      const [record] = [...new RecordBatch(built).records()];
      expect(Array.from(record!.key!)).toEqual(Array.from(utf8.encode(key)));
      expect(Array.from(record!.headers[0]!.value!)).toEqual(Array.from(utf8.encode(key)));
      expect(record!.headers[0]!.key).toBe(text.decode(utf8.encode(key)));
    }
  });

  test('uncompressed records are views into the batch', () => {
    const built = buildRecordBatch([{ key: 'k', value: 'value' }], { nowMs: NOW_MS });
    const [record] = [...new RecordBatch(built).records()];
    expect(record!.value!.buffer).toBe(built.buffer);
    expect(record!.value!.byteOffset).toBe(built.length - 6);
  });

  test('a 1 MiB value, plain and compressed', () => {
    const value = new Uint8Array(1024 * 1024);
    for (let index = 0; index < value.length; index++) value[index] = (index * 31) & 0xff;
    for (const compression of ['none', 'gzip', 'zstd'] as const) {
      const built = buildRecordBatch([{ key: 'big', value }, { value: 'small' }], { nowMs: NOW_MS, compression });
      const batch = parseBatchAt(built, 0, MAX_BATCH_BYTES)!;
      const records = [...batch.records()];
      expect(records[0]!.value!.length).toBe(value.length);
      expect(Buffer.compare(records[0]!.value!, value)).toBe(0);
      expect(text.decode(records[1]!.value!)).toBe('small');
    }
  });

  test('compressed batches shrink repetitive data and keep the header uncompressed', () => {
    const records = Array.from({ length: 100 }, (_, index) => ({ key: `k${index}`, value: 'the same value again '.repeat(10) }));
    const plain = buildRecordBatch(records, { nowMs: NOW_MS });
    for (const compression of ['gzip', 'zstd'] as const) {
      const built = buildRecordBatch(records, { nowMs: NOW_MS, compression, baseOffset: 5 });
      expect(built.length).toBeLessThan(plain.length / 4);
      const batch = parseBatchAt(built, 0, MAX_BATCH_BYTES)!;
      expect(batch.recordCount).toBe(100);
      expect(batch.lastOffset).toBe(104);
      expect([...batch.records()].map((record) => text.decode(record.key!))).toEqual(records.map((record) => record.key));
    }
  });

  test('rejects an empty list, bad timestamps and bad options', () => {
    const kind = (run: () => unknown): string => {
      try {
        run();
      } catch (error) {
        expect(error).toBeInstanceOf(FerryError);
        return (error as FerryError).kind;
      }
      throw new Error('expected a FerryError');
    };
    expect(kind(() => buildRecordBatch([], { nowMs: NOW_MS }))).toBe('InvalidArgument');
    expect(kind(() => buildRecordBatch([{ value: 'a', timestamp: 1.5 }], { nowMs: NOW_MS }))).toBe('InvalidArgument');
    expect(kind(() => buildRecordBatch([{ value: 'a', timestamp: 2 ** 53 }], { nowMs: NOW_MS }))).toBe('InvalidArgument');
    expect(kind(() => buildRecordBatch([{ value: 'a' }], { nowMs: Number.NaN }))).toBe('InvalidArgument');
    expect(
      kind(() =>
        buildRecordBatch(
          [
            { value: 'a', timestamp: Number.MAX_SAFE_INTEGER },
            { value: 'b', timestamp: -Number.MAX_SAFE_INTEGER },
          ],
          { nowMs: 0 },
        ),
      ),
    ).toBe('InvalidArgument');
    expect(kind(() => buildRecordBatch([{ value: 'a' }], { nowMs: NOW_MS, baseOffset: -1 }))).toBe('InvalidArgument');
    expect(kind(() => buildRecordBatch([{ value: 'a' }], { nowMs: NOW_MS, producerEpoch: 40_000 }))).toBe('InvalidArgument');
    expect(kind(() => buildRecordBatch([{ value: 'a' }], { nowMs: NOW_MS, compression: 'lz4' as 'gzip' }))).toBe('InvalidArgument');
  });
});
