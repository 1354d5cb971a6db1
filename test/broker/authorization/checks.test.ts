// Every API's ACL check, run the same four ways (one suite, one case per check): with the ACLs it
// needs the answer is the one a broker without an authorizer gives; a principal without them gets
// Kafka's authorization error; a super user needs no ACL; allow.everyone.if.no.acl.found allows
// while no ACL names the resource and stops once one does. The expected checks are Kafka 4.1's
// KafkaApis, ControllerApis and AuthHelper (see each handler's comment).
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { AlterConfigsRequest } from '../../../src/broker/apis/alter-configs.ts';
import type { CreatePartitionsRequest } from '../../../src/broker/apis/create-partitions.ts';
import type { CreateTopicsRequest } from '../../../src/broker/apis/create-topics.ts';
import type { DeleteRecordsRequest } from '../../../src/broker/apis/delete-records.ts';
import type { DeleteTopicsRequest } from '../../../src/broker/apis/delete-topics.ts';
import type { DescribeConfigsRequest } from '../../../src/broker/apis/describe-configs.ts';
import type { DescribeLogDirsRequest } from '../../../src/broker/apis/describe-log-dirs.ts';
import type { DescribeProducersRequest } from '../../../src/broker/apis/describe-producers.ts';
import type { IncrementalAlterConfigsRequest } from '../../../src/broker/apis/incremental-alter-configs.ts';
import type { InitProducerIdRequest } from '../../../src/broker/apis/init-producer-id.ts';
import type { OffsetForLeaderEpochRequest } from '../../../src/broker/apis/offset-for-leader-epoch.ts';
import type { ProduceRequest } from '../../../src/broker/apis/produce.ts';
import { handleAlterConfigs, handleDescribeConfigs, handleIncrementalAlterConfigs } from '../../../src/broker/handlers/configs.ts';
import { handleFindCoordinator, handleInitProducerId } from '../../../src/broker/handlers/coordinator.ts';
import { handleFetch } from '../../../src/broker/handlers/fetch.ts';
import { handleDeleteGroups, handleDescribeGroups, handleOffsetDelete } from '../../../src/broker/handlers/group-admin.ts';
import { handleHeartbeat, handleJoinGroup, handleLeaveGroup, handleOffsetCommit, handleOffsetFetch, handleSyncGroup } from '../../../src/broker/handlers/groups.ts';
import { handleListOffsets } from '../../../src/broker/handlers/list-offsets.ts';
import { handleMetadata } from '../../../src/broker/handlers/metadata.ts';
import { handleOffsetForLeaderEpoch } from '../../../src/broker/handlers/offset-for-leader-epoch.ts';
import { handleCreatePartitions, handleDeleteRecords, handleDescribeLogDirs, handleDescribeProducers } from '../../../src/broker/handlers/partition-admin.ts';
import { handleProduce } from '../../../src/broker/handlers/produce.ts';
import { handleCreateTopics, handleDeleteTopics } from '../../../src/broker/handlers/topics.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { completeMessage } from '../../../src/protocol/message-codec.ts';
import { alterConfigsRequestSchema } from '../../../src/protocol/messages/alter-configs.ts';
import { createPartitionsRequestSchema } from '../../../src/protocol/messages/create-partitions.ts';
import { createTopicsRequestSchema } from '../../../src/protocol/messages/create-topics.ts';
import { deleteRecordsRequestSchema } from '../../../src/protocol/messages/delete-records.ts';
import { deleteTopicsRequestSchema } from '../../../src/protocol/messages/delete-topics.ts';
import { describeConfigsRequestSchema } from '../../../src/protocol/messages/describe-configs.ts';
import { describeLogDirsRequestSchema } from '../../../src/protocol/messages/describe-log-dirs.ts';
import { describeProducersRequestSchema } from '../../../src/protocol/messages/describe-producers.ts';
import { incrementalAlterConfigsRequestSchema } from '../../../src/protocol/messages/incremental-alter-configs.ts';
import { initProducerIdRequestSchema } from '../../../src/protocol/messages/init-producer-id.ts';
import { offsetForLeaderEpochRequestSchema } from '../../../src/protocol/messages/offset-for-leader-epoch.ts';
import { produceRequestSchema } from '../../../src/protocol/messages/produce.ts';
import { AclOperation, CLUSTER_NAME, ResourceType } from '../../../src/security/acl/model.ts';
import type { Session } from '../../../src/security/session.ts';
import { ZERO_UUID } from '../../../src/util/uuid.ts';
import { batchOf } from '../../support/batches.ts';
import {
  deleteGroupsRequest,
  describeGroupsRequest,
  fetchRequest,
  findCoordinatorRequest,
  heartbeatRequest,
  joinGroupRequest,
  leaveGroupRequest,
  listOffsetsRequest,
  metadataRequest,
  offsetCommitRequest,
  offsetDeleteRequest,
  offsetFetchRequest,
  syncGroupRequest,
} from '../../support/requests.ts';
import { type AclDraft, acl } from '../../security/acl/helpers.ts';
import { ADMIN, ALICE, type AuthzBroker, BOB, type BrokerOptions, sessionOf, TOPIC, withBroker } from './authz-broker.ts';

setDefaultTimeout(30_000);

const GROUP = 'g';
const TRANSACTIONAL_ID = 'tx';
const NEW_TOPIC = 'fresh';

/** One ACL check: what ACLs allow it, the error without them, and the error code the request answers. */
interface Check {
  readonly name: string;
  /** The ACLs (for alice) that allow the request. */
  readonly grants: readonly AclDraft[];
  readonly denied: number;
  /**
   * ACLs (for alice) on every resource whose check could allow the request, for
   * allow.everyone.if.no.acl.found (default `grants`): a request allowed by the cluster or by the
   * topic (CreateTopics, DeleteTopics, OffsetForLeaderEpoch) is allowed by the default rule until
   * both carry ACLs, as in Kafka.
   */
  readonly present?: readonly AclDraft[];
  readonly probe: (broker: AuthzBroker, session: Session) => Promise<number>;
}

const topicAcl = (operation: AclOperation, name = TOPIC): AclDraft => ({ resourceType: ResourceType.TOPIC, name, operation });
const groupAcl = (operation: AclOperation, name = GROUP): AclDraft => ({ resourceType: ResourceType.GROUP, name, operation });
const clusterAcl = (operation: AclOperation): AclDraft => ({ resourceType: ResourceType.CLUSTER, name: CLUSTER_NAME, operation });
const transactionalAcl = (operation: AclOperation): AclDraft => ({ resourceType: ResourceType.TRANSACTIONAL_ID, name: TRANSACTIONAL_ID, operation });

const firstPartition = (response: { responses?: readonly { partitionResponses?: readonly { errorCode: number }[]; partitions?: readonly { errorCode: number }[] }[] }) => {
  const topic = response.responses![0]!;
  return (topic.partitionResponses ?? topic.partitions)![0]!.errorCode;
};

const produce = (): ProduceRequest =>
  completeMessage<ProduceRequest>(produceRequestSchema, { transactionalId: null, acks: 1, timeoutMs: 1_000, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: batchOf('p', 1) }] }] });
const fetch = (replicaId: number) =>
  fetchRequest({
    replicaId,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1 << 20,
    topics: [{ topic: TOPIC, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0, partitionMaxBytes: 1 << 20 }] }],
  });
const leaderEpochs = (replicaId: number) =>
  completeMessage<OffsetForLeaderEpochRequest>(offsetForLeaderEpochRequestSchema, { replicaId, topics: [{ topic: TOPIC, partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] }] });
const topicResource = { resourceType: 2, resourceName: TOPIC };
const brokerResource = { resourceType: 4, resourceName: '1' };
const describeConfigs = (resource: { resourceType: number; resourceName: string }) =>
  completeMessage<DescribeConfigsRequest>(describeConfigsRequestSchema, { resources: [{ ...resource, configurationKeys: null }] });
const alterConfigs = (resource: { resourceType: number; resourceName: string }) =>
  completeMessage<AlterConfigsRequest>(alterConfigsRequestSchema, { resources: [{ ...resource, configs: [{ name: 'retention.ms', value: '1000' }] }], validateOnly: false });
const incrementalAlterConfigs = (resource: { resourceType: number; resourceName: string }) =>
  completeMessage<IncrementalAlterConfigsRequest>(incrementalAlterConfigsRequestSchema, {
    resources: [{ ...resource, configs: [{ name: 'retention.ms', configOperation: 0, value: '1000' }] }],
    validateOnly: false,
  });
const initProducerId = (transactionalId: string | null) =>
  completeMessage<InitProducerIdRequest>(initProducerIdRequestSchema, { transactionalId, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 });
const joinGroup = () =>
  joinGroupRequest({
    groupId: GROUP,
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 5_000,
    memberId: 'ghost',
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: new Uint8Array(0) }],
  });
const commitOne = () =>
  offsetCommitRequest({
    groupId: GROUP,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, committedOffset: 1, committedLeaderEpoch: -1, committedMetadata: null }] }],
  });

const CHECKS: readonly Check[] = [
  {
    name: 'Produce: WRITE on the topic',
    grants: [topicAcl(AclOperation.WRITE)],
    denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) => firstPartition((await handleProduce(context, produce(), s))!),
  },
  {
    name: 'Fetch (consumer): READ on the topic',
    grants: [topicAcl(AclOperation.READ)],
    denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) => firstPartition(await handleFetch(context, fetch(-1), s)),
  },
  {
    name: 'Fetch (follower): CLUSTER_ACTION on the cluster',
    grants: [clusterAcl(AclOperation.CLUSTER_ACTION)],
    denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) => firstPartition(await handleFetch(context, fetch(2), s)),
  },
  {
    name: 'ListOffsets: DESCRIBE on the topic',
    grants: [topicAcl(AclOperation.DESCRIBE)],
    denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) =>
      (await handleListOffsets(context, listOffsetsRequest({ replicaId: -1, topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, timestamp: -1, currentLeaderEpoch: -1 }] }] }), s)).topics[0]!
        .partitions[0]!.errorCode,
  },
  {
    name: 'OffsetForLeaderEpoch (consumer): DESCRIBE on the topic',
    grants: [topicAcl(AclOperation.DESCRIBE)],
    denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    present: [topicAcl(AclOperation.DESCRIBE), clusterAcl(AclOperation.CLUSTER_ACTION)],
    probe: async ({ context }, s) => handleOffsetForLeaderEpoch(context, leaderEpochs(-1), s).topics[0]!.partitions[0]!.errorCode,
  },
  {
    name: 'OffsetForLeaderEpoch (follower): CLUSTER_ACTION on the cluster',
    grants: [clusterAcl(AclOperation.CLUSTER_ACTION)],
    denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    present: [topicAcl(AclOperation.DESCRIBE), clusterAcl(AclOperation.CLUSTER_ACTION)],
    probe: async ({ context }, s) => handleOffsetForLeaderEpoch(context, leaderEpochs(2), s).topics[0]!.partitions[0]!.errorCode,
  },
  {
    name: 'DescribeProducers: READ on the topic',
    grants: [topicAcl(AclOperation.READ)],
    denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) =>
      handleDescribeProducers(context, completeMessage<DescribeProducersRequest>(describeProducersRequestSchema, { topics: [{ name: TOPIC, partitionIndexes: [0] }] }), s).topics[0]!.partitions[0]!
        .errorCode,
  },
  {
    name: 'DeleteRecords: DELETE on the topic',
    grants: [topicAcl(AclOperation.DELETE)],
    denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) =>
      (
        await handleDeleteRecords(
          context,
          completeMessage<DeleteRecordsRequest>(deleteRecordsRequestSchema, { topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, offset: 1 }] }], timeoutMs: 1_000 }),
          s,
        )
      ).topics[0]!.partitions[0]!.errorCode,
  },
  {
    name: 'CreatePartitions: ALTER on the topic',
    grants: [topicAcl(AclOperation.ALTER)],
    denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) =>
      (
        await handleCreatePartitions(
          context,
          completeMessage<CreatePartitionsRequest>(createPartitionsRequestSchema, { topics: [{ name: TOPIC, count: 2, assignments: null }], timeoutMs: 1_000, validateOnly: false }),
          s,
        )
      ).results[0]!.errorCode,
  },
  {
    name: 'DeleteTopics by name: DELETE on the topic',
    grants: [topicAcl(AclOperation.DELETE)],
    denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    present: [topicAcl(AclOperation.DELETE), clusterAcl(AclOperation.DELETE)],
    probe: async ({ context }, s) =>
      (await handleDeleteTopics(context, completeMessage<DeleteTopicsRequest>(deleteTopicsRequestSchema, { topics: [{ name: TOPIC, topicId: ZERO_UUID }], timeoutMs: 1_000 }), s)).responses[0]!
        .errorCode,
  },
  {
    name: 'DeleteTopics by id: DELETE on the topic',
    grants: [topicAcl(AclOperation.DELETE)],
    denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    present: [topicAcl(AclOperation.DELETE), clusterAcl(AclOperation.DELETE)],
    probe: async ({ context }, s) =>
      (await handleDeleteTopics(context, completeMessage<DeleteTopicsRequest>(deleteTopicsRequestSchema, { topics: [{ name: null, topicId: context.topology.topicId(TOPIC)! }], timeoutMs: 1_000 }), s))
        .responses[0]!.errorCode,
  },
  {
    name: 'CreateTopics: CREATE on the topic',
    grants: [topicAcl(AclOperation.CREATE, NEW_TOPIC)],
    denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    present: [topicAcl(AclOperation.CREATE, NEW_TOPIC), clusterAcl(AclOperation.CREATE)],
    probe: async ({ context }, s) =>
      (
        await handleCreateTopics(
          context,
          completeMessage<CreateTopicsRequest>(createTopicsRequestSchema, {
            topics: [{ name: NEW_TOPIC, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
            timeoutMs: 1_000,
            validateOnly: false,
          }),
          s,
        )
      ).topics[0]!.errorCode,
  },
  {
    name: 'CreateTopics: CREATE on the cluster',
    grants: [clusterAcl(AclOperation.CREATE)],
    denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    present: [topicAcl(AclOperation.CREATE, NEW_TOPIC), clusterAcl(AclOperation.CREATE)],
    probe: async ({ context }, s) =>
      (
        await handleCreateTopics(
          context,
          completeMessage<CreateTopicsRequest>(createTopicsRequestSchema, {
            topics: [{ name: NEW_TOPIC, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
            timeoutMs: 1_000,
            validateOnly: false,
          }),
          s,
        )
      ).topics[0]!.errorCode,
  },
  {
    name: 'DescribeConfigs of a topic: DESCRIBE_CONFIGS on it',
    grants: [topicAcl(AclOperation.DESCRIBE_CONFIGS)],
    denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) => (await handleDescribeConfigs(context, describeConfigs(topicResource), s)).results[0]!.errorCode,
  },
  {
    name: 'DescribeConfigs of a broker: DESCRIBE_CONFIGS on the cluster',
    grants: [clusterAcl(AclOperation.DESCRIBE_CONFIGS)],
    denied: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) => (await handleDescribeConfigs(context, describeConfigs(brokerResource), s)).results[0]!.errorCode,
  },
  {
    name: 'AlterConfigs of a topic: ALTER_CONFIGS on it',
    grants: [topicAcl(AclOperation.ALTER_CONFIGS)],
    denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) => (await handleAlterConfigs(context, alterConfigs(topicResource), s)).responses[0]!.errorCode,
  },
  {
    name: 'AlterConfigs of a broker: ALTER_CONFIGS on the cluster',
    grants: [clusterAcl(AclOperation.ALTER_CONFIGS)],
    denied: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) => (await handleAlterConfigs(context, alterConfigs(brokerResource), s)).responses[0]!.errorCode,
  },
  {
    name: 'IncrementalAlterConfigs of a topic: ALTER_CONFIGS on it',
    grants: [topicAcl(AclOperation.ALTER_CONFIGS)],
    denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) => (await handleIncrementalAlterConfigs(context, incrementalAlterConfigs(topicResource), s)).responses[0]!.errorCode,
  },
  {
    name: 'IncrementalAlterConfigs of a broker: ALTER_CONFIGS on the cluster',
    grants: [clusterAcl(AclOperation.ALTER_CONFIGS)],
    denied: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) => (await handleIncrementalAlterConfigs(context, incrementalAlterConfigs(brokerResource), s)).responses[0]!.errorCode,
  },
  {
    name: 'DescribeLogDirs: DESCRIBE on the cluster',
    grants: [clusterAcl(AclOperation.DESCRIBE)],
    denied: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) => handleDescribeLogDirs(context, completeMessage<DescribeLogDirsRequest>(describeLogDirsRequestSchema, { topics: null }), s).errorCode!,
  },
  {
    name: 'Metadata of a named topic: DESCRIBE on it',
    grants: [topicAcl(AclOperation.DESCRIBE)],
    denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) => (await handleMetadata(context, metadataRequest({ topics: [{ name: TOPIC }], allowAutoTopicCreation: false }), 12, s)).topics[0]!.errorCode,
  },
  {
    name: 'FindCoordinator of a group: DESCRIBE on the group',
    grants: [groupAcl(AclOperation.DESCRIBE)],
    denied: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) => handleFindCoordinator(context, findCoordinatorRequest({ key: GROUP, keyType: 0 }), s).errorCode!,
  },
  {
    name: 'FindCoordinator of a transactional id: DESCRIBE on it',
    grants: [transactionalAcl(AclOperation.DESCRIBE)],
    denied: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) => handleFindCoordinator(context, findCoordinatorRequest({ key: TRANSACTIONAL_ID, keyType: 1 }), s).errorCode!,
  },
  {
    name: 'JoinGroup: READ on the group',
    grants: [groupAcl(AclOperation.READ)],
    denied: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) => (await handleJoinGroup(context, joinGroup(), 'c', '/10.0.0.1', s)).errorCode,
  },
  {
    name: 'SyncGroup: READ on the group',
    grants: [groupAcl(AclOperation.READ)],
    denied: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) => (await handleSyncGroup(context, syncGroupRequest({ groupId: GROUP, generationId: 1, memberId: 'ghost', groupInstanceId: null, assignments: [] }), s)).errorCode,
  },
  {
    name: 'Heartbeat: READ on the group',
    grants: [groupAcl(AclOperation.READ)],
    denied: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) => handleHeartbeat(context, heartbeatRequest({ groupId: GROUP, generationId: 1, memberId: 'ghost', groupInstanceId: null }), s).errorCode,
  },
  {
    name: 'LeaveGroup: READ on the group',
    grants: [groupAcl(AclOperation.READ)],
    denied: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) => handleLeaveGroup(context, leaveGroupRequest({ groupId: GROUP, members: [{ memberId: 'ghost', groupInstanceId: null }] }), s).errorCode,
  },
  {
    name: 'OffsetCommit: READ on the group and the topic',
    grants: [groupAcl(AclOperation.READ), topicAcl(AclOperation.READ)],
    denied: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) => (await handleOffsetCommit(context, commitOne(), s)).topics[0]!.partitions[0]!.errorCode,
  },
  {
    name: 'OffsetFetch: DESCRIBE on the group and the topic',
    grants: [groupAcl(AclOperation.DESCRIBE), topicAcl(AclOperation.DESCRIBE)],
    denied: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) => (await handleOffsetFetch(context, offsetFetchRequest({ groupId: GROUP, topics: [{ name: TOPIC, partitionIndexes: [0] }] }), s)).errorCode!,
  },
  {
    name: 'DescribeGroups: DESCRIBE on the group',
    grants: [groupAcl(AclOperation.DESCRIBE)],
    denied: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) => (await handleDescribeGroups(context, describeGroupsRequest({ groups: [GROUP] }), 5, s)).groups[0]!.errorCode,
  },
  {
    name: 'DeleteGroups: DELETE on the group',
    grants: [groupAcl(AclOperation.DELETE)],
    denied: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) => (await handleDeleteGroups(context, deleteGroupsRequest({ groupsNames: [GROUP] }), s)).results[0]!.errorCode,
  },
  {
    name: 'OffsetDelete: DELETE on the group, READ on the topic',
    grants: [groupAcl(AclOperation.DELETE), topicAcl(AclOperation.READ)],
    denied: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    probe: async ({ context }, s) => (await handleOffsetDelete(context, offsetDeleteRequest({ groupId: GROUP, topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0 }] }] }), s)).errorCode,
  },
  {
    name: 'InitProducerId (idempotent): IDEMPOTENT_WRITE on the cluster',
    grants: [clusterAcl(AclOperation.IDEMPOTENT_WRITE)],
    denied: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    // WRITE on any topic also allows it: with no ACL naming the probe's made-up topic, the default would.
    present: [clusterAcl(AclOperation.IDEMPOTENT_WRITE), { ...topicAcl(AclOperation.WRITE, '*') }],
    probe: async ({ context }, s) => (await handleInitProducerId(context, initProducerId(null), s)).errorCode,
  },
];

async function probe(check: Check, options: BrokerOptions, principal: string): Promise<number> {
  return withBroker(options, (broker) => check.probe(broker, sessionOf(principal)));
}

const granted = (drafts: readonly AclDraft[]) => drafts.map((draft) => acl({ ...draft, principal: ALICE }));

for (const check of CHECKS) {
  describe(check.name, () => {
    test('allowed with its ACLs: answered as without an authorizer', async () => {
      const open = await probe(check, { acls: null }, BOB);
      expect(open).not.toBe(check.denied);
      expect(await probe(check, { acls: granted(check.grants) }, ALICE)).toBe(open);
    });

    test('denied to a principal without them', async () => {
      expect(await probe(check, { acls: granted(check.grants) }, BOB)).toBe(check.denied);
      expect(await probe(check, { acls: [] }, ALICE)).toBe(check.denied);
    });

    test('allowed to a super user without any ACL', async () => {
      const open = await probe(check, { acls: null }, ADMIN);
      expect(await probe(check, { acls: [], superUsers: [ADMIN] }, ADMIN)).toBe(open);
    });

    test('allow.everyone.if.no.acl.found: allowed while no ACL names the resource, denied once one does', async () => {
      const open = await probe(check, { acls: null }, BOB);
      expect(await probe(check, { acls: [], allowEveryoneIfNoAclFound: true }, BOB)).toBe(open);
      expect(await probe(check, { acls: granted(check.present ?? check.grants), allowEveryoneIfNoAclFound: true }, BOB)).toBe(check.denied);
    });
  });
}
