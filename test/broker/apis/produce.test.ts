import { describe, expect, test } from 'bun:test';
import {
  produceCodec,
  type ProducePartitionResponse,
  type ProduceRequest,
  type ProduceResponse,
  type ProduceTopicData,
} from '../../../src/broker/apis/produce.ts';
import { KafkaReader } from '../../../src/broker/protocol/reader.ts';
import { KafkaWriter } from '../../../src/broker/protocol/writer.ts';
import { splitBatches } from '../../../src/format/index.ts';
import { SeededRandom } from '../../../src/util/random.ts';
import { bytesOf, codecHarness, hex, kafkajsBytes, kafkajsProtocol } from '../../support/codec-harness.ts';

const VERSIONS = Array.from({ length: produceCodec.maxVersion + 1 }, (_, version) => version);
/** kafkajs 2.2.4 speaks Produce v0-7. */
const KAFKAJS_VERSION_MAX = 7;
const RANDOM_CASES = 25;
const INT32_MAX = 0x7fff_ffff;
const BATCH_BYTES_MAX = 1 << 20;
/** Byte 16 of a MessageSet entry (offset INT64, size INT32, crc INT32) and of a record batch is the magic. */
const MAGIC_OFFSET = 16;
const TIMESTAMP_MS = 1_700_000_000_000;

// ---- helpers (test/support/codec-harness.ts) ----

const harness = codecHarness(produceCodec);
const { encodeResponse, expectRejected, expectEveryTruncationRejected, expectCorruptionsTotal } = harness;

/** A plain Uint8Array over the same memory, so decoded views compare equal to plain arrays. */
function plain(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}

/** The harness's decodeRequest over a plain view of `bytes`. */
function decodeRequest(bytes: Uint8Array, version: number): ProduceRequest {
  return harness.decodeRequest(plain(bytes), version);
}

const KAFKAJS_TOPIC_DATA = [
  {
    topic: 'orders',
    partitions: [
      { partition: 0, messages: [{ key: 'k1', value: 'v1', timestamp: TIMESTAMP_MS }, { key: 'k2', value: 'v2', timestamp: TIMESTAMP_MS + 1 }] },
      { partition: 3, messages: [{ key: null, value: 'only', timestamp: TIMESTAMP_MS }] },
    ],
  },
  { topic: 'payments', partitions: [{ partition: 1, messages: [{ key: 'p', value: 'q', timestamp: TIMESTAMP_MS }] }] },
];

async function kafkajsRequestBytes(version: number, transactionalId: string | null): Promise<Uint8Array> {
  const { request } = kafkajsProtocol('produce', version, { acks: -1, timeout: 30_000, transactionalId, topicData: KAFKAJS_TOPIC_DATA });
  expect(request.apiKey).toBe(produceCodec.key);
  return kafkajsBytes(request);
}

const text = (bytes: Uint8Array | null) => (bytes === null ? null : new TextDecoder().decode(bytes));

// ---- test-only request encoder and response decoder (the other sides of the codec) ----

function encodeRequest(version: number, request: ProduceRequest): Uint8Array {
  const writer = new KafkaWriter();
  if (version >= 3) writer.nullableString(request.transactionalId);
  writer.int16(request.acks).int32(request.timeoutMs);
  writer.array(request.topicData, (w, topic) => {
    w.string(topic.name).array(topic.partitionData, (w2, partition) => w2.int32(partition.index).nullableBytes(partition.records));
  });
  return plain(bytesOf(writer));
}

function decodePartition(reader: KafkaReader, version: number): ProducePartitionResponse {
  const index = reader.int32();
  const errorCode = reader.int16();
  const baseOffset = reader.int64();
  const logAppendTimeMs = version >= 2 ? reader.int64() : -1;
  const logStartOffset = version >= 5 ? reader.int64() : -1;
  const recordErrors = version >= 8 ? reader.array((r) => ({ batchIndex: r.int32(), batchIndexErrorMessage: r.nullableString() })) : [];
  const errorMessage = version >= 8 ? reader.nullableString() : null;
  return { index, errorCode, baseOffset, logAppendTimeMs, logStartOffset, recordErrors, errorMessage };
}

function decodeResponse(bytes: Uint8Array, version: number): ProduceResponse {
  const reader = new KafkaReader(bytes);
  const responses = reader.array((r) => ({ name: r.string(), partitionResponses: r.array((r2) => decodePartition(r2, version)) }));
  const throttleTimeMs = version >= 1 ? reader.int32() : 0;
  expect(reader.remaining).toBe(0);
  return { responses, throttleTimeMs };
}

// ---- random values, and what survives a version ----

function randomBytes(random: SeededRandom, length: number): Uint8Array {
  return Uint8Array.from({ length }, () => random.nextInt(256));
}

function randomTopic(random: SeededRandom): ProduceTopicData {
  return {
    name: `topic-${random.nextInt(100)}`,
    partitionData: Array.from({ length: random.nextInt(3) }, () => ({
      index: random.nextInt(16),
      records: random.next() < 0.1 ? null : randomBytes(random, random.nextInt(80)),
    })),
  };
}

function randomRequest(random: SeededRandom, version: number): ProduceRequest {
  return {
    transactionalId: version >= 3 && random.next() < 0.5 ? `tx-${random.nextInt(10)}` : null,
    acks: [-1, 0, 1][random.nextInt(3)]!,
    timeoutMs: random.nextInt(60_000),
    topicData: Array.from({ length: random.nextInt(3) }, () => randomTopic(random)),
  };
}

function randomPartitionResponse(random: SeededRandom): ProducePartitionResponse {
  return {
    index: random.nextInt(16),
    errorCode: random.nextInt(3),
    baseOffset: random.nextInt(2 ** 40),
    logAppendTimeMs: random.next() < 0.5 ? -1 : TIMESTAMP_MS + random.nextInt(1000),
    logStartOffset: random.nextInt(1000),
    recordErrors: Array.from({ length: random.nextInt(3) }, () => ({
      batchIndex: random.nextInt(10),
      batchIndexErrorMessage: random.next() < 0.5 ? null : 'bad record',
    })),
    errorMessage: random.next() < 0.5 ? null : 'batch dropped',
  };
}

function randomResponse(random: SeededRandom): ProduceResponse {
  return {
    responses: Array.from({ length: random.nextInt(3) }, () => ({
      name: `topic-${random.nextInt(100)}`,
      partitionResponses: Array.from({ length: random.nextInt(3) }, () => randomPartitionResponse(random)),
    })),
    throttleTimeMs: random.nextInt(1000),
  };
}

function responseAt(version: number, response: ProduceResponse): ProduceResponse {
  return {
    responses: response.responses.map((topic) => ({
      name: topic.name,
      partitionResponses: topic.partitionResponses.map((partition) => ({
        index: partition.index,
        errorCode: partition.errorCode,
        baseOffset: partition.baseOffset,
        logAppendTimeMs: version >= 2 ? partition.logAppendTimeMs : -1,
        logStartOffset: version >= 5 ? partition.logStartOffset : -1,
        recordErrors: version >= 8 ? partition.recordErrors : [],
        errorMessage: version >= 8 ? partition.errorMessage : null,
      })),
    })),
    throttleTimeMs: version >= 1 ? response.throttleTimeMs : 0,
  };
}

/** What kafkajs's decoder of `version` should return for `response` (int64s as strings). */
function asKafkajs(version: number, response: ProduceResponse): unknown {
  const partition = (p: ProducePartitionResponse) => {
    if (version < 3) {
      return { partition: p.index, errorCode: p.errorCode, offset: `${p.baseOffset}`, ...(version >= 2 ? { timestamp: `${p.logAppendTimeMs}` } : {}) };
    }
    return {
      partition: p.index,
      errorCode: p.errorCode,
      baseOffset: `${p.baseOffset}`,
      logAppendTime: `${p.logAppendTimeMs}`,
      ...(version >= 5 ? { logStartOffset: `${p.logStartOffset}` } : {}),
    };
  };
  const throttle = version >= 6 ? { throttleTime: 0, clientSideThrottleTime: response.throttleTimeMs } : { throttleTime: response.throttleTimeMs };
  return {
    topics: response.responses.map((topic) => ({ topicName: topic.name, partitions: topic.partitionResponses.map(partition) })),
    ...(version >= 1 ? throttle : {}),
  };
}

const SAMPLE_RESPONSE: ProduceResponse = {
  responses: [
    {
      name: 'orders',
      partitionResponses: [
        { index: 0, errorCode: 0, baseOffset: 41, logAppendTimeMs: -1, logStartOffset: 0, recordErrors: [], errorMessage: null },
        { index: 3, errorCode: 0, baseOffset: 2 ** 40, logAppendTimeMs: TIMESTAMP_MS, logStartOffset: 17, recordErrors: [], errorMessage: null },
      ],
    },
    {
      name: 'payments',
      partitionResponses: [
        { index: 1, errorCode: 6, baseOffset: -1, logAppendTimeMs: -1, logStartOffset: -1, recordErrors: [], errorMessage: null },
      ],
    },
  ],
  throttleTimeMs: 5,
};

/** The kafkajs request's records: v3+ carry record batches Ferry parses; v0-2 carry MessageSets. */
function expectKafkajsRecords(version: number, request: ProduceRequest, frame: Uint8Array): void {
  expect(request.topicData.map((t) => [t.name, t.partitionData.map((p) => p.index)])).toEqual([
    ['orders', [0, 3]],
    ['payments', [1]],
  ]);
  const messages = KAFKAJS_TOPIC_DATA.flatMap((topic) => topic.partitions.map((partition) => partition.messages));
  const records = request.topicData.flatMap((topic) => topic.partitionData.map((partition) => partition.records!));
  records.forEach((bytes, i) => {
    expect(bytes.buffer).toBe(frame.buffer); // a view of the request, not a copy
    if (version < 3) {
      expect(bytes[MAGIC_OFFSET]).toBe(version === 2 ? 1 : 0);
      return;
    }
    const [batch, ...rest] = splitBatches(bytes, BATCH_BYTES_MAX);
    expect(rest).toEqual([]);
    expect(batch!.magic).toBe(2);
    expect(batch!.isCrcValid()).toBe(true);
    const decoded = [...batch!.records()].map((record) => ({ key: text(record.key), value: text(record.value), timestamp: record.timestamp }));
    expect(decoded).toEqual(messages[i]!);
  });
}

// ---- tests ----

describe('Produce codec', () => {
  test('advertises key 0, versions 0-8, flexible from 9', () => {
    expect([produceCodec.key, produceCodec.minVersion, produceCodec.maxVersion, produceCodec.flexibleFrom]).toEqual([0, 0, 8, 9]);
  });

  for (const version of VERSIONS) {
    describe(`v${version}`, () => {
      // kafkajs has no v8 request; v8's request fields are v3-7's, so v7 bytes stand in for a v8 client.
      test('decodes requests encoded by kafkajs; records stay a view of the request', async () => {
        const kafkajsVersion = Math.min(version, KAFKAJS_VERSION_MAX);
        for (const transactionalId of [null, 'tx-1']) {
          const bytes = plain(await kafkajsRequestBytes(kafkajsVersion, transactionalId));
          const request = decodeRequest(bytes, version);
          expect(request.transactionalId).toBe(version >= 3 ? transactionalId : null);
          expect(request.acks).toBe(-1);
          expect(request.timeoutMs).toBe(30_000);
          expectKafkajsRecords(version, request, bytes);
          expectEveryTruncationRejected(bytes, version);
        }
      });

      test.if(version <= KAFKAJS_VERSION_MAX)('encodes responses kafkajs decodes', async () => {
        const { response: kafkajsResponse } = kafkajsProtocol('produce', version, { acks: 1, timeout: 1, topicData: [] });
        const decoded = await kafkajsResponse.decode(encodeResponse(version, SAMPLE_RESPONSE));
        expect(decoded).toEqual(asKafkajs(version, SAMPLE_RESPONSE));
      });

      test('round-trips random requests and responses; every truncation throws ProtocolError', () => {
        const random = new SeededRandom(1176 + version);
        for (let i = 0; i < RANDOM_CASES; i++) {
          const request = randomRequest(random, version);
          const bytes = encodeRequest(version, request);
          expect(decodeRequest(bytes, version)).toEqual(request);
          expectEveryTruncationRejected(bytes, version);
          expectCorruptionsTotal(bytes, version, random);
          const response = randomResponse(random);
          expect(decodeResponse(encodeResponse(version, response), version)).toEqual(responseAt(version, response));
        }
      });

      test('rejects lengths that run past the frame with ProtocolError', () => {
        const head = (w: KafkaWriter) => (version >= 3 ? w.nullableString(null) : w).int16(1).int32(1000);
        const cases = [
          head(new KafkaWriter()).int32(INT32_MAX).raw(new Uint8Array(16)), // topics
          head(new KafkaWriter()).int32(1).string('t').int32(INT32_MAX).raw(new Uint8Array(16)), // partitions
          head(new KafkaWriter()).int32(1).int16(200).raw(new Uint8Array(16)), // topic name
          head(new KafkaWriter()).int32(1).string('t').int32(1).int32(0).int32(INT32_MAX).raw(new Uint8Array(16)), // records
          head(new KafkaWriter()).int32(-2).raw(new Uint8Array(16)), // a negative count that is not null
        ];
        for (const writer of cases) expectRejected(bytesOf(writer), version);
        if (version >= 3) expectRejected(bytesOf(new KafkaWriter().int16(INT32_MAX & 0x7fff).raw(new Uint8Array(16))), version); // transactional_id
      });
    });
  }

  test('v8 responses have the exact bytes of the grammar (kafkajs stops at v7)', () => {
    const response: ProduceResponse = {
      responses: [
        {
          name: 't',
          partitionResponses: [
            {
              index: 0,
              errorCode: 0,
              baseOffset: 5,
              logAppendTimeMs: -1,
              logStartOffset: 0,
              recordErrors: [{ batchIndex: 2, batchIndexErrorMessage: 'x' }],
              errorMessage: null,
            },
          ],
        },
      ],
      throttleTimeMs: 0,
    };
    expect([...encodeResponse(8, response)]).toEqual(
      hex(`
        00 00 00 01  00 01 74           # responses: 1, name "t"
        00 00 00 01                     # partition_responses: 1
        00 00 00 00  00 00              # index 0, error_code 0
        00 00 00 00 00 00 00 05         # base_offset
        ff ff ff ff ff ff ff ff         # log_append_time_ms -1
        00 00 00 00 00 00 00 00         # log_start_offset
        00 00 00 01  00 00 00 02  00 01 78   # record_errors: [batch_index 2, "x"]
        ff ff                           # error_message null
        00 00 00 00                     # throttle_time_ms`),
    );
  });

  test('null records decode as null (legal on the wire)', () => {
    const topicData = [{ name: 't', partitionData: [{ index: 0, records: null }] }];
    const bytes = encodeRequest(3, { transactionalId: null, acks: 1, timeoutMs: 10, topicData });
    expect(decodeRequest(bytes, 3).topicData[0]!.partitionData[0]!.records).toBeNull();
  });
});
