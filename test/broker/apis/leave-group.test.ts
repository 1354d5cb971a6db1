import { describe, expect, test } from 'bun:test';
import { type LeaveGroupRequest, type LeaveGroupResponse, leaveGroupCodec as codec } from '../../../src/broker/apis/leave-group.ts';
import { ProtocolError } from '../../../src/broker/protocol/errors.ts';
import { KafkaReader } from '../../../src/broker/protocol/reader.ts';
import { KafkaWriter } from '../../../src/broker/protocol/writer.ts';

const VERSIONS = [0, 1, 2, 3];

// --- harness: kafkajs as the real client, truncation and mutation as the hostile one ---

async function kafkajsRequest(version: number, args: object): Promise<Uint8Array> {
  const { request } = require('kafkajs/src/protocol/requests/leaveGroup').protocol({ version })(args);
  const buffer: Buffer = (await request.encode()).buffer;
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.length);
}

function kafkajsDecodeResponse(version: number, bytes: Buffer): Promise<Record<string, unknown>> {
  return require(`kafkajs/src/protocol/requests/leaveGroup/v${version}/response`).decode(bytes);
}

const bytesOf = (writer: KafkaWriter): Buffer => Buffer.concat(writer.chunks());

function decodeRequest(version: number, bytes: Uint8Array): LeaveGroupRequest {
  const reader = new KafkaReader(bytes);
  const request = codec.decodeRequest(reader, version);
  expect(reader.remaining).toBe(0);
  return request;
}

function encodeResponse(version: number, response: LeaveGroupResponse): Buffer {
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
    expect(decodeRequest(version, await kafkajsRequest(version, kafkajsArgs))).toEqual({
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
    expect(decodeRequest(version, encodeRequest(version, request))).toEqual(request);
    const response: LeaveGroupResponse = {
      throttleTimeMs: version >= 1 ? 8 : 0,
      errorCode: 16,
      members: version >= 3 ? [{ memberId: 'b', groupInstanceId: null, errorCode: 25 }] : [],
    };
    expect(decodeResponse(version, encodeResponse(version, response))).toEqual(response);
  });

  test('every truncation throws ProtocolError', async () => {
    const bytes = await kafkajsRequest(version, kafkajsArgs);
    for (let end = 0; end < bytes.length; end++) expectRejected(version, bytes.subarray(0, end));
  });

  test('mutated requests decode or throw ProtocolError', async () => {
    expectMutationsTotal(version, await kafkajsRequest(version, kafkajsArgs), 0xc0ffee + version);
  });

  test('absurd lengths throw ProtocolError', () => {
    expectRejected(version, bytesOf(new KafkaWriter().int16(0x7fff).string('m'))); // group_id past the frame
    expectRejected(version, bytesOf(new KafkaWriter().int16(-1).string('m'))); // null group_id
    if (version < 3) {
      expectRejected(version, bytesOf(new KafkaWriter().string('g').int16(-1))); // null member_id
      return;
    }
    const head = () => new KafkaWriter().string('g');
    expectRejected(version, bytesOf(head().int32(0x7fffffff))); // members count above the limit
    expectRejected(version, bytesOf(head().int32(100_000).string('m').int16(-1))); // count that cannot fit
    expectRejected(version, bytesOf(head().int32(-3))); // negative count
    expectRejected(version, bytesOf(head().int32(1).string('m').int16(0x7fff))); // group_instance_id past the frame
    expectRejected(version, bytesOf(head().int32(1).int16(-1).int16(-1))); // null member_id
  });
});
