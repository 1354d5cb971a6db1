import { describe, expect, test } from 'bun:test';
import { type OffsetFetchRequest, type OffsetFetchResponse, offsetFetchCodec } from '../../../src/broker/apis/offset-fetch.ts';
import { KafkaReader } from '../../../src/broker/protocol/reader.ts';
import { KafkaWriter } from '../../../src/broker/protocol/writer.ts';
import { bytesOf, codecHarness, kafkajsBytes, kafkajsResponse, kafkajsVersionRequest } from '../../support/codec-harness.ts';

// kafkajs 2.2.4's own encoders and decoders (test/support/codec-harness.ts): the bytes a real client sends and the way it reads ours.
// kafkajs has v1-v4; v0 has v1's layout on the wire (v0 read offsets from ZooKeeper), so v1's
// encoder and decoder stand in for it. v5 is checked against a test-only codec from Kafka's schema.
const VERSIONS = Array.from({ length: offsetFetchCodec.maxVersion + 1 }, (_, version) => version);
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

function encodeRequestForTest(version: number, request: OffsetFetchRequest): Uint8Array {
  const w = new KafkaWriter().string(request.groupId);
  w.nullableArray(request.topics, (tw, topic) => {
    tw.string(topic.name).array(topic.partitionIndexes, (iw, index) => iw.int32(index));
  });
  return bytesOf(w);
}

function decodeResponseForTest(bytes: Uint8Array, version: number): OffsetFetchResponse {
  const r = new KafkaReader(bytes);
  const throttleTimeMs = version >= 3 ? r.int32() : 0;
  const topics = r.array((tr) => ({
    name: tr.string(),
    partitions: tr.array((pr) => ({
      partitionIndex: pr.int32(),
      committedOffset: pr.int64(),
      committedLeaderEpoch: version >= 5 ? pr.int32() : -1,
      metadata: pr.nullableString(),
      errorCode: pr.int16(),
    })),
  }));
  const errorCode = version >= 2 ? r.int16() : 0;
  expect(r.remaining).toBe(0);
  return { throttleTimeMs, topics, errorCode };
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

function asVersion(version: number, response: OffsetFetchResponse): OffsetFetchResponse {
  return {
    throttleTimeMs: version >= 3 ? response.throttleTimeMs : 0,
    topics: response.topics.map((topic) => ({
      name: topic.name,
      partitions: topic.partitions.map((p) => ({ ...p, committedLeaderEpoch: version >= 5 ? p.committedLeaderEpoch : -1 })),
    })),
    errorCode: version >= 2 ? response.errorCode : 0,
  };
}

const EXPECTED_TOPICS = [
  { name: 'orders', partitionIndexes: [0, 1, 7] },
  { name: 'paiements-é', partitionIndexes: [] },
];

test('the advertised range is 0-5, flexible from 6', () => {
  const c = offsetFetchCodec;
  expect([c.key, c.minVersion, c.maxVersion, c.flexibleFrom]).toEqual([9, 0, 5, 6]);
});

describe('OffsetFetch request from kafkajs', () => {
  for (const version of KAFKAJS_VERSIONS) {
    test(`v${version} decodes to the topics kafkajs sent`, async () => {
      expect(decodeRequest(await kafkajsRequest(version), version)).toEqual({ groupId: 'billing', topics: EXPECTED_TOPICS });
    });
  }

  for (const version of [3, 4]) {
    test(`v${version} no topics: kafkajs sends null, every topic`, async () => {
      expect(decodeRequest(await kafkajsRequest(version, []), version)).toEqual({ groupId: 'billing', topics: null });
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

describe('OffsetFetch round trips', () => {
  for (const version of VERSIONS) {
    test(`v${version} request`, () => {
      const request = { groupId: 'g'.repeat(1000), topics: [{ name: 't', partitionIndexes: [0x7fff_ffff, -1, 0] }] };
      expect(decodeRequest(encodeRequestForTest(version, request), version)).toEqual(request);
      expect(decodeRequest(encodeRequestForTest(version, { groupId: '', topics: [] }), version)).toEqual({ groupId: '', topics: [] });
    });

    test(`v${version} response`, () => {
      const response = { ...RESPONSE, errorCode: 14 };
      expect(decodeResponseForTest(encodeResponse(version, response), version)).toEqual(asVersion(version, response));
    });
  }

  for (const version of [2, 3, 4, 5]) {
    test(`v${version} null topics: every topic`, () => {
      expect(decodeRequest(encodeRequestForTest(version, { groupId: 'g', topics: null }), version)).toEqual({ groupId: 'g', topics: null });
    });
  }

  for (const version of [0, 1]) {
    test(`v${version} has no null topics: -1 reads as none`, () => {
      expect(decodeRequest(encodeRequestForTest(version, { groupId: 'g', topics: null }), version)).toEqual({ groupId: 'g', topics: [] });
    });
  }
});

describe('OffsetFetch request decoding is total', () => {
  for (const version of VERSIONS) {
    test(`v${version} truncated at every byte throws ProtocolError`, async () => {
      const bytes = version <= 4 ? await kafkajsRequest(version) : encodeRequestForTest(version, { groupId: 'billing', topics: EXPECTED_TOPICS });
      expectEveryTruncationRejected(bytes, version);
    });

    test(`v${version} absurd lengths throw ProtocolError`, () => {
      const head = () => new KafkaWriter().string('g');
      expectRejected(bytesOf(new KafkaWriter().int16(0x7fff).raw(new Uint8Array(8))), version); // group_id past the end
      expectRejected(bytesOf(new KafkaWriter().int16(-1).int32(0)), version); // null group_id
      expectRejected(bytesOf(head().int32(0x7fff_ffff)), version); // topics count
      expectRejected(bytesOf(head().int32(-2)), version); // negative count
      expectRejected(bytesOf(head().int32(1).int16(300).raw(new Uint8Array(5))), version); // name past the end
      expectRejected(bytesOf(head().int32(1).string('t').int32(0x7fff_ffff)), version); // partition_indexes count
      expectRejected(bytesOf(head().int32(1).string('t').int32(3).int32(0).int32(1)), version); // 3 indexes, bytes for 2
      expectRejected(bytesOf(head().int32(1).int16(1).raw(new Uint8Array([0x80])).int32(0)), version); // bad UTF-8
    });
  }
});
