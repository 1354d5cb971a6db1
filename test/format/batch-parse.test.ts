import { describe, expect, test } from 'bun:test';
import { CorruptRecordError, FerryError } from '../../src/errors.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { parseBatchAt, splitBatches } from '../../src/format/batch-parse.ts';
import { crc32c } from '../../src/format/crc32c/index.ts';

const NOW_MS = 1_700_000_000_000;
const MAX_BATCH_BYTES = 1024 * 1024;

function sampleBatch(baseOffset = 0, recordCount = 3): Uint8Array {
  const records = Array.from({ length: recordCount }, (_, index) => ({
    key: `key-${index}`,
    value: `value ${index} ${'x'.repeat(index * 5)}`,
    headers: [{ key: 'trace', value: `${index}` }],
  }));
  return buildRecordBatch(records, { nowMs: NOW_MS, baseOffset });
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let position = 0;
  for (const part of parts) {
    out.set(part, position);
    position += part.length;
  }
  return out;
}

/** Rewrites the CRC so a deliberately broken field gets past the CRC check. */
function refreshCrc(batch: Uint8Array): Uint8Array {
  new DataView(batch.buffer, batch.byteOffset).setUint32(17, crc32c(batch.subarray(21)));
  return batch;
}

function caught(run: () => unknown): FerryError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(FerryError);
    return error as FerryError;
  }
  throw new Error('expected a FerryError');
}

function corruptField(run: () => unknown): string {
  const error = caught(run);
  expect(error).toBeInstanceOf(CorruptRecordError);
  return (error as CorruptRecordError).field;
}

describe('parseBatchAt', () => {
  test('parses a valid batch as a view of the buffer', () => {
    const bytes = sampleBatch(42);
    const buffer = concat([new Uint8Array(7), bytes, new Uint8Array(5)]);
    const batch = parseBatchAt(buffer, 7, MAX_BATCH_BYTES)!;
    expect(batch.bytes.buffer).toBe(buffer.buffer);
    expect(batch.bytes.byteOffset).toBe(7);
    expect(batch.sizeInBytes).toBe(bytes.length);
    expect(batch.position).toBe(7);
    expect(batch.baseOffset).toBe(42);
  });

  test('detects any single flipped byte in the CRC-covered area, and in the crc itself', () => {
    const bytes = sampleBatch();
    for (let index = 17; index < bytes.length; index++) {
      for (const mask of [0x01, 0x80, 0xff]) {
        const copy = bytes.slice();
        copy[index]! ^= mask;
        expect(corruptField(() => parseBatchAt(copy, 0, MAX_BATCH_BYTES))).toBe('crc');
      }
    }
  });

  test('crc errors give the batch start as position and hex values in the message', () => {
    const bytes = sampleBatch();
    bytes[70]! ^= 1;
    const buffer = concat([new Uint8Array(100), bytes]);
    const error = caught(() => parseBatchAt(buffer, 100, MAX_BATCH_BYTES)) as CorruptRecordError;
    expect(error.position).toBe(100);
    expect(error.message).toContain('byte 117');
    expect(error.message).toMatch(/0x[0-9a-f]{8}, expected 0x[0-9a-f]{8}/);
  });

  test('rejects a magic other than 2', () => {
    for (const magic of [0, 1, 3, 0xff]) {
      const bytes = sampleBatch();
      bytes[16] = magic;
      const error = caught(() => parseBatchAt(bytes, 0, MAX_BATCH_BYTES)) as CorruptRecordError;
      expect(error.field).toBe('magic');
      expect(error.message).toContain('byte 16');
    }
  });

  test('returns null for every truncation, however short', () => {
    const bytes = sampleBatch();
    for (let length = 0; length < bytes.length; length++) {
      expect(parseBatchAt(bytes.subarray(0, length), 0, MAX_BATCH_BYTES)).toBeNull();
    }
    expect(parseBatchAt(bytes, bytes.length, MAX_BATCH_BYTES)).toBeNull();
  });

  test('rejects a batchLength below the header or negative', () => {
    for (const batchLength of [48, 0, -1, -0x8000_0000]) {
      const bytes = sampleBatch();
      new DataView(bytes.buffer).setInt32(8, batchLength);
      expect(corruptField(() => parseBatchAt(bytes, 0, MAX_BATCH_BYTES))).toBe('batchLength');
      expect(corruptField(() => parseBatchAt(bytes.subarray(0, 12), 0, MAX_BATCH_BYTES))).toBe('batchLength');
    }
  });

  test('rejects an oversize batch as RecordTooLarge from its first 12 bytes', () => {
    const bytes = sampleBatch();
    const error = caught(() => parseBatchAt(bytes, 0, bytes.length - 1));
    expect(error.kind).toBe('RecordTooLarge');
    expect(error.message).toContain(`${bytes.length} bytes`);
    expect(error.message).toContain(`${bytes.length - 1} bytes`);
    expect(caught(() => parseBatchAt(bytes.subarray(0, 12), 0, bytes.length - 1)).kind).toBe('RecordTooLarge');
    expect(parseBatchAt(bytes, 0, bytes.length)).not.toBeNull();
  });

  test('rejects header fields the CRC cannot vouch for', () => {
    const cases: [string, (view: DataView) => void][] = [
      ['lastOffsetDelta', (view) => view.setInt32(23, -1)],
      ['recordCount', (view) => view.setInt32(57, -1)],
      ['recordCount', (view) => view.setInt32(57, 4)], // lastOffsetDelta is 2
      ['attributes', (view) => view.setInt16(21, 5)],
      ['baseOffset', (view) => view.setInt32(0, 0x7fff_ffff)],
      // baseOffset 2^53 - 1 is safe, but lastOffset = baseOffset + 2 is not.
      ['lastOffsetDelta', (view) => (view.setInt32(0, 0x1f_ffff), view.setUint32(4, 0xffff_ffff))],
      ['baseTimestamp', (view) => view.setInt32(27, -0x8000_0000)],
      ['maxTimestamp', (view) => view.setInt32(35, 0x40_0000)],
      ['producerId', (view) => view.setInt32(43, 0x7fff_ffff)],
    ];
    for (const [field, breakIt] of cases) {
      const bytes = sampleBatch();
      breakIt(new DataView(bytes.buffer));
      expect(corruptField(() => parseBatchAt(refreshCrc(bytes), 0, MAX_BATCH_BYTES))).toBe(field);
    }
  });

  test('rejects a recordCount that cannot fit the uncompressed records', () => {
    const bytes = sampleBatch(0, 1);
    const view = new DataView(bytes.buffer);
    view.setInt32(23, 1_000_000);
    view.setInt32(57, 1_000_000);
    expect(corruptField(() => parseBatchAt(refreshCrc(bytes), 0, MAX_BATCH_BYTES))).toBe('recordCount');
  });
});

describe('splitBatches', () => {
  test('splits a concatenation into views sharing the input buffer', () => {
    const parts = [sampleBatch(0, 1), sampleBatch(1, 3), sampleBatch(4, 2)];
    const whole = concat([new Uint8Array(3), ...parts]);
    const input = whole.subarray(3); // a view at a non-zero byteOffset, as in a request buffer
    const batches = splitBatches(input, MAX_BATCH_BYTES);
    expect(batches.length).toBe(3);
    let position = 0;
    for (const [index, batch] of batches.entries()) {
      expect(batch.bytes.buffer).toBe(input.buffer);
      expect(batch.bytes.byteOffset).toBe(3 + position);
      expect(batch.position).toBe(position);
      expect(Array.from(batch.bytes)).toEqual(Array.from(parts[index]!));
      position += batch.sizeInBytes;
    }
    expect(batches.map((batch) => [batch.baseOffset, batch.lastOffset])).toEqual([
      [0, 0],
      [1, 3],
      [4, 5],
    ]);
  });

  test('rejects a truncated trailing batch at every length', () => {
    const first = sampleBatch(0, 1);
    const second = sampleBatch(1, 2);
    const whole = concat([first, second]);
    for (let length = first.length + 1; length < whole.length; length++) {
      const error = caught(() => splitBatches(whole.subarray(0, length), MAX_BATCH_BYTES)) as CorruptRecordError;
      expect(error.field).toBe('batchLength');
      expect(error.position).toBe(first.length);
      const have = length - first.length;
      expect(error.message).toContain(`truncated: ${have} bytes of ${have < 12 ? 12 : second.length}`);
    }
    for (let length = 1; length < first.length; length++) {
      expect(corruptField(() => splitBatches(first.subarray(0, length), MAX_BATCH_BYTES))).toBe('batchLength');
    }
  });

  test('rejects an empty buffer', () => {
    expect(caught(() => splitBatches(new Uint8Array(0), MAX_BATCH_BYTES)).kind).toBe('InvalidArgument');
  });

  test('passes on errors in any batch', () => {
    const second = sampleBatch(1, 2);
    second[30]! ^= 4;
    const whole = concat([sampleBatch(0, 1), second]);
    expect(corruptField(() => splitBatches(whole, MAX_BATCH_BYTES))).toBe('crc');
    expect(caught(() => splitBatches(whole, 80)).kind).toBe('RecordTooLarge');
  });
});
