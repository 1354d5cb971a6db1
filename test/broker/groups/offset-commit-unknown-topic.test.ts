// Issue 12, wrong answer 2: OffsetCommit for a topic that does not exist answered success. Kafka
// answers UNKNOWN_TOPIC_OR_PARTITION for each such partition (a partition past the topic's count
// too) and stores nothing for it; the other partitions of the request are committed. In a
// cluster, a topic another broker created a moment ago is read from its record, never refused
// because this broker has not seen it yet.
import { afterEach, expect, test } from 'bun:test';
import { Broker } from '../../../src/broker/broker.ts';
import type { BrokerContext } from '../../../src/broker/context.ts';
import { handleOffsetCommit, handleOffsetFetch } from '../../../src/broker/handlers/groups.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { offsetCommitRequest, offsetFetchRequest } from '../../support/requests.ts';

const brokers: Broker[] = [];
/** Long enough that no scan runs during a test: a broker knows another's topics only from their records. */
const SCAN_INTERVAL_MS = 60_000;

afterEach(async () => {
  for (const broker of brokers.splice(0)) await broker.stop().catch(() => {});
});

async function commit(context: BrokerContext, groupId: string, partitions: [string, number][]): Promise<number[]> {
  const topics = [...new Set(partitions.map(([topic]) => topic))].map((name) => ({
    name,
    partitions: partitions
      .filter(([topic]) => topic === name)
      .map(([, partitionIndex]) => ({ partitionIndex, committedOffset: 3, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: null })),
  }));
  const response = await handleOffsetCommit(context, offsetCommitRequest({ groupId, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1, topics }));
  return response.topics.flatMap((topic) => topic.partitions.map((p) => p.errorCode));
}

async function storedPartitions(context: BrokerContext, groupId: string): Promise<string[]> {
  const response = await handleOffsetFetch(context, offsetFetchRequest({ groupId, topics: null }));
  return response.topics!.flatMap((topic) => topic.partitions.map((p) => `${topic.name}/${p.partitionIndex}`)).sort();
}

test('single broker: UNKNOWN_TOPIC_OR_PARTITION for a topic that does not exist and a partition past the count; nothing stored for them', async () => {
  const broker = await Broker.start({ listenHost: '127.0.0.1', listenPort: 0, nodeId: 1, engine: { directory: tempDir(), log: { flush: { kind: 'none' } } } });
  brokers.push(broker);
  await broker.context.topology.createTopic('real', 2);
  expect(
    await commit(broker.context, 'g', [
      ['real', 0],
      ['real', 2],
      ['ghost', 0],
    ]),
  ).toEqual([ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
  expect(await storedPartitions(broker.context, 'g')).toEqual(['real/0']);
});

test('cluster: a topic just created through another broker is committed; one that exists nowhere is refused', async () => {
  const store = new MemoryStore();
  for (const nodeId of [1, 2]) {
    brokers.push(
      await Broker.start({
        listenHost: '127.0.0.1',
        listenPort: 0,
        nodeId,
        cluster: { store, leaseMs: 2000, scanIntervalMs: SCAN_INTERVAL_MS },
        engine: { directory: tempDir(), log: { flush: { kind: 'none' } }, wal: { store, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 2 } } },
      }),
    );
  }
  const [one, two] = brokers as [Broker, Broker];
  expect(await one.context.topology.createTopic('fresh', 2)).toBe(true);
  expect(two.context.topology.topics().has('fresh')).toBe(false); // broker 2 has not seen it
  const groupId = ['g0', 'g1', 'g2', 'g3', 'g4', 'g5'].find((id) => two.context.topology.coordinatorFor(id)?.nodeId === 2)!;
  expect(
    await commit(two.context, groupId, [
      ['fresh', 1],
      ['fresh', 2],
      ['ghost', 0],
    ]),
  ).toEqual([ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
  expect(await storedPartitions(two.context, groupId)).toEqual(['fresh/1']);
});
