// bench/lib/ack-floor.ts: the floor under an acks=all acknowledgement is the client's linger, the
// WAL's upload interval and one PUT from the target's own store, in the same run.
import { expect, test } from 'bun:test';
import { FLOOR_PUTS_PER_ROUND, putLatenciesMs, recordFloor } from '../../bench/lib/ack-floor.ts';
import { LatencyRecorder } from '../../bench/lib/latency.ts';
import { S3_EXPRESS_LATENCY } from '../../src/store/latency.ts';

test('each floor sample is linger + upload interval + one PUT', () => {
  const recorder = new LatencyRecorder();
  recordFloor(recorder, { lingerMs: 5, uploadIntervalMs: 5, objectBytes: 1024 }, [2, 4, 6]);
  expect(recorder.count).toBe(3);
  expect(recorder.percentileMs(0)).toBeCloseTo(12, 1);
  expect(recorder.percentileMs(100)).toBeCloseTo(16, 1);
});

test("the s3-express floor draws the model's PUTs: around its p50, never below it by much", async () => {
  const latencies = await putLatenciesMs('s3-express', 20 * 1024, 0);
  expect(latencies.length).toBe(FLOOR_PUTS_PER_ROUND);
  const sorted = [...latencies].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  expect(median).toBeGreaterThan(S3_EXPRESS_LATENCY.write.p50Ms * 0.8);
  expect(median).toBeLessThan(S3_EXPRESS_LATENCY.write.p99Ms);
});

test('the file floor times real puts to a file store', async () => {
  const latencies = await putLatenciesMs('file', 4096, 1);
  expect(latencies.length).toBe(FLOOR_PUTS_PER_ROUND);
  expect(latencies.every((ms) => ms > 0 && Number.isFinite(ms))).toBe(true);
});
