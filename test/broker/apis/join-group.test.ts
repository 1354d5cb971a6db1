import { describe, expect, test } from 'bun:test';
import { type JoinGroupResponse, joinGroupCodec as codec } from '../../../src/broker/apis/join-group.ts';
import { KafkaWriter } from '../../../src/protocol/writer.ts';
import { bytesOf, codecHarness, kafkajsEncode, kafkajsResponse } from '../../support/codec-harness.ts';

// kafkajs speaks v0-5, the rigid versions (flexible from v6); every version is also checked against
// Kafka's own grammar in test/protocol/schema-codecs.test.ts.
const VERSIONS = [0, 1, 2, 3, 4, 5];
const { MemberMetadata } = require('kafkajs/src/consumer/assignerProtocol');

// --- harness (test/support/codec-harness.ts): kafkajs as the real client, truncation and mutation as the hostile one ---

const { decodeRequest, encodeResponse, expectRejected, expectEveryTruncationRejected, expectMutationsTotal } = codecHarness(codec);

function kafkajsRequest(version: number, args: object): Promise<Uint8Array> {
  return kafkajsEncode('joinGroup', version, args);
}

function kafkajsDecodeResponse(version: number, bytes: Buffer): Promise<Record<string, unknown>> {
  return kafkajsResponse('joinGroup', version).decode(bytes);
}

// --- tests ---

const rangeMetadata: Buffer = MemberMetadata.encode({ version: 1, topics: ['orders', 'payments'] });
const roundRobinMetadata: Buffer = MemberMetadata.encode({ version: 1, topics: ['orders'], userData: Buffer.from([9, 9]) });
const kafkajsArgs = {
  groupId: 'orders-consumers',
  sessionTimeout: 30_000,
  rebalanceTimeout: 60_000,
  memberId: '',
  groupInstanceId: 'pod-7',
  protocolType: 'consumer',
  groupProtocols: [
    { name: 'RangeAssigner', metadata: rangeMetadata },
    { name: 'RoundRobinAssigner', metadata: roundRobinMetadata },
  ],
};

const leaderResponse: JoinGroupResponse = {
  throttleTimeMs: 250,
  errorCode: 0,
  generationId: 12,
  protocolName: 'RangeAssigner',
  leader: 'member-a',
  memberId: 'member-a',
  members: [
    { memberId: 'member-a', groupInstanceId: 'pod-7', metadata: rangeMetadata },
    { memberId: 'member-b', groupInstanceId: null, metadata: roundRobinMetadata },
  ],
};

test('advertises versions 0-9, flexible from 6', () => {
  expect([codec.key, codec.name, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([11, 'JoinGroup', 0, 9, 6]);
});

describe.each(VERSIONS)('JoinGroup v%i', (version) => {
  test('decodes a request encoded by kafkajs; metadata stays a zero-copy view', async () => {
    const bytes = await kafkajsRequest(version, kafkajsArgs);
    const request = decodeRequest(bytes, version);
    expect(request).toEqual({
      groupId: 'orders-consumers',
      sessionTimeoutMs: 30_000,
      // v0 has no rebalance timeout: Kafka's default -1, and the handler bounds the rebalance by the session timeout.
      rebalanceTimeoutMs: version >= 1 ? 60_000 : -1,
      memberId: '',
      groupInstanceId: version >= 5 ? 'pod-7' : null,
      protocolType: 'consumer',
      protocols: [
        { name: 'RangeAssigner', metadata: new Uint8Array(rangeMetadata) },
        { name: 'RoundRobinAssigner', metadata: new Uint8Array(roundRobinMetadata) },
      ],
      reason: null,
    });
    expect(request.protocols[1]?.metadata.buffer).toBe(bytes.buffer);
    expect(MemberMetadata.decode(Buffer.from(request.protocols[1]?.metadata ?? []))).toEqual({ version: 1, topics: ['orders'], userData: Buffer.from([9, 9]) });
  });

  test('kafkajs decodes the leader response', async () => {
    const decoded = await kafkajsDecodeResponse(version, encodeResponse(version, leaderResponse));
    const throttle = version === 2 ? { throttleTime: 250 } : version >= 3 ? { throttleTime: 0, clientSideThrottleTime: 250 } : {};
    expect(decoded).toEqual({
      errorCode: 0,
      generationId: 12,
      groupProtocol: 'RangeAssigner',
      leaderId: 'member-a',
      memberId: 'member-a',
      members: leaderResponse.members.map((m) => ({
        memberId: m.memberId,
        ...(version >= 5 ? { groupInstanceId: m.groupInstanceId } : {}),
        memberMetadata: m.metadata,
      })),
      ...throttle,
    });
  });

  test('kafkajs decodes a follower error response', async () => {
    const response = { ...leaderResponse, errorCode: 79, generationId: -1, protocolName: '', leader: '', memberId: 'assigned-id', members: [] };
    const decoded = await kafkajsDecodeResponse(version, encodeResponse(version, response));
    expect(decoded).toMatchObject({ errorCode: 79, generationId: -1, groupProtocol: '', leaderId: '', memberId: 'assigned-id', members: [] });
  });

  test('every truncation throws ProtocolError', async () => {
    const bytes = await kafkajsRequest(version, kafkajsArgs);
    expectEveryTruncationRejected(bytes, version);
  });

  test('mutated requests decode or throw ProtocolError', async () => {
    expectMutationsTotal(await kafkajsRequest(version, kafkajsArgs), version, 0x1badb002 + version);
  });

  test('absurd lengths throw ProtocolError', () => {
    const head = () => {
      const writer = new KafkaWriter().string('g').int32(1000);
      if (version >= 1) writer.int32(1000);
      writer.string('');
      if (version >= 5) writer.nullableString(null);
      return writer.string('consumer');
    };
    expectRejected(bytesOf(head().int32(0x7fffffff)), version); // protocols count above the limit
    expectRejected(bytesOf(head().int32(50_000).string('x').int32(0)), version); // count that cannot fit
    expectRejected(bytesOf(head().int32(-5)), version); // negative count
    expectRejected(bytesOf(head().int32(1).string('range').int32(0x7fffffff)), version); // metadata past the frame
    expectRejected(bytesOf(head().int32(1).string('range').int32(-1)), version); // null metadata
    expectRejected(bytesOf(head().int32(1).int16(0x7fff).int32(0)), version); // protocol name past the frame
    const timeouts = new KafkaWriter().string('g').int32(1000);
    if (version >= 1) timeouts.int32(1000);
    expectRejected(bytesOf(timeouts.int16(-1).string('consumer').int32(0)), version); // null member_id
  });
});
