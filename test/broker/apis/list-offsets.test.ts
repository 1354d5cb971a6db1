import { describe, expect, test } from 'bun:test';
import {
  listOffsetsCodec,
  type ListOffsetsRequest,
  type ListOffsetsRequestPartition,
  type ListOffsetsResponse,
  type ListOffsetsResponsePartition,
} from '../../../src/broker/apis/list-offsets.ts';
import { KafkaReader } from '../../../src/broker/protocol/reader.ts';
import { KafkaWriter } from '../../../src/broker/protocol/writer.ts';
import { SeededRandom } from '../../../src/util/random.ts';
import { bytesOf, codecHarness, hex, kafkajsBytes, kafkajsProtocol } from '../../support/codec-harness.ts';

const VERSIONS = Array.from({ length: listOffsetsCodec.maxVersion + 1 }, (_, version) => version);
/** kafkajs 2.2.4 speaks ListOffsets v0-3. */
const KAFKAJS_VERSION_MAX = 3;
const RANDOM_CASES = 25;
const INT32_MAX = 0x7fff_ffff;
const LATEST = -1;
const EARLIEST = -2;

// ---- helpers (test/support/codec-harness.ts) ----

const { decodeRequest, encodeResponse, expectRejected, expectEveryTruncationRejected, expectCorruptionsTotal } = codecHarness(listOffsetsCodec);

// ---- test-only request encoder and response decoder (the other sides of the codec) ----

function encodeRequest(version: number, request: ListOffsetsRequest): Uint8Array {
  const writer = new KafkaWriter().int32(request.replicaId);
  if (version >= 2) writer.int8(request.isolationLevel);
  writer.array(request.topics, (w, topic) => {
    w.string(topic.name).array(topic.partitions, (w2, partition) => {
      w2.int32(partition.partitionIndex);
      if (version >= 4) w2.int32(partition.currentLeaderEpoch);
      w2.int64(partition.timestamp);
      if (version === 0) w2.int32(partition.maxNumOffsets);
    });
  });
  return bytesOf(writer);
}

function decodePartition(reader: KafkaReader, version: number): ListOffsetsResponsePartition {
  const partitionIndex = reader.int32();
  const errorCode = reader.int16();
  const oldStyleOffsets = version === 0 ? reader.array((r) => r.int64(), 8) : [];
  const timestamp = version >= 1 ? reader.int64() : -1;
  const offset = version >= 1 ? reader.int64() : -1;
  const leaderEpoch = version >= 4 ? reader.int32() : -1;
  return { partitionIndex, errorCode, oldStyleOffsets, timestamp, offset, leaderEpoch };
}

function decodeResponse(bytes: Uint8Array, version: number): ListOffsetsResponse {
  const reader = new KafkaReader(bytes);
  const throttleTimeMs = version >= 2 ? reader.int32() : 0;
  const topics = reader.array((r) => ({ name: r.string(), partitions: r.array((r2) => decodePartition(r2, version)) }));
  expect(reader.remaining).toBe(0);
  return { throttleTimeMs, topics };
}

// ---- random values, and what survives a version ----

function randomPartition(random: SeededRandom): ListOffsetsRequestPartition {
  const timestamp = [LATEST, EARLIEST, 1_700_000_000_000 + random.nextInt(1e6)][random.nextInt(3)]!;
  return { partitionIndex: random.nextInt(64), currentLeaderEpoch: random.nextInt(100), timestamp, maxNumOffsets: 1 + random.nextInt(5) };
}

function randomRequest(random: SeededRandom): ListOffsetsRequest {
  return {
    replicaId: random.next() < 0.8 ? -1 : random.nextInt(5),
    isolationLevel: random.nextInt(2),
    topics: Array.from({ length: random.nextInt(4) }, () => ({
      name: `topic-${random.nextInt(100)}`,
      partitions: Array.from({ length: random.nextInt(4) }, () => randomPartition(random)),
    })),
  };
}

function requestAt(version: number, request: ListOffsetsRequest): ListOffsetsRequest {
  return {
    replicaId: request.replicaId,
    isolationLevel: version >= 2 ? request.isolationLevel : 0,
    topics: request.topics.map((topic) => ({
      name: topic.name,
      partitions: topic.partitions.map((partition) => ({
        partitionIndex: partition.partitionIndex,
        currentLeaderEpoch: version >= 4 ? partition.currentLeaderEpoch : -1,
        timestamp: partition.timestamp,
        maxNumOffsets: version === 0 ? partition.maxNumOffsets : 1,
      })),
    })),
  };
}

function randomResponse(random: SeededRandom): ListOffsetsResponse {
  return {
    throttleTimeMs: random.nextInt(1000),
    topics: Array.from({ length: random.nextInt(3) }, () => ({
      name: `topic-${random.nextInt(100)}`,
      partitions: Array.from({ length: random.nextInt(3) }, () => ({
        partitionIndex: random.nextInt(64),
        errorCode: random.nextInt(3),
        oldStyleOffsets: Array.from({ length: random.nextInt(3) }, () => random.nextInt(2 ** 45)),
        timestamp: random.next() < 0.5 ? -1 : 1_700_000_000_000 + random.nextInt(1e6),
        offset: random.nextInt(2 ** 45),
        leaderEpoch: random.nextInt(100),
      })),
    })),
  };
}

function responseAt(version: number, response: ListOffsetsResponse): ListOffsetsResponse {
  return {
    throttleTimeMs: version >= 2 ? response.throttleTimeMs : 0,
    topics: response.topics.map((topic) => ({
      name: topic.name,
      partitions: topic.partitions.map((partition) => ({
        partitionIndex: partition.partitionIndex,
        errorCode: partition.errorCode,
        oldStyleOffsets: version === 0 ? partition.oldStyleOffsets : [],
        timestamp: version >= 1 ? partition.timestamp : -1,
        offset: version >= 1 ? partition.offset : -1,
        leaderEpoch: version >= 4 ? partition.leaderEpoch : -1,
      })),
    })),
  };
}

/** What kafkajs's decoder of `version` should return for `response` (int64s as strings). */
function asKafkajs(version: number, response: ListOffsetsResponse): unknown {
  const partition = (p: ListOffsetsResponsePartition) => ({
    partition: p.partitionIndex,
    errorCode: p.errorCode,
    ...(version === 0 ? { offsets: p.oldStyleOffsets.map(String) } : { timestamp: `${p.timestamp}`, offset: `${p.offset}` }),
  });
  const throttle = version >= 3 ? { throttleTime: 0, clientSideThrottleTime: response.throttleTimeMs } : { throttleTime: response.throttleTimeMs };
  return {
    ...(version >= 2 ? throttle : {}),
    responses: response.topics.map((topic) => ({ topic: topic.name, partitions: topic.partitions.map(partition) })),
  };
}

const SAMPLE_RESPONSE: ListOffsetsResponse = {
  throttleTimeMs: 3,
  topics: [
    {
      name: 'orders',
      partitions: [
        { partitionIndex: 0, errorCode: 0, oldStyleOffsets: [2 ** 40 + 5], timestamp: -1, offset: 2 ** 40 + 5, leaderEpoch: 4 },
        { partitionIndex: 1, errorCode: 0, oldStyleOffsets: [0], timestamp: 1_700_000_000_123, offset: 0, leaderEpoch: 4 },
      ],
    },
    { name: 'gone', partitions: [{ partitionIndex: 0, errorCode: 3, oldStyleOffsets: [], timestamp: -1, offset: -1, leaderEpoch: -1 }] },
  ],
};

// ---- tests ----

describe('ListOffsets codec', () => {
  test('advertises key 2, versions 0-5, flexible from 6', () => {
    expect([listOffsetsCodec.key, listOffsetsCodec.minVersion, listOffsetsCodec.maxVersion, listOffsetsCodec.flexibleFrom]).toEqual([2, 0, 5, 6]);
  });

  for (const version of [4, 5]) {
    test(`v${version} requests and responses have the exact bytes of the grammar (kafkajs stops at v3)`, () => {
      const request = hex(`
        ff ff ff ff  00                 # replica_id -1, isolation_level 0
        00 00 00 01  00 01 74           # topics: 1, name "t"
        00 00 00 01                     # partitions: 1
        00 00 00 02  00 00 00 07        # partition_index 2, current_leader_epoch 7
        ff ff ff ff ff ff ff ff         # timestamp -1 (latest)`);
      expect(decodeRequest(new Uint8Array(request), version)).toEqual({
        replicaId: -1,
        isolationLevel: 0,
        topics: [{ name: 't', partitions: [{ partitionIndex: 2, currentLeaderEpoch: 7, timestamp: LATEST, maxNumOffsets: 1 }] }],
      });
      const response: ListOffsetsResponse = {
        throttleTimeMs: 0,
        topics: [{ name: 't', partitions: [{ partitionIndex: 2, errorCode: 0, oldStyleOffsets: [], timestamp: -1, offset: 42, leaderEpoch: 7 }] }],
      };
      expect([...encodeResponse(version, response)]).toEqual(
        hex(`
          00 00 00 00                   # throttle_time_ms
          00 00 00 01  00 01 74         # topics: 1, name "t"
          00 00 00 01                   # partitions: 1
          00 00 00 02  00 00            # partition_index 2, error_code 0
          ff ff ff ff ff ff ff ff       # timestamp -1
          00 00 00 00 00 00 00 2a       # offset 42
          00 00 00 07                   # leader_epoch 7`),
      );
    });
  }

  for (const version of VERSIONS) {
    describe(`v${version}`, () => {
      test.if(version <= KAFKAJS_VERSION_MAX)('decodes requests encoded by kafkajs', async () => {
        const topics = [
          { topic: 'orders', partitions: [{ partition: 0, timestamp: LATEST, maxNumOffsets: 3 }, { partition: 1, timestamp: EARLIEST }] },
          { topic: 'payments', partitions: [{ partition: 7, timestamp: 1_700_000_000_000 }] },
        ];
        // kafkajs defaults isolationLevel to READ_COMMITTED (1) from v2.
        const { request } = kafkajsProtocol('listOffsets', version, { replicaId: -1, topics });
        expect(request.apiKey).toBe(listOffsetsCodec.key);
        const bytes = await kafkajsBytes(request);
        const partition = (partitionIndex: number, timestamp: number, maxNumOffsets = 1) => ({
          partitionIndex,
          currentLeaderEpoch: -1,
          timestamp,
          maxNumOffsets: version === 0 ? maxNumOffsets : 1,
        });
        expect(decodeRequest(bytes, version)).toEqual({
          replicaId: -1,
          isolationLevel: version >= 2 ? 1 : 0,
          topics: [
            { name: 'orders', partitions: [partition(0, LATEST, 3), partition(1, EARLIEST)] },
            { name: 'payments', partitions: [partition(7, 1_700_000_000_000)] },
          ],
        });
        expectEveryTruncationRejected(bytes, version);
      });

      test.if(version <= KAFKAJS_VERSION_MAX)('encodes responses kafkajs decodes', async () => {
        const { response: kafkajsResponse } = kafkajsProtocol('listOffsets', version, { topics: [] });
        const decoded = await kafkajsResponse.decode(encodeResponse(version, SAMPLE_RESPONSE));
        expect(decoded).toEqual(asKafkajs(version, SAMPLE_RESPONSE));
      });

      test('round-trips random requests and responses; every truncation throws ProtocolError', () => {
        const random = new SeededRandom(1176 + version);
        for (let i = 0; i < RANDOM_CASES; i++) {
          const request = requestAt(version, randomRequest(random));
          const bytes = encodeRequest(version, request);
          expect(decodeRequest(bytes, version)).toEqual(request);
          expectEveryTruncationRejected(bytes, version);
          expectCorruptionsTotal(bytes, version, random);
          const response = randomResponse(random);
          expect(decodeResponse(encodeResponse(version, response), version)).toEqual(responseAt(version, response));
        }
      });

      test('rejects lengths that run past the frame, and int64s past 2^53, with ProtocolError', () => {
        const head = (w: KafkaWriter) => (version >= 2 ? w.int32(-1).int8(0) : w.int32(-1));
        const cases = [
          head(new KafkaWriter()).int32(INT32_MAX).raw(new Uint8Array(32)), // topics
          head(new KafkaWriter()).int32(1).string('t').int32(INT32_MAX).raw(new Uint8Array(32)), // partitions
          head(new KafkaWriter()).int32(1).int16(300).raw(new Uint8Array(32)), // topic name
          head(new KafkaWriter()).int32(-5).raw(new Uint8Array(32)), // a negative count that is not null
        ];
        for (const writer of cases) expectRejected(bytesOf(writer), version);
        const hugeTimestamp = head(new KafkaWriter()).int32(1).string('t').int32(1).int32(0);
        if (version >= 4) hugeTimestamp.int32(0);
        hugeTimestamp.int32(0x7fff_ffff).int32(-1).int32(1);
        expectRejected(bytesOf(hugeTimestamp), version);
      });
    });
  }
});
