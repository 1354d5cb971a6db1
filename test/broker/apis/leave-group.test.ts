import { describe, expect, test } from 'bun:test';
import { type LeaveGroupResponse, leaveGroupCodec as codec } from '../../../src/broker/apis/leave-group.ts';
import { KafkaWriter } from '../../../src/protocol/writer.ts';
import { bytesOf, codecHarness, kafkajsEncode, kafkajsResponse } from '../../support/codec-harness.ts';

// kafkajs speaks v0-3, the rigid versions (flexible from v4); every version is also checked against
// Kafka's own grammar in test/protocol/schema-codecs.test.ts.
const VERSIONS = [0, 1, 2, 3];

// --- harness (test/support/codec-harness.ts): kafkajs as the real client, truncation and mutation as the hostile one ---

const { decodeRequest, encodeResponse, expectRejected, expectEveryTruncationRejected, expectMutationsTotal } = codecHarness(codec);

function kafkajsRequest(version: number, args: object): Promise<Uint8Array> {
  return kafkajsEncode('leaveGroup', version, args);
}

function kafkajsDecodeResponse(version: number, bytes: Buffer): Promise<Record<string, unknown>> {
  return kafkajsResponse('leaveGroup', version).decode(bytes);
}

// --- tests ---

const kafkajsArgs = { groupId: 'orders-consumers', memberId: 'member-a', groupInstanceId: 'pod-1' };

test('advertises versions 0-5, flexible from 4', () => {
  expect([codec.key, codec.name, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([13, 'LeaveGroup', 0, 5, 4]);
});

describe.each(VERSIONS)('LeaveGroup v%i', (version) => {
  // The handler takes v0-2's one member from member_id (test/broker/handlers/leave-group-before-v3.test.ts).
  test('decodes a request encoded by kafkajs (v0-2: one member_id; v3: a list of members)', async () => {
    const members = version >= 3 ? { memberId: '', members: [{ memberId: 'member-a', groupInstanceId: 'pod-1', reason: null }] } : { memberId: 'member-a', members: [] };
    expect(decodeRequest(await kafkajsRequest(version, kafkajsArgs), version)).toEqual({ groupId: 'orders-consumers', ...members });
  });

  test('kafkajs decodes the response', async () => {
    const response: LeaveGroupResponse = {
      throttleTimeMs: 33,
      errorCode: 0,
      members: [
        { memberId: 'member-a', groupInstanceId: 'pod-1', errorCode: 0 },
        { memberId: 'member-z', groupInstanceId: null, errorCode: 25 },
      ],
    };
    const decoded = await kafkajsDecodeResponse(version, encodeResponse(version, response));
    const throttle = version === 1 ? { throttleTime: 33 } : version >= 2 ? { throttleTime: 0, clientSideThrottleTime: 33 } : {};
    const members = version >= 3 ? { members: response.members } : {};
    expect(decoded).toEqual({ errorCode: 0, ...throttle, ...members });
  });

  test('every truncation throws ProtocolError', async () => {
    const bytes = await kafkajsRequest(version, kafkajsArgs);
    expectEveryTruncationRejected(bytes, version);
  });

  test('mutated requests decode or throw ProtocolError', async () => {
    expectMutationsTotal(await kafkajsRequest(version, kafkajsArgs), version, 0xc0ffee + version);
  });

  test('absurd lengths throw ProtocolError', () => {
    expectRejected(bytesOf(new KafkaWriter().int16(0x7fff).string('m')), version); // group_id past the frame
    expectRejected(bytesOf(new KafkaWriter().int16(-1).string('m')), version); // null group_id
    if (version < 3) {
      expectRejected(bytesOf(new KafkaWriter().string('g').int16(-1)), version); // null member_id
      return;
    }
    const head = () => new KafkaWriter().string('g');
    expectRejected(bytesOf(head().int32(0x7fffffff)), version); // members count above the limit
    expectRejected(bytesOf(head().int32(100_000).string('m').int16(-1)), version); // count that cannot fit
    expectRejected(bytesOf(head().int32(-3)), version); // negative count
    expectRejected(bytesOf(head().int32(1).string('m').int16(0x7fff)), version); // group_instance_id past the frame
    expectRejected(bytesOf(head().int32(1).int16(-1).int16(-1)), version); // null member_id
  });
});
