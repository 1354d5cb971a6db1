// Committed group offsets belong to one incarnation of a topic (docs/design.md contract 10): after a
// topic is deleted and created again, a group starts over on it instead of skipping the new
// incarnation's first records at the old one's committed offset.
import { expect, test } from 'bun:test';
import { Broker } from '../../../src/broker/broker.ts';
import { handleOffsetCommit, handleOffsetFetch } from '../../../src/broker/handlers/groups.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { offsetFetchRequest, offsetCommitRequest } from '../../support/requests.ts';

test('an offset committed for a deleted incarnation is not returned for the topic created again', async () => {
  const broker = await Broker.start({ listenHost: '127.0.0.1', listenPort: 0, nodeId: 1, engine: { directory: tempDir() } });
  const { context } = broker;
  const commit = (offset: number) =>
    handleOffsetCommit(
      context,
      offsetCommitRequest({
        groupId: 'g',
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        retentionTimeMs: -1,
        topics: [{ name: 'd1', partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: null }] }],
      }),
    );
  const fetched = async () => (await handleOffsetFetch(context, offsetFetchRequest({ groupId: 'g', topics: [{ name: 'd1', partitionIndexes: [0] }] }))).topics![0]!.partitions[0]!.committedOffset;
  const listed = async () => (await handleOffsetFetch(context, offsetFetchRequest({ groupId: 'g', topics: null }))).topics!.map((t) => t.name);
  try {
    await context.topology.createTopic('d1', 1);
    await commit(5);
    expect(await fetched()).toBe(5);
    await context.topology.deleteTopic('d1');
    await context.topology.createTopic('d1', 1);
    expect(await fetched()).toBe(-1); // nothing committed for this incarnation yet
    expect(await listed()).toEqual([]);
    await commit(2);
    expect(await fetched()).toBe(2);
  } finally {
    await broker.stop();
  }
});
