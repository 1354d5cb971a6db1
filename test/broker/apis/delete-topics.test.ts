import { describe, expect, test } from 'bun:test';
import { type DeleteTopicsResponse, deleteTopicsCodec as codec } from '../../../src/broker/apis/delete-topics.ts';
import { KafkaWriter } from '../../../src/protocol/writer.ts';
import { bytesOf, codecHarness, kafkajsEncode, kafkajsResponse } from '../../support/codec-harness.ts';

// v0-3 are the rigid versions (flexible from v4); every version is also checked against Kafka's own
// grammar in test/protocol/schema-codecs.test.ts.
const VERSIONS = [0, 1, 2, 3];
/** kafkajs 2.2.4 stops at v1; v2 and v3 have v1's bytes (v2: quota behaviour, v3: TOPIC_DELETION_DISABLED). */
const kafkajsVersion = (version: number) => Math.min(version, 1);

// --- harness (test/support/codec-harness.ts): kafkajs as the real client, truncation and mutation as the hostile one ---

const { decodeRequest, encodeResponse, expectRejected, expectEveryTruncationRejected, expectMutationsTotal } = codecHarness(codec);

function kafkajsRequest(version: number, args: object): Promise<Uint8Array> {
  return kafkajsEncode('deleteTopics', kafkajsVersion(version), args);
}

function kafkajsDecodeResponse(version: number, bytes: Buffer): Promise<Record<string, unknown>> {
  return kafkajsResponse('deleteTopics', kafkajsVersion(version)).decode(bytes);
}

// --- tests ---

const kafkajsArgs = { topics: ['orders', 'payments', 'audit-log'], timeout: 12_000 };

test('advertises versions 0-6, flexible from 4', () => {
  expect([codec.key, codec.name, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([20, 'DeleteTopics', 0, 6, 4]);
});

describe.each(VERSIONS)('DeleteTopics v%i', (version) => {
  test(`decodes a request encoded by kafkajs (its v${kafkajsVersion(version)} bytes)`, async () => {
    const request = decodeRequest(await kafkajsRequest(version, kafkajsArgs), version);
    // topics (v6+, by name or id) is empty: before v6 the names are all there is.
    expect(request).toEqual({ topics: [], topicNames: ['orders', 'payments', 'audit-log'], timeoutMs: 12_000 });
  });

  test(`kafkajs decodes the response (its v${kafkajsVersion(version)} decoder)`, async () => {
    const response: DeleteTopicsResponse = {
      throttleTimeMs: 44,
      responses: [
        { name: 'payments', errorCode: 3 },
        { name: 'orders', errorCode: 0 },
      ],
    };
    const decoded = await kafkajsDecodeResponse(version, encodeResponse(version, response));
    const throttle = version >= 1 ? { throttleTime: 0, clientSideThrottleTime: 44 } : {};
    expect(decoded).toEqual({
      ...throttle,
      topicErrors: [
        { topic: 'orders', errorCode: 0 },
        { topic: 'payments', errorCode: 3 },
      ],
    });
  });

  test('every truncation throws ProtocolError', async () => {
    const bytes = await kafkajsRequest(version, kafkajsArgs);
    expectEveryTruncationRejected(bytes, version);
  });

  test('mutated requests decode or throw ProtocolError', async () => {
    expectMutationsTotal(await kafkajsRequest(version, kafkajsArgs), version, 0xfeed + version);
  });

  test('absurd lengths throw ProtocolError', () => {
    expectRejected(bytesOf(new KafkaWriter().int32(0x7fffffff).int32(0)), version); // count above the limit
    expectRejected(bytesOf(new KafkaWriter().int32(100_000).string('t').int32(0)), version); // count that cannot fit
    expectRejected(bytesOf(new KafkaWriter().int32(-9).int32(0)), version); // negative count
    expectRejected(bytesOf(new KafkaWriter().int32(1).int16(0x7fff).int32(0)), version); // name past the frame
    expectRejected(bytesOf(new KafkaWriter().int32(1).int16(-1).int32(0)), version); // null name
  });
});
