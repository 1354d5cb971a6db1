import { describe, expect, test } from 'bun:test';
import { listOffsetsCodec, type ListOffsetsPartitionResponse, type ListOffsetsResponse } from '../../../src/broker/apis/list-offsets.ts';
import { KafkaWriter } from '../../../src/protocol/writer.ts';
import { bytesOf, codecHarness, hex, kafkajsBytes, kafkajsProtocol } from '../../support/codec-harness.ts';

/** v5 is the last version before flexible encoding (v6): the hand-written lengths below are rigid. */
const RIGID_VERSION_MAX = 5;
const RIGID_VERSIONS = Array.from({ length: RIGID_VERSION_MAX + 1 }, (_, version) => version);
/** kafkajs 2.2.4 speaks ListOffsets v0-3. */
const KAFKAJS_VERSION_MAX = 3;
const INT32_MAX = 0x7fff_ffff;
const LATEST = -1;
const EARLIEST = -2;

// ---- helpers (test/support/codec-harness.ts) ----

const { decodeRequest, encodeResponse, expectRejected, expectEveryTruncationRejected } = codecHarness(listOffsetsCodec);

/** What kafkajs's decoder of `version` should return for `response` (int64s as strings). */
function asKafkajs(version: number, response: ListOffsetsResponse): unknown {
  const partition = (p: ListOffsetsPartitionResponse) => ({
    partition: p.partitionIndex,
    errorCode: p.errorCode,
    ...(version === 0 ? { offsets: (p.oldStyleOffsets ?? []).map(String) } : { timestamp: `${p.timestamp}`, offset: `${p.offset}` }),
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
  test('advertises key 2, versions 0-10, flexible from 6', () => {
    expect([listOffsetsCodec.key, listOffsetsCodec.minVersion, listOffsetsCodec.maxVersion, listOffsetsCodec.flexibleFrom]).toEqual([2, 0, 10, 6]);
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
        timeoutMs: 0,
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

  for (const version of RIGID_VERSIONS) {
    describe(`v${version}`, () => {
      test.if(version <= KAFKAJS_VERSION_MAX)('decodes requests encoded by kafkajs', async () => {
        const topics = [
          {
            topic: 'orders',
            partitions: [
              { partition: 0, timestamp: LATEST, maxNumOffsets: 3 },
              { partition: 1, timestamp: EARLIEST },
            ],
          },
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
          timeoutMs: 0,
        });
        expectEveryTruncationRejected(bytes, version);
      });

      test.if(version <= KAFKAJS_VERSION_MAX)('encodes responses kafkajs decodes', async () => {
        const { response: kafkajsResponse } = kafkajsProtocol('listOffsets', version, { topics: [] });
        const decoded = await kafkajsResponse.decode(encodeResponse(version, SAMPLE_RESPONSE));
        expect(decoded).toEqual(asKafkajs(version, SAMPLE_RESPONSE));
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
