import { describe, expect, test } from 'bun:test';
import { type LeaveGroupRequest, type LeaveGroupResponse, leaveGroupCodec as codec } from '../../../src/broker/apis/leave-group.ts';
import { KafkaReader } from '../../../src/broker/protocol/reader.ts';
import { KafkaWriter } from '../../../src/broker/protocol/writer.ts';
import { bytesOf, codecHarness, kafkajsEncode, kafkajsResponse } from '../../support/codec-harness.ts';

const VERSIONS = [0, 1, 2, 3];

// --- harness (test/support/codec-harness.ts): kafkajs as the real client, truncation and mutation as the hostile one ---

const { decodeRequest, encodeResponse, expectRejected, expectEveryTruncationRejected, expectMutationsTotal } = codecHarness(codec);

function kafkajsRequest(version: number, args: object): Promise<Uint8Array> {
  return kafkajsEncode('leaveGroup', version, args);
}

function kafkajsDecodeResponse(version: number, bytes: Buffer): Promise<Record<string, unknown>> {
  return kafkajsResponse('leaveGroup', version).decode(bytes);
}

// --- test-only encoders and decoders (the other side of the wire) ---

function encodeRequest(version: number, request: LeaveGroupRequest): Uint8Array {
  const writer = new KafkaWriter().string(request.groupId);
  if (version < 3) writer.string(request.members[0]?.memberId ?? '');
  else writer.array(request.members, (w, m) => w.string(m.memberId).nullableString(m.groupInstanceId));
  return bytesOf(writer);
}

function decodeResponse(version: number, bytes: Uint8Array): LeaveGroupResponse {
  const reader = new KafkaReader(bytes);
  const throttleTimeMs = version >= 1 ? reader.int32() : 0;
  const errorCode = reader.int16();
  const members =
    version >= 3 ? reader.array((r) => ({ memberId: r.string(), groupInstanceId: r.nullableString(), errorCode: r.int16() })) : [];
  expect(reader.remaining).toBe(0);
  return { throttleTimeMs, errorCode, members };
}

// --- tests ---

const kafkajsArgs = { groupId: 'orders-consumers', memberId: 'member-a', groupInstanceId: 'pod-1' };

test('advertises versions 0-3, below the first flexible version', () => {
  expect([codec.key, codec.name, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([13, 'LeaveGroup', 0, 3, 4]);
});

describe.each(VERSIONS)('LeaveGroup v%i', (version) => {
  test('decodes a request encoded by kafkajs (v0-2: one member, as a list of one)', async () => {
    expect(decodeRequest(await kafkajsRequest(version, kafkajsArgs), version)).toEqual({
      groupId: 'orders-consumers',
      members: [{ memberId: 'member-a', groupInstanceId: version >= 3 ? 'pod-1' : null }],
    });
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

  test('round trip', () => {
    const members = version >= 3 ? [{ memberId: '', groupInstanceId: 'static-a' }, { memberId: 'b', groupInstanceId: null }] : [{ memberId: 'b', groupInstanceId: null }];
    const request = { groupId: 'g', members };
    expect(decodeRequest(encodeRequest(version, request), version)).toEqual(request);
    const response: LeaveGroupResponse = {
      throttleTimeMs: version >= 1 ? 8 : 0,
      errorCode: 16,
      members: version >= 3 ? [{ memberId: 'b', groupInstanceId: null, errorCode: 25 }] : [],
    };
    expect(decodeResponse(version, encodeResponse(version, response))).toEqual(response);
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
