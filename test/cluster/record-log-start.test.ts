// ClusterNode.recordLogStart (DeleteRecords' cluster part): only the broker serving a partition
// as the leader its record names, at the epoch it adopted, writes the new log start; it only
// rises; a record changed by the leader itself meanwhile (a settled prefix) is written over anew.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import type { PartitionRecord } from '../../src/cluster/control-records.ts';
import { isFerryError } from '../../src/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { testClusterNode } from '../support/cluster-node.ts';

async function ledByNode1() {
  const store = new MemoryStore();
  const node = testClusterNode({ store, clock: new ManualClock(), nodeId: 1 });
  await node.start();
  await node.createTopic('t', 1);
  await node.scan(); // claims and "adopts" t-0 (the test hooks do nothing)
  node.stop();
  return { node, control: new ControlStore(store, 'c') };
}

async function kindOf(action: () => Promise<unknown>): Promise<string | null> {
  try {
    await action();
  } catch (error) {
    return isFerryError(error) ? error.kind : 'not a FerryError';
  }
  return null;
}

test('the leader writes the new start into its record, only ever up', async () => {
  const { node, control } = await ledByNode1();
  await node.recordLogStart('t', 0, 7);
  expect((await control.read<PartitionRecord>('partitions/t/0'))!.value).toMatchObject({ leader: 1, leaderEpoch: 0, logStartOffset: 7 });
  await node.recordLogStart('t', 0, 3);
  expect((await control.read<PartitionRecord>('partitions/t/0'))!.value.logStartOffset).toBe(7);
});

test('a record the leader changed meanwhile is written over anew; one another broker claimed is NotLeader', async () => {
  const { node, control } = await ledByNode1();
  const claimed = (await control.read<PartitionRecord>('partitions/t/0'))!;
  const noted = (await control.replace('partitions/t/0', claimed, { ...claimed.value, settled: { count: 0, fromOffset: 0 } }))!; // as #noteSettled would
  await node.recordLogStart('t', 0, 4);
  expect((await control.read<PartitionRecord>('partitions/t/0'))!.value).toMatchObject({ settled: { count: 0, fromOffset: 0 }, logStartOffset: 4 });
  const current = (await control.read<PartitionRecord>('partitions/t/0'))!;
  await control.replace('partitions/t/0', current, { ...current.value, leader: 2, leaderEpoch: 1 });
  expect(noted).not.toBeNull();
  expect(await kindOf(() => node.recordLogStart('t', 0, 9))).toBe('NotLeader');
  expect((await control.read<PartitionRecord>('partitions/t/0'))!.value).toMatchObject({ leader: 2, logStartOffset: 4 });
});

test('a partition not served here is NotLeader', async () => {
  const { node } = await ledByNode1();
  expect(await kindOf(() => node.recordLogStart('t', 1, 1))).toBe('NotLeader');
  expect(await kindOf(() => node.recordLogStart('other', 0, 1))).toBe('NotLeader');
});
