import { describe, expect, test } from 'bun:test';
import {
  metadataCodec,
  type MetadataRequest,
  type MetadataResponse,
  type MetadataResponsePartition,
  type MetadataResponseTopic,
} from '../../../src/broker/apis/metadata.ts';
import { KafkaReader } from '../../../src/broker/protocol/reader.ts';
import { KafkaWriter } from '../../../src/broker/protocol/writer.ts';
import { SeededRandom } from '../../../src/util/random.ts';
import { bytesOf, codecHarness, hex, kafkajsBytes, kafkajsProtocol } from '../../support/codec-harness.ts';

const VERSIONS = Array.from({ length: metadataCodec.maxVersion + 1 }, (_, version) => version);
/** kafkajs 2.2.4 speaks Metadata v0-6. */
const KAFKAJS_VERSION_MAX = 6;
const RANDOM_CASES = 25;
const INT32_MAX = 0x7fff_ffff;

// ---- helpers (test/support/codec-harness.ts) ----

const { decodeRequest, encodeResponse, expectRejected, expectEveryTruncationRejected, expectCorruptionsTotal } = codecHarness(metadataCodec);

async function kafkajsRequestBytes(version: number, topics: string[], allowAutoTopicCreation: boolean): Promise<Uint8Array> {
  const { request } = kafkajsProtocol('metadata', version, { topics, allowAutoTopicCreation });
  expect(request.apiKey).toBe(metadataCodec.key);
  return kafkajsBytes(request);
}

// ---- test-only request encoder and response decoder (the other sides of the codec) ----

function encodeRequest(version: number, request: MetadataRequest): Uint8Array {
  const writer = new KafkaWriter();
  if (request.topics === null) writer.int32(version === 0 ? 0 : -1);
  else writer.array(request.topics, (w, topic) => w.string(topic.name));
  if (version >= 4) writer.boolean(request.allowAutoTopicCreation);
  if (version >= 8) writer.boolean(request.includeClusterAuthorizedOperations).boolean(request.includeTopicAuthorizedOperations);
  return bytesOf(writer);
}

function readInt32Array(reader: KafkaReader): number[] {
  return reader.array((r) => r.int32(), 4);
}

function decodePartition(reader: KafkaReader, version: number): MetadataResponsePartition {
  const errorCode = reader.int16();
  const partitionIndex = reader.int32();
  const leaderId = reader.int32();
  const leaderEpoch = version >= 7 ? reader.int32() : -1;
  const replicaNodes = readInt32Array(reader);
  const isrNodes = readInt32Array(reader);
  const offlineReplicas = version >= 5 ? readInt32Array(reader) : [];
  return { errorCode, partitionIndex, leaderId, leaderEpoch, replicaNodes, isrNodes, offlineReplicas };
}

function decodeTopic(reader: KafkaReader, version: number): MetadataResponseTopic {
  const errorCode = reader.int16();
  const name = reader.string();
  const isInternal = version >= 1 ? reader.boolean() : false;
  const partitions = reader.array((r) => decodePartition(r, version));
  const topicAuthorizedOperations = version >= 8 ? reader.int32() : -0x8000_0000;
  return { errorCode, name, isInternal, partitions, topicAuthorizedOperations };
}

function decodeResponse(bytes: Uint8Array, version: number): MetadataResponse {
  const reader = new KafkaReader(bytes);
  const throttleTimeMs = version >= 3 ? reader.int32() : 0;
  const brokers = reader.array((r) => {
    const nodeId = r.int32();
    const host = r.string();
    const port = r.int32();
    const rack = version >= 1 ? r.nullableString() : null;
    return { nodeId, host, port, rack };
  });
  const clusterId = version >= 2 ? reader.nullableString() : null;
  const controllerId = version >= 1 ? reader.int32() : -1;
  const topics = reader.array((r) => decodeTopic(r, version));
  const clusterAuthorizedOperations = version >= 8 ? reader.int32() : -0x8000_0000;
  expect(reader.remaining).toBe(0);
  return { throttleTimeMs, brokers, clusterId, controllerId, topics, clusterAuthorizedOperations };
}

// ---- random values, and what survives a version ----

function randomName(random: SeededRandom): string {
  const alphabet = ['a', 'b', 'z', '.', '_', '-', '9', 'é', '🚢'];
  return Array.from({ length: random.nextInt(12) }, () => alphabet[random.nextInt(alphabet.length)]).join('');
}

function randomInt32s(random: SeededRandom): number[] {
  return Array.from({ length: random.nextInt(4) }, () => random.nextInt(10));
}

function randomRequest(random: SeededRandom): MetadataRequest {
  const topics = random.next() < 0.2 ? null : Array.from({ length: 1 + random.nextInt(4) }, () => ({ name: randomName(random) }));
  return {
    topics,
    allowAutoTopicCreation: random.next() < 0.5,
    includeClusterAuthorizedOperations: random.next() < 0.5,
    includeTopicAuthorizedOperations: random.next() < 0.5,
  };
}

function requestAt(version: number, request: MetadataRequest): MetadataRequest {
  return {
    topics: request.topics,
    allowAutoTopicCreation: version >= 4 ? request.allowAutoTopicCreation : true,
    includeClusterAuthorizedOperations: version >= 8 ? request.includeClusterAuthorizedOperations : false,
    includeTopicAuthorizedOperations: version >= 8 ? request.includeTopicAuthorizedOperations : false,
  };
}

function randomPartition(random: SeededRandom): MetadataResponsePartition {
  return {
    errorCode: random.nextInt(3),
    partitionIndex: random.nextInt(100),
    leaderId: random.nextInt(5) - 1,
    leaderEpoch: random.nextInt(1000),
    replicaNodes: randomInt32s(random),
    isrNodes: randomInt32s(random),
    offlineReplicas: randomInt32s(random),
  };
}

function randomResponse(random: SeededRandom): MetadataResponse {
  return {
    throttleTimeMs: random.nextInt(1000),
    brokers: Array.from({ length: random.nextInt(3) }, () => ({
      nodeId: random.nextInt(10),
      host: `broker-${random.nextInt(10)}.local`,
      port: 9092 + random.nextInt(10),
      rack: random.next() < 0.5 ? null : randomName(random),
    })),
    clusterId: random.next() < 0.3 ? null : randomName(random),
    controllerId: random.nextInt(10),
    topics: Array.from({ length: random.nextInt(3) }, () => ({
      errorCode: random.nextInt(4),
      name: randomName(random),
      isInternal: random.next() < 0.5,
      partitions: Array.from({ length: random.nextInt(3) }, () => randomPartition(random)),
      topicAuthorizedOperations: random.nextInt(0x1000),
    })),
    clusterAuthorizedOperations: random.nextInt(0x1000),
  };
}

function responseAt(version: number, response: MetadataResponse): MetadataResponse {
  return {
    throttleTimeMs: version >= 3 ? response.throttleTimeMs : 0,
    brokers: response.brokers.map((broker) => ({ ...broker, rack: version >= 1 ? broker.rack : null })),
    clusterId: version >= 2 ? response.clusterId : null,
    controllerId: version >= 1 ? response.controllerId : -1,
    topics: response.topics.map((topic) => ({
      errorCode: topic.errorCode,
      name: topic.name,
      isInternal: version >= 1 ? topic.isInternal : false,
      partitions: topic.partitions.map((partition) => ({
        ...partition,
        leaderEpoch: version >= 7 ? partition.leaderEpoch : -1,
        offlineReplicas: version >= 5 ? partition.offlineReplicas : [],
      })),
      topicAuthorizedOperations: version >= 8 ? topic.topicAuthorizedOperations : -0x8000_0000,
    })),
    clusterAuthorizedOperations: version >= 8 ? response.clusterAuthorizedOperations : -0x8000_0000,
  };
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
  test('advertises key 3, versions 0-8, flexible from 9', () => {
    expect([metadataCodec.key, metadataCodec.minVersion, metadataCodec.maxVersion, metadataCodec.flexibleFrom]).toEqual([3, 0, 8, 9]);
  });

  for (const version of VERSIONS) {
    describe(`v${version}`, () => {
      // kafkajs has no v7 request; v7's request fields are v4-6's, so v6 bytes stand in for a v7 client.
      test.if(version <= KAFKAJS_VERSION_MAX + 1)('decodes requests encoded by kafkajs', async () => {
        const kafkajsVersion = Math.min(version, KAFKAJS_VERSION_MAX);
        const some = await kafkajsRequestBytes(kafkajsVersion, ['orders', 'payments'], false);
        expect(decodeRequest(some, version)).toEqual({
          topics: [{ name: 'orders' }, { name: 'payments' }],
          allowAutoTopicCreation: version >= 4 ? false : true,
          includeClusterAuthorizedOperations: false,
          includeTopicAuthorizedOperations: false,
        });
        // kafkajs sends an empty list as "all topics": an empty array in v0, null from v1.
        const all = await kafkajsRequestBytes(kafkajsVersion, [], true);
        expect(decodeRequest(all, version).topics).toBeNull();
        expectEveryTruncationRejected(some, version);
      });

      test.if(version <= KAFKAJS_VERSION_MAX)('encodes responses kafkajs decodes', async () => {
        const { response: kafkajsResponse } = kafkajsProtocol('metadata', version, { topics: [] });
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

      test('rejects lengths that run past the frame with ProtocolError', () => {
        expectRejected(bytesOf(new KafkaWriter().int32(INT32_MAX).int16(3).raw(new Uint8Array([0x61, 0x62, 0x63]))), version); // huge count
        expectRejected(bytesOf(new KafkaWriter().int32(1).int16(100).raw(new Uint8Array([0x61, 0x62, 0x63]))), version); // long name
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

  test('v0 treats an empty topic list as all topics, and rejects a null one (not nullable before v1)', () => {
    expect(decodeRequest(new Uint8Array([0, 0, 0, 0]), 0).topics).toBeNull();
    expect(decodeRequest(new Uint8Array([0, 0, 0, 0]), 1).topics).toEqual([]);
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
