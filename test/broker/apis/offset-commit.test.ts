import { describe, expect, test } from 'bun:test';
import { type OffsetCommitRequest, type OffsetCommitResponse, offsetCommitCodec } from '../../../src/broker/apis/offset-commit.ts';
import { KafkaWriter } from '../../../src/protocol/writer.ts';
import { bytesOf, codecHarness, grammarRequestBytes, kafkajsBytes, kafkajsResponse, kafkajsVersionRequest } from '../../support/codec-harness.ts';

// kafkajs 2.2.4's own encoders and decoders (test/support/codec-harness.ts): the bytes a real client sends and the way it reads ours.
// kafkajs stops at v5; every version is also checked against Kafka's own grammar in test/protocol/schema-codecs.test.ts.
/** v7 is the last version before flexible encoding (v8): the hand-written lengths below are rigid. */
const RIGID_VERSION_MAX = 7;
const RIGID_VERSIONS = Array.from({ length: RIGID_VERSION_MAX + 1 }, (_, version) => version);
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
    generationIdOrMemberEpoch: version >= 1 ? 7 : -1,
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

test('the advertised range is 0-9, flexible from 8', () => {
  const c = offsetCommitCodec;
  expect([c.key, c.minVersion, c.maxVersion, c.flexibleFrom]).toEqual([8, 0, 9, 8]);
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

test('v7 group_instance_id may be null, or name a static member', () => {
  const draft = { groupId: 'g', generationIdOrMemberEpoch: 3, memberId: 'm', topics: [] };
  expect(decodeRequest(grammarRequestBytes(offsetCommitCodec, 7, { ...draft, groupInstanceId: null }), 7).groupInstanceId).toBeNull();
  expect(decodeRequest(grammarRequestBytes(offsetCommitCodec, 7, { ...draft, groupInstanceId: 'static-3' }), 7).groupInstanceId).toBe('static-3');
});

describe('OffsetCommit request decoding is total', () => {
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

  for (const version of RIGID_VERSIONS) {
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
