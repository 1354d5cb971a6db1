// Adversarial review of issue 11, guarantee 1 (issue 11, Deliver 4: a WAL object is deleted once
// covered "and every in-sync follower of those partitions has applied past it"). Failed on main at
// 8c03420; fixed in src/wal-gc/coverage.ts (the in-sync followers hold every stream of this writer).
//
// What it shows: the collector asks the in-sync followers only for the epoch being written now
// (src/wal-gc/coverage.ts covered(): `if (!this.#current) return true`; the collector passes
// `stream.epoch === current`). When a leader moves to a new writer epoch while keeping its
// partitions ([C7]: a failed writer, a fenced one), its in-sync followers are still reading the
// previous stream, a few objects behind its seal. GC deletes that stream's objects once tiered,
// whatever the followers applied: each in-sync follower then finds its next object below the
// floor and re-follows from scratch ([D4]: release, rebuild from TE, tail), during which it
// reports nothing, so with min.insync.replicas = RF acks=all stalls for a rebuild per follower,
// and the "one dead follower never stops GC" trade is made for live, in-sync ones too.
// (docs/tier-protocol.md GI1 states the weaker rule, "for a stream a leader is writing now".)
// Severity: unavailability (acks=all stalls) and cost (full re-follows).
import { expect, test } from 'bun:test';
import { MemoryStore } from '../../src/store/memory.ts';
import { collectorOf, present, putSeal, putStream, World, WRITER } from '../wal-gc/support.ts';

const PREVIOUS = { writerId: WRITER, epoch: 1 };
const CURRENT = { writerId: WRITER, epoch: 2 };

test('an in-sync follower still reading the previous writer epoch keeps the objects it has not applied', async () => {
  const store = new MemoryStore();
  await putStream(store, PREVIOUS, 4); // offsets 0..39 of partition 0, then the writer moved to a new epoch
  await putSeal(store, PREVIOUS, 4);
  await putStream(store, CURRENT, 1);
  const world = new World();
  world.setTieredEnd(40); // all of the previous stream is tiered
  world.lead(15); // this broker still leads the partition; its in-sync follower has applied up to offset 14
  await collectorOf(store, world, CURRENT.epoch).collect();
  // Object 1 (offsets 10..19) and above are not applied by the in-sync follower: they stay.
  expect(await present(store, PREVIOUS)).toEqual([1, 2, 3, 4]); // FAILS: [4], every object went
});
