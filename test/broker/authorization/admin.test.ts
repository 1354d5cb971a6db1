// The admin APIs under ACLs, beyond the common checks: what DeleteTopics tells a client that may
// describe a topic but not delete it (Kafka's ControllerApis.deleteTopics), CreateTopics without
// DESCRIBE_CONFIGS, the config APIs' messages and order, InitProducerId's by-type check, and the
// authorized operations of DescribeCluster.
import { expect, setDefaultTimeout, test } from 'bun:test';
import type { AlterConfigsRequest } from '../../../src/broker/apis/alter-configs.ts';
import type { CreateTopicsRequest } from '../../../src/broker/apis/create-topics.ts';
import type { DeleteTopicsRequest } from '../../../src/broker/apis/delete-topics.ts';
import type { DescribeClusterRequest } from '../../../src/broker/apis/describe-cluster.ts';
import type { DescribeConfigsRequest } from '../../../src/broker/apis/describe-configs.ts';
import type { InitProducerIdRequest } from '../../../src/broker/apis/init-producer-id.ts';
import { handleDescribeCluster } from '../../../src/broker/handlers/cluster.ts';
import { handleAlterConfigs, handleDescribeConfigs } from '../../../src/broker/handlers/configs.ts';
import { handleFindCoordinator, handleInitProducerId } from '../../../src/broker/handlers/coordinator.ts';
import { handleCreateTopics, handleDeleteTopics } from '../../../src/broker/handlers/topics.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { completeMessage } from '../../../src/protocol/message-codec.ts';
import { alterConfigsRequestSchema } from '../../../src/protocol/messages/alter-configs.ts';
import { createTopicsRequestSchema } from '../../../src/protocol/messages/create-topics.ts';
import { deleteTopicsRequestSchema } from '../../../src/protocol/messages/delete-topics.ts';
import { describeClusterRequestSchema } from '../../../src/protocol/messages/describe-cluster.ts';
import { describeConfigsRequestSchema } from '../../../src/protocol/messages/describe-configs.ts';
import { initProducerIdRequestSchema } from '../../../src/protocol/messages/init-producer-id.ts';
import { AclOperation, AclPermissionType, CLUSTER_NAME, PatternType, ResourceType } from '../../../src/security/acl/model.ts';
import { ZERO_UUID } from '../../../src/util/uuid.ts';
import { findCoordinatorRequest } from '../../support/requests.ts';
import { acl } from '../../security/acl/helpers.ts';
import { ALICE, BOB, sessionOf, TOPIC, withBroker } from './authz-broker.ts';

setDefaultTimeout(30_000);

const topicAcl = (operation: AclOperation, name = TOPIC) => acl({ resourceType: ResourceType.TOPIC, name, operation, principal: ALICE });
const clusterAcl = (operation: AclOperation) => acl({ resourceType: ResourceType.CLUSTER, name: CLUSTER_NAME, operation, principal: ALICE });
const deleteTopics = (topics: { name: string | null; topicId: string }[]) => completeMessage<DeleteTopicsRequest>(deleteTopicsRequestSchema, { topics, timeoutMs: 1_000 });

test('DeleteTopics: named without DESCRIBE, TOPIC_AUTHORIZATION_FAILED before existence; with DESCRIBE but not DELETE, an absent topic is UNKNOWN_TOPIC_OR_PARTITION', async () => {
  await withBroker({ acls: [topicAcl(AclOperation.DESCRIBE), topicAcl(AclOperation.DESCRIBE, 'absent')] }, async ({ context }) => {
    const answer = await handleDeleteTopics(context, deleteTopics(['absent', 'hidden', TOPIC].map((name) => ({ name, topicId: ZERO_UUID }))), sessionOf(ALICE));
    expect(answer.responses.map(({ name, errorCode, errorMessage }) => ({ name, errorCode, errorMessage }))).toEqual([
      { name: 'absent', errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'This server does not host this topic-partition.' },
      { name: 'hidden', errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: 'Topic authorization failed.' },
      { name: TOPIC, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: 'Topic authorization failed.' },
    ]);
    expect(await context.topology.partitionCount(TOPIC)).toBe(1);
  });
});

test('DeleteTopics by id without DELETE: its name is told only to a client that may DESCRIBE it; DELETE on the cluster deletes any', async () => {
  const opsDeletesAny = acl({ resourceType: ResourceType.CLUSTER, name: CLUSTER_NAME, operation: AclOperation.DELETE, principal: 'User:ops' });
  await withBroker({ acls: [topicAcl(AclOperation.DESCRIBE), opsDeletesAny] }, async ({ context }) => {
    const id = context.topology.topicId(TOPIC)!;
    const byId = async (principal: string) => (await handleDeleteTopics(context, deleteTopics([{ name: null, topicId: id }]), sessionOf(principal))).responses[0]!;
    expect(await byId(ALICE)).toMatchObject({ name: TOPIC, topicId: id, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED });
    expect(await byId(BOB)).toMatchObject({ name: null, topicId: id, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED });
    expect(await byId('User:ops')).toMatchObject({ name: TOPIC, topicId: id, errorCode: ErrorCode.NONE });
    expect(await context.topology.partitionCount(TOPIC)).toBeNull();
  });
});

test('CreateTopics: without CREATE nothing is created (Kafka\'s "Authorization failed."); without DESCRIBE_CONFIGS the topic is created but its configs are not told', async () => {
  const create = (names: string[]) =>
    completeMessage<CreateTopicsRequest>(createTopicsRequestSchema, {
      topics: names.map((name) => ({ name, numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] })),
      timeoutMs: 1_000,
      validateOnly: false,
    });
  await withBroker(
    {
      acls: [
        acl({ resourceType: ResourceType.TOPIC, name: 'c-', patternType: PatternType.PREFIXED, operation: AclOperation.CREATE, principal: ALICE }),
        topicAcl(AclOperation.DESCRIBE_CONFIGS, 'c-seen'),
      ],
    },
    async ({ context }) => {
      const [refused, blind, seen] = (await handleCreateTopics(context, create(['other', 'c-blind', 'c-seen']), sessionOf(ALICE))).topics;
      expect(refused).toEqual({ name: 'other', errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: 'Authorization failed.', configs: null });
      expect(await context.topology.partitionCount('other')).toBeNull();
      expect(blind).toEqual({
        name: 'c-blind',
        topicId: context.topology.topicId('c-blind')!,
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        topicConfigErrorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        configs: [],
      });
      expect(await context.topology.partitionCount('c-blind')).toBe(2);
      expect(seen).toMatchObject({ name: 'c-seen', errorCode: ErrorCode.NONE, numPartitions: 2, replicationFactor: 1 });
      expect(seen!.configs!.length).toBeGreaterThan(0);
    },
  );
});

test("DescribeConfigs refusals carry Kafka's messages; AlterConfigs refuses a duplicate before asking the ACLs", async () => {
  await withBroker({ acls: [] }, async ({ context }) => {
    const described = await handleDescribeConfigs(
      context,
      completeMessage<DescribeConfigsRequest>(describeConfigsRequestSchema, {
        resources: [
          { resourceType: 2, resourceName: TOPIC, configurationKeys: null },
          { resourceType: 4, resourceName: '1', configurationKeys: null },
        ],
      }),
      sessionOf(BOB),
    );
    expect(described.results.map(({ errorCode, errorMessage, configs }) => ({ errorCode, errorMessage, configs }))).toEqual([
      { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: 'Topic authorization failed.', configs: [] },
      { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Cluster authorization failed.', configs: [] },
    ]);
    const twice = { resourceType: 2, resourceName: TOPIC, configs: [{ name: 'retention.ms', value: '1' }] };
    const altered = await handleAlterConfigs(
      context,
      completeMessage<AlterConfigsRequest>(alterConfigsRequestSchema, { resources: [twice, twice, { resourceType: 2, resourceName: 'absent', configs: [] }], validateOnly: false }),
      sessionOf(BOB),
    );
    expect(altered.responses.map((r) => r.errorCode)).toEqual([ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST, ErrorCode.TOPIC_AUTHORIZATION_FAILED]);
  });
});

test('InitProducerId: WRITE on any topic (a prefix will do) allows an idempotent producer, unless a DENY on * dominates; a transactional id needs WRITE on it', async () => {
  const init = (transactionalId: string | null) =>
    completeMessage<InitProducerIdRequest>(initProducerIdRequestSchema, { transactionalId, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 });
  const writePrefix = acl({ resourceType: ResourceType.TOPIC, name: 'orders-', patternType: PatternType.PREFIXED, operation: AclOperation.WRITE, principal: ALICE });
  const denyAll = acl({ resourceType: ResourceType.TOPIC, name: '*', operation: AclOperation.WRITE, principal: ALICE, permissionType: AclPermissionType.DENY });
  await withBroker({ acls: [writePrefix] }, async ({ context }) => {
    expect((await handleInitProducerId(context, init(null), sessionOf(ALICE))).errorCode).toBe(ErrorCode.NONE);
    expect(await handleInitProducerId(context, init(null), sessionOf(BOB))).toEqual({ throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, producerId: -1, producerEpoch: -1 });
    // Not transactions: an allowed transactional id is still refused, with the same code.
    expect((await handleInitProducerId(context, init('tx'), sessionOf(ALICE))).errorCode).toBe(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
  });
  await withBroker({ acls: [writePrefix, denyAll] }, async ({ context }) => {
    expect((await handleInitProducerId(context, init(null), sessionOf(ALICE))).errorCode).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
  });
});

test("FindCoordinator before v4 answers a refusal with the error's own message", async () => {
  await withBroker({ acls: [] }, async ({ context }) => {
    expect(handleFindCoordinator(context, findCoordinatorRequest({ key: 'g', keyType: 0 }), sessionOf(BOB))).toMatchObject({
      errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
      errorMessage: 'Group authorization failed.',
      nodeId: -1,
      host: '',
      port: -1,
    });
    expect(handleFindCoordinator(context, findCoordinatorRequest({ key: 'tx', keyType: 1 }), sessionOf(BOB))).toMatchObject({
      errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
      errorMessage: 'Transactional Id authorization failed.',
    });
  });
});

test('DescribeCluster answers anyone; DESCRIBE on the cluster decides only the authorized operations asked for', async () => {
  const describe = (include: boolean) => completeMessage<DescribeClusterRequest>(describeClusterRequestSchema, { includeClusterAuthorizedOperations: include, endpointType: 1 });
  await withBroker({ acls: [clusterAcl(AclOperation.DESCRIBE), clusterAcl(AclOperation.IDEMPOTENT_WRITE)] }, async ({ context }) => {
    const alice = handleDescribeCluster(context, describe(true), sessionOf(ALICE));
    expect(alice.errorCode).toBe(ErrorCode.NONE);
    expect(alice.clusterAuthorizedOperations).toBe((1 << AclOperation.DESCRIBE) | (1 << AclOperation.IDEMPOTENT_WRITE));
    const bob = handleDescribeCluster(context, describe(true), sessionOf(BOB));
    expect(bob.errorCode).toBe(ErrorCode.NONE);
    expect(bob.brokers).toHaveLength(1);
    expect(bob.clusterAuthorizedOperations).toBe(0);
    expect(handleDescribeCluster(context, describe(false), sessionOf(ALICE)).clusterAuthorizedOperations).toBe(-2147483648);
  });
});
