// An idle broker's WAL collector does not LIST its streams every interval (GC_IDLE_PASS_MS): a
// scheduled pass is skipped while `progress` says nothing that could free an object changed since
// the last pass that failed nowhere, and runs at least every GC_IDLE_PASS_MS all the same.
import { expect, test } from 'bun:test';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ListOptions, ListPage } from '../../src/store/object-store.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { GC_IDLE_PASS_MS, GC_INTERVAL_MS } from '../../src/wal-gc/collector.ts';
import { settle } from '../support/settle.ts';
import { collectorOf, present, putSeal, putStream, World, WRITER } from './support.ts';

class ListCount extends MemoryStore {
  lists = 0;
  override async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    this.lists++;
    return super.list(prefix, options);
  }
}

async function tick(clock: ManualClock, ms: number): Promise<void> {
  clock.advance(ms);
  await settle(5);
}

test('passes are skipped while progress stands still, run when it moves, and at least every GC_IDLE_PASS_MS', async () => {
  const store = new ListCount();
  await putStream(store, { writerId: WRITER, epoch: 1 }, 3);
  const clock = new ManualClock();
  let progress = 'a';
  const collector = collectorOf(store, new World(), 1, { clock, progress: () => progress });
  collector.start();
  await tick(clock, GC_INTERVAL_MS); // the first pass runs
  const afterFirst = store.lists;
  expect(afterFirst).toBeGreaterThan(0);
  for (let i = 0; i < 5; i++) await tick(clock, GC_INTERVAL_MS);
  expect(store.lists).toBe(afterFirst); // nothing moved: no LIST
  progress = 'b';
  await tick(clock, GC_INTERVAL_MS);
  const afterMove = store.lists;
  expect(afterMove).toBeGreaterThan(afterFirst);
  await tick(clock, GC_IDLE_PASS_MS);
  expect(store.lists).toBeGreaterThan(afterMove); // the idle bound
  collector.stop();
});

test('idlePassMs shortens the idle bound (the simulation runs it within a run)', async () => {
  const store = new ListCount();
  await putStream(store, { writerId: WRITER, epoch: 1 }, 3);
  const clock = new ManualClock();
  const idlePassMs = 3 * GC_INTERVAL_MS;
  const collector = collectorOf(store, new World(), 1, { clock, progress: () => 'still', idlePassMs });
  collector.start();
  await tick(clock, GC_INTERVAL_MS);
  const afterFirst = store.lists;
  await tick(clock, GC_INTERVAL_MS);
  expect(store.lists).toBe(afterFirst); // idle: skipped
  for (let i = 0; i < 3; i++) await tick(clock, GC_INTERVAL_MS);
  expect(store.lists).toBeGreaterThan(afterFirst); // the shorter bound passed
  collector.stop();
});

test('without progress every scheduled pass runs', async () => {
  const store = new ListCount();
  await putStream(store, { writerId: WRITER, epoch: 1 }, 3);
  const clock = new ManualClock();
  const collector = collectorOf(store, new World(), 1, { clock });
  collector.start();
  await tick(clock, GC_INTERVAL_MS);
  const afterFirst = store.lists;
  await tick(clock, GC_INTERVAL_MS);
  expect(store.lists).toBeGreaterThan(afterFirst);
  collector.stop();
});

test('while an earlier stream holds objects below its seal (frames another broker has yet to tier), every pass runs', async () => {
  const store = new ListCount();
  const earlier = { writerId: WRITER, epoch: 0 };
  await putStream(store, earlier, 3); // offsets 0..29, a takeover's next rebuild reads them
  await putSeal(store, earlier, 3);
  await putStream(store, { writerId: WRITER, epoch: 1 }, 1);
  const clock = new ManualClock();
  const world = new World();
  const collector = collectorOf(store, world, 1, { clock, progress: () => 'still' }); // nothing this broker does moves
  collector.start();
  await tick(clock, GC_INTERVAL_MS);
  world.setTieredEnd(30); // the partition's new leader, another broker, tiered them
  await tick(clock, GC_INTERVAL_MS);
  expect(await present(store, earlier)).toEqual([3]); // collected down to the seal in one interval, not GC_IDLE_PASS_MS
  const settled = store.lists;
  await tick(clock, GC_INTERVAL_MS);
  await tick(clock, GC_INTERVAL_MS);
  expect(store.lists).toBe(settled); // down to its seal: idle again
  collector.stop();
});
