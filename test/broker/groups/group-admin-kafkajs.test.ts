// Group admin of a group real kafkajs consumers form, through the handlers the protocol layer will
// bind (kafkajs's listGroups, describeGroups and deleteGroups need its codecs): the member's
// client id and host, its subscription metadata and assignment as kafkajs encodes them, and
// OffsetDelete judging the topics it subscribes to from that metadata.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { AssignerProtocol, Kafka, logLevel } from 'kafkajs';
import { Broker } from '../../../src/broker/broker.ts';
const { GROUP_SUBSCRIBED_TO_TOPIC } = ErrorCode;
import { handleDeleteGroups, handleDescribeGroups, handleListGroups, handleOffsetDelete } from '../../../src/broker/handlers/group-admin.ts';
import { handleOffsetCommit } from '../../../src/broker/handlers/groups.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { until } from '../../support/until.ts';
import { deleteGroupsRequest, describeGroupsRequest, listGroupsRequest, offsetCommitRequest, offsetDeleteRequest } from '../../support/requests.ts';

setDefaultTimeout(60_000);

let broker: Broker;
let kafka: Kafka;
const GROUP = 'watchers';

beforeAll(async () => {
  broker = await Broker.start({ listenHost: '127.0.0.1', listenPort: 0, nodeId: 1, engine: { directory: tempDir(), log: { flush: { kind: 'none' } } } });
  kafka = new Kafka({ clientId: 'admin-test', brokers: [`127.0.0.1:${broker.port}`], logLevel: logLevel.NOTHING, retry: { retries: 3 } });
});

afterAll(async () => {
  await broker?.stop();
});

test('a kafkajs consumer group: listed, described with its member, its subscribed topic kept by OffsetDelete, deleted once the consumer left', async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [
      { topic: 'watched', numPartitions: 1 },
      { topic: 'other', numPartitions: 1 },
    ],
  });
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: 'watched', acks: -1, messages: [{ value: 'a' }, { value: 'b' }] });
  await producer.disconnect();
  // a commit of a topic no member subscribes to (kafkajs's setOffsets needs DescribeGroups first)
  const simple = await handleOffsetCommit(
    broker.context,
    offsetCommitRequest({
      groupId: GROUP,
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      retentionTimeMs: -1,
      topics: [{ name: 'other', partitions: [{ partitionIndex: 0, committedOffset: 0, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: null }] }],
    }),
  );
  expect(simple.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);

  const consumer = kafka.consumer({ groupId: GROUP, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic: 'watched', fromBeginning: true });
  let read = 0;
  await consumer.run({ autoCommitThreshold: 1, eachMessage: async () => void read++ });
  await until(() => read === 2, 'the consumer to read both records');
  try {
    const { context } = broker;
    expect((await handleListGroups(context, listGroupsRequest({ statesFilter: ['stable'] }))).groups).toEqual([
      { groupId: GROUP, protocolType: 'consumer', groupState: 'Stable', groupType: 'classic' },
    ]);
    const described = (await handleDescribeGroups(context, describeGroupsRequest({ groups: [GROUP] }), 5)).groups[0]!;
    expect(described).toMatchObject({ errorCode: ErrorCode.NONE, groupState: 'Stable', protocolType: 'consumer', protocolData: 'RoundRobinAssigner' });
    expect(described.members).toHaveLength(1);
    const member = described.members[0]!;
    expect(member).toMatchObject({ clientId: 'admin-test', clientHost: '/127.0.0.1', groupInstanceId: null });
    expect(AssignerProtocol.MemberMetadata.decode(Buffer.from(member.memberMetadata))!.topics).toEqual(['watched']);
    expect(AssignerProtocol.MemberAssignment.decode(Buffer.from(member.memberAssignment))!.assignment).toEqual({ watched: [0] });

    const deleting = await handleOffsetDelete(
      context,
      offsetDeleteRequest({
        groupId: GROUP,
        topics: [
          { name: 'watched', partitions: [{ partitionIndex: 0 }] },
          { name: 'other', partitions: [{ partitionIndex: 0 }] },
        ],
      }),
    );
    expect(deleting.topics.map((topic) => [topic.name, topic.partitions[0]!.errorCode])).toEqual([
      ['watched', GROUP_SUBSCRIBED_TO_TOPIC],
      ['other', ErrorCode.NONE],
    ]);
    expect((await handleDeleteGroups(context, deleteGroupsRequest({ groupsNames: [GROUP] }))).results[0]!.errorCode).toBe(ErrorCode.NON_EMPTY_GROUP);
  } finally {
    await consumer.disconnect(); // commits and leaves the group
  }
  const offsets = async (topic: string) => (await admin.fetchOffsets({ groupId: GROUP, topics: [topic] }))[0]!.partitions[0]!.offset;
  expect(await offsets('watched')).toBe('2');
  expect(await offsets('other')).toBe('-1');
  expect((await handleDeleteGroups(broker.context, deleteGroupsRequest({ groupsNames: [GROUP] }))).results[0]!.errorCode).toBe(ErrorCode.NONE);
  expect(await offsets('watched')).toBe('-1');
  expect((await handleDescribeGroups(broker.context, describeGroupsRequest({ groups: [GROUP] }), 6)).groups[0]!.errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
  await admin.disconnect();
});
