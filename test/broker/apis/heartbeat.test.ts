import { describe, expect, test } from 'bun:test';
import { type HeartbeatRequest, heartbeatCodec as codec } from '../../../src/broker/apis/heartbeat.ts';
import { KafkaWriter } from '../../../src/protocol/writer.ts';
import { bytesOf, codecHarness, kafkajsEncode, kafkajsResponse } from '../../support/codec-harness.ts';

// kafkajs speaks v0-3, the rigid versions (flexible from v4); every version is also checked against
// Kafka's own grammar in test/protocol/schema-codecs.test.ts.
const VERSIONS = [0, 1, 2, 3];

// --- harness (test/support/codec-harness.ts): kafkajs as the real client, truncation and mutation as the hostile one ---

const { decodeRequest, encodeResponse, expectRejected, expectEveryTruncationRejected, expectMutationsTotal } = codecHarness(codec);

function kafkajsRequest(version: number, args: object): Promise<Uint8Array> {
  return kafkajsEncode('heartbeat', version, args);
}

function kafkajsDecodeResponse(version: number, bytes: Buffer): Promise<Record<string, unknown>> {
  return kafkajsResponse('heartbeat', version).decode(bytes);
}

// --- tests ---

const kafkajsArgs = { groupId: 'orders-consumers', groupGenerationId: 7, memberId: 'rdkafka-1f2e', groupInstanceId: 'pod-3' };

test('advertises versions 0-4, flexible from 4', () => {
  expect([codec.key, codec.name, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([12, 'Heartbeat', 0, 4, 4]);
});

describe.each(VERSIONS)('Heartbeat v%i', (version) => {
  const expected: HeartbeatRequest = {
    groupId: 'orders-consumers',
    generationId: 7,
    memberId: 'rdkafka-1f2e',
    groupInstanceId: version >= 3 ? 'pod-3' : null,
  };

  test('decodes a request encoded by kafkajs', async () => {
    expect(decodeRequest(await kafkajsRequest(version, kafkajsArgs), version)).toEqual(expected);
  });

  test('kafkajs decodes the response', async () => {
    const decoded = await kafkajsDecodeResponse(version, encodeResponse(version, { throttleTimeMs: 150, errorCode: 27 }));
    const throttle = version === 1 ? { throttleTime: 150 } : version >= 2 ? { throttleTime: 0, clientSideThrottleTime: 150 } : {};
    expect(decoded).toEqual({ errorCode: 27, ...throttle });
  });

  test('every truncation throws ProtocolError', async () => {
    const bytes = await kafkajsRequest(version, kafkajsArgs);
    expectEveryTruncationRejected(bytes, version);
  });

  test('mutated requests decode or throw ProtocolError', async () => {
    expectMutationsTotal(await kafkajsRequest(version, kafkajsArgs), version, 0x9e3779b9 + version);
  });

  test('absurd lengths throw ProtocolError', () => {
    expectRejected(bytesOf(new KafkaWriter().int16(0x7fff).int32(0)), version); // group_id runs past the frame
    expectRejected(bytesOf(new KafkaWriter().int16(-1).int32(0).string('m')), version); // null group_id
    expectRejected(bytesOf(new KafkaWriter().string('g').int32(0).int16(-7)), version); // negative member_id
    if (version >= 3) expectRejected(bytesOf(new KafkaWriter().string('g').int32(0).string('m').int16(0x7fff)), version);
  });
});
