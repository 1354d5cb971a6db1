// Found by the simulation (seed 892): a delete that waited out another leader's lease [L8] ended
// by dropping the topic's name from this broker's view, whatever incarnation the view held by
// then. Meanwhile a second delete had finished the same incarnation elsewhere, the name had been
// created again, and this broker had adopted a partition of the new incarnation: dropping the name
// made it forget the new incarnation, whose id its engine then retired for good. It never led or
// followed that topic again (acks=all NOT_LEADER_OR_FOLLOWER until the end of the run). A delete
// now drops only its own incarnation from the view.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import type { TopicRecord } from '../../src/cluster/control-records.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { testClusterNode } from '../support/cluster-node.ts';
import { advanceThrough } from '../support/settle.ts';

/** A scan interval no test here reaches: the nodes scan only when the test says. */
const NO_SCANS_OF_ITS_OWN_MS = 1e9;

test('a delete that waited while the name was deleted elsewhere and created again leaves the new incarnation served', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const control = new ControlStore(store, 'c');
  const forgotten: string[] = [];
  const adopted: string[] = [];
  const slow = testClusterNode({
    store,
    clock,
    nodeId: 1,
    scanIntervalMs: NO_SCANS_OF_ITS_OWN_MS,
    adopt: async (topic, partition, _partitions, { next }) => void adopted.push(`${topic}/${partition} ${next.topicId}`),
    forget: async (topic) => void forgotten.push(topic),
  });
  const other = testClusterNode({ store, clock, nodeId: 2, scanIntervalMs: NO_SCANS_OF_ITS_OWN_MS });
  await slow.start();
  await other.start();
  await other.createTopic('t', 1);
  await other.scan(); // broker 2 leads t/0 of the first incarnation
  await slow.scan();

  const slowDelete = slow.deleteTopic('t'); // marks t, then waits out broker 2's lease [L8]
  expect(await other.deleteTopic('t')).toBe(true); // broker 2 finishes the same delete at once (it adopted t/0)
  expect(await other.createTopic('t', 1)).toBe(true);
  const second = (await control.read<TopicRecord>('topics/t'))!.value.topicId;
  await slow.scan(); // broker 1 claims t/0 of the new incarnation
  expect(adopted).toEqual([`t/0 ${second}`]);

  expect(await advanceThrough(clock, slowDelete, 'the slow delete', 50)).toBe(true);
  expect(forgotten).toEqual([]); // nothing of the new incarnation is forgotten
  expect(slow.topics().get('t')?.topicId).toBe(second);
  expect(slow.leaderOf('t', 0)?.record.topicId).toBe(second);
  slow.stop();
  other.stop();
});
