import { describe, expect, test } from 'bun:test';
import type { ApiCodec } from '../../src/broker/apis/api.ts';
import { createPartitionsCodec } from '../../src/broker/apis/create-partitions.ts';
import { createTopicsCodec } from '../../src/broker/apis/create-topics.ts';
import { deleteRecordsCodec } from '../../src/broker/apis/delete-records.ts';
import { deleteTopicsCodec } from '../../src/broker/apis/delete-topics.ts';
import { fetchCodec } from '../../src/broker/apis/fetch.ts';
import { findCoordinatorCodec } from '../../src/broker/apis/find-coordinator.ts';
import { heartbeatCodec } from '../../src/broker/apis/heartbeat.ts';
import { incrementalAlterConfigsCodec } from '../../src/broker/apis/incremental-alter-configs.ts';
import { initProducerIdCodec } from '../../src/broker/apis/init-producer-id.ts';
import { joinGroupCodec } from '../../src/broker/apis/join-group.ts';
import { leaveGroupCodec } from '../../src/broker/apis/leave-group.ts';
import { listOffsetsCodec } from '../../src/broker/apis/list-offsets.ts';
import { metadataCodec } from '../../src/broker/apis/metadata.ts';
import { offsetCommitCodec } from '../../src/broker/apis/offset-commit.ts';
import { offsetFetchCodec } from '../../src/broker/apis/offset-fetch.ts';
import { produceCodec } from '../../src/broker/apis/produce.ts';
import { syncGroupCodec } from '../../src/broker/apis/sync-group.ts';
import { apiVersionsCodec } from '../../src/broker/apis/api-versions.ts';
import { createAclsCodec } from '../../src/broker/apis/create-acls.ts';
import { deleteAclsCodec } from '../../src/broker/apis/delete-acls.ts';
import { describeAclsCodec } from '../../src/broker/apis/describe-acls.ts';
import { alterClientQuotasCodec } from '../../src/broker/apis/alter-client-quotas.ts';
import { describeClientQuotasCodec } from '../../src/broker/apis/describe-client-quotas.ts';
import { describeConfigsCodec } from '../../src/broker/apis/describe-configs.ts';
import { describeGroupsCodec } from '../../src/broker/apis/describe-groups.ts';
import { alterUserScramCredentialsCodec } from '../../src/broker/apis/alter-user-scram-credentials.ts';
import { saslAuthenticateCodec } from '../../src/broker/apis/sasl-authenticate.ts';
import { saslHandshakeCodec } from '../../src/broker/apis/sasl-handshake.ts';
import type { Decoded, Draft } from '../../src/protocol/message-codec.ts';
import { KafkaReader } from '../../src/protocol/reader.ts';
import { KafkaWriter } from '../../src/protocol/writer.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { assignRoundRobin, decodeAssignment, decodeSubscription, encodeAssignment, encodeSubscription } from '../../src/sim/client/consumer-protocol.ts';
import { fetchedRecords } from '../../src/sim/client/fetch-records.ts';
import * as wire from '../../src/sim/client/wire.ts';

const bytes = (...values: number[]) => Uint8Array.from(values);

function joined(writer: KafkaWriter): Uint8Array {
  return Buffer.concat(writer.chunks());
}

/** Client request → broker decode, and broker response → client decode, each consuming every byte. */
function roundTrip<Request, Response>(
  client: wire.ClientApi<Draft<Request>, Decoded<Response>>,
  server: ApiCodec<Request, Response>,
  request: Draft<Request>,
  response: Response,
): { request: Request; response: Decoded<Response> } {
  expect(client.key).toBe(server.key);
  expect(client.version).toBeGreaterThanOrEqual(server.minVersion);
  expect(client.flexible).toBe(server.flexibleFrom !== null && client.version >= server.flexibleFrom);
  const requestWriter = new KafkaWriter();
  client.encodeRequest(requestWriter, request);
  const requestReader = new KafkaReader(joined(requestWriter));
  const decodedRequest = server.decodeRequest(requestReader, client.version);
  expect(requestReader.remaining).toBe(0);
  const responseWriter = new KafkaWriter();
  if (client.flexible) responseWriter.emptyTaggedFields(); // response header v1's, which the broker writes before the body
  server.encodeResponse(responseWriter, client.version, response);
  const responseReader = new KafkaReader(joined(responseWriter));
  const decodedResponse = client.decodeResponse(responseReader);
  expect(responseReader.remaining).toBe(0);
  return { request: decodedRequest, response: decodedResponse };
}

/**
 * Every field the client sets reaches the broker, and every field the broker answers reaches the
 * client; the fields either side leaves out arrive as their defaults (checked for every API and
 * version against Kafka's grammar in test/protocol/schema-codecs.test.ts).
 */
function expectRoundTrip<Request, Response>(client: wire.ClientApi<Draft<Request>, Decoded<Response>>, server: ApiCodec<Request, Response>, request: Draft<Request>, response: Response): void {
  const decoded = roundTrip(client, server, request, response);
  expect(decoded.request).toMatchObject(request as object);
  expect(decoded.response).toMatchObject(response as object);
}

/** A partition's fetched records as the fetcher reads them: one view, or a list of chunks. */
function chunksOf(records: Uint8Array | readonly Uint8Array[] | null): readonly Uint8Array[] | null {
  return records instanceof Uint8Array ? [records] : records;
}

describe('client codecs against the broker codecs', () => {
  test('Metadata v8', () => {
    expectRoundTrip(
      wire.metadataApi,
      metadataCodec,
      { topics: [{ name: 'a' }, { name: 'b' }], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: true },
      {
        throttleTimeMs: 3,
        brokers: [
          { nodeId: 1, host: 'h1', port: 9092, rack: null },
          { nodeId: 2, host: 'h2', port: 9093, rack: 'r' },
        ],
        clusterId: 'c',
        controllerId: 1,
        topics: [
          {
            errorCode: 0,
            name: 'a',
            isInternal: false,
            partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: 2, leaderEpoch: 7, replicaNodes: [2, 1], isrNodes: [2], offlineReplicas: [1] }],
            topicAuthorizedOperations: -2147483648,
          },
          { errorCode: 3, name: 'b', isInternal: false, partitions: [], topicAuthorizedOperations: 5 },
        ],
        clusterAuthorizedOperations: -2147483648,
      },
    );
    // null topics: every topic
    expect(
      roundTrip(
        wire.metadataApi,
        metadataCodec,
        { topics: null, allowAutoTopicCreation: true, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false },
        { throttleTimeMs: 0, brokers: [], clusterId: null, controllerId: -1, topics: [], clusterAuthorizedOperations: 0 },
      ).request.topics,
    ).toBeNull();
  });

  test('Produce v8, with an idempotent batch', () => {
    const records = buildRecordBatch([{ value: 'p/0' }, { value: 'p/1' }], { nowMs: 1, producerId: 42, producerEpoch: 3, baseSequence: 10 });
    expectRoundTrip(
      wire.produceApi,
      produceCodec,
      { transactionalId: null, acks: -1, timeoutMs: 2500, topicData: [{ name: 't', partitionData: [{ index: 2, records }] }] },
      {
        responses: [
          {
            name: 't',
            partitionResponses: [
              { index: 2, errorCode: 45, baseOffset: 17, logAppendTimeMs: -1, logStartOffset: 4, recordErrors: [{ batchIndex: 0, batchIndexErrorMessage: 'x' }], errorMessage: 'out of order' },
            ],
          },
        ],
        throttleTimeMs: 0,
      },
    );
  });

  test('Fetch v11: the records come back as one view of their bytes', () => {
    const first = buildRecordBatch([{ value: 'a' }], { nowMs: 1, baseOffset: 5 });
    const second = buildRecordBatch([{ value: 'b' }, { value: 'c' }], { nowMs: 1, baseOffset: 6 });
    const request = {
      replicaId: -1,
      maxWaitMs: 200,
      minBytes: 1,
      maxBytes: 1000,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [{ topic: 't', partitions: [{ partition: 1, currentLeaderEpoch: 4, fetchOffset: 5, logStartOffset: -1, partitionMaxBytes: 1000 }] }],
      forgottenTopicsData: [],
      rackId: '',
    };
    const partition = { partitionIndex: 1, errorCode: 0, highWatermark: 8, lastStableOffset: 8, logStartOffset: 0, abortedTransactions: null, preferredReadReplica: -1 };
    const decoded = roundTrip(wire.fetchApi, fetchCodec, request, {
      throttleTimeMs: 0,
      errorCode: 0,
      sessionId: 0,
      responses: [{ topic: 't', partitions: [{ ...partition, records: [first, second] }] }],
    });
    expect(decoded.request).toMatchObject(request);
    const fetched = decoded.response.responses[0]!.partitions[0]!;
    expect(fetched).toMatchObject(partition);
    expect(chunksOf(fetched.records)!.map((chunk) => [...chunk])).toEqual([[...first, ...second]]);
    const records = fetchedRecords(chunksOf(fetched.records), 6);
    expect(records).toEqual({
      records: [
        { offset: 6, value: 'b' },
        { offset: 7, value: 'c' },
      ],
      nextOffset: 8,
    });
    const aborted = [{ producerId: 9, firstOffset: 3 }];
    const failed = roundTrip(wire.fetchApi, fetchCodec, request, {
      throttleTimeMs: 1,
      errorCode: 0,
      sessionId: 0,
      responses: [{ topic: 't', partitions: [{ ...partition, errorCode: 1, abortedTransactions: aborted, records: [] }] }],
    }).response.responses[0]!.partitions[0]!;
    expect(failed).toMatchObject({ ...partition, errorCode: 1, abortedTransactions: aborted });
    expect(chunksOf(failed.records)!.map((chunk) => chunk.length)).toEqual([0]); // empty, not null
  });

  test('a fetched batch cut short at the end is left for the next fetch', () => {
    const whole = buildRecordBatch([{ value: 'a' }], { nowMs: 1, baseOffset: 0 });
    const cut = buildRecordBatch([{ value: 'b' }], { nowMs: 1, baseOffset: 1 }).subarray(0, 20);
    expect(fetchedRecords([Uint8Array.from(Buffer.concat([whole, cut]))], 0)).toEqual({ records: [{ offset: 0, value: 'a' }], nextOffset: 1 });
  });

  test('ListOffsets v2', () => {
    expectRoundTrip(
      wire.listOffsetsApi,
      listOffsetsCodec,
      { replicaId: -1, isolationLevel: 0, topics: [{ name: 't', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -2, maxNumOffsets: 1 }] }] },
      { throttleTimeMs: 0, topics: [{ name: 't', partitions: [{ partitionIndex: 0, errorCode: 0, oldStyleOffsets: [], timestamp: -1, offset: 12, leaderEpoch: -1 }] }] },
    );
  });

  test('InitProducerId v1', () => {
    expectRoundTrip(
      wire.initProducerIdApi,
      initProducerIdCodec,
      { transactionalId: null, transactionTimeoutMs: 60000 },
      { throttleTimeMs: 0, errorCode: 0, producerId: 2 ** 40 + 5, producerEpoch: 9 },
    );
  });

  test('CreateTopics v4 and DeleteTopics v3', () => {
    expectRoundTrip(
      wire.createTopicsApi,
      createTopicsCodec,
      {
        topics: [{ name: 't', numPartitions: 3, replicationFactor: 2, assignments: [{ partitionIndex: 0, brokerIds: [1, 2] }], configs: [{ name: 'retention.ms', value: null }] }],
        timeoutMs: 100,
        validateOnly: true,
      },
      { throttleTimeMs: 0, topics: [{ name: 't', errorCode: 36, errorMessage: 'exists' }] },
    );
    expectRoundTrip(
      wire.deleteTopicsApi,
      deleteTopicsCodec,
      { topicNames: ['a', 'b'], timeoutMs: 100 },
      {
        throttleTimeMs: 0,
        responses: [
          { name: 'a', errorCode: 0 },
          { name: 'b', errorCode: 3 },
        ],
      },
    );
  });

  test('DeleteRecords v1, CreatePartitions v1 and IncrementalAlterConfigs v0 (issue 12)', () => {
    expectRoundTrip(
      wire.deleteRecordsApi,
      deleteRecordsCodec,
      {
        topics: [
          {
            name: 't',
            partitions: [
              { partitionIndex: 2, offset: -1 },
              { partitionIndex: 0, offset: 2 ** 33 },
            ],
          },
        ],
        timeoutMs: 100,
      },
      {
        throttleTimeMs: 0,
        topics: [
          {
            name: 't',
            partitions: [
              { partitionIndex: 2, lowWatermark: 7, errorCode: 0 },
              { partitionIndex: 0, lowWatermark: -1, errorCode: 1 },
            ],
          },
        ],
      },
    );
    expectRoundTrip(
      wire.createPartitionsApi,
      createPartitionsCodec,
      { topics: [{ name: 't', count: 5, assignments: null }], timeoutMs: 100, validateOnly: false },
      { throttleTimeMs: 0, results: [{ name: 't', errorCode: 37, errorMessage: 'no increase' }] },
    );
    expectRoundTrip(
      wire.incrementalAlterConfigsApi,
      incrementalAlterConfigsCodec,
      {
        resources: [
          {
            resourceType: 2,
            resourceName: 't',
            configs: [
              { name: 'message.timestamp.type', configOperation: 0, value: 'LogAppendTime' },
              { name: 'retention.bytes', configOperation: 1, value: null },
            ],
          },
        ],
        validateOnly: false,
      },
      { throttleTimeMs: 0, responses: [{ errorCode: 40, errorMessage: 'bad', resourceType: 2, resourceName: 't' }] },
    );
  });

  test('FindCoordinator v2, JoinGroup v5, SyncGroup v3, Heartbeat v3, LeaveGroup v3', () => {
    expectRoundTrip(wire.findCoordinatorApi, findCoordinatorCodec, { key: 'g', keyType: 0 }, { throttleTimeMs: 0, errorCode: 0, errorMessage: null, nodeId: 3, host: 'h', port: 9 });
    expectRoundTrip(
      wire.joinGroupApi,
      joinGroupCodec,
      {
        groupId: 'g',
        sessionTimeoutMs: 10000,
        rebalanceTimeoutMs: 5000,
        memberId: '',
        groupInstanceId: null,
        protocolType: 'consumer',
        protocols: [{ name: 'roundrobin', metadata: bytes(0, 0, 0, 0, 0, 0) }],
      },
      {
        throttleTimeMs: 0,
        errorCode: 0,
        generationId: 4,
        protocolName: 'roundrobin',
        leader: 'm1',
        memberId: 'm1',
        members: [
          { memberId: 'm1', groupInstanceId: null, metadata: bytes(1, 2) },
          { memberId: 'm2', groupInstanceId: 'i', metadata: bytes(3) },
        ],
      },
    );
    expectRoundTrip(
      wire.syncGroupApi,
      syncGroupCodec,
      { groupId: 'g', generationId: 4, memberId: 'm1', groupInstanceId: null, assignments: [{ memberId: 'm1', assignment: bytes(9) }] },
      { throttleTimeMs: 0, errorCode: 27, assignment: bytes(1, 2, 3) },
    );
    expectRoundTrip(wire.heartbeatApi, heartbeatCodec, { groupId: 'g', generationId: 4, memberId: 'm1', groupInstanceId: null }, { throttleTimeMs: 0, errorCode: 25 });
    expectRoundTrip(
      wire.leaveGroupApi,
      leaveGroupCodec,
      { groupId: 'g', members: [{ memberId: 'm1', groupInstanceId: null }] },
      { throttleTimeMs: 0, errorCode: 0, members: [{ memberId: 'm1', groupInstanceId: null, errorCode: 0 }] },
    );
  });

  test('OffsetCommit v7 and OffsetFetch v5', () => {
    expectRoundTrip(
      wire.offsetCommitApi,
      offsetCommitCodec,
      {
        groupId: 'g',
        generationIdOrMemberEpoch: 4,
        memberId: 'm1',
        groupInstanceId: null,
        retentionTimeMs: -1,
        topics: [{ name: 't', partitions: [{ partitionIndex: 1, committedOffset: 2 ** 33, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: null }] }],
      },
      { throttleTimeMs: 0, topics: [{ name: 't', partitions: [{ partitionIndex: 1, errorCode: 22 }] }] },
    );
    expectRoundTrip(
      wire.offsetFetchApi,
      offsetFetchCodec,
      { groupId: 'g', topics: [{ name: 't', partitionIndexes: [0, 1] }] },
      {
        throttleTimeMs: 0,
        topics: [
          {
            name: 't',
            partitions: [
              { partitionIndex: 0, committedOffset: 5, committedLeaderEpoch: -1, metadata: '', errorCode: 0 },
              { partitionIndex: 1, committedOffset: -1, committedLeaderEpoch: 2, metadata: null, errorCode: 0 },
            ],
          },
        ],
        errorCode: 16,
      },
    );
  });

  test('ApiVersions v0, SaslHandshake v0 and v1, SaslAuthenticate v1 (issue 13)', () => {
    expectRoundTrip(wire.apiVersionsApi, apiVersionsCodec, {}, { errorCode: 0, apiKeys: [{ apiKey: 17, minVersion: 0, maxVersion: 1 }] });
    for (const api of [wire.saslHandshakeV0Api, wire.saslHandshakeApi])
      expectRoundTrip(api, saslHandshakeCodec, { mechanism: 'SCRAM-SHA-256' }, { errorCode: 33, mechanisms: ['PLAIN', 'SCRAM-SHA-512'] });
    expect([wire.saslHandshakeV0Api.version, wire.saslHandshakeApi.version]).toEqual([0, 1]);
    expectRoundTrip(
      wire.saslAuthenticateApi,
      saslAuthenticateCodec,
      { authBytes: bytes(0, 97, 0, 98) },
      { errorCode: 58, errorMessage: 'Authentication failed', authBytes: bytes(), sessionLifetimeMs: 4_000 },
    );
  });

  test('CreateAcls v1 and DeleteAcls v1 (issue 13)', () => {
    const creation = { resourceType: 2, resourceName: 't', resourcePatternType: 4, principal: 'User:p0', host: '*', operation: 4, permissionType: 2 };
    expectRoundTrip(wire.createAclsApi, createAclsCodec, { creations: [creation] }, { throttleTimeMs: 0, results: [{ errorCode: 0, errorMessage: null }] });
    const filter = { resourceTypeFilter: 2, resourceNameFilter: 't', patternTypeFilter: 3, principalFilter: 'User:p0', hostFilter: '*', operation: 4, permissionType: 2 };
    expectRoundTrip(
      wire.deleteAclsApi,
      deleteAclsCodec,
      { filters: [filter] },
      {
        throttleTimeMs: 0,
        filterResults: [
          {
            errorCode: 0,
            errorMessage: null,
            matchingAcls: [{ errorCode: 0, errorMessage: null, resourceType: 2, resourceName: 't', patternType: 3, principal: 'User:p0', host: '*', operation: 4, permissionType: 2 }],
          },
        ],
      },
    );
  });
});

describe("the access prober's and the credential and quota changes' APIs (issue 25)", () => {
  test('DescribeAcls v1, DescribeConfigs v3, DescribeGroups v4', () => {
    const filter = { resourceTypeFilter: 1, resourceNameFilter: null, patternTypeFilter: 1, principalFilter: null, hostFilter: null, operation: 1, permissionType: 1 };
    const acl = { principal: 'User:p0', host: '*', operation: 4, permissionType: 3 };
    expectRoundTrip(wire.describeAclsApi, describeAclsCodec, filter, {
      throttleTimeMs: 0,
      errorCode: 0,
      errorMessage: null,
      resources: [{ resourceType: 2, resourceName: 't', patternType: 4, acls: [acl] }],
    });
    const resource = { resourceType: 4, resourceName: '1', configurationKeys: null };
    const result = { errorCode: 29, errorMessage: 'Cluster authorization failed.', resourceType: 4, resourceName: '1', configs: [] };
    expectRoundTrip(wire.describeConfigsApi, describeConfigsCodec, { resources: [resource], includeSynonyms: false, includeDocumentation: false }, { throttleTimeMs: 0, results: [result] });
    const group = { errorCode: 30, groupId: 'g0', groupState: '', protocolType: '', protocolData: '', members: [], authorizedOperations: -2147483648 };
    expectRoundTrip(wire.describeGroupsApi, describeGroupsCodec, { groups: ['g0'], includeAuthorizedOperations: false }, { throttleTimeMs: 0, groups: [group] });
  });

  test('AlterClientQuotas v0 and DescribeClientQuotas v0', () => {
    const entity = [{ entityType: 'user', entityName: 'p0' }];
    expectRoundTrip(
      wire.alterClientQuotasApi,
      alterClientQuotasCodec,
      { entries: [{ entity, ops: [{ key: 'producer_byte_rate', value: 1024, remove: false }] }], validateOnly: true },
      { throttleTimeMs: 0, entries: [{ errorCode: 0, errorMessage: null, entity }] },
    );
    expectRoundTrip(
      wire.describeClientQuotasApi,
      describeClientQuotasCodec,
      { components: [{ entityType: 'user', matchType: 0, match: 'p0' }], strict: false },
      { throttleTimeMs: 0, errorCode: 0, errorMessage: null, entries: [{ entity, values: [{ key: 'producer_byte_rate', value: 1024 }] }] },
    );
  });

  test('AlterUserScramCredentials v0: a flexible version, request header v2 and response header v1', () => {
    const upsertion = { name: 'p0', mechanism: 1, iterations: 4096, salt: bytes(1, 2, 3), saltedPassword: bytes(4, 5, 6) };
    expectRoundTrip(
      wire.alterUserScramCredentialsApi,
      alterUserScramCredentialsCodec,
      { deletions: [{ name: 'reader', mechanism: 2 }], upsertions: [upsertion] },
      { throttleTimeMs: 0, results: [{ user: 'p0', errorCode: 0, errorMessage: null }] },
    );
    const header = new KafkaWriter();
    wire.writeRequestHeader(header, wire.alterUserScramCredentialsApi, 7, 'admin');
    const reader = new KafkaReader(joined(header));
    expect([reader.int16(), reader.int16(), reader.int32(), reader.nullableString()]).toEqual([51, 0, 7, 'admin']);
    reader.skipTaggedFields();
    expect(reader.remaining).toBe(0);
  });
});

describe('the consumer protocol', () => {
  test('subscription and assignment bytes round-trip', () => {
    expect(decodeSubscription(encodeSubscription(['a', 'b']))).toEqual(['a', 'b']);
    expect(decodeAssignment(encodeAssignment([{ topic: 'a', partitions: [0, 2] }]))).toEqual([{ topic: 'a', partitions: [0, 2] }]);
    expect(decodeAssignment(new Uint8Array(0))).toEqual([]);
  });

  test('round-robin deals every partition once, members in id order', () => {
    const assigned = assignRoundRobin(
      ['m2', 'm1'],
      new Map([
        ['b', 1],
        ['a', 3],
      ]),
    );
    expect(assigned.get('m1')).toEqual([{ topic: 'a', partitions: [0, 2] }]);
    expect(assigned.get('m2')).toEqual([
      { topic: 'a', partitions: [1] },
      { topic: 'b', partitions: [0] },
    ]);
  });
});
