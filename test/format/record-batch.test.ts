import { describe, expect, test } from 'bun:test';
import { CorruptRecordError, type FerryError } from '../../src/errors.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { parseBatchAt } from '../../src/format/batch-parse.ts';
import { crc32c } from '../../src/format/crc32c/index.ts';
import { RECORD_BATCH_HEADER_BYTES, RecordBatch } from '../../src/format/record-batch.ts';

const NOW_MS = 1_700_000_000_000;
const MAX_BATCH_BYTES = 1024 * 1024;
const text = new TextDecoder();

/** key "k", value "v", header h=x: the record starts at byte 61 with length 0x18 (12). */
function oneRecordBatch(): Uint8Array {
  return buildRecordBatch([{ key: 'k', value: 'v', headers: { h: 'x' } }], { nowMs: NOW_MS });
}

function threeRecordBatch(compression: 'none' | 'gzip' | 'zstd' = 'none'): Uint8Array {
  return buildRecordBatch([{ value: 'a' }, { value: 'bb' }, { value: 'ccc' }], { nowMs: NOW_MS, compression });
}

function refreshCrc(batch: Uint8Array): Uint8Array {
  new DataView(batch.buffer, batch.byteOffset).setUint32(17, crc32c(batch.subarray(21)));
  return batch;
}

/** The field records() names for these bytes, after the batch itself passes parseBatchAt. */
function recordsErrorField(bytes: Uint8Array): string {
  const batch = parseBatchAt(refreshCrc(bytes), 0, MAX_BATCH_BYTES)!;
  expect(batch).not.toBeNull();
  try {
    Array.from(batch.records());
  } catch (error) {
    expect(error).toBeInstanceOf(CorruptRecordError);
    return (error as CorruptRecordError).field;
  }
  throw new Error('expected records() to throw');
}

describe('RecordBatch in-place setters', () => {
  test('setBaseOffset and setPartitionLeaderEpoch write through to the source and keep the CRC valid', () => {
    const source = new Uint8Array(500);
    const built = threeRecordBatch();
    source.set(built, 100);
    const batch = parseBatchAt(source, 100, MAX_BATCH_BYTES)!;
    const crcBefore = batch.crc;
    batch.setBaseOffset(2 ** 50);
    batch.setPartitionLeaderEpoch(123_456);
    expect(batch.baseOffset).toBe(2 ** 50);
    expect(batch.lastOffset).toBe(2 ** 50 + 2);
    expect(batch.partitionLeaderEpoch).toBe(123_456);
    expect(batch.crc).toBe(crcBefore);
    expect(batch.isCrcValid()).toBe(true);
    const reparsed = parseBatchAt(source, 100, MAX_BATCH_BYTES)!;
    expect(reparsed.baseOffset).toBe(2 ** 50);
    expect([...reparsed.records()].map((record) => record.offset)).toEqual([2 ** 50, 2 ** 50 + 1, 2 ** 50 + 2]);
    expect(Array.from(source.subarray(100 + 12, 100 + built.length))).not.toEqual(Array.from(built.subarray(12)));
    expect(Array.from(source.subarray(100 + 16, 100 + built.length))).toEqual(Array.from(built.subarray(16)));
    batch.setPartitionLeaderEpoch(-1);
    expect(batch.partitionLeaderEpoch).toBe(-1);
  });

  test('a negative baseOffset is a programmer error', () => {
    const batch = new RecordBatch(oneRecordBatch());
    expect(() => batch.setBaseOffset(-1)).toThrow();
    expect(() => batch.setBaseOffset(1.5)).toThrow();
  });
});

describe('RecordBatch attributes', () => {
  test('LogAppendTime batches give every record the maxTimestamp', () => {
    const bytes = buildRecordBatch(
      [
        { value: 'a', timestamp: 10 },
        { value: 'b', timestamp: 30 },
      ],
      { nowMs: 0 },
    );
    const view = new DataView(bytes.buffer);
    view.setInt16(21, view.getInt16(21) | 0x08);
    view.setUint32(39, 99); // maxTimestamp low word: the broker's append time
    const batch = parseBatchAt(refreshCrc(bytes), 0, MAX_BATCH_BYTES)!;
    expect(batch.timestampType).toBe('LogAppendTime');
    expect([...batch.records()].map((record) => record.timestamp)).toEqual([99, 99]);
  });

  test('control and delete-horizon flags', () => {
    const bytes = oneRecordBatch();
    new DataView(bytes.buffer).setInt16(21, 0x60);
    const batch = parseBatchAt(refreshCrc(bytes), 0, MAX_BATCH_BYTES)!;
    expect(batch.isControl).toBe(true);
    expect(batch.hasDeleteHorizonMs).toBe(true);
    expect(batch.isTransactional).toBe(false);
  });

  test('records() is lazy and can be iterated again', () => {
    const batch = new RecordBatch(threeRecordBatch());
    const iterator = batch.records();
    expect(text.decode(iterator.next().value!.value!)).toBe('a');
    expect([...batch.records()].length).toBe(3);
    expect([...iterator].length).toBe(2);
  });

  test('compressed records split over several gzip members or zstd frames, as Java producers may write', () => {
    const plain = threeRecordBatch();
    const records = plain.subarray(RECORD_BATCH_HEADER_BYTES);
    const halves = [records.subarray(0, 10), records.subarray(10)];
    const codecs = [
      [1, (part: Uint8Array) => Bun.gzipSync(part as Uint8Array<ArrayBuffer>)],
      [4, (part: Uint8Array) => new Uint8Array(Bun.zstdCompressSync(part as Uint8Array<ArrayBuffer>))],
    ] as const;
    for (const [id, compressPart] of codecs) {
      const compressed = halves.map(compressPart);
      const bytes = new Uint8Array(RECORD_BATCH_HEADER_BYTES + compressed[0]!.length + compressed[1]!.length);
      bytes.set(plain.subarray(0, RECORD_BATCH_HEADER_BYTES));
      bytes.set(compressed[0]!, RECORD_BATCH_HEADER_BYTES);
      bytes.set(compressed[1]!, RECORD_BATCH_HEADER_BYTES + compressed[0]!.length);
      const view = new DataView(bytes.buffer);
      view.setInt32(8, bytes.length - 12);
      view.setInt16(21, id);
      const batch = parseBatchAt(refreshCrc(bytes), 0, MAX_BATCH_BYTES)!;
      expect([...batch.records()].map((record) => text.decode(record.value!))).toEqual(['a', 'bb', 'ccc']);
    }
  });

  test('snappy and lz4 are not decodable yet', () => {
    for (const id of [2, 3]) {
      const bytes = threeRecordBatch('gzip');
      new DataView(bytes.buffer).setInt16(21, id);
      const batch = parseBatchAt(refreshCrc(bytes), 0, MAX_BATCH_BYTES)!;
      expect(batch.compression).toBe(id === 2 ? 'snappy' : 'lz4');
      try {
        batch.records();
        throw new Error('unreachable');
      } catch (error) {
        expect((error as FerryError).kind).toBe('InvalidArgument');
        expect((error as Error).message).toContain('not supported yet');
      }
    }
  });
});

describe('records() rejects lying records', () => {
  test('a record length longer than the batch', () => {
    const bytes = oneRecordBatch();
    bytes[RECORD_BATCH_HEADER_BYTES] = 0x1a; // 13
    expect(recordsErrorField(bytes)).toBe('length');
  });

  test('a record length shorter than its fields', () => {
    const bytes = oneRecordBatch();
    bytes[RECORD_BATCH_HEADER_BYTES] = 0x16; // 11: the header value no longer fits
    expect(recordsErrorField(bytes)).toBe('headerValueLength');
  });

  test('a record length of zero or negative', () => {
    for (const length of [0x00, 0x01]) {
      const bytes = oneRecordBatch();
      bytes[RECORD_BATCH_HEADER_BYTES] = length;
      expect(recordsErrorField(bytes)).toBe('length');
    }
  });

  test('a record whose fields end before its length', () => {
    // Grow the header value length field's claim down: "x" declared as 0 bytes leaves one spare byte.
    const bytes = oneRecordBatch();
    bytes[72] = 0x00;
    expect(recordsErrorField(bytes)).toBe('length');
  });

  test('key, value and header lengths past the record', () => {
    const cases: [number, number, string][] = [
      [65, 0x7e, 'keyLength'], // 63 bytes of key
      [65, 0x03, 'keyLength'], // -2
      [67, 0x7e, 'valueLen'], // 63 bytes
      [69, 0x01, 'headerCount'], // -1
      [69, 0x0a, 'headerCount'], // 5 headers in 4 bytes
      [70, 0x01, 'headerKeyLength'], // a null header key
    ];
    for (const [position, byte, field] of cases) {
      const bytes = oneRecordBatch();
      bytes[position] = byte;
      expect(recordsErrorField(bytes)).toBe(field);
    }
  });

  test('a varint running off the end of the record', () => {
    const bytes = oneRecordBatch();
    bytes[69] = 0x82; // headerCount continues into the next bytes
    bytes[70] = 0x82;
    bytes[71] = 0x82;
    bytes[72] = 0x82;
    bytes[73] = 0x82;
    expect(recordsErrorField(bytes)).toBe('headerCount');
  });

  test('offsetDelta out of order or past lastOffsetDelta', () => {
    const bytes = threeRecordBatch();
    // The second record starts after the first (61 + 1 + 7 bytes): its offsetDelta is byte 72.
    expect(bytes[72]).toBe(0x02);
    bytes[72] = 0x00;
    expect(recordsErrorField(bytes)).toBe('offsetDelta');
    const past = threeRecordBatch();
    past[72] = 0x06; // 3 > lastOffsetDelta 2
    expect(recordsErrorField(past)).toBe('offsetDelta');
  });

  test('a recordCount that does not match the records', () => {
    const fewer = threeRecordBatch();
    new DataView(fewer.buffer).setInt32(57, 2);
    expect(recordsErrorField(fewer)).toBe('recordCount');
    // Values long enough that 4 records could fit, so only records() can tell.
    const more = buildRecordBatch([{ value: 'a'.repeat(10) }, { value: 'b'.repeat(10) }, { value: 'c'.repeat(10) }], { nowMs: NOW_MS });
    const view = new DataView(more.buffer);
    view.setInt32(23, 3);
    view.setInt32(57, 4);
    expect(recordsErrorField(more)).toBe('recordCount');
  });

  test('a recordCount mismatch inside a compressed batch', () => {
    for (const compression of ['gzip', 'zstd'] as const) {
      const bytes = threeRecordBatch(compression);
      new DataView(bytes.buffer).setInt32(57, 2);
      expect(recordsErrorField(bytes)).toBe('recordCount');
    }
  });

  test('compressed data that does not decompress', () => {
    for (const compression of ['gzip', 'zstd'] as const) {
      const bytes = threeRecordBatch(compression);
      bytes[RECORD_BATCH_HEADER_BYTES + 4]! ^= 0xff;
      bytes[bytes.length - 1]! ^= 0xff;
      expect(recordsErrorField(bytes)).toBe('records');
    }
  });

  test('errors carry the batch position in its source buffer', () => {
    const bytes = oneRecordBatch();
    bytes[RECORD_BATCH_HEADER_BYTES] = 0x1a;
    refreshCrc(bytes);
    const source = new Uint8Array(1000 + bytes.length);
    source.set(bytes, 1000);
    const batch = parseBatchAt(source, 1000, MAX_BATCH_BYTES)!;
    try {
      Array.from(batch.records());
      throw new Error('unreachable');
    } catch (error) {
      expect((error as CorruptRecordError).position).toBe(1000);
      expect((error as Error).message).toContain('byte 61');
    }
  });
});
