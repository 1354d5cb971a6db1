import { describe, expect, test } from 'bun:test';
import { type FetchRequest, type FetchResponse, fetchCodec } from '../../../src/broker/apis/fetch.ts';
import { refuseOldFetch } from '../../../src/broker/handlers/fetch.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { KafkaWriter } from '../../../src/protocol/writer.ts';
import { buildRecordBatch } from '../../../src/format/batch-builder.ts';
import { AssertionError } from '../../../src/util/assert.ts';
import { bytesOf, codecHarness, grammarResponse, kafkajsBytes, kafkajsResponse, kafkajsVersionRequest } from '../../support/codec-harness.ts';
import { normalize } from '../../support/kafka-message-schema.ts';
import { fetchRequest } from '../../support/requests.ts';

// kafkajs 2.2.4's own encoders and decoders (test/support/codec-harness.ts): the bytes a real client sends and the way it reads ours.
/** kafkajs 2.2.4 speaks Fetch v0-11; Ferry serves v4 up. */
const KAFKAJS_VERSION_MAX = 11;
const KAFKAJS_VERSIONS = Array.from({ length: KAFKAJS_VERSION_MAX - fetchCodec.minVersion + 1 }, (_, i) => fetchCodec.minVersion + i);
const SERVED_VERSIONS = Array.from({ length: fetchCodec.maxVersion - fetchCodec.minVersion + 1 }, (_, i) => fetchCodec.minVersion + i);
/** Kafka 4 dropped Fetch v0-3 (KIP-896): decoded only to answer each partition UNSUPPORTED_VERSION. */
const REFUSED_VERSIONS = [0, 1, 2, 3];
const NOW_MS = 1_700_000_000_000;
/** Rounds of random damage to each version's kafkajs request. */
const DAMAGE_ROUNDS = 300;

const { decodeRequest, expectRejected, expectEveryTruncationRejected, expectDecodesOrRejects } = codecHarness(fetchCodec);

/** The response's bytes, and the writer that holds them as chunks (the batches are views, not copies). */
function encodeResponse(version: number, response: FetchResponse): { writer: KafkaWriter; bytes: Buffer } {
  const writer = new KafkaWriter();
  fetchCodec.encodeResponse(writer, version, response);
  const bytes = bytesOf(writer);
  expect(bytes.length).toBe(writer.length);
  return { writer, bytes };
}

function kafkajsRequest(version: number, args: object): Promise<Uint8Array> {
  return kafkajsBytes(kafkajsVersionRequest('fetch', version, args));
}

/** A topic of kafkajs's decoded Fetch response. */
interface KafkajsTopic {
  topicName: string;
  partitions: { partition: number; errorCode: number }[];
}

// ---- (a) requests encoded by kafkajs ----

const KAFKAJS_ARGS = {
  replicaId: -1,
  maxWaitTime: 500,
  minBytes: 1,
  maxBytes: 52_428_800,
  isolationLevel: 1,
  sessionId: 77,
  sessionEpoch: 3,
  topics: [
    {
      topic: 'orders',
      partitions: [
        { partition: 0, currentLeaderEpoch: 4, fetchOffset: '12345678901', logStartOffset: '17', maxBytes: 1_048_576 },
        { partition: 5, currentLeaderEpoch: 9, fetchOffset: '0', logStartOffset: '0', maxBytes: 65_536 },
      ],
    },
    { topic: 'paiements-é', partitions: [{ partition: 2, currentLeaderEpoch: 1, fetchOffset: '42', logStartOffset: '-1', maxBytes: 1 }] },
    { topic: 'empty', partitions: [] },
  ],
  forgottenTopics: [
    { topic: 'old', partitions: [1, 2, 3] },
    { topic: 'older', partitions: [] },
  ],
  rackId: 'use1-az4',
};

/** What Ferry should read from KAFKAJS_ARGS at `version` (4-11): Kafka's defaults for the fields it lacks. */
function expectedFromKafkajs(version: number): FetchRequest {
  return fetchRequest({
    replicaId: -1,
    maxWaitMs: 500,
    minBytes: 1,
    maxBytes: 52_428_800,
    isolationLevel: 1,
    sessionId: version >= 7 ? 77 : 0,
    sessionEpoch: version >= 7 ? 3 : -1,
    topics: KAFKAJS_ARGS.topics.map((topic) => ({
      topic: topic.topic,
      partitions: topic.partitions.map((p) => ({
        partition: p.partition,
        currentLeaderEpoch: version >= 9 ? p.currentLeaderEpoch : -1,
        fetchOffset: Number(p.fetchOffset),
        logStartOffset: version >= 5 ? Number(p.logStartOffset) : -1,
        partitionMaxBytes: p.maxBytes,
      })),
    })),
    forgottenTopicsData: version >= 7 ? KAFKAJS_ARGS.forgottenTopics : [],
    rackId: version >= 11 ? 'use1-az4' : '',
  });
}

describe('Fetch request from kafkajs', () => {
  for (const version of KAFKAJS_VERSIONS) {
    test(`v${version} decodes to the fields kafkajs sent`, async () => {
      const bytes = await kafkajsRequest(version, KAFKAJS_ARGS);
      expect(decodeRequest(bytes, version)).toEqual(expectedFromKafkajs(version));
    });
  }

  test('the advertised range is 4-17, flexible from 12', () => {
    expect([fetchCodec.key, fetchCodec.minVersion, fetchCodec.maxVersion, fetchCodec.flexibleFrom]).toEqual([1, 4, 17, 12]);
  });

  // The router decodes a refused version before answering it, so the answer can name every partition.
  test.each(REFUSED_VERSIONS)('v%d decodes, and kafkajs reads the refusal of every partition', async (version) => {
    const request = decodeRequest(await kafkajsRequest(version, KAFKAJS_ARGS), version);
    expect(request.topics.map((t) => [t.topic, t.partitions.map((p) => [p.partition, p.fetchOffset])])).toEqual([
      [
        'orders',
        [
          [0, 12_345_678_901],
          [5, 0],
        ],
      ],
      ['paiements-é', [[2, 42]]],
      ['empty', []],
    ]);
    const decoded = await kafkajsResponse('fetch', version).decode(encodeResponse(version, refuseOldFetch(request)).bytes);
    const errors = decoded.responses.map((r: KafkajsTopic) => [r.topicName, r.partitions.map((p) => [p.partition, p.errorCode])]);
    const refused = ErrorCode.UNSUPPORTED_VERSION;
    expect(errors).toEqual([
      [
        'orders',
        [
          [0, refused],
          [5, refused],
        ],
      ],
      ['paiements-é', [[2, refused]]],
      ['empty', []],
    ]);
  });
});

// ---- (b) responses decoded by kafkajs ----

const BATCH_A = buildRecordBatch(
  [
    { key: 'k-0', value: 'first', headers: [{ key: 'h', value: 'v' }] },
    { key: null, value: 'second', timestamp: NOW_MS + 5 },
  ],
  { nowMs: NOW_MS, baseOffset: 100 },
);
const BATCH_B = buildRecordBatch([{ key: 'k-2', value: 'third' }], { nowMs: NOW_MS + 10, baseOffset: 102 });

function responseWith(_version: number, records: Uint8Array[]): FetchResponse {
  return {
    throttleTimeMs: 25,
    errorCode: 0,
    sessionId: 77,
    responses: [
      {
        topic: 'orders',
        partitions: [
          {
            partitionIndex: 0,
            errorCode: 0,
            highWatermark: 103,
            lastStableOffset: 101,
            logStartOffset: 7,
            abortedTransactions: [{ producerId: 4000, firstOffset: 100 }],
            preferredReadReplica: -1,
            records,
          },
          {
            partitionIndex: 1,
            errorCode: 1, // OFFSET_OUT_OF_RANGE
            highWatermark: 12_345_678_901,
            lastStableOffset: -1,
            logStartOffset: -1,
            abortedTransactions: null,
            preferredReadReplica: 2,
            records: [],
          },
        ],
      },
      { topic: 'empty', partitions: [] },
    ],
  };
}

describe('Fetch response read by kafkajs', () => {
  for (const version of KAFKAJS_VERSIONS) {
    test(`v${version} decodes with kafkajs, batches sent as they are`, async () => {
      const records = [BATCH_A, BATCH_B];
      const { writer, bytes } = encodeResponse(version, responseWith(version, records));

      // Zero-copy: the very views passed in are chunks of the response.
      const chunks = writer.chunks();
      for (const batch of records) expect(chunks.some((chunk) => chunk === batch)).toBe(true);

      const decoded = await kafkajsResponse('fetch', version).decode(bytes);
      expect(decoded.clientSideThrottleTime ?? decoded.throttleTime).toBe(25);
      if (version >= 7) expect([decoded.errorCode, decoded.sessionId]).toEqual([0, 77]);
      expect(decoded.responses.map((r: { topicName: string }) => r.topicName)).toEqual(['orders', 'empty']);
      expect(decoded.responses[1].partitions).toEqual([]);

      const [first, second] = decoded.responses[0].partitions;
      expect([first.partition, first.errorCode, first.highWatermark]).toEqual([0, 0, '103']);
      expect([second.partition, second.errorCode, second.highWatermark]).toEqual([1, 1, '12345678901']);
      expect(second.messages).toEqual([]);
      expect(first.lastStableOffset).toBe('101');
      expect(first.abortedTransactions).toEqual([{ producerId: '4000', firstOffset: '100' }]);
      expect(second.abortedTransactions).toEqual([]);
      if (version >= 5) expect([first.lastStartOffset, second.lastStartOffset]).toEqual(['7', '-1']);
      if (version >= 11) expect([first.preferredReadReplica, second.preferredReadReplica]).toEqual([-1, 2]);

      const messages = first.messages.map((m: { key: Buffer | null; value: Buffer }) => [m.key?.toString() ?? null, m.value.toString()]);
      expect(messages).toEqual([
        ['k-0', 'first'],
        [null, 'second'],
        ['k-2', 'third'],
      ]);
      expect(first.messages.map((m: { offset: string }) => m.offset)).toEqual(['100', '101', '102']);
      expect(first.messages[0].headers.h.toString()).toBe('v');
      expect(first.messages[1].timestamp).toBe(String(NOW_MS + 5));
    });
  }

  test('an empty list of batches is a zero-length records field, not null', () => {
    const { bytes } = encodeResponse(4, responseWith(4, []));
    const records = grammarResponse(fetchCodec, 4, bytes).responses[0].partitions[0].records;
    expect(records).not.toBeNull();
    expect(normalize(records)).toEqual([]);
  });

  test('records past an int32 in total are a bug, not a response', () => {
    const huge = { length: 0x8000_0000 } as Uint8Array;
    const writer = new KafkaWriter();
    expect(() => fetchCodec.encodeResponse(writer, 4, responseWith(4, [huge]))).toThrow(AssertionError);
  });
});

// ---- (c) responses read back by Kafka's grammar: the batches arrive as one records field ----

describe('Fetch responses read by Kafka grammar', () => {
  for (const version of SERVED_VERSIONS) {
    test(`v${version}: every field and the exact batch bytes survive`, () => {
      const response: FetchResponse = {
        throttleTimeMs: 9,
        errorCode: 70, // FETCH_SESSION_ID_NOT_FOUND
        sessionId: 1234,
        responses: [
          {
            topic: 'orders',
            partitions: [
              {
                partitionIndex: 3,
                errorCode: 0,
                highWatermark: Number.MAX_SAFE_INTEGER,
                lastStableOffset: 100,
                logStartOffset: 5,
                abortedTransactions: [],
                preferredReadReplica: 1,
                records: [BATCH_A, BATCH_B],
              },
              {
                partitionIndex: 4,
                errorCode: 6,
                highWatermark: -1,
                lastStableOffset: -1,
                logStartOffset: -1,
                abortedTransactions: null,
                preferredReadReplica: -1,
                records: null,
              },
            ],
          },
        ],
      };
      const decoded = grammarResponse(fetchCodec, version, encodeResponse(version, response).bytes);
      expect([decoded.throttleTimeMs, decoded.errorCode, decoded.sessionId]).toEqual(version >= 7 ? [9, 70, 1234] : [9, 0, 0]);
      const [full, failed] = decoded.responses[0].partitions;
      expect(normalize(full.records)).toEqual([...BATCH_A, ...BATCH_B]);
      expect(failed.records).toBeNull();
      expect(full.highWatermark).toBe(Number.MAX_SAFE_INTEGER);
      expect(full.abortedTransactions).toEqual([]);
      expect(failed.abortedTransactions).toBeNull();
      expect([full.lastStableOffset, full.logStartOffset]).toEqual([100, version >= 5 ? 5 : -1]);
      expect(full.preferredReadReplica).toBe(version >= 11 ? 1 : -1);
    });
  }
});

// ---- (d) truncation, (e) absurd lengths, and random damage: ProtocolError only ----

// The hand-written lengths below are the rigid (pre-flexible) encoding of v4-11, the versions kafkajs speaks.
describe('Fetch request decoding is total', () => {
  for (const version of KAFKAJS_VERSIONS) {
    test(`v${version} truncated at every byte throws ProtocolError`, async () => {
      const bytes = await kafkajsRequest(version, KAFKAJS_ARGS);
      expectEveryTruncationRejected(bytes, version);
    });
  }

  /** The fixed header of a request at `version`, before the topics array. */
  function head(version: number): KafkaWriter {
    const w = new KafkaWriter().int32(-1).int32(100).int32(1);
    if (version >= 3) w.int32(1000);
    if (version >= 4) w.int8(0);
    if (version >= 7) w.int32(0).int32(-1);
    return w;
  }

  for (const version of KAFKAJS_VERSIONS) {
    test(`v${version} absurd lengths throw ProtocolError`, () => {
      expectRejected(bytesOf(head(version).int32(0x7fff_ffff)), version); // topics count
      expectRejected(bytesOf(head(version).int32(-2)), version); // negative count
      expectRejected(bytesOf(head(version).int32(1).int16(0x7fff).raw(new Uint8Array(10))), version); // name past the end
      expectRejected(bytesOf(head(version).int32(1).int16(-1).int32(0)), version); // null topic name
      expectRejected(bytesOf(head(version).int32(1).string('t').int32(0x7fff_ffff)), version); // partitions count
      expectRejected(bytesOf(head(version).int32(2).string('t').int32(0)), version); // 2 topics, bytes for 1
      expectRejected(
        bytesOf(
          head(version)
            .int32(1)
            .int16(2)
            .raw(new Uint8Array([0xc3, 0x28]))
            .int32(0),
        ),
        version,
      ); // bad UTF-8
      const partition = head(version).int32(1).string('t').int32(1).int32(0);
      if (version >= 9) partition.int32(0);
      partition.uint32(0x0020_0000).uint32(0); // fetch_offset 2^53: beyond what a number holds exactly
      if (version >= 5) partition.int64(0);
      partition.int32(0);
      expectRejected(bytesOf(partition), version);
      if (version >= 7) {
        expectRejected(bytesOf(head(version).int32(0).int32(0x7fff_ffff)), version); // forgotten count
        expectRejected(bytesOf(head(version).int32(0).int32(1).string('t').int32(0x7fff_ffff)), version); // forgotten partitions
      }
      if (version >= 11) {
        expectRejected(bytesOf(head(version).int32(0).int32(0).int16(1000).raw(new Uint8Array(3))), version); // rack_id
      }
    });
  }

  test('random damage to valid requests decodes or throws ProtocolError, nothing else', async () => {
    let seed = 0x5eed;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) >>> 0;
      return seed / 0x1_0000_0000;
    };
    for (const version of KAFKAJS_VERSIONS) {
      const valid = await kafkajsRequest(version, KAFKAJS_ARGS);
      for (let round = 0; round < DAMAGE_ROUNDS; round++) {
        const damaged = Uint8Array.from(valid);
        for (let hit = 0; hit < 1 + Math.floor(random() * 4); hit++) {
          damaged[Math.floor(random() * damaged.length)] = Math.floor(random() * 256);
        }
        expectDecodesOrRejects(damaged, version);
      }
    }
  });
});
