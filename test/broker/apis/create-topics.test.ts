import { describe, expect, test } from 'bun:test';
import { type CreateTopicsRequest, type CreateTopicsResponse, createTopicsCodec as codec } from '../../../src/broker/apis/create-topics.ts';
import { ProtocolError } from '../../../src/broker/protocol/errors.ts';
import { KafkaReader } from '../../../src/broker/protocol/reader.ts';
import { KafkaWriter } from '../../../src/broker/protocol/writer.ts';

const VERSIONS = [0, 1, 2, 3, 4];
/** kafkajs 2.2.4 stops at v3; v4 has v3's bytes (it only relaxes num_partitions/replication_factor, KIP-464). */
const kafkajsVersion = (version: number) => Math.min(version, 3);

// --- harness: kafkajs as the real client, truncation and mutation as the hostile one ---

async function kafkajsRequest(version: number, args: object): Promise<Uint8Array> {
  const { request } = require('kafkajs/src/protocol/requests/createTopics').protocol({ version: kafkajsVersion(version) })(args);
  const buffer: Buffer = (await request.encode()).buffer;
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.length);
}

function kafkajsDecodeResponse(version: number, bytes: Buffer): Promise<Record<string, unknown>> {
  return require(`kafkajs/src/protocol/requests/createTopics/v${kafkajsVersion(version)}/response`).decode(bytes);
}

const bytesOf = (writer: KafkaWriter): Buffer => Buffer.concat(writer.chunks());

function decodeRequest(version: number, bytes: Uint8Array): CreateTopicsRequest {
  const reader = new KafkaReader(bytes);
  const request = codec.decodeRequest(reader, version);
  expect(reader.remaining).toBe(0);
  return request;
}

function encodeResponse(version: number, response: CreateTopicsResponse): Buffer {
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

function encodeRequest(version: number, request: CreateTopicsRequest): Uint8Array {
  const writer = new KafkaWriter().array(request.topics, (w, topic) => {
    w.string(topic.name).int32(topic.numPartitions).int16(topic.replicationFactor);
    w.array(topic.assignments, (aw, a) => aw.int32(a.partitionIndex).array(a.brokerIds, (bw, id) => bw.int32(id)));
    w.array(topic.configs, (cw, c) => cw.string(c.name).nullableString(c.value));
  });
  writer.int32(request.timeoutMs);
  if (version >= 1) writer.boolean(request.validateOnly);
  return bytesOf(writer);
}

function decodeResponse(version: number, bytes: Uint8Array): CreateTopicsResponse {
  const reader = new KafkaReader(bytes);
  const throttleTimeMs = version >= 2 ? reader.int32() : 0;
  const topics = reader.array((r) => ({ name: r.string(), errorCode: r.int16(), errorMessage: version >= 1 ? r.nullableString() : null }));
  expect(reader.remaining).toBe(0);
  return { throttleTimeMs, topics };
}

// --- tests ---

const kafkajsArgs = {
  timeout: 15_000,
  validateOnly: true,
  topics: [
    {
      topic: 'orders',
      numPartitions: 6,
      replicationFactor: 3,
      configEntries: [
        { name: 'cleanup.policy', value: 'compact' },
        { name: 'retention.ms', value: null },
      ],
    },
    {
      topic: 'payments',
      replicaAssignment: [
        { partition: 0, replicas: [1, 2, 3] },
        { partition: 1, replicas: [2, 3, 1] },
      ],
    },
  ],
};

test('advertises versions 0-4, below the first flexible version', () => {
  expect([codec.key, codec.name, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([19, 'CreateTopics', 0, 4, 5]);
});

describe.each(VERSIONS)('CreateTopics v%i', (version) => {
  test(`decodes a request encoded by kafkajs (its v${kafkajsVersion(version)} bytes)`, async () => {
    expect(decodeRequest(version, await kafkajsRequest(version, kafkajsArgs))).toEqual({
      topics: [
        {
          name: 'orders',
          numPartitions: 6,
          replicationFactor: 3,
          assignments: [],
          configs: [
            { name: 'cleanup.policy', value: 'compact' },
            { name: 'retention.ms', value: null },
          ],
        },
        {
          name: 'payments',
          numPartitions: -1,
          replicationFactor: -1,
          assignments: [
            { partitionIndex: 0, brokerIds: [1, 2, 3] },
            { partitionIndex: 1, brokerIds: [2, 3, 1] },
          ],
          configs: [],
        },
      ],
      timeoutMs: 15_000,
      validateOnly: version >= 1,
    });
  });

  test(`kafkajs decodes the response (its v${kafkajsVersion(version)} decoder)`, async () => {
    const response: CreateTopicsResponse = {
      throttleTimeMs: 70,
      topics: [
        { name: 'payments', errorCode: 36, errorMessage: "Topic 'payments' already exists." },
        { name: 'orders', errorCode: 0, errorMessage: null },
      ],
    };
    const decoded = await kafkajsDecodeResponse(version, encodeResponse(version, response));
    const throttle = version === 2 ? { throttleTime: 70 } : version >= 3 ? { throttleTime: 0, clientSideThrottleTime: 70 } : {};
    const message = (text: string | null) => (version >= 1 ? { errorMessage: text } : {});
    expect(decoded).toEqual({
      ...throttle,
      topicErrors: [
        { topic: 'orders', errorCode: 0, ...message(null) },
        { topic: 'payments', errorCode: 36, ...message("Topic 'payments' already exists.") },
      ],
    });
  });

  test('round trip', () => {
    const request: CreateTopicsRequest = {
      topics: [
        { name: 'a', numPartitions: 1, replicationFactor: 1, assignments: [{ partitionIndex: 0, brokerIds: [] }], configs: [{ name: 'x', value: '' }] },
        { name: 'ü-topic', numPartitions: -1, replicationFactor: -1, assignments: [], configs: [] },
      ],
      timeoutMs: 0,
      validateOnly: version >= 1,
    };
    expect(decodeRequest(version, encodeRequest(version, request))).toEqual(request);
    const response: CreateTopicsResponse = {
      throttleTimeMs: version >= 2 ? 1 : 0,
      topics: [{ name: 'a', errorCode: 37, errorMessage: version >= 1 ? 'Number of partitions must be larger than 0.' : null }],
    };
    expect(decodeResponse(version, encodeResponse(version, response))).toEqual(response);
  });

  test('every truncation throws ProtocolError', async () => {
    const bytes = await kafkajsRequest(version, kafkajsArgs);
    for (let end = 0; end < bytes.length; end++) expectRejected(version, bytes.subarray(0, end));
  });

  test('mutated requests decode or throw ProtocolError', async () => {
    expectMutationsTotal(version, await kafkajsRequest(version, kafkajsArgs), 0xdecade + version);
  });

  test('absurd lengths throw ProtocolError', () => {
    const tail = (w: KafkaWriter) => (version >= 1 ? w.int32(1000).boolean(false) : w.int32(1000));
    const topic = () => new KafkaWriter().int32(1).string('t').int32(1).int16(1);
    expectRejected(version, bytesOf(tail(new KafkaWriter().int32(0x7fffffff)))); // topics count above the limit
    expectRejected(version, bytesOf(tail(new KafkaWriter().int32(1000)))); // 1000 topics cannot fit in 4 or 5 bytes
    expectRejected(version, bytesOf(tail(new KafkaWriter().int32(-2)))); // negative count
    expectRejected(version, bytesOf(tail(topic().int32(100_000).int32(0).int32(0)))); // assignments that cannot fit
    expectRejected(version, bytesOf(tail(topic().int32(1).int32(0).int32(0x7fffffff).int32(0)))); // broker_ids above the limit
    expectRejected(version, bytesOf(tail(topic().int32(1).int32(0).int32(3).int32(1).int32(0)))); // broker_ids that cannot fit
    expectRejected(version, bytesOf(tail(topic().int32(0).int32(1).int16(-1).int16(-1)))); // null config name
    expectRejected(version, bytesOf(tail(topic().int32(0).int32(1).string('k').int16(0x7fff)))); // config value past the frame
    expectRejected(version, bytesOf(tail(new KafkaWriter().int32(1).int16(-1).int32(1).int16(1).int32(0).int32(0)))); // null name
  });
});
