import { expect, test } from 'bun:test';
import { ControlOffsetStore, OffsetStore } from '../../../src/broker/groups/offset-store.ts';
import { ControlStore } from '../../../src/cluster/control-store.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { tempDir } from '../../support/temp-dir.ts';

const at = (offset: number) => ({ offset, leaderEpoch: 0, metadata: null });

test('local offsets survive a reopen of the directory', async () => {
  const directory = tempDir();
  await OffsetStore.open(directory).commit('g', [{ topic: 't', partition: 1, committed: at(42) }]);
  expect(await OffsetStore.open(directory).list('g')).toEqual([{ topic: 't', partition: 1, committed: at(42) }]);
  expect(await OffsetStore.open(directory).list('other')).toEqual([]);
});

test('control-record offsets: concurrent commits from two brokers both land (compare-and-swap retries)', async () => {
  const store = new MemoryStore({ latency: 's3-express', seed: 3 });
  const a = new ControlOffsetStore(new ControlStore(store, 'cluster'));
  const b = new ControlOffsetStore(new ControlStore(store, 'cluster'));
  await Promise.all([
    ...Array.from({ length: 5 }, (_, p) => a.commit('g/with slash', [{ topic: 'a.b', partition: p, committed: at(p) }])),
    ...Array.from({ length: 5 }, (_, p) => b.commit('g/with slash', [{ topic: 'c', partition: p, committed: at(100 + p) }])),
  ]);
  const listed = await a.list('g/with slash');
  expect(listed.length).toBe(10);
  expect(listed.find((o) => o.topic === 'c' && o.partition === 4)?.committed.offset).toBe(104);
  expect(listed.find((o) => o.topic === 'a.b' && o.partition === 2)?.committed.offset).toBe(2);
});
