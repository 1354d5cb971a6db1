import { describe, expect, test } from 'bun:test';
import { type DeleteTopicsRequest, type DeleteTopicsResponse, deleteTopicsCodec as codec } from '../../../src/broker/apis/delete-topics.ts';
import { KafkaReader } from '../../../src/broker/protocol/reader.ts';
import { KafkaWriter } from '../../../src/broker/protocol/writer.ts';
import { bytesOf, codecHarness, kafkajsEncode, kafkajsResponse } from '../../support/codec-harness.ts';

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

// --- test-only encoders and decoders (the other side of the wire) ---

function encodeRequest(request: DeleteTopicsRequest): Uint8Array {
  return bytesOf(new KafkaWriter().array(request.topicNames, (w, name) => w.string(name)).int32(request.timeoutMs));
}

function decodeResponse(version: number, bytes: Uint8Array): DeleteTopicsResponse {
  const reader = new KafkaReader(bytes);
  const throttleTimeMs = version >= 1 ? reader.int32() : 0;
  const responses = reader.array((r) => ({ name: r.string(), errorCode: r.int16() }));
  expect(reader.remaining).toBe(0);
  return { throttleTimeMs, responses };
}

// --- tests ---

const kafkajsArgs = { topics: ['orders', 'payments', 'audit-log'], timeout: 12_000 };

test('advertises versions 0-3, below the first flexible version', () => {
  expect([codec.key, codec.name, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([20, 'DeleteTopics', 0, 3, 4]);
});

describe.each(VERSIONS)('DeleteTopics v%i', (version) => {
  test(`decodes a request encoded by kafkajs (its v${kafkajsVersion(version)} bytes)`, async () => {
    const request = decodeRequest(await kafkajsRequest(version, kafkajsArgs), version);
    expect(request).toEqual({ topicNames: ['orders', 'payments', 'audit-log'], timeoutMs: 12_000 });
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

  test('round trip', () => {
    for (const request of [{ topicNames: [], timeoutMs: 0 }, { topicNames: ['', 'ü'], timeoutMs: -1 }]) {
      expect(decodeRequest(encodeRequest(request), version)).toEqual(request);
    }
    const response = { throttleTimeMs: version >= 1 ? 9 : 0, responses: [{ name: 'a', errorCode: 0 }] };
    expect(decodeResponse(version, encodeResponse(version, response))).toEqual(response);
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
