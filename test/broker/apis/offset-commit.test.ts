import { describe, expect, test } from 'bun:test';
import { type OffsetCommitRequest, type OffsetCommitResponse, offsetCommitCodec } from '../../../src/broker/apis/offset-commit.ts';
import { KafkaReader } from '../../../src/broker/protocol/reader.ts';
import { KafkaWriter } from '../../../src/broker/protocol/writer.ts';
import { bytesOf, codecHarness, kafkajsBytes, kafkajsResponse, kafkajsVersionRequest } from '../../support/codec-harness.ts';

// kafkajs 2.2.4's own encoders and decoders (test/support/codec-harness.ts): the bytes a real client sends and the way it reads ours.
// kafkajs stops at v5; v6 and v7 are checked against a test-only encoder written from Kafka's schema.
const VERSIONS = Array.from({ length: offsetCommitCodec.maxVersion + 1 }, (_, version) => version);
const KAFKAJS_VERSIONS = [0, 1, 2, 3, 4, 5];
const COMMIT_TIMESTAMP_MS = 1_700_000_000_123;

const { decodeRequest, encodeResponse, expectRejected, expectEveryTruncationRejected } = codecHarness(offsetCommitCodec);

const KAFKAJS_ARGS = {
  groupId: 'billing-consumers',
  groupGenerationId: 7,
  memberId: 'rdkafka-0b7c1f',
  retentionTime: 86_400_000,
  topics: [
    {
      topic: 'orders',
      partitions: [
        { partition: 0, offset: '12345678901', timestamp: COMMIT_TIMESTAMP_MS, metadata: 'meta-ü' },
        { partition: 4, offset: '0', timestamp: COMMIT_TIMESTAMP_MS, metadata: null },
      ],
    },
    { topic: 'nothing', partitions: [] },
  ],
};

function kafkajsRequest(version: number, args: object = KAFKAJS_ARGS): Promise<Uint8Array> {
  return kafkajsBytes(kafkajsVersionRequest('offsetCommit', version, args));
}

function expectedFromKafkajs(version: number): OffsetCommitRequest {
  return {
    groupId: 'billing-consumers',
    generationId: version >= 1 ? 7 : -1,
    memberId: version >= 1 ? 'rdkafka-0b7c1f' : '',
    groupInstanceId: null,
    retentionTimeMs: version >= 2 && version <= 4 ? 86_400_000 : -1,
    topics: KAFKAJS_ARGS.topics.map((topic) => ({
      name: topic.topic,
      partitions: topic.partitions.map((p) => ({
        partitionIndex: p.partition,
        committedOffset: Number(p.offset),
        committedLeaderEpoch: -1,
        commitTimestamp: version === 1 ? COMMIT_TIMESTAMP_MS : -1,
        committedMetadata: p.metadata,
      })),
    })),
  };
}

/** Every field v7 carries: what Kafka's Java client (and librdkafka) sends. */
const FULL_REQUEST: OffsetCommitRequest = {
  groupId: 'g',
  generationId: 0x7fff_ffff,
  memberId: 'member-1',
  groupInstanceId: 'static-instance-3',
  retentionTimeMs: 3_600_000,
  topics: [
    {
      name: 'orders',
      partitions: [
        { partitionIndex: 2, committedOffset: Number.MAX_SAFE_INTEGER, committedLeaderEpoch: 11, commitTimestamp: COMMIT_TIMESTAMP_MS, committedMetadata: '' },
        { partitionIndex: 3, committedOffset: -1, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: null },
      ],
    },
  ],
};

function asVersion(version: number, request: OffsetCommitRequest): OffsetCommitRequest {
  return {
    groupId: request.groupId,
    generationId: version >= 1 ? request.generationId : -1,
    memberId: version >= 1 ? request.memberId : '',
    groupInstanceId: version >= 7 ? request.groupInstanceId : null,
    retentionTimeMs: version >= 2 && version <= 4 ? request.retentionTimeMs : -1,
    topics: request.topics.map((topic) => ({
      name: topic.name,
      partitions: topic.partitions.map((p) => ({
        ...p,
        committedLeaderEpoch: version >= 6 ? p.committedLeaderEpoch : -1,
        commitTimestamp: version === 1 ? p.commitTimestamp : -1,
      })),
    })),
  };
}

function encodeRequestForTest(version: number, request: OffsetCommitRequest): Uint8Array {
  const w = new KafkaWriter().string(request.groupId);
  if (version >= 1) w.int32(request.generationId).string(request.memberId);
  if (version >= 7) w.nullableString(request.groupInstanceId);
  if (version >= 2 && version <= 4) w.int64(request.retentionTimeMs);
  w.array(request.topics, (tw, topic) => {
    tw.string(topic.name).array(topic.partitions, (pw, p) => {
      pw.int32(p.partitionIndex).int64(p.committedOffset);
      if (version >= 6) pw.int32(p.committedLeaderEpoch);
      if (version === 1) pw.int64(p.commitTimestamp);
      pw.nullableString(p.committedMetadata);
    });
  });
  return bytesOf(w);
}

function decodeResponseForTest(bytes: Uint8Array, version: number): OffsetCommitResponse {
  const r = new KafkaReader(bytes);
  const throttleTimeMs = version >= 3 ? r.int32() : 0;
  const topics = r.array((tr) => ({
    name: tr.string(),
    partitions: tr.array((pr) => ({ partitionIndex: pr.int32(), errorCode: pr.int16() })),
  }));
  expect(r.remaining).toBe(0);
  return { throttleTimeMs, topics };
}

const RESPONSE: OffsetCommitResponse = {
  throttleTimeMs: 40,
  topics: [
    {
      name: 'orders',
      partitions: [
        { partitionIndex: 0, errorCode: 0 },
        { partitionIndex: 4, errorCode: 22 }, // ILLEGAL_GENERATION
      ],
    },
    { name: 'nothing', partitions: [] },
  ],
};

test('the advertised range is 0-7, flexible from 8', () => {
  const c = offsetCommitCodec;
  expect([c.key, c.minVersion, c.maxVersion, c.flexibleFrom]).toEqual([8, 0, 7, 8]);
});

describe('OffsetCommit request from kafkajs', () => {
  for (const version of KAFKAJS_VERSIONS) {
    test(`v${version} decodes to the fields kafkajs sent`, async () => {
      expect(decodeRequest(await kafkajsRequest(version), version)).toEqual(expectedFromKafkajs(version));
    });
  }
});

describe('OffsetCommit response read by kafkajs', () => {
  for (const version of KAFKAJS_VERSIONS) {
    test(`v${version}`, async () => {
      const response = kafkajsResponse('offsetCommit', version);
      const decoded = await response.decode(encodeResponse(version, RESPONSE));
      expect(decoded.responses).toEqual([
        {
          topic: 'orders',
          partitions: [
            { partition: 0, errorCode: 0 },
            { partition: 4, errorCode: 22 },
          ],
        },
        { topic: 'nothing', partitions: [] },
      ]);
      if (version >= 3) expect(decoded.clientSideThrottleTime ?? decoded.throttleTime).toBe(40);
      await expect(response.parse(decoded)).rejects.toThrow(); // the partition error reaches kafkajs
    });
  }
});

describe('OffsetCommit round trips', () => {
  for (const version of VERSIONS) {
    test(`v${version} request`, () => {
      const expected = asVersion(version, FULL_REQUEST);
      expect(decodeRequest(encodeRequestForTest(version, expected), version)).toEqual(expected);
    });

    test(`v${version} response`, () => {
      expect(decodeResponseForTest(encodeResponse(version, RESPONSE), version)).toEqual(
        version >= 3 ? RESPONSE : { ...RESPONSE, throttleTimeMs: 0 },
      );
    });
  }

  test('v7 group_instance_id may be null', () => {
    const request = asVersion(7, { ...FULL_REQUEST, groupInstanceId: null });
    expect(decodeRequest(encodeRequestForTest(7, request), 7).groupInstanceId).toBeNull();
  });
});

describe('OffsetCommit request decoding is total', () => {
  for (const version of VERSIONS) {
    test(`v${version} truncated at every byte throws ProtocolError`, () => {
      const bytes = encodeRequestForTest(version, asVersion(version, FULL_REQUEST));
      expectEveryTruncationRejected(bytes, version);
    });
  }

  for (const version of KAFKAJS_VERSIONS) {
    test(`v${version} kafkajs bytes truncated at every byte throw ProtocolError`, async () => {
      const bytes = await kafkajsRequest(version);
      expectEveryTruncationRejected(bytes, version);
    });
  }

  /** The fixed part of a request at `version`, before the topics array. */
  function head(version: number): KafkaWriter {
    const w = new KafkaWriter().string('g');
    if (version >= 1) w.int32(1).string('m');
    if (version >= 7) w.nullableString(null);
    if (version >= 2 && version <= 4) w.int64(-1);
    return w;
  }

  for (const version of VERSIONS) {
    test(`v${version} absurd lengths throw ProtocolError`, () => {
      expectRejected(bytesOf(new KafkaWriter().int16(0x7fff).raw(new Uint8Array(8))), version); // group_id past the end
      expectRejected(bytesOf(head(version).int32(0x7fff_ffff)), version); // topics count
      expectRejected(bytesOf(head(version).int32(-7)), version); // negative count
      expectRejected(bytesOf(head(version).int32(1).int16(500).raw(new Uint8Array(4))), version); // name past the end
      expectRejected(bytesOf(head(version).int32(1).string('t').int32(0x7fff_ffff)), version); // partitions count
      expectRejected(bytesOf(head(version).int32(1).string('t').int32(2).raw(new Uint8Array(20))), version); // 2 partitions, bytes for 1
      const partition = head(version).int32(1).string('t').int32(1).int32(0).int64(0);
      if (version >= 6) partition.int32(0);
      if (version === 1) partition.int64(0);
      expectRejected(bytesOf(partition.int16(0x7fff).raw(new Uint8Array(2))), version); // metadata past the end
      if (version >= 1) expectRejected(bytesOf(new KafkaWriter().string('g').int32(1).int16(-1)), version); // null member_id
    });
  }
});
