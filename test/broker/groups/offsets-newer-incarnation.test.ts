// Found by the simulation (seed 3754): a topic deleted and created again while one broker was cut
// off from the control store. Back, and coordinator of the group before its next scan, that broker
// still listed the deleted incarnation; OffsetFetch compared each committed offset's topic id with
// that stale cache, took the offset committed for the new incarnation for one of the deleted
// incarnation, and answered -1: the group's committed offset went from 195 to nothing, and back
// once the broker had scanned. An id this broker has not seen is decided by the topic's record.
import { expect, test } from 'bun:test';
import type { BrokerContext } from '../../../src/broker/context.ts';
import { ControlOffsetStore } from '../../../src/broker/groups/offset-store.ts';
import { handleOffsetFetch } from '../../../src/broker/handlers/groups.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { ClusterTopology } from '../../../src/broker/topology.ts';
import { ControlStore } from '../../../src/control/control-store.ts';
import type { ClusterNode } from '../../../src/cluster/node.ts';
import { RegisteredAddresses } from '../../../src/cluster/replica-address.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import type { Uuid } from '../../../src/util/uuid.ts';
import { testClusterNode } from '../../support/cluster-node.ts';
import { advanceThrough } from '../../support/settle.ts';
import { offsetFetchRequest } from '../../support/requests.ts';
import { OPEN_SECURITY } from '../../support/broker-security.ts';

/** A scan interval no test here reaches: node 2 scans only when the test says. */
const NO_SCANS_OF_ITS_OWN_MS = 1e9;

const GROUP = 'g';

interface Cluster {
  readonly current: ClusterNode;
  readonly stale: ClusterNode;
  readonly offsets: ControlOffsetStore;
  readonly firstId: Uuid;
  readonly secondId: Uuid;
}

/** Node 1 deletes topic t and creates it again; node 2 last scanned before the delete. */
async function recreatedBehindOneBroker(): Promise<Cluster> {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const current = testClusterNode({ store, clock, nodeId: 1 });
  const stale = testClusterNode({ store, clock, nodeId: 2, scanIntervalMs: NO_SCANS_OF_ITS_OWN_MS });
  await current.start();
  await stale.start();
  expect(await current.createTopic('t', 1)).toBe(true);
  await stale.scan();
  const firstId = stale.topics().get('t')!.topicId;
  expect(await advanceThrough(clock, current.deleteTopic('t'), 'the delete', 50)).toBe(true); // [L8] it waits out node 2's sighting of t
  expect(await current.createTopic('t', 1)).toBe(true);
  const secondId = current.topics().get('t')!.topicId;
  expect(secondId).not.toBe(firstId);
  return { current, stale, offsets: new ControlOffsetStore(new ControlStore(store, 'c'), { nodeId: 1, incarnation: 'broker-1' }), firstId, secondId };
}

function committed(offset: number, topicId: Uuid) {
  return [{ topic: 't', partition: 0, committed: { offset, leaderEpoch: -1, metadata: null, commitTimestampMs: 0, byMember: true, topicId } }];
}

/** What node `node` answers for group g's offset of t/0, acting as its coordinator. */
async function fetchedOn(node: ClusterNode, offsets: ControlOffsetStore): Promise<{ offset: number; errorCode: number }> {
  const topology = new ClusterTopology(node, 1, new RegisteredAddresses(new ManualClock()));
  const context = { ...OPEN_SECURITY, topology, offsets, nodeId: topology.coordinatorFor(GROUP)!.nodeId } as unknown as BrokerContext;
  const response = await handleOffsetFetch(context, offsetFetchRequest({ groupId: GROUP, topics: [{ name: 't', partitionIndexes: [0] }] }));
  const partition = response.topics![0]!.partitions[0]!;
  return { offset: partition.committedOffset, errorCode: response.errorCode! };
}

test('an offset committed for an incarnation created since this broker last scanned is returned', async () => {
  const { current, stale, offsets, firstId, secondId } = await recreatedBehindOneBroker();
  await offsets.commit(GROUP, committed(195, secondId), await offsets.claim(GROUP)); // through node 1, which knows the new incarnation
  expect(stale.topics().get('t')!.topicId).toBe(firstId); // node 2 has not scanned since
  expect(await fetchedOn(stale, offsets)).toEqual({ offset: 195, errorCode: ErrorCode.NONE });
  expect(await fetchedOn(current, offsets)).toEqual({ offset: 195, errorCode: ErrorCode.NONE });
});

test('an offset committed for the deleted incarnation is still gone, on a broker that scanned and on one that did not yet', async () => {
  const { current, stale, offsets, firstId } = await recreatedBehindOneBroker();
  await offsets.commit(GROUP, committed(29, firstId), await offsets.claim(GROUP));
  expect(await fetchedOn(current, offsets)).toEqual({ offset: -1, errorCode: ErrorCode.NONE });
  await stale.scan();
  expect(await fetchedOn(stale, offsets)).toEqual({ offset: -1, errorCode: ErrorCode.NONE });
});
