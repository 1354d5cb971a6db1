import { describe, expect, test } from 'bun:test';
import xxhashWasm from 'xxhash-wasm';
import { CorruptObjectError, isFerryError } from '../../src/errors.ts';
import { xxh64 } from '../../src/wal/bytes.ts';
import { concatBytes } from '../../src/util/bytes.ts';
import { decodeWalObject, encodeSeal, TRAILER_BYTES, WalObjectBuilder } from '../../src/wal/format.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { ZERO_UUID } from '../../src/util/uuid.ts';
import { batchOf } from '../support/batches.ts';
import { idOf } from '../support/topic-ids.ts';

function sampleObject(): { bytes: Uint8Array; frames: Uint8Array[] } {
  const builder = new WalObjectBuilder({ kind: 'data', writerId: 'broker-1', epoch: 3, sequence: 42, createdMs: 1_700_000_000_000 });
  const frames = [batchOf('a', 2), batchOf('b', 1), batchOf('c', 3)];
  builder.addFrame({ topic: 'orders', topicId: idOf('orders'), partition: 0, leaderEpoch: 7, baseOffset: 100, lastOffset: 101, data: frames[0]! });
  builder.addFrame({ topic: 'payments', topicId: idOf('payments'), partition: 5, leaderEpoch: 2, baseOffset: 0, lastOffset: 0, data: frames[1]! });
  builder.addFrame({ topic: 'orders', topicId: idOf('orders'), partition: 0, leaderEpoch: 7, baseOffset: 102, lastOffset: 104, data: frames[2]! });
  const chunks = builder.finish();
  const bytes = concatBytes(chunks);
  expect(bytes.length).toBe(builder.sizeBytes);
  return { bytes, frames };
}

describe('WAL object format', () => {
  test('round trips header, frames and footer; frame data are views of the object', () => {
    const { bytes, frames } = sampleObject();
    const decoded = decodeWalObject(bytes);
    expect(decoded.header).toEqual({ kind: 'data', writerId: 'broker-1', epoch: 3, sequence: 42, createdMs: 1_700_000_000_000 });
    expect(decoded.frames.map((f) => [f.entry.topic, f.entry.topicId, f.entry.partition, f.entry.leaderEpoch, f.entry.baseOffset, f.entry.lastOffset])).toEqual([
      ['orders', idOf('orders'), 0, 7, 100, 101],
      ['payments', idOf('payments'), 5, 2, 0, 0],
      ['orders', idOf('orders'), 0, 7, 102, 104],
    ]);
    expect(decoded.frames.map((f) => Uint8Array.from(f.data))).toEqual(frames.map((f) => Uint8Array.from(f)));
    expect(decoded.frames.every((f) => f.data.buffer === bytes.buffer)).toBe(true);
  });

  test('the builder does not copy frame data until the chunks are joined', () => {
    const data = batchOf('zero-copy', 4);
    const builder = new WalObjectBuilder({ kind: 'data', writerId: 'w', epoch: 0, sequence: 0, createdMs: 0 });
    builder.addFrame({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: 0, lastOffset: 3, data });
    expect(builder.finish().includes(data)).toBe(true);
  });

  test('drained chunks and the finished rest make the same object', () => {
    const builder = new WalObjectBuilder({ kind: 'data', writerId: 'w', epoch: 0, sequence: 0, createdMs: 0 });
    builder.addFrame({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: 0, lastOffset: 0, data: batchOf('a') });
    const early = builder.drain();
    builder.addFrame({ topic: 't', topicId: idOf('t'), partition: 1, leaderEpoch: 0, baseOffset: 0, lastOffset: 1, data: batchOf('b', 2) });
    const object = concatBytes([...early, ...builder.finish()]);
    expect(object.length).toBe(builder.sizeBytes);
    expect(decodeWalObject(object).frames.map((f) => f.entry.partition)).toEqual([0, 1]);
  });

  test('a seal decodes with no frames and the sealer named', () => {
    const decoded = decodeWalObject(encodeSeal({ writerId: 'broker-2', epoch: 4, sequence: 9, createdMs: 5 }));
    expect(decoded).toEqual({ header: { kind: 'seal', writerId: 'broker-2', epoch: 4, sequence: 9, createdMs: 5 }, frames: [] });
  });

  test('one flipped bit anywhere in the object is rejected with a precise error', () => {
    const { bytes } = sampleObject();
    const fields = new Set<string>();
    for (let at = 0; at < bytes.length; at++) {
      const corrupt = Uint8Array.from(bytes);
      corrupt[at]! ^= 0x04;
      let caught: unknown;
      try {
        decodeWalObject(corrupt);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(CorruptObjectError);
      const error = caught as CorruptObjectError;
      expect(error.position).toBeGreaterThanOrEqual(0);
      expect(error.position).toBeLessThanOrEqual(bytes.length);
      fields.add(error.field);
    }
    for (const field of ['magic', 'headerChecksum', 'dataChecksum', 'footerChecksum', 'trailer magic']) expect(fields).toContain(field);
  });

  test('every truncation is rejected, never read as a shorter valid object', () => {
    const { bytes } = sampleObject();
    for (let length = 0; length < bytes.length; length++) {
      expect(() => decodeWalObject(bytes.subarray(0, length))).toThrow(CorruptObjectError);
    }
  });

  // Version 1 is refused too: its frames name no topic id, so which incarnation of a topic they
  // belong to cannot be verified (docs/design.md contract 10).
  for (const version of [1, 3]) {
    test(`format version ${version} is refused by name`, () => {
      const { bytes } = sampleObject();
      const other = Uint8Array.from(bytes);
      other[5] = version;
      let caught: unknown;
      try {
        decodeWalObject(other);
      } catch (error) {
        caught = error;
      }
      expect(isFerryError(caught, 'CorruptObject')).toBe(true);
      expect(String(caught)).toContain(`formatVersion: version ${version} is not supported (this reader knows 2)`);
    });
  }

  test('two incarnations of one topic name are told apart by their frames; a frame must name a topic id', () => {
    const builder = new WalObjectBuilder({ kind: 'data', writerId: 'w', epoch: 0, sequence: 0, createdMs: 0 });
    builder.addFrame({ topic: 'd1', topicId: idOf('d1', 0), partition: 0, leaderEpoch: 0, baseOffset: 0, lastOffset: 0, data: batchOf('old') });
    builder.addFrame({ topic: 'd1', topicId: idOf('d1', 1), partition: 0, leaderEpoch: 0, baseOffset: 0, lastOffset: 0, data: batchOf('new') });
    expect(() => builder.addFrame({ topic: 'd1', topicId: ZERO_UUID, partition: 0, leaderEpoch: 0, baseOffset: 1, lastOffset: 1, data: batchOf('none') })).toThrow(/must name its topic id/);
    const decoded = decodeWalObject(concatBytes(builder.finish()));
    expect(idOf('d1', 0)).not.toBe(idOf('d1', 1));
    expect(decoded.frames.map((f) => f.entry.topicId)).toEqual([idOf('d1', 0), idOf('d1', 1)]);
  });

  test('the trailer is the last 16 bytes and names the footer', () => {
    const { bytes } = sampleObject();
    const trailer = new DataView(bytes.buffer, bytes.length - TRAILER_BYTES);
    expect(trailer.getUint32(12)).toBe(0x4657414c);
    expect(trailer.getUint32(0)).toBeGreaterThan(0);
  });
});

test('Bun.hash.xxHash64 equals xxhash-wasm h64 (seed 0) on random inputs', async () => {
  const wasm = await xxhashWasm();
  const random = new SeededRandom(1176);
  for (let i = 0; i < 300; i++) {
    const length = i < 40 ? i : random.nextInt(70_000);
    const buffer = new Uint8Array(length + 3);
    for (let j = 0; j < buffer.length; j++) buffer[j] = random.nextInt(256);
    const input = buffer.subarray(3); // unaligned
    expect(xxh64(input)).toBe(wasm.h64Raw(input, 0n));
  }
  expect(xxh64(new Uint8Array(0))).toBe(0xef46db3751d8e999n); // XXH64's published empty-input value
});
