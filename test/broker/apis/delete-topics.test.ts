import { describe, expect, test } from 'bun:test';
import { type DeleteTopicsRequest, type DeleteTopicsResponse, deleteTopicsCodec as codec } from '../../../src/broker/apis/delete-topics.ts';
import { ProtocolError } from '../../../src/broker/protocol/errors.ts';
import { KafkaReader } from '../../../src/broker/protocol/reader.ts';
import { KafkaWriter } from '../../../src/broker/protocol/writer.ts';

const VERSIONS = [0, 1, 2, 3];
/** kafkajs 2.2.4 stops at v1; v2 and v3 have v1's bytes (v2: quota behaviour, v3: TOPIC_DELETION_DISABLED). */
const kafkajsVersion = (version: number) => Math.min(version, 1);

// --- harness: kafkajs as the real client, truncation and mutation as the hostile one ---

async function kafkajsRequest(version: number, args: object): Promise<Uint8Array> {
  const { request } = require('kafkajs/src/protocol/requests/deleteTopics').protocol({ version: kafkajsVersion(version) })(args);
  const buffer: Buffer = (await request.encode()).buffer;
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.length);
}

function kafkajsDecodeResponse(version: number, bytes: Buffer): Promise<Record<string, unknown>> {
  return require(`kafkajs/src/protocol/requests/deleteTopics/v${kafkajsVersion(version)}/response`).decode(bytes);
}

const bytesOf = (writer: KafkaWriter): Buffer => Buffer.concat(writer.chunks());

function decodeRequest(version: number, bytes: Uint8Array): DeleteTopicsRequest {
  const reader = new KafkaReader(bytes);
  const request = codec.decodeRequest(reader, version);
  expect(reader.remaining).toBe(0);
  return request;
}

function encodeResponse(version: number, response: DeleteTopicsResponse): Buffer {
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
    const request = decodeRequest(version, await kafkajsRequest(version, kafkajsArgs));
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
      expect(decodeRequest(version, encodeRequest(request))).toEqual(request);
    }
    const response = { throttleTimeMs: version >= 1 ? 9 : 0, responses: [{ name: 'a', errorCode: 0 }] };
    expect(decodeResponse(version, encodeResponse(version, response))).toEqual(response);
  });

  test('every truncation throws ProtocolError', async () => {
    const bytes = await kafkajsRequest(version, kafkajsArgs);
    for (let end = 0; end < bytes.length; end++) expectRejected(version, bytes.subarray(0, end));
  });

  test('mutated requests decode or throw ProtocolError', async () => {
    expectMutationsTotal(version, await kafkajsRequest(version, kafkajsArgs), 0xfeed + version);
  });

  test('absurd lengths throw ProtocolError', () => {
    expectRejected(version, bytesOf(new KafkaWriter().int32(0x7fffffff).int32(0))); // count above the limit
    expectRejected(version, bytesOf(new KafkaWriter().int32(100_000).string('t').int32(0))); // count that cannot fit
    expectRejected(version, bytesOf(new KafkaWriter().int32(-9).int32(0))); // negative count
    expectRejected(version, bytesOf(new KafkaWriter().int32(1).int16(0x7fff).int32(0))); // name past the frame
    expectRejected(version, bytesOf(new KafkaWriter().int32(1).int16(-1).int32(0))); // null name
  });
});
