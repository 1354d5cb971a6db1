// OffsetDelete refuses the offsets of topics a live consumer subscribes to: the topics come from the
// member's JoinGroup metadata, Kafka's ConsumerProtocolSubscription (any version: topics come first).
import { expect, test } from 'bun:test';
import { subscribedTopics } from '../../../src/broker/groups/consumer-subscription.ts';

/** A subscription of `version` with `topics`, then `tail` (the later versions' fields: user data, owned partitions, ...). */
function encoded(version: number, topics: string[], tail: number[] = []): Uint8Array {
  const bytes: number[] = [(version >> 8) & 0xff, version & 0xff, 0, 0, 0, topics.length];
  for (const topic of topics) {
    const name = [...new TextEncoder().encode(topic)];
    bytes.push(name.length >> 8, name.length & 0xff, ...name);
  }
  return new Uint8Array([...bytes, ...tail]);
}

test('the topics of every version, a newer one than Kafka knows too, with whatever follows them', () => {
  expect(subscribedTopics(encoded(0, ['orders', 'payments'], [0xff, 0xff, 0xff, 0xff]))).toEqual(['orders', 'payments']);
  expect(subscribedTopics(encoded(3, ['ö-topic'], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff]))).toEqual(['ö-topic']);
  expect(subscribedTopics(encoded(9, []))).toEqual([]);
});

test('bytes that are no subscription give no topics (null): negative version or length, truncated', () => {
  expect(subscribedTopics(encoded(-1, ['t']))).toBeNull();
  expect(subscribedTopics(new Uint8Array([0, 1, 0xff, 0xff, 0xff, 0xff]))).toBeNull(); // null array
  expect(subscribedTopics(encoded(1, ['orders']).subarray(0, 10))).toBeNull();
  expect(subscribedTopics(new Uint8Array([0, 1, 0, 0, 0, 1, 0xff, 0xfe]))).toBeNull();
  expect(subscribedTopics(new Uint8Array([0, 1, 0, 0]))).toBeNull();
  expect(subscribedTopics(new Uint8Array([0x7f, 0xff, 0x7f, 0xff, 0xff, 0xff]))).toBeNull(); // 2^31-1 topics in six bytes
});

test('a view into a larger buffer is read from its own start', () => {
  const inner = encoded(1, ['t']);
  const outer = new Uint8Array(inner.length + 5);
  outer.set(inner, 5);
  expect(subscribedTopics(outer.subarray(5))).toEqual(['t']);
});
