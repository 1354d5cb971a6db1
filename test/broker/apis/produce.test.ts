import { describe, expect, test } from 'bun:test';
import { type PartitionProduceResponse, produceCodec, type ProduceRequest, type ProduceResponse } from '../../../src/broker/apis/produce.ts';
import { KafkaWriter } from '../../../src/protocol/writer.ts';
import { refuseOldProduce } from '../../../src/broker/handlers/produce.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { splitBatches } from '../../../src/format/index.ts';
import { bytesOf, codecHarness, grammarRequestBytes, hex, kafkajsBytes, kafkajsProtocol } from '../../support/codec-harness.ts';
import type { Message } from '../../support/kafka-message-schema.ts';

/** Kafka 4 dropped Produce v0-2 (KIP-896): decoded only to answer each partition UNSUPPORTED_VERSION. */
const REFUSED_VERSIONS = [0, 1, 2];
/** kafkajs 2.2.4 speaks Produce v0-7. */
const KAFKAJS_VERSION_MAX = 7;
/** v8 is the last version before flexible encoding (v9): its request fields are v3-7's. */
const RIGID_VERSION_MAX = 8;
const RIGID_VERSIONS = Array.from({ length: RIGID_VERSION_MAX - produceCodec.minVersion + 1 }, (_, i) => produceCodec.minVersion + i);
const INT32_MAX = 0x7fff_ffff;
const BATCH_BYTES_MAX = 1 << 20;
/** Byte 16 of a MessageSet entry (offset INT64, size INT32, crc INT32) and of a record batch is the magic. */
const MAGIC_OFFSET = 16;
const TIMESTAMP_MS = 1_700_000_000_000;

// ---- helpers (test/support/codec-harness.ts) ----

const harness = codecHarness(produceCodec);
const { encodeResponse, expectRejected, expectEveryTruncationRejected } = harness;

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
      {
        partition: 0,
        messages: [
          { key: 'k1', value: 'v1', timestamp: TIMESTAMP_MS },
          { key: 'k2', value: 'v2', timestamp: TIMESTAMP_MS + 1 },
        ],
      },
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

/** A topic of kafkajs's decoded Produce response. */
interface KafkajsTopic {
  topicName: string;
  partitions: { partition: number; errorCode: number }[];
}

const text = (bytes: Uint8Array | null) => (bytes === null ? null : new TextDecoder().decode(bytes));

// ---- requests written by Kafka's grammar ----

function encodeRequest(version: number, request: ProduceRequest): Uint8Array {
  return grammarRequestBytes(produceCodec, version, request as unknown as Message);
}

/** What kafkajs's decoder of `version` should return for `response` (int64s as strings). */
function asKafkajs(version: number, response: ProduceResponse): unknown {
  const partition = (p: PartitionProduceResponse) => {
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
      partitionResponses: [{ index: 1, errorCode: 6, baseOffset: -1, logAppendTimeMs: -1, logStartOffset: -1, recordErrors: [], errorMessage: null }],
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
  test('advertises key 0, versions 3-12, flexible from 9', () => {
    expect([produceCodec.key, produceCodec.minVersion, produceCodec.maxVersion, produceCodec.flexibleFrom]).toEqual([0, 3, 12, 9]);
  });

  // The router decodes a refused version before answering it, so the answer can name every partition.
  test.each(REFUSED_VERSIONS)('v%d requests from kafkajs decode, and kafkajs reads the refusal of every partition', async (version) => {
    const bytes = plain(await kafkajsRequestBytes(version, null));
    const request = decodeRequest(bytes, version);
    expect([request.acks, request.timeoutMs]).toEqual([-1, 30_000]);
    expectKafkajsRecords(version, request, bytes);
    const { response } = kafkajsProtocol('produce', version, { acks: 1, timeout: 1, topicData: [] });
    const decoded = await response.decode(encodeResponse(version, refuseOldProduce(request)));
    const errors = decoded.topics.map((topic: KafkajsTopic) => [topic.topicName, topic.partitions.map((p) => [p.partition, p.errorCode])]);
    expect(errors).toEqual([
      [
        'orders',
        [
          [0, ErrorCode.UNSUPPORTED_VERSION],
          [3, ErrorCode.UNSUPPORTED_VERSION],
        ],
      ],
      ['payments', [[1, ErrorCode.UNSUPPORTED_VERSION]]],
    ]);
  });

  for (const version of RIGID_VERSIONS) {
    describe(`v${version}`, () => {
      // kafkajs has no v8 request; v8's request fields are v3-7's, so v7 bytes stand in for a v8 client.
      test('decodes requests encoded by kafkajs; records stay a view of the request', async () => {
        const kafkajsVersion = Math.min(version, KAFKAJS_VERSION_MAX);
        for (const transactionalId of [null, 'tx-1']) {
          const bytes = plain(await kafkajsRequestBytes(kafkajsVersion, transactionalId));
          const request = decodeRequest(bytes, version);
          expect(request.transactionalId).toBe(transactionalId);
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

      test('rejects lengths that run past the frame with ProtocolError', () => {
        const head = (w: KafkaWriter) => w.nullableString(null).int16(1).int32(1000);
        const cases = [
          head(new KafkaWriter()).int32(INT32_MAX).raw(new Uint8Array(16)), // topics
          head(new KafkaWriter()).int32(1).string('t').int32(INT32_MAX).raw(new Uint8Array(16)), // partitions
          head(new KafkaWriter()).int32(1).int16(200).raw(new Uint8Array(16)), // topic name
          head(new KafkaWriter()).int32(1).string('t').int32(1).int32(0).int32(INT32_MAX).raw(new Uint8Array(16)), // records
          head(new KafkaWriter()).int32(-2).raw(new Uint8Array(16)), // a negative count that is not null
        ];
        for (const writer of cases) expectRejected(bytesOf(writer), version);
        expectRejected(bytesOf(new KafkaWriter().int16(INT32_MAX & 0x7fff).raw(new Uint8Array(16))), version); // transactional_id
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

  test('v9, the first flexible version: compact lengths and tagged fields, byte for byte', () => {
    const request = hex(`
      00                              # transactional_id null (compact: length + 1)
      ff ff  00 00 75 30              # acks -1, timeout_ms 30000
      02  02 74                       # topic_data: 1, name "t"
      02  00 00 00 03                 # partition_data: 1, index 3
      04  01 02 03                    # records: 3 bytes
      00  00  00                      # tagged fields: partition, topic, request`);
    expect(decodeRequest(new Uint8Array(request), 9)).toEqual({
      transactionalId: null,
      acks: -1,
      timeoutMs: 30_000,
      topicData: [{ name: 't', partitionData: [{ index: 3, records: new Uint8Array([1, 2, 3]) }] }],
    });
    const response: ProduceResponse = {
      responses: [{ name: 't', partitionResponses: [{ index: 3, errorCode: 0, baseOffset: 5, logAppendTimeMs: -1, logStartOffset: 0, recordErrors: [], errorMessage: null }] }],
      throttleTimeMs: 0,
    };
    expect([...encodeResponse(9, response)]).toEqual(
      hex(`
        02  02 74                       # responses: 1, name "t"
        02  00 00 00 03  00 00          # partition_responses: 1, index 3, error_code 0
        00 00 00 00 00 00 00 05         # base_offset
        ff ff ff ff ff ff ff ff         # log_append_time_ms -1
        00 00 00 00 00 00 00 00         # log_start_offset
        01  00                          # record_errors: 0, error_message null
        00  00                          # tagged fields: partition, topic
        00 00 00 00  00                 # throttle_time_ms, tagged fields`),
    );
  });

  test('null records decode as null (legal on the wire)', () => {
    const topicData = [{ name: 't', partitionData: [{ index: 0, records: null }] }];
    const bytes = encodeRequest(3, { transactionalId: null, acks: 1, timeoutMs: 10, topicData });
    expect(decodeRequest(bytes, 3).topicData[0]!.partitionData[0]!.records).toBeNull();
  });
});
