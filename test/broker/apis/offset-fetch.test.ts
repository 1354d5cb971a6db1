import { describe, expect, test } from 'bun:test';
import { type OffsetFetchRequest, type OffsetFetchResponse, offsetFetchCodec } from '../../../src/broker/apis/offset-fetch.ts';
import { KafkaWriter } from '../../../src/protocol/writer.ts';
import { bytesOf, codecHarness, grammarRequestBytes, kafkajsBytes, kafkajsResponse, kafkajsVersionRequest } from '../../support/codec-harness.ts';

// kafkajs 2.2.4's own encoders and decoders (test/support/codec-harness.ts): the bytes a real client sends and the way it reads ours.
// kafkajs has v1-v4; v0 has v1's layout on the wire (v0 read offsets from ZooKeeper), so v1's
// encoder and decoder stand in for it. Every version is checked against Kafka's own grammar in
// test/protocol/schema-codecs.test.ts.
/** v5 is the last version before flexible encoding (v6): the hand-written lengths below are rigid. */
const RIGID_VERSION_MAX = 5;
const RIGID_VERSIONS = Array.from({ length: RIGID_VERSION_MAX + 1 }, (_, version) => version);
/** v8 names several groups instead of one (KIP-709); v2-7 may ask for every topic of the one with null. */
const NULL_TOPICS_VERSIONS = [2, 3, 4, 5, 6, 7];
const KAFKAJS_VERSIONS = [0, 1, 2, 3, 4];
const kafkajsVersion = (version: number) => Math.max(1, version);

const { decodeRequest, encodeResponse, expectRejected, expectEveryTruncationRejected } = codecHarness(offsetFetchCodec);

const KAFKAJS_TOPICS = [
  { topic: 'orders', partitions: [{ partition: 0 }, { partition: 1 }, { partition: 7 }] },
  { topic: 'paiements-é', partitions: [] },
];

function kafkajsRequest(version: number, topics = KAFKAJS_TOPICS): Promise<Uint8Array> {
  return kafkajsBytes(kafkajsVersionRequest('offsetFetch', kafkajsVersion(version), { groupId: 'billing', topics }));
}

const RESPONSE: OffsetFetchResponse = {
  throttleTimeMs: 33,
  topics: [
    {
      name: 'orders',
      partitions: [
        { partitionIndex: 0, committedOffset: 12_345_678_901, committedLeaderEpoch: 5, metadata: 'meta', errorCode: 0 },
        { partitionIndex: 1, committedOffset: -1, committedLeaderEpoch: -1, metadata: null, errorCode: 0 },
        { partitionIndex: 7, committedOffset: 0, committedLeaderEpoch: -1, metadata: '', errorCode: 3 },
      ],
    },
    { name: 'paiements-é', partitions: [] },
  ],
  errorCode: 0,
};

const EXPECTED_TOPICS = [
  { name: 'orders', partitionIndexes: [0, 1, 7] },
  { name: 'paiements-é', partitionIndexes: [] },
];

/** The request a v0-7 client sends for one group: the v8+ fields at their defaults. */
function oneGroup(groupId: string, topics: OffsetFetchRequest['topics']): OffsetFetchRequest {
  return { groupId, topics, groups: [], requireStable: false };
}

test('the advertised range is 0-9, flexible from 6', () => {
  const c = offsetFetchCodec;
  expect([c.key, c.minVersion, c.maxVersion, c.flexibleFrom]).toEqual([9, 0, 9, 6]);
});

describe('OffsetFetch request from kafkajs', () => {
  for (const version of KAFKAJS_VERSIONS) {
    test(`v${version} decodes to the topics kafkajs sent`, async () => {
      expect(decodeRequest(await kafkajsRequest(version), version)).toEqual(oneGroup('billing', EXPECTED_TOPICS));
    });
  }

  for (const version of [3, 4]) {
    test(`v${version} no topics: kafkajs sends null, every topic`, async () => {
      expect(decodeRequest(await kafkajsRequest(version, []), version)).toEqual(oneGroup('billing', null));
    });
  }
});

describe('OffsetFetch response read by kafkajs', () => {
  for (const version of KAFKAJS_VERSIONS) {
    test(`v${version}`, async () => {
      const response = kafkajsResponse('offsetFetch', kafkajsVersion(version));
      const decoded = await response.decode(encodeResponse(version, RESPONSE));
      expect(decoded.responses).toEqual([
        {
          topic: 'orders',
          partitions: [
            { partition: 0, offset: '12345678901', metadata: 'meta', errorCode: 0 },
            { partition: 1, offset: '-1', metadata: null, errorCode: 0 },
            { partition: 7, offset: '0', metadata: '', errorCode: 3 },
          ],
        },
        { topic: 'paiements-é', partitions: [] },
      ]);
      if (version >= 2) expect(decoded.errorCode).toBe(0);
      if (version >= 3) expect(decoded.clientSideThrottleTime ?? decoded.throttleTime).toBe(33);
    });
  }

  for (const version of [2, 3, 4]) {
    test(`v${version} a group error reaches kafkajs`, async () => {
      const response = kafkajsResponse('offsetFetch', version);
      const decoded = await response.decode(encodeResponse(version, { throttleTimeMs: 0, topics: [], errorCode: 16 }));
      expect(decoded.errorCode).toBe(16);
      await expect(response.parse(decoded)).rejects.toThrow(); // NOT_COORDINATOR
    });
  }
});

describe('OffsetFetch null topics', () => {
  for (const version of NULL_TOPICS_VERSIONS) {
    test(`v${version} null topics: every topic`, () => {
      expect(decodeRequest(grammarRequestBytes(offsetFetchCodec, version, { groupId: 'g', topics: null }), version)).toEqual(oneGroup('g', null));
    });
  }

  // Kafka reads a -1 count of a field not nullable in the version as a malformed request.
  for (const version of [0, 1]) {
    test(`v${version} has no null topics: -1 is rejected`, () => {
      expectRejected(bytesOf(new KafkaWriter().string('g').int32(-1)), version);
    });
  }
});

describe('OffsetFetch request decoding is total', () => {
  for (const version of KAFKAJS_VERSIONS) {
    test(`v${version} truncated at every byte throws ProtocolError`, async () => {
      expectEveryTruncationRejected(await kafkajsRequest(version), version);
    });
  }

  for (const version of RIGID_VERSIONS) {
    test(`v${version} absurd lengths throw ProtocolError`, () => {
      const head = () => new KafkaWriter().string('g');
      expectRejected(bytesOf(new KafkaWriter().int16(0x7fff).raw(new Uint8Array(8))), version); // group_id past the end
      expectRejected(bytesOf(new KafkaWriter().int16(-1).int32(0)), version); // null group_id
      expectRejected(bytesOf(head().int32(0x7fff_ffff)), version); // topics count
      expectRejected(bytesOf(head().int32(-2)), version); // negative count
      expectRejected(bytesOf(head().int32(1).int16(300).raw(new Uint8Array(5))), version); // name past the end
      expectRejected(bytesOf(head().int32(1).string('t').int32(0x7fff_ffff)), version); // partition_indexes count
      expectRejected(bytesOf(head().int32(1).string('t').int32(3).int32(0).int32(1)), version); // 3 indexes, bytes for 2
      expectRejected(
        bytesOf(
          head()
            .int32(1)
            .int16(1)
            .raw(new Uint8Array([0x80]))
            .int32(0),
        ),
        version,
      ); // bad UTF-8
    });
  }
});
