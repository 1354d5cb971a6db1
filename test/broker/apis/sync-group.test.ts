import { describe, expect, test } from 'bun:test';
import { type SyncGroupRequest, type SyncGroupResponse, syncGroupCodec as codec } from '../../../src/broker/apis/sync-group.ts';
import { ProtocolError } from '../../../src/broker/protocol/errors.ts';
import { KafkaReader } from '../../../src/broker/protocol/reader.ts';
import { KafkaWriter } from '../../../src/broker/protocol/writer.ts';

const VERSIONS = [0, 1, 2, 3];
const { MemberAssignment } = require('kafkajs/src/consumer/assignerProtocol');

// --- harness: kafkajs as the real client, truncation and mutation as the hostile one ---

async function kafkajsRequest(version: number, args: object): Promise<Uint8Array> {
  const { request } = require('kafkajs/src/protocol/requests/syncGroup').protocol({ version })(args);
  const buffer: Buffer = (await request.encode()).buffer;
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.length);
}

function kafkajsDecodeResponse(version: number, bytes: Buffer): Promise<Record<string, unknown>> {
  return require(`kafkajs/src/protocol/requests/syncGroup/v${version}/response`).decode(bytes);
}

const bytesOf = (writer: KafkaWriter): Buffer => Buffer.concat(writer.chunks());

function decodeRequest(version: number, bytes: Uint8Array): SyncGroupRequest {
  const reader = new KafkaReader(bytes);
  const request = codec.decodeRequest(reader, version);
  expect(reader.remaining).toBe(0);
  return request;
}

function encodeResponse(version: number, response: SyncGroupResponse): Buffer {
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

function encodeRequest(version: number, request: SyncGroupRequest): Uint8Array {
  const writer = new KafkaWriter().string(request.groupId).int32(request.generationId).string(request.memberId);
  if (version >= 3) writer.nullableString(request.groupInstanceId);
  writer.array(request.assignments, (w, a) => w.string(a.memberId).nullableBytes(a.assignment));
  return bytesOf(writer);
}

function decodeResponse(version: number, bytes: Uint8Array): SyncGroupResponse {
  const reader = new KafkaReader(bytes);
  const throttleTimeMs = version >= 1 ? reader.int32() : 0;
  const errorCode = reader.int16();
  const assignment = reader.nullableBytes();
  expect(reader.remaining).toBe(0);
  return { throttleTimeMs, errorCode, assignment: Uint8Array.from(assignment ?? []) };
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

test('advertises versions 0-3, below the first flexible version', () => {
  expect([codec.key, codec.name, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([14, 'SyncGroup', 0, 3, 4]);
});

describe.each(VERSIONS)('SyncGroup v%i', (version) => {
  test('decodes a leader request encoded by kafkajs; assignments stay zero-copy views', async () => {
    const bytes = await kafkajsRequest(version, leaderArgs);
    const request = decodeRequest(version, bytes);
    expect(request).toEqual({
      groupId: 'orders-consumers',
      generationId: 3,
      memberId: 'member-a',
      groupInstanceId: version >= 3 ? 'pod-a' : null,
      assignments: [
        { memberId: 'member-a', assignment: new Uint8Array(assignmentA) },
        { memberId: 'member-b', assignment: new Uint8Array(assignmentB) },
      ],
    });
    expect(request.assignments[0]?.assignment.buffer).toBe(bytes.buffer);
  });

  test('decodes a follower request (no assignments) encoded by kafkajs', async () => {
    const request = decodeRequest(version, await kafkajsRequest(version, followerArgs));
    expect(request).toEqual({ groupId: 'orders-consumers', generationId: 3, memberId: 'member-b', groupInstanceId: null, assignments: [] });
  });

  test('kafkajs decodes the response (and its assignment)', async () => {
    const decoded = await kafkajsDecodeResponse(version, encodeResponse(version, { throttleTimeMs: 90, errorCode: 0, assignment: assignmentB }));
    const throttle = version === 1 ? { throttleTime: 90 } : version >= 2 ? { throttleTime: 0, clientSideThrottleTime: 90 } : {};
    expect(decoded).toEqual({ errorCode: 0, memberAssignment: assignmentB, ...throttle });
    expect(MemberAssignment.decode(decoded.memberAssignment)).toEqual({ version: 1, assignment: { orders: [1, 3] }, userData: Buffer.from('sticky') });
  });

  test('round trip', () => {
    const request: SyncGroupRequest = {
      groupId: 'g',
      generationId: -1,
      memberId: '',
      groupInstanceId: version >= 3 ? 'static-1' : null,
      assignments: [{ memberId: 'm', assignment: new Uint8Array() }],
    };
    expect(decodeRequest(version, encodeRequest(version, request))).toEqual(request);
    const response = { throttleTimeMs: version >= 1 ? 5 : 0, errorCode: 22, assignment: new Uint8Array([1, 2, 3]) };
    expect(decodeResponse(version, encodeResponse(version, response))).toEqual(response);
  });

  test('every truncation throws ProtocolError', async () => {
    const bytes = await kafkajsRequest(version, leaderArgs);
    for (let end = 0; end < bytes.length; end++) expectRejected(version, bytes.subarray(0, end));
  });

  test('mutated requests decode or throw ProtocolError', async () => {
    expectMutationsTotal(version, await kafkajsRequest(version, leaderArgs), 0x51ed27 + version);
  });

  test('absurd lengths throw ProtocolError', () => {
    const head = () => {
      const writer = new KafkaWriter().string('g').int32(1).string('m');
      return version >= 3 ? writer.nullableString(null) : writer;
    };
    expectRejected(version, bytesOf(head().int32(0x7fffffff))); // assignments count above the limit
    expectRejected(version, bytesOf(head().int32(100_000).string('m').int32(0))); // count that cannot fit
    expectRejected(version, bytesOf(head().int32(-2))); // negative count
    expectRejected(version, bytesOf(head().int32(1).string('m').int32(0x7fffffff))); // assignment bytes past the frame
    expectRejected(version, bytesOf(head().int32(1).string('m').int32(-1))); // null assignment
    expectRejected(version, bytesOf(new KafkaWriter().int16(0x7fff).int32(1))); // group_id past the frame
  });
});
