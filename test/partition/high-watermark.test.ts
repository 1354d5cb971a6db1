import { expect, test } from 'bun:test';
import { followerHighWatermark, leaderHighWatermark } from '../../src/partition/high-watermark.ts';

test('leader high watermark: durable end capped by every in-sync follower, moving only with enough of them', () => {
  expect(leaderHighWatermark(10, [], 0)).toBe(10);
  expect(leaderHighWatermark(10, [3], 1)).toBe(3);
  expect(leaderHighWatermark(10, [30], 1)).toBe(10); // never past what is durable
  expect(leaderHighWatermark(10, [7, 2, 9], 2)).toBe(2); // acks=all waits for the whole in-sync set, as Kafka's
  expect(leaderHighWatermark(10, [7], 2)).toBe(-1); // not enough in sync: nothing is committed
});

test('follower high watermark: what it applied, capped by the leader it knows', () => {
  expect(followerHighWatermark(5, null)).toBe(5);
  expect(followerHighWatermark(5, 3)).toBe(3);
  expect(followerHighWatermark(5, 8)).toBe(5);
});
