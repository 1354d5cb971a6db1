// Group APIs under ACLs, beyond the common checks: the topic checks of OffsetCommit, OffsetFetch and
// OffsetDelete after the group's, ListGroups' filter, DescribeGroups' authorized operations and
// DeleteGroups per group, as Kafka's KafkaApis answers them.
import { expect, setDefaultTimeout, test } from 'bun:test';
import type { BrokerContext } from '../../../src/broker/context.ts';
import { GROUP_OPERATIONS_ALL, handleDeleteGroups, handleDescribeGroups, handleListGroups, handleOffsetDelete } from '../../../src/broker/handlers/group-admin.ts';
import { handleJoinGroup, handleOffsetCommit, handleOffsetFetch } from '../../../src/broker/handlers/groups.ts';
import type { OffsetFetchRequest } from '../../../src/broker/apis/offset-fetch.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { completeMessage } from '../../../src/protocol/message-codec.ts';
import { offsetFetchRequestSchema } from '../../../src/protocol/messages/offset-fetch.ts';
import { AclOperation, CLUSTER_NAME, PatternType, ResourceType } from '../../../src/security/acl/model.ts';
import { deleteGroupsRequest, describeGroupsRequest, joinGroupRequest, listGroupsRequest, offsetCommitRequest, offsetDeleteRequest, offsetFetchRequest } from '../../support/requests.ts';
import { acl } from '../../security/acl/helpers.ts';
import { ADMIN, ALICE, BOB, sessionOf, TOPIC, withBroker } from './authz-broker.ts';

setDefaultTimeout(30_000);

const OTHER = 'other';
const groupAcl = (operation: AclOperation, name = 'g') => acl({ resourceType: ResourceType.GROUP, name, operation, principal: ALICE });
const topicAcl = (operation: AclOperation, name = TOPIC) => acl({ resourceType: ResourceType.TOPIC, name, operation, principal: ALICE });

const commit = (groupId: string, topics: string[]) =>
  offsetCommitRequest({
    groupId,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    topics: topics.map((name) => ({ name, partitions: [{ partitionIndex: 0, committedOffset: 1, committedLeaderEpoch: -1, committedMetadata: null }] })),
  });

/** Offsets of `t` and `other` committed by the super user for each group. */
async function committed(context: BrokerContext, groups: string[]): Promise<void> {
  for (const groupId of groups) {
    const answer = await handleOffsetCommit(context, commit(groupId, [TOPIC, OTHER]), sessionOf(ADMIN));
    expect(answer.topics.flatMap((t) => t.partitions.map((p) => p.errorCode))).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
  }
}

test('OffsetCommit: READ on the group first (every partition refused), then on each topic; a refused topic is not committed', async () => {
  await withBroker({ acls: [groupAcl(AclOperation.READ), topicAcl(AclOperation.READ)] }, async ({ context, engine }) => {
    await engine.createTopic(OTHER, { partitions: 1 });
    const codes = async (groupId: string, principal: string) =>
      (await handleOffsetCommit(context, commit(groupId, [TOPIC, OTHER]), sessionOf(principal))).topics.map((t) => t.partitions[0]!.errorCode);
    expect(await codes('g', ALICE)).toEqual([ErrorCode.NONE, ErrorCode.TOPIC_AUTHORIZATION_FAILED]);
    expect(await codes('h', ALICE)).toEqual([ErrorCode.GROUP_AUTHORIZATION_FAILED, ErrorCode.GROUP_AUTHORIZATION_FAILED]);
    expect((await context.offsets.list('g')).map((o) => o.topic)).toEqual([TOPIC]);
    expect(await context.offsets.list('h')).toEqual([]);
  });
});

test("OffsetFetch: a named topic without DESCRIBE is TOPIC_AUTHORIZATION_FAILED; all the group's offsets leave it out; a group without DESCRIBE is refused", async () => {
  await withBroker({ acls: [groupAcl(AclOperation.DESCRIBE), topicAcl(AclOperation.DESCRIBE)] }, async ({ context, engine }) => {
    await engine.createTopic(OTHER, { partitions: 1 });
    await committed(context, ['g']);
    const named = await handleOffsetFetch(
      context,
      offsetFetchRequest({
        groupId: 'g',
        topics: [
          { name: TOPIC, partitionIndexes: [0] },
          { name: OTHER, partitionIndexes: [0] },
        ],
      }),
      sessionOf(ALICE),
    );
    expect(named.errorCode).toBe(ErrorCode.NONE);
    expect(named.topics!.map((t) => ({ name: t.name, ...t.partitions[0]! }))).toEqual([
      { name: TOPIC, partitionIndex: 0, committedOffset: 1, committedLeaderEpoch: -1, metadata: '', errorCode: ErrorCode.NONE },
      { name: OTHER, partitionIndex: 0, committedOffset: -1, committedLeaderEpoch: -1, metadata: '', errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED },
    ]);
    const all = await handleOffsetFetch(context, offsetFetchRequest({ groupId: 'g', topics: null }), sessionOf(ALICE));
    expect(all.topics!.map((t) => t.name)).toEqual([TOPIC]);
    expect((await handleOffsetFetch(context, offsetFetchRequest({ groupId: 'g', topics: null }), sessionOf(BOB))).errorCode).toBe(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    // v8+: each group answered on its own.
    const groups = await handleOffsetFetch(
      context,
      completeMessage<OffsetFetchRequest>(
        offsetFetchRequestSchema,
        {
          groups: [
            { groupId: 'g', memberId: null, memberEpoch: -1, topics: null },
            { groupId: 'h', memberId: null, memberEpoch: -1, topics: null },
          ],
        },
        8,
      ),
      sessionOf(ALICE),
    );
    expect(groups.groups!.map((g) => [g.groupId, g.errorCode, g.topics.map((t) => t.name)])).toEqual([
      ['g', ErrorCode.NONE, [TOPIC]],
      ['h', ErrorCode.GROUP_AUTHORIZATION_FAILED, []],
    ]);
  });
});

test('ListGroups: DESCRIBE on the cluster lists every group; without it only the groups the client may DESCRIBE', async () => {
  const opsCluster = acl({ resourceType: ResourceType.CLUSTER, name: CLUSTER_NAME, operation: AclOperation.DESCRIBE, principal: 'User:ops' });
  await withBroker({ acls: [groupAcl(AclOperation.DESCRIBE, 'g1'), opsCluster] }, async ({ context, engine }) => {
    await engine.createTopic(OTHER, { partitions: 1 });
    await committed(context, ['g1', 'g2']);
    const listed = async (principal: string) => (await handleListGroups(context, listGroupsRequest({}), sessionOf(principal))).groups.map((g) => g.groupId).sort();
    expect(await listed(ALICE)).toEqual(['g1']);
    expect(await listed(BOB)).toEqual([]);
    expect(await listed('User:ops')).toEqual(['g1', 'g2']);
  });
});

test("DescribeGroups: a group without DESCRIBE is GROUP_AUTHORIZATION_FAILED; the authorized operations are the session's", async () => {
  await withBroker({ acls: [groupAcl(AclOperation.READ)] }, async ({ context }) => {
    const described = async (principal: string) =>
      (await handleDescribeGroups(context, describeGroupsRequest({ groups: ['g', 'h'], includeAuthorizedOperations: true }), 5, sessionOf(principal))).groups;
    const [g, h] = await described(ALICE);
    expect(g!.errorCode).toBe(ErrorCode.NONE);
    expect(g!.authorizedOperations).toBe((1 << AclOperation.READ) | (1 << AclOperation.DESCRIBE)); // READ implies DESCRIBE
    expect(h).toMatchObject({ groupId: 'h', errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, groupState: '', errorMessage: null, authorizedOperations: -2147483648 });
    expect((await described(ADMIN))[0]!.authorizedOperations).toBe(GROUP_OPERATIONS_ALL);
  });
});

test('DeleteGroups answers each group: GROUP_AUTHORIZATION_FAILED without DELETE, the group kept', async () => {
  await withBroker(
    { acls: [acl({ resourceType: ResourceType.GROUP, name: 'g-', patternType: PatternType.PREFIXED, operation: AclOperation.DELETE, principal: ALICE })] },
    async ({ context, engine }) => {
      await engine.createTopic(OTHER, { partitions: 1 });
      await committed(context, ['g-1', 'h']);
      const answer = await handleDeleteGroups(context, deleteGroupsRequest({ groupsNames: ['g-1', 'h'] }), sessionOf(ALICE));
      expect(answer.results).toEqual([
        { groupId: 'g-1', errorCode: ErrorCode.NONE },
        { groupId: 'h', errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED },
      ]);
      expect(await context.offsets.list('h')).toHaveLength(2);
    },
  );
});

test('OffsetDelete: DELETE on the group (top-level refusal), then READ on each topic (per partition, its offsets kept)', async () => {
  await withBroker({ acls: [groupAcl(AclOperation.DELETE), topicAcl(AclOperation.READ)] }, async ({ context, engine }) => {
    await engine.createTopic(OTHER, { partitions: 1 });
    await committed(context, ['g', 'h']);
    const request = (groupId: string) => offsetDeleteRequest({ groupId, topics: [TOPIC, OTHER].map((name) => ({ name, partitions: [{ partitionIndex: 0 }] })) });
    const answer = await handleOffsetDelete(context, request('g'), sessionOf(ALICE));
    expect(answer.errorCode).toBe(ErrorCode.NONE);
    expect(answer.topics.map((t) => [t.name, t.partitions[0]!.errorCode])).toEqual([
      [TOPIC, ErrorCode.NONE],
      [OTHER, ErrorCode.TOPIC_AUTHORIZATION_FAILED],
    ]);
    expect((await context.offsets.list('g')).map((o) => o.topic)).toEqual([OTHER]);
    expect(await handleOffsetDelete(context, request('h'), sessionOf(ALICE))).toEqual({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, throttleTimeMs: 0, topics: [] });
    // The coordinator's top-level error replaces the topics' answers, as Kafka's response builder does.
    expect(await handleOffsetDelete(context, request('none'), sessionOf(ADMIN))).toEqual({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, throttleTimeMs: 0, topics: [] });
  });
});

test("a JoinGroup refused names no member, as Kafka's error response", async () => {
  await withBroker({ acls: [] }, async ({ context }) => {
    const join = joinGroupRequest({ groupId: 'g', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 5_000, memberId: 'someone', groupInstanceId: null, protocolType: 'consumer', protocols: [] });
    expect(await handleJoinGroup(context, join, 'c', '/10.0.0.1', sessionOf(BOB))).toMatchObject({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, memberId: '', generationId: -1, members: [] });
  });
});
