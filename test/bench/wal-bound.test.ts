// The steady-state WAL bound the wal-bytes bench prints beside what the WAL store held.
import { expect, test } from 'bun:test';
import { walBound } from '../../bench/lib/wal-bound.ts';

const MIB = 1024 * 1024;
const inputs = {
  partitions: 64,
  segmentBytes: 4 * MIB,
  rolledSegmentsWaiting: 1,
  produceBytesPerSecond: 10_000_000,
  tierIntervalMs: 1000,
  gcIntervalMs: 1000,
  maxInFlight: 8,
  uploadBytes: MIB,
  walBytesPerProducedByte: 1,
};

test('a few segments per partition, what the rounds let pile up, and the uploads in flight', () => {
  const bound = walBound(inputs);
  expect(bound.segmentsBytes).toBe(64 * 2 * 4 * MIB);
  expect(bound.waitingRoundsBytes).toBe(20_000_000);
  expect(bound.inFlightBytes).toBe(8 * MIB);
  expect(bound.totalBytes).toBe(64 * 2 * 4 * MIB + 20_000_000 + 8 * MIB);
});

test('WAL framing scales what the segments and the rounds put in the store', () => {
  const framed = walBound({ ...inputs, walBytesPerProducedByte: 1.5 });
  expect(framed.segmentsBytes).toBe(1.5 * 64 * 2 * 4 * MIB);
  expect(framed.waitingRoundsBytes).toBe(30_000_000);
});

test('nonsense inputs are refused, not turned into a bound', () => {
  expect(() => walBound({ ...inputs, partitions: -1 })).toThrow();
  expect(() => walBound({ ...inputs, segmentBytes: Number.NaN })).toThrow();
  expect(() => walBound({ ...inputs, walBytesPerProducedByte: 0.5 })).toThrow();
});
