// Metadata under ACLs, as Kafka's KafkaApis.handleTopicMetadataRequest answers it: topics the
// client may not DESCRIBE are left out of an all-topics answer and refused when named (without
// their id; by id, without their name); auto-creation needs CREATE on the cluster or the topic;
// the authorized operations are the session's (KIP-430).
import { expect, setDefaultTimeout, test } from 'bun:test';
import type { MetadataRequest } from '../../../src/broker/apis/metadata.ts';
import { handleMetadata } from '../../../src/broker/handlers/metadata.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { completeMessage, type Draft } from '../../../src/protocol/message-codec.ts';
import { metadataRequestSchema } from '../../../src/protocol/messages/metadata.ts';
import { AclOperation, CLUSTER_NAME, PatternType, ResourceType } from '../../../src/security/acl/model.ts';
import { ZERO_UUID } from '../../../src/util/uuid.ts';
import { acl } from '../../security/acl/helpers.ts';
import { ADMIN, ALICE, BOB, sessionOf, TOPIC, withBroker } from './authz-broker.ts';

setDefaultTimeout(30_000);

const HIDDEN = 'u';
const OMITTED = -2147483648;
/** Every operation of a topic (READ..ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS) as a bit field. */
const TOPIC_OPERATIONS_ALL = 0x0df8;
/** Every operation of the cluster (CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE). */
const CLUSTER_OPERATIONS_ALL = 0x1fa0;

const request = (draft: Draft<MetadataRequest>, version = 12) => completeMessage<MetadataRequest>(metadataRequestSchema, { allowAutoTopicCreation: false, ...draft }, version);
const describeT = acl({ resourceType: ResourceType.TOPIC, name: TOPIC, operation: AclOperation.DESCRIBE, principal: ALICE });

test('an all-topics request lists only the topics the client may DESCRIBE; a super user sees all', async () => {
  await withBroker({ acls: [describeT] }, async ({ context, engine }) => {
    await engine.createTopic(HIDDEN, { partitions: 1 });
    const names = async (principal: string) => (await handleMetadata(context, request({ topics: null }), 12, sessionOf(principal))).topics.map((t) => t.name).sort();
    expect(await names(ALICE)).toEqual([TOPIC]);
    expect(await names(BOB)).toEqual([]);
    expect(await names(ADMIN)).toEqual([TOPIC, HIDDEN]);
    // v0's empty list asks for all topics too: the hidden one is left out, not refused.
    expect((await handleMetadata(context, request({ topics: [] }, 0), 0, sessionOf(ALICE))).topics.map((t) => t.name)).toEqual([TOPIC]);
  });
});

test('a topic named without DESCRIBE is TOPIC_AUTHORIZATION_FAILED without its id, whether or not it exists', async () => {
  await withBroker({ acls: [describeT, acl({ resourceType: ResourceType.TOPIC, name: 'nope', operation: AclOperation.DESCRIBE, principal: ALICE })] }, async ({ context, engine }) => {
    await engine.createTopic(HIDDEN, { partitions: 1 });
    const answer = await handleMetadata(context, request({ topics: [{ name: TOPIC }, { name: HIDDEN }, { name: 'absent' }, { name: 'nope' }] }), 12, sessionOf(ALICE));
    const [t, hidden, absent, nope] = answer.topics;
    expect(t!.errorCode).toBe(ErrorCode.NONE);
    expect(t!.topicId).not.toBe(ZERO_UUID);
    expect(hidden).toEqual({ errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, name: HIDDEN, topicId: ZERO_UUID, isInternal: false, partitions: [], topicAuthorizedOperations: OMITTED });
    expect(absent!.errorCode).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED); // its absence is not disclosed
    expect(nope!.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION); // one it may describe: it learns it does not exist
  });
});

test('a topic asked for by id without DESCRIBE is TOPIC_AUTHORIZATION_FAILED with its id and no name; an unknown id is UNKNOWN_TOPIC_ID', async () => {
  await withBroker({ acls: [describeT] }, async ({ context, engine }) => {
    await engine.createTopic(HIDDEN, { partitions: 1 });
    const hiddenId = context.topology.topicId(HIDDEN)!;
    const unknownId = 'AAAAAAAAAAAAAAAAAAAAAQ';
    const answer = await handleMetadata(
      context,
      request({
        topics: [
          { topicId: context.topology.topicId(TOPIC)!, name: null },
          { topicId: hiddenId, name: null },
          { topicId: unknownId, name: null },
        ],
      }),
      12,
      sessionOf(ALICE),
    );
    expect(answer.topics.map((t) => [t.errorCode, t.name, t.topicId])).toEqual([
      [ErrorCode.NONE, TOPIC, context.topology.topicId(TOPIC)!],
      [ErrorCode.TOPIC_AUTHORIZATION_FAILED, null, hiddenId],
      [ErrorCode.UNKNOWN_TOPIC_ID, null, unknownId],
    ]);
  });
});

test('auto-creation needs CREATE on the cluster or on the topic; refused, nothing is created', async () => {
  const describeNew = acl({ resourceType: ResourceType.TOPIC, name: 'new-', patternType: PatternType.PREFIXED, operation: AclOperation.DESCRIBE, principal: ALICE });
  const asks = (name: string) => request({ topics: [{ name }], allowAutoTopicCreation: true });
  await withBroker({ acls: [describeNew, acl({ resourceType: ResourceType.TOPIC, name: 'new-b', operation: AclOperation.CREATE, principal: ALICE })] }, async ({ context }) => {
    const refused = (await handleMetadata(context, asks('new-a'), 12, sessionOf(ALICE))).topics[0]!;
    expect(refused).toEqual({ errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, name: 'new-a', topicId: ZERO_UUID, isInternal: false, partitions: [], topicAuthorizedOperations: OMITTED });
    expect(await context.topology.partitionCount('new-a')).toBeNull();
    expect((await handleMetadata(context, asks('new-b'), 12, sessionOf(ALICE))).topics[0]!.errorCode).toBe(ErrorCode.NONE);
    expect(await context.topology.partitionCount('new-b')).toBe(1);
  });
  await withBroker({ acls: [describeNew, acl({ resourceType: ResourceType.CLUSTER, name: CLUSTER_NAME, operation: AclOperation.CREATE, principal: ALICE })] }, async ({ context }) => {
    expect((await handleMetadata(context, asks('new-c'), 12, sessionOf(ALICE))).topics[0]!.errorCode).toBe(ErrorCode.NONE);
    expect(await context.topology.partitionCount('new-c')).toBe(1);
  });
});

test("topic authorized operations (v8+) are the session's on each topic described; every one without an authorizer", async () => {
  const writeT = acl({ resourceType: ResourceType.TOPIC, name: TOPIC, operation: AclOperation.WRITE, principal: ALICE });
  const ask = request({ topics: [{ name: TOPIC }], includeTopicAuthorizedOperations: true });
  await withBroker({ acls: [writeT] }, async ({ context }) => {
    // WRITE implies DESCRIBE (so the topic is described), nothing else.
    expect((await handleMetadata(context, ask, 12, sessionOf(ALICE))).topics[0]!.topicAuthorizedOperations).toBe((1 << AclOperation.WRITE) | (1 << AclOperation.DESCRIBE));
    expect((await handleMetadata(context, ask, 12, sessionOf(ADMIN))).topics[0]!.topicAuthorizedOperations).toBe(TOPIC_OPERATIONS_ALL);
    expect((await handleMetadata(context, ask, 12, sessionOf(BOB))).topics[0]!.topicAuthorizedOperations).toBe(OMITTED); // refused: none reported
    expect((await handleMetadata(context, request({ topics: [{ name: TOPIC }] }), 12, sessionOf(ALICE))).topics[0]!.topicAuthorizedOperations).toBe(OMITTED);
  });
  await withBroker({ acls: null }, async ({ context }) => {
    expect((await handleMetadata(context, ask, 12, sessionOf(BOB))).topics[0]!.topicAuthorizedOperations).toBe(TOPIC_OPERATIONS_ALL);
  });
});

test('cluster authorized operations: asked for in v8-v10 only, 0 without DESCRIBE on the cluster', async () => {
  const cluster = (operation: AclOperation) => acl({ resourceType: ResourceType.CLUSTER, name: CLUSTER_NAME, operation, principal: ALICE });
  const ask = request({ topics: [], includeClusterAuthorizedOperations: true }, 10);
  await withBroker({ acls: [cluster(AclOperation.DESCRIBE), cluster(AclOperation.ALTER)] }, async ({ context }) => {
    expect((await handleMetadata(context, ask, 10, sessionOf(ALICE))).clusterAuthorizedOperations).toBe((1 << AclOperation.DESCRIBE) | (1 << AclOperation.ALTER));
    expect((await handleMetadata(context, ask, 10, sessionOf(BOB))).clusterAuthorizedOperations).toBe(0);
    expect((await handleMetadata(context, ask, 10, sessionOf(ADMIN))).clusterAuthorizedOperations).toBe(CLUSTER_OPERATIONS_ALL);
    expect((await handleMetadata(context, request({ topics: [] }, 12), 12, sessionOf(ALICE))).clusterAuthorizedOperations).toBe(OMITTED);
  });
  await withBroker({ acls: null }, async ({ context }) => {
    expect((await handleMetadata(context, ask, 10, sessionOf(BOB))).clusterAuthorizedOperations).toBe(CLUSTER_OPERATIONS_ALL);
  });
});
