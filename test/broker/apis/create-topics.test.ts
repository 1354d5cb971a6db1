import { describe, expect, test } from 'bun:test';
import { type CreateTopicsResponse, createTopicsCodec as codec } from '../../../src/broker/apis/create-topics.ts';
import { KafkaWriter } from '../../../src/protocol/writer.ts';
import { bytesOf, codecHarness, kafkajsEncode, kafkajsResponse } from '../../support/codec-harness.ts';

// v0-4 are the rigid versions (flexible from v5); every version is also checked against Kafka's own
// grammar in test/protocol/schema-codecs.test.ts.
const VERSIONS = [0, 1, 2, 3, 4];
/** kafkajs 2.2.4 stops at v3; v4 has v3's bytes (it only relaxes num_partitions/replication_factor, KIP-464). */
const kafkajsVersion = (version: number) => Math.min(version, 3);

// --- harness (test/support/codec-harness.ts): kafkajs as the real client, truncation and mutation as the hostile one ---

const { decodeRequest, encodeResponse, expectRejected, expectEveryTruncationRejected, expectMutationsTotal } = codecHarness(codec);

function kafkajsRequest(version: number, args: object): Promise<Uint8Array> {
  return kafkajsEncode('createTopics', kafkajsVersion(version), args);
}

function kafkajsDecodeResponse(version: number, bytes: Buffer): Promise<Record<string, unknown>> {
  return kafkajsResponse('createTopics', kafkajsVersion(version)).decode(bytes);
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

test('advertises versions 0-7, flexible from 5', () => {
  expect([codec.key, codec.name, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([19, 'CreateTopics', 0, 7, 5]);
});

describe.each(VERSIONS)('CreateTopics v%i', (version) => {
  test(`decodes a request encoded by kafkajs (its v${kafkajsVersion(version)} bytes)`, async () => {
    expect(decodeRequest(await kafkajsRequest(version, kafkajsArgs), version)).toEqual({
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

  test('every truncation throws ProtocolError', async () => {
    const bytes = await kafkajsRequest(version, kafkajsArgs);
    expectEveryTruncationRejected(bytes, version);
  });

  test('mutated requests decode or throw ProtocolError', async () => {
    expectMutationsTotal(await kafkajsRequest(version, kafkajsArgs), version, 0xdecade + version);
  });

  test('absurd lengths throw ProtocolError', () => {
    const tail = (w: KafkaWriter) => (version >= 1 ? w.int32(1000).boolean(false) : w.int32(1000));
    const topic = () => new KafkaWriter().int32(1).string('t').int32(1).int16(1);
    expectRejected(bytesOf(tail(new KafkaWriter().int32(0x7fffffff))), version); // topics count above the limit
    expectRejected(bytesOf(tail(new KafkaWriter().int32(1000))), version); // 1000 topics cannot fit in 4 or 5 bytes
    expectRejected(bytesOf(tail(new KafkaWriter().int32(-2))), version); // negative count
    expectRejected(bytesOf(tail(topic().int32(100_000).int32(0).int32(0))), version); // assignments that cannot fit
    expectRejected(bytesOf(tail(topic().int32(1).int32(0).int32(0x7fffffff).int32(0))), version); // broker_ids above the limit
    expectRejected(bytesOf(tail(topic().int32(1).int32(0).int32(3).int32(1).int32(0))), version); // broker_ids that cannot fit
    expectRejected(bytesOf(tail(topic().int32(0).int32(1).int16(-1).int16(-1))), version); // null config name
    expectRejected(bytesOf(tail(topic().int32(0).int32(1).string('k').int16(0x7fff))), version); // config value past the frame
    expectRejected(bytesOf(tail(new KafkaWriter().int32(1).int16(-1).int32(1).int16(1).int32(0).int32(0))), version); // null name
  });
});
