import { describe, expect, test } from 'bun:test';
import { syncGroupCodec as codec } from '../../../src/broker/apis/sync-group.ts';
import { KafkaWriter } from '../../../src/protocol/writer.ts';
import { bytesOf, codecHarness, kafkajsEncode, kafkajsResponse } from '../../support/codec-harness.ts';

// kafkajs speaks v0-3, the rigid versions (flexible from v4); every version is also checked against
// Kafka's own grammar in test/protocol/schema-codecs.test.ts.
const VERSIONS = [0, 1, 2, 3];
const { MemberAssignment } = require('kafkajs/src/consumer/assignerProtocol');

// --- harness (test/support/codec-harness.ts): kafkajs as the real client, truncation and mutation as the hostile one ---

const { decodeRequest, encodeResponse, expectRejected, expectEveryTruncationRejected, expectMutationsTotal } = codecHarness(codec);

function kafkajsRequest(version: number, args: object): Promise<Uint8Array> {
  return kafkajsEncode('syncGroup', version, args);
}

function kafkajsDecodeResponse(version: number, bytes: Buffer): Promise<Record<string, unknown>> {
  return kafkajsResponse('syncGroup', version).decode(bytes);
}

// --- tests ---

const assignmentA: Buffer = MemberAssignment.encode({ version: 1, assignment: { orders: [0, 2, 4], payments: [1] } });
const assignmentB: Buffer = MemberAssignment.encode({ version: 1, assignment: { orders: [1, 3] }, userData: Buffer.from('sticky') });
const leaderArgs = {
  groupId: 'orders-consumers',
  generationId: 3,
  memberId: 'member-a',
  groupInstanceId: 'pod-a',
  groupAssignment: [
    { memberId: 'member-a', memberAssignment: assignmentA },
    { memberId: 'member-b', memberAssignment: assignmentB },
  ],
};
const followerArgs = { ...leaderArgs, memberId: 'member-b', groupInstanceId: null, groupAssignment: [] };

test('advertises versions 0-5, flexible from 4', () => {
  expect([codec.key, codec.name, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([14, 'SyncGroup', 0, 5, 4]);
});

describe.each(VERSIONS)('SyncGroup v%i', (version) => {
  test('decodes a leader request encoded by kafkajs; assignments stay zero-copy views', async () => {
    const bytes = await kafkajsRequest(version, leaderArgs);
    const request = decodeRequest(bytes, version);
    expect(request).toEqual({
      groupId: 'orders-consumers',
      generationId: 3,
      memberId: 'member-a',
      groupInstanceId: version >= 3 ? 'pod-a' : null,
      protocolType: null,
      protocolName: null,
      assignments: [
        { memberId: 'member-a', assignment: new Uint8Array(assignmentA) },
        { memberId: 'member-b', assignment: new Uint8Array(assignmentB) },
      ],
    });
    expect(request.assignments[0]?.assignment.buffer).toBe(bytes.buffer);
  });

  test('decodes a follower request (no assignments) encoded by kafkajs', async () => {
    const request = decodeRequest(await kafkajsRequest(version, followerArgs), version);
    expect(request).toEqual({ groupId: 'orders-consumers', generationId: 3, memberId: 'member-b', groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] });
  });

  test('kafkajs decodes the response (and its assignment)', async () => {
    const decoded = await kafkajsDecodeResponse(version, encodeResponse(version, { throttleTimeMs: 90, errorCode: 0, assignment: assignmentB }));
    const throttle = version === 1 ? { throttleTime: 90 } : version >= 2 ? { throttleTime: 0, clientSideThrottleTime: 90 } : {};
    expect(decoded).toEqual({ errorCode: 0, memberAssignment: assignmentB, ...throttle });
    expect(MemberAssignment.decode(decoded.memberAssignment)).toEqual({ version: 1, assignment: { orders: [1, 3] }, userData: Buffer.from('sticky') });
  });

  test('every truncation throws ProtocolError', async () => {
    const bytes = await kafkajsRequest(version, leaderArgs);
    expectEveryTruncationRejected(bytes, version);
  });

  test('mutated requests decode or throw ProtocolError', async () => {
    expectMutationsTotal(await kafkajsRequest(version, leaderArgs), version, 0x51ed27 + version);
  });

  test('absurd lengths throw ProtocolError', () => {
    const head = () => {
      const writer = new KafkaWriter().string('g').int32(1).string('m');
      return version >= 3 ? writer.nullableString(null) : writer;
    };
    expectRejected(bytesOf(head().int32(0x7fffffff)), version); // assignments count above the limit
    expectRejected(bytesOf(head().int32(100_000).string('m').int32(0)), version); // count that cannot fit
    expectRejected(bytesOf(head().int32(-2)), version); // negative count
    expectRejected(bytesOf(head().int32(1).string('m').int32(0x7fffffff)), version); // assignment bytes past the frame
    expectRejected(bytesOf(head().int32(1).string('m').int32(-1)), version); // null assignment
    expectRejected(bytesOf(new KafkaWriter().int16(0x7fff).int32(1)), version); // group_id past the frame
  });
});
