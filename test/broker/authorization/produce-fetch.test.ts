// Produce, Fetch, ListOffsets and OffsetForLeaderEpoch under ACLs, beyond the common checks: Kafka's
// order of checks (authorization before existence), transactional batches, follower fetches and
// the inter-broker listener, topic ids.
import { expect, setDefaultTimeout, test } from 'bun:test';
import type { FetchRequest } from '../../../src/broker/apis/fetch.ts';
import type { OffsetForLeaderEpochRequest } from '../../../src/broker/apis/offset-for-leader-epoch.ts';
import type { ProduceRequest } from '../../../src/broker/apis/produce.ts';
import { handleFetch } from '../../../src/broker/handlers/fetch.ts';
import { handleOffsetForLeaderEpoch } from '../../../src/broker/handlers/offset-for-leader-epoch.ts';
import { handleProduce } from '../../../src/broker/handlers/produce.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { completeMessage } from '../../../src/protocol/message-codec.ts';
import { fetchRequestSchema } from '../../../src/protocol/messages/fetch.ts';
import { offsetForLeaderEpochRequestSchema } from '../../../src/protocol/messages/offset-for-leader-epoch.ts';
import { produceRequestSchema } from '../../../src/protocol/messages/produce.ts';
import { SingleBrokerTopology, type Topology } from '../../../src/broker/topology.ts';
import { ATTRIBUTES_OFFSET, TRANSACTIONAL_FLAG_MASK } from '../../../src/format/record-batch.ts';
import { AclOperation, CLUSTER_NAME, ResourceType } from '../../../src/security/acl/model.ts';
import { batchOf } from '../../support/batches.ts';
import { acl } from '../../security/acl/helpers.ts';
import { ALICE, BOB, sessionOf, TOPIC, withBroker } from './authz-broker.ts';

setDefaultTimeout(30_000);

const writeT = acl({ resourceType: ResourceType.TOPIC, name: TOPIC, operation: AclOperation.WRITE, principal: ALICE });

function produceTo(topics: string[], options: { transactionalId?: string | null; transactional?: boolean } = {}): ProduceRequest {
  const records = batchOf('p', 1);
  if (options.transactional === true) records[ATTRIBUTES_OFFSET + 1]! |= TRANSACTIONAL_FLAG_MASK;
  return completeMessage<ProduceRequest>(produceRequestSchema, {
    transactionalId: options.transactionalId ?? null,
    acks: 1,
    timeoutMs: 1_000,
    topicData: topics.map((name) => ({ name, partitionData: [{ index: 0, records }] })),
  });
}

const codes = (response: { responses: readonly { name?: string; topic?: string; partitionResponses?: readonly { errorCode: number }[]; partitions?: readonly { errorCode: number }[] }[] }) =>
  response.responses.flatMap((topic) => (topic.partitionResponses ?? topic.partitions)!.map((p) => p.errorCode));

test('Produce: a topic without WRITE is TOPIC_AUTHORIZATION_FAILED whether or not it exists; with WRITE an unknown one is UNKNOWN_TOPIC_OR_PARTITION', async () => {
  const writeAbsent = acl({ resourceType: ResourceType.TOPIC, name: 'absent', operation: AclOperation.WRITE, principal: ALICE });
  await withBroker({ acls: [writeT, writeAbsent] }, async ({ context, engine }) => {
    await engine.createTopic('other', { partitions: 1 });
    const answer = (await handleProduce(context, produceTo([TOPIC, 'other', 'absent', 'missing']), sessionOf(ALICE)))!;
    expect(codes(answer)).toEqual([ErrorCode.NONE, ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.TOPIC_AUTHORIZATION_FAILED]);
    expect(engine.fetch('other', 0, 0, { maxBytes: 1 << 20 }).batches).toHaveLength(0); // nothing appended where refused
  });
});

test('Produce: transactional batches need WRITE on the transactional id, which the request must name; refused, nothing is appended', async () => {
  const writeTx = acl({ resourceType: ResourceType.TRANSACTIONAL_ID, name: 'tx', operation: AclOperation.WRITE, principal: ALICE });
  await withBroker({ acls: [writeT, writeTx] }, async ({ context, engine }) => {
    const before = engine.fetch(TOPIC, 0, 0, { maxBytes: 1 << 20 }).batches.length;
    const refused = async (request: ProduceRequest, principal: string) => codes((await handleProduce(context, request, sessionOf(principal)))!);
    expect(await refused(produceTo([TOPIC], { transactional: true, transactionalId: null }), ALICE)).toEqual([ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]);
    expect(await refused(produceTo([TOPIC], { transactional: true, transactionalId: 'other' }), ALICE)).toEqual([ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]);
    expect(await refused(produceTo([TOPIC], { transactional: true, transactionalId: 'tx' }), BOB)).toEqual([ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]);
    expect(engine.fetch(TOPIC, 0, 0, { maxBytes: 1 << 20 }).batches.length).toBe(before);
    // Allowed by the id, the batch goes on to the topic's checks and the log.
    expect(await refused(produceTo([TOPIC], { transactional: true, transactionalId: 'tx' }), ALICE)).not.toEqual([ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]);
  });
  // Kafka refuses transactional batches without a transactional id even without an authorizer.
  await withBroker({ acls: null }, async ({ context }) => {
    expect(codes((await handleProduce(context, produceTo([TOPIC], { transactional: true }), sessionOf(BOB)))!)).toEqual([ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]);
  });
});

test('Produce with acks=0 refused closes the connection (the handler throws), as Kafka does for any acks=0 failure; allowed, it is not answered', async () => {
  await withBroker({ acls: [] }, async ({ context }) => {
    await expect(handleProduce(context, { ...produceTo([TOPIC]), acks: 0 }, sessionOf(BOB))).rejects.toThrow(/acks=0 produce failed .*error 29/);
  });
  await withBroker({ acls: [writeT] }, async ({ context, engine }) => {
    const before = engine.fetch(TOPIC, 0, 0, { maxBytes: 1 << 20 }).batches.length;
    expect(await handleProduce(context, { ...produceTo([TOPIC]), acks: 0 }, sessionOf(ALICE))).toBeNull();
    expect(engine.fetch(TOPIC, 0, 0, { maxBytes: 1 << 20 }).batches.length).toBe(before + 1);
  });
});

const fetchById = (topicId: string) =>
  completeMessage<FetchRequest>(
    fetchRequestSchema,
    { replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, topics: [{ topicId, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0, partitionMaxBytes: 1 << 20 }] }] },
    13,
  );

test('Fetch by topic id: an unknown id is UNKNOWN_TOPIC_ID whatever the ACLs; a known one without READ is TOPIC_AUTHORIZATION_FAILED', async () => {
  await withBroker({ acls: [acl({ resourceType: ResourceType.TOPIC, name: TOPIC, operation: AclOperation.READ, principal: ALICE })] }, async ({ context }) => {
    const id = context.topology.topicId(TOPIC)!;
    expect(codes(await handleFetch(context, fetchById(id), sessionOf(ALICE)))).toEqual([ErrorCode.NONE]);
    expect(codes(await handleFetch(context, fetchById(id), sessionOf(BOB)))).toEqual([ErrorCode.TOPIC_AUTHORIZATION_FAILED]);
    expect(codes(await handleFetch(context, fetchById('AAAAAAAAAAAAAAAAAAAAAQ'), sessionOf(BOB)))).toEqual([ErrorCode.UNKNOWN_TOPIC_ID]);
  });
});

const followerFetch = (replicaId: number) =>
  completeMessage<FetchRequest>(
    fetchRequestSchema,
    {
      replicaId,
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1 << 20,
      topics: [
        {
          topic: TOPIC,
          partitions: [
            { partition: 0, currentLeaderEpoch: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20 },
            { partition: 1, currentLeaderEpoch: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20 },
          ],
        },
      ],
    },
    12,
  );
const clusterAction = acl({ resourceType: ResourceType.CLUSTER, name: CLUSTER_NAME, operation: AclOperation.CLUSTER_ACTION, principal: 'User:broker-2' });

test('a follower Fetch without CLUSTER_ACTION is TOPIC_AUTHORIZATION_FAILED for every partition, known or not, and is never counted', async () => {
  const asked: number[] = [];
  await withBroker({ acls: [clusterAction], topology: (engine, self) => recordingReplicaChecks(new SingleBrokerTopology(self, engine), asked) }, async ({ context }) => {
    expect(codes(await handleFetch(context, followerFetch(2), sessionOf(BOB)))).toEqual([ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.TOPIC_AUTHORIZATION_FAILED]);
    expect(asked).toEqual([]);
    await handleFetch(context, followerFetch(2), sessionOf('User:broker-2'));
    expect(asked).toEqual([2]);
  });
});

test('with an inter-broker listener, a replica report from another listener is not counted (NOT_LEADER_OR_FOLLOWER)', async () => {
  const asked: number[] = [];
  await withBroker(
    { acls: [clusterAction], interBrokerListener: 'REPLICATION', topology: (engine, self) => recordingReplicaChecks(new SingleBrokerTopology(self, engine), asked, true) },
    async ({ context }) => {
      const broker2 = (listener: string) => sessionOf('User:broker-2', listener);
      expect(codes(await handleFetch(context, followerFetch(2), broker2('PLAINTEXT')))).toEqual([ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_LEADER_OR_FOLLOWER]);
      expect(asked).toEqual([]); // not even asked whether the connection is broker 2's
      await handleFetch(context, followerFetch(2), broker2('REPLICATION'));
      expect(asked).toEqual([2]);
    },
  );
});

/** `topology` whose replica-connection checks are recorded (and answered `genuine`). */
function recordingReplicaChecks(topology: Topology, asked: number[], genuine = false): Topology {
  return new Proxy(topology, {
    get(target, property) {
      if (property === 'isReplicaConnection') {
        return async (replicaId: number) => {
          asked.push(replicaId);
          return genuine;
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

test('OffsetForLeaderEpoch: CLUSTER_ACTION allows every topic; without it each topic needs DESCRIBE, whatever the replica id', async () => {
  const request = (replicaId: number) =>
    completeMessage<OffsetForLeaderEpochRequest>(offsetForLeaderEpochRequestSchema, {
      replicaId,
      topics: [TOPIC, 'other'].map((topic) => ({ topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] })),
    });
  const describeT = acl({ resourceType: ResourceType.TOPIC, name: TOPIC, operation: AclOperation.DESCRIBE, principal: ALICE });
  await withBroker({ acls: [describeT, clusterAction] }, async ({ context, engine }) => {
    await engine.createTopic('other', { partitions: 1 });
    const answer = (replicaId: number, principal: string) => handleOffsetForLeaderEpoch(context, request(replicaId), sessionOf(principal)).topics.map((t) => t.partitions[0]!.errorCode);
    expect(answer(-1, ALICE)).toEqual([ErrorCode.NONE, ErrorCode.TOPIC_AUTHORIZATION_FAILED]);
    expect(answer(2, ALICE)).toEqual([ErrorCode.NONE, ErrorCode.TOPIC_AUTHORIZATION_FAILED]);
    expect(answer(-1, 'User:broker-2')).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
  });
});
