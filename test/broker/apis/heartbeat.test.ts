import { describe, expect, test } from 'bun:test';
import { type HeartbeatRequest, type HeartbeatResponse, heartbeatCodec as codec } from '../../../src/broker/apis/heartbeat.ts';
import { ProtocolError } from '../../../src/broker/protocol/errors.ts';
import { KafkaReader } from '../../../src/broker/protocol/reader.ts';
import { KafkaWriter } from '../../../src/broker/protocol/writer.ts';

const VERSIONS = [0, 1, 2, 3];

// --- harness: kafkajs as the real client, truncation and mutation as the hostile one ---

async function kafkajsRequest(version: number, args: object): Promise<Uint8Array> {
  const { request } = require('kafkajs/src/protocol/requests/heartbeat').protocol({ version })(args);
  const buffer: Buffer = (await request.encode()).buffer;
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.length);
}

function kafkajsDecodeResponse(version: number, bytes: Buffer): Promise<Record<string, unknown>> {
  return require(`kafkajs/src/protocol/requests/heartbeat/v${version}/response`).decode(bytes);
}

const bytesOf = (writer: KafkaWriter): Buffer => Buffer.concat(writer.chunks());

function decodeRequest(version: number, bytes: Uint8Array): HeartbeatRequest {
  const reader = new KafkaReader(bytes);
  const request = codec.decodeRequest(reader, version);
  expect(reader.remaining).toBe(0);
  return request;
}

function encodeResponse(version: number, response: HeartbeatResponse): Buffer {
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

function encodeRequest(version: number, request: HeartbeatRequest): Uint8Array {
  const writer = new KafkaWriter().string(request.groupId).int32(request.generationId).string(request.memberId);
  if (version >= 3) writer.nullableString(request.groupInstanceId);
  return bytesOf(writer);
}

function decodeResponse(version: number, bytes: Uint8Array): HeartbeatResponse {
  const reader = new KafkaReader(bytes);
  const throttleTimeMs = version >= 1 ? reader.int32() : 0;
  const response = { throttleTimeMs, errorCode: reader.int16() };
  expect(reader.remaining).toBe(0);
  return response;
}

// --- tests ---

const kafkajsArgs = { groupId: 'orders-consumers', groupGenerationId: 7, memberId: 'rdkafka-1f2e', groupInstanceId: 'pod-3' };

test('advertises versions 0-3, below the first flexible version', () => {
  expect([codec.key, codec.name, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([12, 'Heartbeat', 0, 3, 4]);
});

describe.each(VERSIONS)('Heartbeat v%i', (version) => {
  const expected: HeartbeatRequest = {
    groupId: 'orders-consumers',
    generationId: 7,
    memberId: 'rdkafka-1f2e',
    groupInstanceId: version >= 3 ? 'pod-3' : null,
  };

  test('decodes a request encoded by kafkajs', async () => {
    expect(decodeRequest(version, await kafkajsRequest(version, kafkajsArgs))).toEqual(expected);
  });

  test('kafkajs decodes the response', async () => {
    const decoded = await kafkajsDecodeResponse(version, encodeResponse(version, { throttleTimeMs: 150, errorCode: 27 }));
    const throttle = version === 1 ? { throttleTime: 150 } : version >= 2 ? { throttleTime: 0, clientSideThrottleTime: 150 } : {};
    expect(decoded).toEqual({ errorCode: 27, ...throttle });
  });

  test('round trip', () => {
    expect(decodeRequest(version, encodeRequest(version, expected))).toEqual(expected);
    const nullInstance = { ...expected, groupId: '', memberId: '', generationId: -1, groupInstanceId: null };
    expect(decodeRequest(version, encodeRequest(version, nullInstance))).toEqual(nullInstance);
    const response = { throttleTimeMs: version >= 1 ? 42 : 0, errorCode: 25 };
    expect(decodeResponse(version, encodeResponse(version, response))).toEqual(response);
  });

  test('every truncation throws ProtocolError', async () => {
    const bytes = await kafkajsRequest(version, kafkajsArgs);
    for (let end = 0; end < bytes.length; end++) expectRejected(version, bytes.subarray(0, end));
  });

  test('mutated requests decode or throw ProtocolError', async () => {
    expectMutationsTotal(version, await kafkajsRequest(version, kafkajsArgs), 0x9e3779b9 + version);
  });

  test('absurd lengths throw ProtocolError', () => {
    expectRejected(version, bytesOf(new KafkaWriter().int16(0x7fff).int32(0))); // group_id runs past the frame
    expectRejected(version, bytesOf(new KafkaWriter().int16(-1).int32(0).string('m'))); // null group_id
    expectRejected(version, bytesOf(new KafkaWriter().string('g').int32(0).int16(-7))); // negative member_id
    if (version >= 3) expectRejected(version, bytesOf(new KafkaWriter().string('g').int32(0).string('m').int16(0x7fff)));
  });
});
