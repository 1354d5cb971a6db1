import { describe, expect, test } from 'bun:test';
import { type JoinGroupRequest, type JoinGroupResponse, joinGroupCodec as codec } from '../../../src/broker/apis/join-group.ts';
import { ProtocolError } from '../../../src/broker/protocol/errors.ts';
import { KafkaReader } from '../../../src/broker/protocol/reader.ts';
import { KafkaWriter } from '../../../src/broker/protocol/writer.ts';

const VERSIONS = [0, 1, 2, 3, 4, 5];
const { MemberMetadata } = require('kafkajs/src/consumer/assignerProtocol');

// --- harness: kafkajs as the real client, truncation and mutation as the hostile one ---

async function kafkajsRequest(version: number, args: object): Promise<Uint8Array> {
  const { request } = require('kafkajs/src/protocol/requests/joinGroup').protocol({ version })(args);
  const buffer: Buffer = (await request.encode()).buffer;
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.length);
}

function kafkajsDecodeResponse(version: number, bytes: Buffer): Promise<Record<string, unknown>> {
  return require(`kafkajs/src/protocol/requests/joinGroup/v${version}/response`).decode(bytes);
}

const bytesOf = (writer: KafkaWriter): Buffer => Buffer.concat(writer.chunks());

function decodeRequest(version: number, bytes: Uint8Array): JoinGroupRequest {
  const reader = new KafkaReader(bytes);
  const request = codec.decodeRequest(reader, version);
  expect(reader.remaining).toBe(0);
  return request;
}

function encodeResponse(version: number, response: JoinGroupResponse): Buffer {
  const writer = new KafkaWriter();
  codec.encodeResponse(writer, version, response);
  return bytesOf(writer);
}

function expectRejected(version: number, bytes: Uint8Array): void {
  expect(() => codec.decodeRequest(new KafkaReader(bytes), version)).toThrow(ProtocolError);
}

/** Seeded byte mutations: decoding either succeeds or throws ProtocolError, nothing else. */
function expectMutationsTotal(version: number, bytes: Uint8Array, seed: number): void {
  let state = seed;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
  const interesting = [0x00, 0x7f, 0x80, 0xff];
  for (let round = 0; round < 300; round++) {
    const mutated = Uint8Array.from(bytes);
    for (let i = 0, n = 1 + (next() % 3); i < n; i++) {
      mutated[next() % mutated.length] = next() % 2 === 0 ? (interesting[next() % 4] ?? 0) : next() & 0xff;
    }
    try {
      codec.decodeRequest(new KafkaReader(mutated), version);
    } catch (error) {
      expect(error).toBeInstanceOf(ProtocolError);
    }
  }
}

// --- test-only encoders and decoders (the other side of the wire) ---

function encodeRequest(version: number, request: JoinGroupRequest): Uint8Array {
  const writer = new KafkaWriter().string(request.groupId).int32(request.sessionTimeoutMs);
  if (version >= 1) writer.int32(request.rebalanceTimeoutMs);
  writer.string(request.memberId);
  if (version >= 5) writer.nullableString(request.groupInstanceId);
  writer.string(request.protocolType);
  writer.array(request.protocols, (w, p) => w.string(p.name).nullableBytes(p.metadata));
  return bytesOf(writer);
}

function decodeResponse(version: number, bytes: Uint8Array): JoinGroupResponse {
  const reader = new KafkaReader(bytes);
  const throttleTimeMs = version >= 2 ? reader.int32() : 0;
  const errorCode = reader.int16();
  const generationId = reader.int32();
  const protocolName = reader.string();
  const leader = reader.string();
  const memberId = reader.string();
  const members = reader.array((r) => {
    const id = r.string();
    const groupInstanceId = version >= 5 ? r.nullableString() : null;
    return { memberId: id, groupInstanceId, metadata: Uint8Array.from(r.nullableBytes() ?? []) };
  });
  expect(reader.remaining).toBe(0);
  return { throttleTimeMs, errorCode, generationId, protocolName, leader, memberId, members };
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

test('advertises versions 0-5, below the first flexible version', () => {
  expect([codec.key, codec.name, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([11, 'JoinGroup', 0, 5, 6]);
});

describe.each(VERSIONS)('JoinGroup v%i', (version) => {
  test('decodes a request encoded by kafkajs; metadata stays a zero-copy view', async () => {
    const bytes = await kafkajsRequest(version, kafkajsArgs);
    const request = decodeRequest(version, bytes);
    expect(request).toEqual({
      groupId: 'orders-consumers',
      sessionTimeoutMs: 30_000,
      rebalanceTimeoutMs: version >= 1 ? 60_000 : 30_000,
      memberId: '',
      groupInstanceId: version >= 5 ? 'pod-7' : null,
      protocolType: 'consumer',
      protocols: [
        { name: 'RangeAssigner', metadata: new Uint8Array(rangeMetadata) },
        { name: 'RoundRobinAssigner', metadata: new Uint8Array(roundRobinMetadata) },
      ],
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

  test('round trip', () => {
    const request: JoinGroupRequest = {
      groupId: 'g',
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: version >= 1 ? 45_000 : 10_000,
      memberId: 'm-1',
      groupInstanceId: version >= 5 ? 'i' : null,
      protocolType: 'connect',
      protocols: [{ name: 'default', metadata: new Uint8Array() }],
    };
    expect(decodeRequest(version, encodeRequest(version, request))).toEqual(request);
    const expected = {
      ...leaderResponse,
      throttleTimeMs: version >= 2 ? leaderResponse.throttleTimeMs : 0,
      members: leaderResponse.members.map((m) => ({ ...m, groupInstanceId: version >= 5 ? m.groupInstanceId : null, metadata: new Uint8Array(m.metadata) })),
    };
    expect(decodeResponse(version, encodeResponse(version, leaderResponse))).toEqual(expected);
  });

  test('every truncation throws ProtocolError', async () => {
    const bytes = await kafkajsRequest(version, kafkajsArgs);
    for (let end = 0; end < bytes.length; end++) expectRejected(version, bytes.subarray(0, end));
  });

  test('mutated requests decode or throw ProtocolError', async () => {
    expectMutationsTotal(version, await kafkajsRequest(version, kafkajsArgs), 0x1badb002 + version);
  });

  test('absurd lengths throw ProtocolError', () => {
    const head = () => {
      const writer = new KafkaWriter().string('g').int32(1000);
      if (version >= 1) writer.int32(1000);
      writer.string('');
      if (version >= 5) writer.nullableString(null);
      return writer.string('consumer');
    };
    expectRejected(version, bytesOf(head().int32(0x7fffffff))); // protocols count above the limit
    expectRejected(version, bytesOf(head().int32(50_000).string('x').int32(0))); // count that cannot fit
    expectRejected(version, bytesOf(head().int32(-5))); // negative count
    expectRejected(version, bytesOf(head().int32(1).string('range').int32(0x7fffffff))); // metadata past the frame
    expectRejected(version, bytesOf(head().int32(1).string('range').int32(-1))); // null metadata
    expectRejected(version, bytesOf(head().int32(1).int16(0x7fff).int32(0))); // protocol name past the frame
    const timeouts = new KafkaWriter().string('g').int32(1000);
    if (version >= 1) timeouts.int32(1000);
    expectRejected(version, bytesOf(timeouts.int16(-1).string('consumer').int32(0))); // null member_id
  });
});
