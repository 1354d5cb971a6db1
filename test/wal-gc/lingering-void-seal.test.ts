// Found by the review of the late fixes (issue 11), fixed. Review of the late fixes (issue 11), src/wal/seal.ts voidedSeal + src/wal-gc/collector.ts #collectStream.
// The fix: every reader sees a stream from its highest floor mark up (src/wal/floor.ts listSequences), so a void seal left below it is no one's end, and GC deletes what lies below the mark first.
// A void seal is deleted only by the sealer that put it, right after its put (sealAbove -> voidedSeal),
// or by an ensureSealed whose downward search reaches it. A sealer that dies (or whose mark LIST or
// DELETE fails) between its put and that check leaves the void seal in place, and a retry by
// sealStream seals afresh above the writer's objects (sealAbove skips what the listing holds): the
// void seal stays, now the stream's lowest object. GC then finds a seal at the floor, treats
// everything above it as a fenced writer's late puts ([G6], #collectAboveSeal) and deletes, after
// WAL_ORPHAN_DELAY_MS, the writer's acknowledged objects that nothing covers (not tiered) and the
// valid seal with them: acknowledged records lost from the WAL, and the stream unfenced.
// Severity: high (data loss), trigger: a sealer crash/failure inside the void-seal window.
import { expect, test } from 'bun:test';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { WAL_ORPHAN_DELAY_MS } from '../../src/wal-gc/above-seal.ts';
import { sealStream } from '../../src/wal/seal.ts';
import { collectorOf, PREFIX, present, putSeal, putStream, World, WRITER } from './support.ts';

const STREAM = { writerId: WRITER, epoch: 1 };
/** The collector's own epoch: STREAM is an earlier one, collected by the tier alone. */
const CURRENT_EPOCH = 2;

test('a void seal left by a sealer that died before its check does not make GC delete the acknowledged objects above it', async () => {
  const store = new MemoryStore();
  await putStream(store, STREAM, 6); // the writer's objects 0..5, offsets 0..59, all acknowledged
  const world = new World();
  world.setTieredEnd(30); // objects 0..2 are tiered
  const clock = new ManualClock();
  const collector = collectorOf(store, world, CURRENT_EPOCH, { clock });
  await collector.collect(); // marks floor 3, deletes 0..2
  expect(await present(store, STREAM)).toEqual([3, 4, 5]);

  // A sealer that listed when only 0..1 were there puts its seal at 2, free again since GC took it,
  // and dies before voidedSeal: the void seal stays. The successor seals again, from a fresh listing.
  await putSeal(store, STREAM, 2);
  const sealed = await sealStream(store, PREFIX, STREAM, { writerId: 'broker-2', nowMs: 0 });
  expect(sealed.sealSequence).toBe(6); // the valid seal, above every acknowledged object
  expect(await present(store, STREAM)).toEqual([2, 3, 4, 5, 6]); // the void seal at 2 was not cleaned up

  await collector.collect();
  clock.advance(WAL_ORPHAN_DELAY_MS);
  await collector.collect();
  // Offsets 30..59 are in no tier: objects 3..5 must stay, and the seal at 6 with them.
  expect(await present(store, STREAM)).toEqual(expect.arrayContaining([3, 4, 5, 6])); // FAILS: [2]
});
