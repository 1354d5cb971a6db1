import { describe, expect, test } from 'bun:test';
import { offsetForLeaderEpochCodec as codec, type OffsetForLeaderEpochRequest, type OffsetForLeaderEpochResponse } from '../../../src/broker/apis/offset-for-leader-epoch.ts';
import { KafkaWriter } from '../../../src/protocol/writer.ts';
import { SeededRandom } from '../../../src/util/random.ts';
import { bytesOf, codecHarness, hex } from '../../support/codec-harness.ts';
import { decodeBySchema, encodeBySchema, loadMessageSchema, type Message } from '../../support/kafka-message-schema.ts';

const VERSIONS = [0, 1, 2, 3, 4];
const RANDOM_CASES = 25;
const INT32_MAX = 0x7fff_ffff;
/** kafkajs 2.2.4 has no OffsetForLeaderEpoch: Kafka's own message schemas are the other side of the wire. */
const REQUEST_SCHEMA = loadMessageSchema('OffsetForLeaderEpochRequest');
const RESPONSE_SCHEMA = loadMessageSchema('OffsetForLeaderEpochResponse');

// ---- helpers (test/support/codec-harness.ts) ----

const { decodeRequest, encodeResponse, expectRejected, expectEveryTruncationRejected, expectMutationsTotal, expectCorruptionsTotal } = codecHarness(codec);

// ---- random values, and what survives a version ----

function randomRequest(random: SeededRandom): OffsetForLeaderEpochRequest {
  return {
    replicaId: random.next() < 0.8 ? -1 : random.nextInt(5),
    topics: Array.from({ length: random.nextInt(4) }, () => ({
      topic: `topic-${random.nextInt(100)}`,
      partitions: Array.from({ length: random.nextInt(4) }, () => ({ partition: random.nextInt(64), currentLeaderEpoch: random.nextInt(100) - 1, leaderEpoch: random.nextInt(100) - 1 })),
    })),
  };
}

function requestAt(version: number, request: OffsetForLeaderEpochRequest): OffsetForLeaderEpochRequest {
  return {
    replicaId: version >= 3 ? request.replicaId : -2,
    topics: request.topics.map((topic) => ({
      topic: topic.topic,
      partitions: topic.partitions.map((p) => ({ partition: p.partition, currentLeaderEpoch: version >= 2 ? p.currentLeaderEpoch : -1, leaderEpoch: p.leaderEpoch })),
    })),
  };
}

function randomResponse(random: SeededRandom): OffsetForLeaderEpochResponse {
  return {
    throttleTimeMs: random.nextInt(1000),
    topics: Array.from({ length: random.nextInt(3) }, () => ({
      topic: `topic-${random.nextInt(100)}`,
      partitions: Array.from({ length: random.nextInt(3) }, () => ({
        errorCode: [0, 6, 74, 76][random.nextInt(4)]!,
        partition: random.nextInt(64),
        leaderEpoch: random.nextInt(100) - 1,
        endOffset: random.nextInt(2 ** 45) - 1,
      })),
    })),
  };
}

function responseAt(version: number, response: OffsetForLeaderEpochResponse): OffsetForLeaderEpochResponse {
  return {
    throttleTimeMs: version >= 2 ? response.throttleTimeMs : 0,
    topics: response.topics.map((topic) => ({
      topic: topic.topic,
      partitions: topic.partitions.map((p) => ({ ...p, leaderEpoch: version >= 1 ? p.leaderEpoch : -1 })),
    })),
  };
}

/** Ferry's objects as the schema's messages (the same names, camelCased). */
function asMessage(value: object): Message {
  return value as unknown as Message;
}

// ---- tests ----

describe('OffsetForLeaderEpoch codec', () => {
  test('advertises key 23, versions 0-4, flexible from 4', () => {
    expect([codec.key, codec.name, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([23, 'OffsetForLeaderEpoch', 0, 4, 4]);
    expect(REQUEST_SCHEMA.apiKey).toBe(codec.key);
    expect(REQUEST_SCHEMA.flexibleVersions).toBe(`${codec.flexibleFrom}+`);
    expect(RESPONSE_SCHEMA.flexibleVersions).toBe(`${codec.flexibleFrom}+`);
  });

  test('v2 (what librdkafka sends) has the exact bytes of the grammar', () => {
    const request = hex(`
      00 00 00 01  00 01 74           # topics: 1, name "t"
      00 00 00 01                     # partitions: 1
      00 00 00 02                     # partition 2
      00 00 00 05  00 00 00 03        # current_leader_epoch 5, leader_epoch 3`);
    expect(decodeRequest(new Uint8Array(request), 2)).toEqual({ replicaId: -2, topics: [{ topic: 't', partitions: [{ partition: 2, currentLeaderEpoch: 5, leaderEpoch: 3 }] }] });
    const response: OffsetForLeaderEpochResponse = { throttleTimeMs: 0, topics: [{ topic: 't', partitions: [{ errorCode: 0, partition: 2, leaderEpoch: 3, endOffset: 42 }] }] };
    expect([...encodeResponse(2, response)]).toEqual(
      hex(`
      00 00 00 00                     # throttle_time_ms
      00 00 00 01  00 01 74           # topics: 1, name "t"
      00 00 00 01                     # partitions: 1
      00 00  00 00 00 02              # error_code 0, partition 2
      00 00 00 03                     # leader_epoch 3
      00 00 00 00 00 00 00 2a         # end_offset 42`),
    );
  });

  test('v4 (flexible) has the exact bytes of the grammar: compact strings and arrays, tag buffers', () => {
    const request = hex(`
      ff ff ff ff                     # replica_id -1
      02  02 74                       # topics: 1 (compact: n + 1), name "t" (compact)
      02                              # partitions: 1
      00 00 00 02                     # partition 2
      00 00 00 05  00 00 00 03        # current_leader_epoch 5, leader_epoch 3
      00                              # partition tag buffer
      01  00 02 07 07                 # topic tag buffer: one tagged field (tag 0, 2 bytes), skipped
      00                              # top-level tag buffer`);
    expect(decodeRequest(new Uint8Array(request), 4)).toEqual({ replicaId: -1, topics: [{ topic: 't', partitions: [{ partition: 2, currentLeaderEpoch: 5, leaderEpoch: 3 }] }] });
    const response: OffsetForLeaderEpochResponse = { throttleTimeMs: 0, topics: [{ topic: 't', partitions: [{ errorCode: 74, partition: 2, leaderEpoch: -1, endOffset: -1 }] }] };
    expect([...encodeResponse(4, response)]).toEqual(
      hex(`
      00 00 00 00                     # throttle_time_ms
      02  02 74  02                   # topics: 1, name "t", partitions: 1
      00 4a  00 00 00 02              # error_code 74 (FENCED_LEADER_EPOCH), partition 2
      ff ff ff ff                     # leader_epoch -1
      ff ff ff ff ff ff ff ff         # end_offset -1
      00  00  00                      # tag buffers: partition, topic, response`),
    );
  });

  for (const version of VERSIONS) {
    describe(`v${version}`, () => {
      test("decodes requests encoded by Kafka's schema; every truncation, mutation and corruption is a ProtocolError", () => {
        const random = new SeededRandom(2300 + version);
        for (let i = 0; i < RANDOM_CASES; i++) {
          const request = requestAt(version, randomRequest(random));
          const bytes = encodeBySchema(REQUEST_SCHEMA, version, asMessage(request));
          expect(decodeRequest(bytes, version)).toEqual(request);
          expectEveryTruncationRejected(bytes, version);
          expectCorruptionsTotal(bytes, version, random);
        }
        const sample = encodeBySchema(
          REQUEST_SCHEMA,
          version,
          asMessage(
            requestAt(version, {
              replicaId: -1,
              topics: [
                {
                  topic: 'orders',
                  partitions: [
                    { partition: 0, currentLeaderEpoch: 4, leaderEpoch: 3 },
                    { partition: 1, currentLeaderEpoch: -1, leaderEpoch: 0 },
                  ],
                },
              ],
            }),
          ),
        );
        expectMutationsTotal(sample, version, 23 + version);
      });

      test("encodes responses that Kafka's schema decodes", () => {
        const random = new SeededRandom(2400 + version);
        for (let i = 0; i < RANDOM_CASES; i++) {
          const response = randomResponse(random);
          expect(decodeBySchema(RESPONSE_SCHEMA, version, encodeResponse(version, response))).toEqual(asMessage(responseAt(version, response)));
        }
      });

      test('rejects counts that run past the frame with ProtocolError', () => {
        const flexible = version >= 4;
        const head = () => (version >= 3 ? new KafkaWriter().int32(-1) : new KafkaWriter());
        const count = (w: KafkaWriter, n: number) => (flexible ? w.uvarint(n + 1) : w.int32(n));
        const name = (w: KafkaWriter) => (flexible ? w.compactString('t') : w.string('t'));
        expectRejected(bytesOf(count(head(), INT32_MAX - 1).raw(new Uint8Array(32))), version); // topics
        expectRejected(bytesOf(count(name(count(head(), 1)), INT32_MAX - 1).raw(new Uint8Array(32))), version); // partitions
        if (!flexible) expectRejected(bytesOf(head().int32(-5).raw(new Uint8Array(32))), version); // a negative count that is not null
      });
    });
  }
});
