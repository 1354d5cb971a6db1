import { describe, expect, test } from 'bun:test';
import { metadataCodec, type MetadataResponse } from '../../../src/broker/apis/metadata.ts';
import { KafkaWriter } from '../../../src/protocol/writer.ts';
import { ZERO_UUID } from '../../../src/util/uuid.ts';
import { bytesOf, codecHarness, hex, kafkajsBytes, kafkajsProtocol } from '../../support/codec-harness.ts';

/** v8 is the last version before flexible encoding (v9): the hand-written lengths below are rigid. */
const RIGID_VERSION_MAX = 8;
const RIGID_VERSIONS = Array.from({ length: RIGID_VERSION_MAX + 1 }, (_, version) => version);
/** kafkajs 2.2.4 speaks Metadata v0-6. */
const KAFKAJS_VERSION_MAX = 6;
const INT32_MAX = 0x7fff_ffff;

// ---- helpers (test/support/codec-harness.ts) ----

const { decodeRequest, encodeResponse, expectRejected, expectEveryTruncationRejected } = codecHarness(metadataCodec);

async function kafkajsRequestBytes(version: number, topics: string[], allowAutoTopicCreation: boolean): Promise<Uint8Array> {
  const { request } = kafkajsProtocol('metadata', version, { topics, allowAutoTopicCreation });
  expect(request.apiKey).toBe(metadataCodec.key);
  return kafkajsBytes(request);
}

/** What kafkajs's decoder of `version` should return for `response`. */
function asKafkajs(version: number, response: MetadataResponse): unknown {
  const throttle = version >= 6 ? { throttleTime: 0, clientSideThrottleTime: response.throttleTimeMs } : { throttleTime: response.throttleTimeMs };
  return {
    ...(version >= 3 ? throttle : {}),
    brokers: response.brokers.map(({ nodeId, host, port, rack }) => ({ nodeId, host, port, ...(version >= 1 ? { rack } : {}) })),
    ...(version >= 2 ? { clusterId: response.clusterId } : {}),
    ...(version >= 1 ? { controllerId: response.controllerId } : {}),
    topicMetadata: response.topics.map((topic) => ({
      topicErrorCode: topic.errorCode,
      topic: topic.name,
      ...(version >= 1 ? { isInternal: topic.isInternal } : {}),
      partitionMetadata: topic.partitions.map((partition) => ({
        partitionErrorCode: partition.errorCode,
        partitionId: partition.partitionIndex,
        leader: partition.leaderId,
        replicas: partition.replicaNodes,
        isr: partition.isrNodes,
        ...(version >= 5 ? { offlineReplicas: partition.offlineReplicas } : {}),
      })),
    })),
  };
}

const SAMPLE_RESPONSE: MetadataResponse = {
  throttleTimeMs: 7,
  brokers: [
    { nodeId: 1, host: 'localhost', port: 9092, rack: null },
    { nodeId: 2, host: 'ferry-2.local', port: 19092, rack: 'use1-az4' },
  ],
  clusterId: 'ferry-cluster',
  controllerId: 1,
  topics: [
    {
      errorCode: 0,
      name: 'orders',
      isInternal: false,
      partitions: [
        { errorCode: 0, partitionIndex: 0, leaderId: 1, leaderEpoch: 3, replicaNodes: [1, 2], isrNodes: [1], offlineReplicas: [2] },
        { errorCode: 0, partitionIndex: 1, leaderId: 2, leaderEpoch: 0, replicaNodes: [2], isrNodes: [2], offlineReplicas: [] },
      ],
      topicAuthorizedOperations: 0x0df8,
    },
    { errorCode: 3, name: 'missing', isInternal: false, partitions: [], topicAuthorizedOperations: -0x8000_0000 },
  ],
  clusterAuthorizedOperations: 0x0ff0,
};

// ---- tests ----

describe('Metadata codec', () => {
  test('advertises key 3, versions 0-11, flexible from 9', () => {
    expect([metadataCodec.key, metadataCodec.minVersion, metadataCodec.maxVersion, metadataCodec.flexibleFrom]).toEqual([3, 0, 11, 9]);
  });

  for (const version of RIGID_VERSIONS) {
    describe(`v${version}`, () => {
      // kafkajs has no v7 request; v7's request fields are v4-6's, so v6 bytes stand in for a v7 client.
      test.if(version <= KAFKAJS_VERSION_MAX + 1)('decodes requests encoded by kafkajs', async () => {
        const kafkajsVersion = Math.min(version, KAFKAJS_VERSION_MAX);
        const some = await kafkajsRequestBytes(kafkajsVersion, ['orders', 'payments'], false);
        expect(decodeRequest(some, version)).toEqual({
          topics: [
            { name: 'orders', topicId: ZERO_UUID },
            { name: 'payments', topicId: ZERO_UUID },
          ],
          allowAutoTopicCreation: !(version >= 4),
          includeClusterAuthorizedOperations: false,
          includeTopicAuthorizedOperations: false,
        });
        // kafkajs sends "all topics" as an empty array in v0 (the handler reads it so), null from v1.
        const all = await kafkajsRequestBytes(kafkajsVersion, [], true);
        expect(decodeRequest(all, version).topics).toEqual(version === 0 ? [] : null);
        expectEveryTruncationRejected(some, version);
      });

      test.if(version <= KAFKAJS_VERSION_MAX)('encodes responses kafkajs decodes', async () => {
        const { response: kafkajsResponse } = kafkajsProtocol('metadata', version, { topics: [] });
        const decoded = await kafkajsResponse.decode(encodeResponse(version, SAMPLE_RESPONSE));
        expect(decoded).toEqual(asKafkajs(version, SAMPLE_RESPONSE));
      });

      test('rejects lengths that run past the frame with ProtocolError', () => {
        expectRejected(
          bytesOf(
            new KafkaWriter()
              .int32(INT32_MAX)
              .int16(3)
              .raw(new Uint8Array([0x61, 0x62, 0x63])),
          ),
          version,
        ); // huge count
        expectRejected(
          bytesOf(
            new KafkaWriter()
              .int32(1)
              .int16(100)
              .raw(new Uint8Array([0x61, 0x62, 0x63])),
          ),
          version,
        ); // long name
        expectRejected(bytesOf(new KafkaWriter().int32(1).int16(-1).raw(new Uint8Array(8))), version); // null name
        expectRejected(bytesOf(new KafkaWriter().int32(-2).raw(new Uint8Array(8))), version); // negative count
      });
    });
  }

  test('v7 and v8 responses have the exact bytes of the grammar (kafkajs stops at v6)', () => {
    const response: MetadataResponse = {
      throttleTimeMs: 0,
      brokers: [{ nodeId: 1, host: 'h', port: 9092, rack: null }],
      clusterId: 'c',
      controllerId: 1,
      topics: [
        {
          errorCode: 0,
          name: 't',
          isInternal: false,
          partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: 1, leaderEpoch: 5, replicaNodes: [1], isrNodes: [1], offlineReplicas: [] }],
          topicAuthorizedOperations: -0x8000_0000,
        },
      ],
      clusterAuthorizedOperations: -0x8000_0000,
    };
    const v7 = `
      00 00 00 00                     # throttle_time_ms
      00 00 00 01                     # brokers: 1
      00 00 00 01  00 01 68  00 00 23 84  ff ff   # node_id 1, host "h", port 9092, rack null
      00 01 63                        # cluster_id "c"
      00 00 00 01                     # controller_id
      00 00 00 01                     # topics: 1
      00 00  00 01 74  00             # error_code, name "t", is_internal false
      00 00 00 01                     # partitions: 1
      00 00  00 00 00 00  00 00 00 01  00 00 00 05   # error_code, partition_index, leader_id, leader_epoch
      00 00 00 01 00 00 00 01         # replica_nodes [1]
      00 00 00 01 00 00 00 01         # isr_nodes [1]
      00 00 00 00                     # offline_replicas []`;
    expect([...encodeResponse(7, response)]).toEqual(hex(v7));
    // v8 adds topic_authorized_operations after the partitions and cluster_authorized_operations at the end.
    expect([...encodeResponse(8, response)]).toEqual(hex(`${v7}\n 80 00 00 00  80 00 00 00`));
  });

  // v0 says "every topic" with an empty list, which the handler (knowing the version) reads so.
  test('v0 decodes an empty topic list as empty, and rejects a null one (not nullable before v1)', () => {
    expect(decodeRequest(new Uint8Array([0, 0, 0, 0]), 0).topics).toEqual([]);
    expect(decodeRequest(new Uint8Array([0xff, 0xff, 0xff, 0xff]), 1).topics).toBeNull();
    expectRejected(new Uint8Array([0xff, 0xff, 0xff, 0xff]), 0);
  });

  test('v8 reads both authorized-operations flags', () => {
    const bytes = new Uint8Array([0xff, 0xff, 0xff, 0xff, 1, 0, 1]);
    expect(decodeRequest(bytes, 8)).toEqual({
      topics: null,
      allowAutoTopicCreation: true,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: true,
    });
  });
});
