// Issue 9 finding 5, review: a consumer of a deleted topic that has not noticed yet commits its
// position by topic name. With no topic of that name at the moment, the commit was stored without a
// topic id, and an offset without an id counts for every incarnation: the topic created again then
// handed the group the old incarnation's position, and the group skipped the new records below it.
// Kafka answers a commit for a topic it does not know UNKNOWN_TOPIC_OR_PARTITION and stores nothing.
import { expect, test } from 'bun:test';
import { Broker } from '../../../src/broker/broker.ts';
import { handleOffsetCommit, handleOffsetFetch } from '../../../src/broker/handlers/groups.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { offsetFetchRequest, offsetCommitRequest } from '../../support/requests.ts';

test('an offset committed while the topic is deleted does not count for the incarnation created after', async () => {
  const broker = await Broker.start({ listenHost: '127.0.0.1', listenPort: 0, nodeId: 1, engine: { directory: tempDir() } });
  const { context } = broker;
  const commit = async (offset: number) =>
    (
      await handleOffsetCommit(
        context,
        offsetCommitRequest({
          groupId: 'g',
          generationIdOrMemberEpoch: -1,
          memberId: '',
          groupInstanceId: null,
          retentionTimeMs: -1,
          topics: [{ name: 'd1', partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: null }] }],
        }),
      )
    ).topics[0]!.partitions[0]!.errorCode;
  const fetched = async () => (await handleOffsetFetch(context, offsetFetchRequest({ groupId: 'g', topics: [{ name: 'd1', partitionIndexes: [0] }] }))).topics![0]!.partitions[0]!.committedOffset;
  try {
    await context.topology.createTopic('d1', 1);
    expect(await commit(5)).toBe(ErrorCode.NONE);
    await context.topology.deleteTopic('d1');
    // The old incarnation's consumer commits again before it learns of the delete.
    expect(await commit(5)).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    await context.topology.createTopic('d1', 1);
    expect(await fetched()).toBe(-1); // the group starts over on the new incarnation
  } finally {
    await broker.stop();
  }
});
