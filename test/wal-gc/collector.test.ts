// The WAL garbage collector (docs/tier-protocol.md [G4], [G6]; GI1, GI2), driven pass by pass
// over hand-built streams: what it deletes, in which order, and where it must stop.
import { expect, test } from 'bun:test';
import { MetricsRegistry } from '../../src/metrics/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { walObjectKey } from '../../src/wal/keys.ts';
import { WAL_ORPHAN_DELAY_MS } from '../../src/wal-gc/above-seal.ts';
import { idOf } from '../support/topic-ids.ts';
import { collectorOf, PREFIX, present, putData, putSeal, putStream, TOPIC, World, WRITER } from './support.ts';

const SEALED = { writerId: WRITER, epoch: 1 };
const CURRENT = { writerId: WRITER, epoch: 2 };

/** A MemoryStore that remembers the keys it was asked to delete, in order. */
class DeleteLog extends MemoryStore {
  readonly deletes: string[] = [];
  override async delete(key: string): Promise<void> {
    this.deletes.push(key);
    return super.delete(key);
  }
}

test('deletes the covered objects from the floor up, in order, and stops at the first that must stay', async () => {
  const store = new DeleteLog();
  await putStream(store, SEALED, 3); // offsets 0..9, 10..19, 20..29
  await putData(store, SEALED, 3, [{ topicId: idOf(TOPIC, 1), baseOffset: 0, lastOffset: 5 }]); // a deleted incarnation: covered, but above one that stays
  await putSeal(store, SEALED, 4);
  const world = new World();
  world.setTieredEnd(25); // 20..29 is not tiered whole
  world.deleted.add(idOf(TOPIC, 1));
  expect(await collectorOf(store, world, 2).collect()).toBe(2);
  expect(store.deletes).toEqual([walObjectKey(PREFIX, SEALED, 0), walObjectKey(PREFIX, SEALED, 1)]);
  expect(await present(store, SEALED)).toEqual([2, 3, 4]);
  world.setTieredEnd(30);
  await collectorOf(store, world, 2).collect();
  expect(await present(store, SEALED)).toEqual([4]); // the seal stays ([G5] is not built)
});

test('an object with one frame not covered stays, whatever its other frames', async () => {
  const store = new MemoryStore();
  await putData(store, SEALED, 0, [
    { baseOffset: 0, lastOffset: 9 },
    { partition: 1, baseOffset: 0, lastOffset: 9 },
  ]);
  await putSeal(store, SEALED, 1);
  const world = new World();
  world.setTieredEnd(10, 0);
  world.setTieredEnd(9, 1);
  await collectorOf(store, world, 2).collect();
  expect(await present(store, SEALED)).toEqual([0, 1]);
  world.setTieredEnd(10, 1);
  await collectorOf(store, world, 2).collect();
  expect(await present(store, SEALED)).toEqual([1]);
});

test('never deletes the highest object of a stream that is not sealed', async () => {
  const store = new MemoryStore();
  await putStream(store, CURRENT, 3);
  await putStream(store, SEALED, 2); // an earlier epoch a crash left unsealed
  const world = new World();
  world.setTieredEnd(1000);
  world.lead(Infinity);
  await collectorOf(store, world, 2).collect();
  expect(await present(store, CURRENT)).toEqual([2]);
  expect(await present(store, SEALED)).toEqual([1]);
});

test('a hole in the listing stops it below the hole', async () => {
  const store = new MemoryStore();
  await putStream(store, SEALED, 6);
  await store.delete(walObjectKey(PREFIX, SEALED, 3));
  await putSeal(store, SEALED, 6);
  const world = new World();
  world.setTieredEnd(1000);
  await collectorOf(store, world, 2).collect();
  expect(await present(store, SEALED)).toEqual([2, 4, 5, 6]);
});

test('a lagging in-sync follower holds the current stream; with none in sync, the tier alone decides', async () => {
  const store = new MemoryStore();
  await putStream(store, CURRENT, 4);
  const world = new World();
  world.setTieredEnd(1000);
  world.lead(15); // an in-sync follower applied below 15
  await collectorOf(store, world, 2).collect();
  expect(await present(store, CURRENT)).toEqual([1, 2, 3]);
  world.lead(Infinity); // it left the in-sync set: it catches up from the tier [D4]
  await collectorOf(store, world, 2).collect();
  expect(await present(store, CURRENT)).toEqual([3]);
});

test('a partition of the current stream not led here keeps its frames; an earlier epoch needs only the tier', async () => {
  const store = new MemoryStore();
  await putStream(store, CURRENT, 3);
  await putStream(store, SEALED, 3);
  await putSeal(store, SEALED, 3);
  const world = new World();
  world.setTieredEnd(1000);
  await collectorOf(store, world, 2).collect();
  expect(await present(store, CURRENT)).toEqual([0, 1, 2]);
  expect(await present(store, SEALED)).toEqual([3]);
});

test("a deleted incarnation's objects go though nothing of them is tiered", async () => {
  const store = new MemoryStore();
  const old = idOf(TOPIC, 1);
  for (let sequence = 0; sequence < 3; sequence++) await putData(store, SEALED, sequence, [{ topicId: old, baseOffset: sequence, lastOffset: sequence }]);
  await putSeal(store, SEALED, 3);
  const world = new World();
  await collectorOf(store, world, 2).collect();
  expect(await present(store, SEALED)).toEqual([0, 1, 2, 3]);
  world.deleted.add(old);
  await collectorOf(store, world, 2).collect();
  expect(await present(store, SEALED)).toEqual([3]);
});

test('[G6] objects above a seal go once everything below it is gone, after the delay', async () => {
  const store = new MemoryStore();
  await putStream(store, SEALED, 2);
  await putSeal(store, SEALED, 2);
  await putData(store, SEALED, 3, [{ baseOffset: 20, lastOffset: 29 }]); // a fenced writer's late puts
  await putData(store, SEALED, 4, [{ baseOffset: 30, lastOffset: 39 }]);
  const world = new World();
  const clock = new ManualClock();
  const collector = collectorOf(store, world, 2, { clock });
  await collector.collect();
  expect(await present(store, SEALED)).toEqual([0, 1, 2, 3, 4]); // nothing tiered: nothing below the seal goes, so nothing above
  world.setTieredEnd(20);
  await collector.collect();
  expect(await present(store, SEALED)).toEqual([2, 3, 4]);
  clock.advance(WAL_ORPHAN_DELAY_MS - 1);
  await collector.collect();
  expect(await present(store, SEALED)).toEqual([2, 3, 4]);
  clock.advance(1);
  await collector.collect();
  expect(await present(store, SEALED)).toEqual([2]);
});

test("an epoch above the one written now is a later process's: left alone", async () => {
  const store = new MemoryStore();
  await putStream(store, { writerId: WRITER, epoch: 3 }, 3);
  const world = new World();
  world.setTieredEnd(1000);
  world.lead(Infinity);
  await collectorOf(store, world, 2).collect();
  expect(await present(store, { writerId: WRITER, epoch: 3 })).toEqual([0, 1, 2]);
});

test('counts what it deletes and what it holds', async () => {
  const store = new MemoryStore();
  await putStream(store, SEALED, 3);
  await putSeal(store, SEALED, 3);
  const world = new World();
  world.setTieredEnd(20);
  const metrics = new MetricsRegistry();
  await collectorOf(store, world, 2, { metrics }).collect();
  const text = metrics.renderPrometheus();
  expect(text).toContain('ferry_wal_gc_deleted_objects_total 2');
  expect(text).toMatch(/ferry_wal_gc_deleted_bytes_total [1-9]/);
  expect(text).toContain('ferry_wal_gc_held_objects 2');
});

test('an index read once is not read again at the next pass (objects are immutable)', async () => {
  const store = new MemoryStore({ trace: true });
  await putStream(store, SEALED, 3);
  await putSeal(store, SEALED, 3);
  const world = new World();
  const collector = collectorOf(store, world, 2);
  await collector.collect();
  const gets = () => store.trace().filter((event) => event.requestClass === 'get').length;
  const first = gets();
  await collector.collect();
  expect(gets()).toBe(first);
});
