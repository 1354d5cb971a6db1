// The sweep of deleted topic incarnations (src/tier/retired-sweeper.ts): what the tier holds of
// an id the live topics lack goes after two sightings a delay apart, the records after the
// objects, late uploads too; a live incarnation's objects are never touched.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tieredPartitionPrefix, tieredSegmentKey } from '../../src/tier/keys.ts';
import { RetiredIncarnationSweeper } from '../../src/tier/retired-sweeper.ts';
import { TierRecords } from '../../src/tier/tier-record.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { randomUuid, type Uuid } from '../../src/util/uuid.ts';
import { SeededRandom } from '../../src/util/random.ts';

const DELAY_MS = 60_000;
const random = new SeededRandom(7);

async function tierOf(store: MemoryStore, records: TierRecords, topicId: Uuid, partition: number): Promise<string> {
  await records.take(topicId, partition, 0);
  const key = tieredSegmentKey('', topicId, partition, 0, 10, randomUuid(random));
  await store.put(key, new Uint8Array(16));
  return key;
}

/** `deleted`: the ids with a deletion record (DI1), as the test sets them. */
function setup(deleted: Set<Uuid>) {
  const store = new MemoryStore();
  const records = new TierRecords(new ControlStore(store, ''));
  const clock = new ManualClock(0);
  const sweeper = new RetiredIncarnationSweeper({ store, prefix: '', records, clock, delayMs: DELAY_MS, deletedTopicIds: async () => deleted });
  return { store, records, clock, sweeper };
}

test('a deleted incarnation goes at the second sighting a delay later, objects and records; one without a deletion record stays', async () => {
  const kept = randomUuid(random);
  const gone = randomUuid(random);
  const { store, records, clock, sweeper } = setup(new Set([gone]));
  const keptKey = await tierOf(store, records, kept, 0);
  await tierOf(store, records, gone, 0);
  await tierOf(store, records, gone, 3);
  expect(await sweeper.sweep()).toBe(0); // first sighting
  clock.advance(DELAY_MS - 1);
  expect(await sweeper.sweep()).toBe(0); // not yet a delay apart
  clock.advance(1);
  expect(await sweeper.sweep()).toBe(2);
  expect((await store.list(tieredPartitionPrefix('', gone, 0))).objects).toEqual([]);
  expect((await store.list(tieredPartitionPrefix('', gone, 3))).objects).toEqual([]);
  expect((await records.list()).map((p) => p.topicId)).toEqual([kept]);
  expect((await store.get(keptKey)).body.length).toBe(16);
});

test('DI1: a tier record no deletion record names is kept however long (a broker on an empty disk, a read replica know fewer topics than exist)', async () => {
  const topicId = randomUuid(random);
  const deleted = new Set<Uuid>();
  const { store, records, clock, sweeper } = setup(deleted);
  await tierOf(store, records, topicId, 0);
  for (let sweep = 0; sweep < 5; sweep++) {
    expect(await sweeper.sweep()).toBe(0);
    clock.advance(DELAY_MS);
  }
  expect((await store.list(tieredPartitionPrefix('', topicId, 0))).objects.length).toBe(1);
  deleted.add(topicId); // its deletion record is written: a delay later it goes
  expect(await sweeper.sweep()).toBe(0);
  clock.advance(DELAY_MS);
  expect(await sweeper.sweep()).toBe(1);
});

test('an upload that lands after the delete (a leader that had not heard of it) is deleted by a later sweep', async () => {
  const topicId = randomUuid(random);
  const { store, records, clock, sweeper } = setup(new Set([topicId]));
  await tierOf(store, records, topicId, 0);
  await sweeper.sweep();
  clock.advance(DELAY_MS);
  expect(await sweeper.sweep()).toBe(1);
  await store.put(tieredSegmentKey('', topicId, 0, 10, 20, randomUuid(random)), new Uint8Array(8)); // no record names it any more
  expect(await sweeper.sweep()).toBe(1);
  expect((await store.list(tieredPartitionPrefix('', topicId, 0))).objects).toEqual([]);
});

test('a failed delete keeps the record, so the next sweep finds the incarnation again', async () => {
  const topicId = randomUuid(random);
  const { store, records, clock, sweeper } = setup(new Set([topicId]));
  await tierOf(store, records, topicId, 0);
  await sweeper.sweep();
  clock.advance(DELAY_MS);
  const realDelete = store.delete.bind(store);
  store.delete = async () => {
    throw new Error('injected: delete refused');
  };
  await expect(sweeper.sweep()).rejects.toThrow(/injected/);
  expect((await records.list()).length).toBe(1);
  store.delete = realDelete;
  expect(await sweeper.sweep()).toBe(1);
  expect(await records.list()).toEqual([]);
});
