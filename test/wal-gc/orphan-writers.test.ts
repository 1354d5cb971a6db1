// [G1] Streams of a writer id no live broker writes as: collected, once seen so for the orphan
// delay, by the one live broker the group-coordinator hash picks; never one's own writer id.
import { expect, test } from 'bun:test';
import { pickByHash } from '../../src/cluster/coordinator-hash.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { OrphanWriters, type WriterLiveness } from '../../src/wal-gc/orphan-writers.ts';
import { collectorOf, PREFIX, present, putSeal, putStream, World, WRITER } from './support.ts';

const DELAY_MS = 60_000;
const DEAD = { writerId: 'broker-9', epoch: 4 };

async function setUp(liveness: WriterLiveness) {
  const store = new MemoryStore();
  await putStream(store, DEAD, 3);
  await putSeal(store, DEAD, 3);
  const world = new World();
  world.setTieredEnd(1000);
  const clock = new ManualClock();
  const collector = collectorOf(store, world, 2, { clock, orphans: new OrphanWriters({ store, prefix: PREFIX, liveness, clock, delayMs: DELAY_MS, scanIntervalMs: 1 }) });
  return { store, world, clock, collector };
}

test("a dead writer's streams are collected once it has been dead for the delay", async () => {
  const { store, clock, collector } = await setUp({ liveWriterIds: () => new Set([WRITER]), picks: () => true });
  await collector.collect();
  expect(await present(store, DEAD)).toEqual([0, 1, 2, 3]);
  clock.advance(DELAY_MS);
  await collector.collect();
  expect(await present(store, DEAD)).toEqual([3]);
});

test('only the broker the hash picks collects it, and not while its writer is live again', async () => {
  const notPicked = await setUp({ liveWriterIds: () => new Set([WRITER]), picks: () => false });
  notPicked.clock.advance(DELAY_MS);
  await notPicked.collector.collect();
  notPicked.clock.advance(DELAY_MS);
  await notPicked.collector.collect();
  expect(await present(notPicked.store, DEAD)).toEqual([0, 1, 2, 3]);
  let live = new Set([WRITER]);
  const back = await setUp({ liveWriterIds: () => live, picks: () => true });
  await back.collector.collect();
  live = new Set([WRITER, DEAD.writerId]); // it restarted under its node id: it collects its own streams
  back.clock.advance(DELAY_MS);
  await back.collector.collect();
  expect(await present(back.store, DEAD)).toEqual([0, 1, 2, 3]);
});

test('its own writer id is never an orphan: its in-sync followers still hold its current stream', async () => {
  const { store, world, clock, collector } = await setUp({ liveWriterIds: () => new Set(), picks: () => true }); // its own lease lapsed
  await putStream(store, { writerId: WRITER, epoch: 2 }, 3);
  world.lead(5);
  await collector.collect();
  clock.advance(DELAY_MS);
  await collector.collect();
  expect(await present(store, { writerId: WRITER, epoch: 2 })).toEqual([0, 1, 2]);
});

test('the hash picks one of the live brokers, the same whatever their order', () => {
  const brokers = [{ nodeId: 3 }, { nodeId: 1 }, { nodeId: 2 }];
  const picked = pickByHash('broker-9', brokers);
  expect(brokers).toContain(picked!);
  expect(pickByHash('broker-9', [...brokers].reverse())).toBe(picked);
  expect(pickByHash('broker-9', [])).toBeNull();
});
