import { expect, test } from 'bun:test';
import { ControlOffsetStore, OffsetStore } from '../../../src/broker/groups/offset-store.ts';
import { isFerryError } from '../../../src/errors.ts';
import { ControlStore } from '../../../src/control/control-store.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { tempDir } from '../../support/temp-dir.ts';

const at = (offset: number) => ({ offset, leaderEpoch: 0, metadata: null });

test('local offsets survive a reopen of the directory', async () => {
  const directory = tempDir();
  await OffsetStore.open(directory).commit('g', [{ topic: 't', partition: 1, committed: at(42) }]);
  expect(await OffsetStore.open(directory).list('g')).toEqual([{ topic: 't', partition: 1, committed: at(42) }]);
  expect(await OffsetStore.open(directory).list('other')).toEqual([]);
});

const broker = (nodeId: number, incarnation = `broker-${nodeId}`) => ({ nodeId, incarnation });

test('control-record offsets: concurrent commits under one claim all land (compare-and-swap retries)', async () => {
  const store = new MemoryStore({ latency: 's3-express', seed: 3 });
  const a = new ControlOffsetStore(new ControlStore(store, 'cluster'), broker(1));
  const claim = await a.claim('g/with slash');
  await Promise.all([
    ...Array.from({ length: 5 }, (_, p) => a.commit('g/with slash', [{ topic: 'a.b', partition: p, committed: at(p) }], claim)),
    ...Array.from({ length: 5 }, (_, p) => a.commit('g/with slash', [{ topic: 'c', partition: p, committed: at(100 + p) }], claim)),
  ]);
  const listed = await new ControlOffsetStore(new ControlStore(store, 'cluster'), broker(2)).list('g/with slash');
  expect(listed.length).toBe(10);
  expect(listed.find((o) => o.topic === 'c' && o.partition === 4)?.committed.offset).toBe(104);
  expect(listed.find((o) => o.topic === 'a.b' && o.partition === 2)?.committed.offset).toBe(2);
});

/** Rejects with NotCoordinator (anything else fails the test). */
async function refused(write: Promise<void>): Promise<boolean> {
  return write.then(
    () => false,
    (error: unknown) => {
      if (isFerryError(error, 'NotCoordinator')) return true;
      throw error;
    },
  );
}

test('a broker that claims a group takes it: the former coordinator commits nothing more under its claim', async () => {
  const store = new MemoryStore();
  const one = new ControlOffsetStore(new ControlStore(store, 'cluster'), broker(1));
  const two = new ControlOffsetStore(new ControlStore(store, 'cluster'), broker(2));
  const claimOne = await one.claim('g');
  await one.commit('g', [{ topic: 't', partition: 0, committed: at(391) }], claimOne);
  const claimTwo = await two.claim('g');
  expect(claimTwo.epoch).toBe(claimOne.epoch + 1);
  await two.commit('g', [{ topic: 't', partition: 0, committed: at(396) }], claimTwo);
  expect(await refused(one.commit('g', [{ topic: 't', partition: 0, committed: at(391) }], claimOne))).toBe(true);
  expect(await refused(one.remove('g', await one.list('g'), claimOne))).toBe(true);
  expect((await one.list('g')).map((o) => o.committed.offset)).toEqual([396]);
  // The refusal forgot the claim: claiming again takes the group back, at the next epoch.
  const again = await one.claim('g');
  expect(again.epoch).toBe(claimTwo.epoch + 1);
  expect(await refused(two.commit('g', [{ topic: 't', partition: 0, committed: at(397) }], claimTwo))).toBe(true);
  await one.commit('g', [{ topic: 't', partition: 0, committed: at(400) }], again);
  expect((await two.list('g')).map((o) => o.committed.offset)).toEqual([400]);
});

test('a commit racing a claim by another broker either lands before the claim or is refused', async () => {
  for (let seed = 1; seed <= 20; seed++) {
    const store = new MemoryStore({ latency: 's3-express', seed });
    const one = new ControlOffsetStore(new ControlStore(store, 'cluster'), broker(1));
    const two = new ControlOffsetStore(new ControlStore(store, 'cluster'), broker(2));
    const claimOne = await one.claim('g');
    const [wasRefused, claimTwo] = await Promise.all([refused(one.commit('g', [{ topic: 't', partition: 0, committed: at(7) }], claimOne)), two.claim('g')]);
    await two.commit('g', [{ topic: 't', partition: 1, committed: at(8) }], claimTwo);
    const stored = new Map((await two.list('g')).map((o) => [o.partition, o.committed.offset]));
    expect(stored.get(1)).toBe(8);
    expect(stored.get(0)).toBe(wasRefused ? undefined : 7);
  }
});

test('a claim whose answer was lost is found again in the record, and a restarted broker claims afresh', async () => {
  const store = new MemoryStore();
  const one = new ControlOffsetStore(new ControlStore(store, 'cluster'), broker(1));
  store.injectFault({ operation: 'put', kind: 'Unavailable', afterEffect: true });
  expect(
    await one.claim('g').then(
      () => 'claimed',
      () => 'failed',
    ),
  ).toBe('failed'); // it took effect all the same
  const claim = await one.claim('g');
  expect(claim.epoch).toBe(1); // the same claim, not a second one
  await one.commit('g', [{ topic: 't', partition: 0, committed: at(5) }], claim);
  const restarted = new ControlOffsetStore(new ControlStore(store, 'cluster'), broker(1, 'broker-1-restarted'));
  const fresh = await restarted.claim('g');
  expect(fresh.epoch).toBe(2);
  expect(await refused(one.commit('g', [{ topic: 't', partition: 0, committed: at(6) }], claim))).toBe(true); // the process before the restart (paused, say)
  expect((await restarted.list('g')).map((o) => o.committed.offset)).toEqual([5]);
});

test('a group record written before claims existed keeps its offsets when claimed', async () => {
  const store = new MemoryStore();
  const control = new ControlStore(store, 'cluster');
  await control.create('groups/g', { 't/0': at(12), 'a/b.c/3': at(34) }); // the old shape: offsets by "topic/partition" alone
  const one = new ControlOffsetStore(control, broker(1));
  expect((await one.list('g')).map((o) => [o.topic, o.partition, o.committed.offset])).toEqual([
    ['t', 0, 12],
    ['a/b.c', 3, 34],
  ]);
  const claim = await one.claim('g');
  await one.commit('g', [{ topic: 't', partition: 1, committed: at(56) }], claim);
  expect((await one.list('g')).map((o) => o.committed.offset).sort()).toEqual([12, 34, 56]);
});
