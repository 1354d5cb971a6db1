// The WAL collector under store faults and after a takeover: a failing LIST, GET, DELETE or tier
// record read never makes it delete what GI1 keeps, it resumes at the next pass, and a failure is
// said once per spell. A zombie collector (its broker deposed) deletes nothing a rebuild from the
// tier's end needs: the tier record's TE, read fresh, is the arbiter.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { MetricsRegistry } from '../../src/metrics/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { TierRecords, tieredEnd } from '../../src/tier/tier-record.ts';
import { streamPrefix, walObjectKey } from '../../src/wal/keys.ts';
import { WalReader, DEFAULT_WAL_READER_CONFIG } from '../../src/wal/reader.ts';
import { ManualClock, systemClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { collectorOf, PREFIX, present, putSeal, putStream, TOPIC_ID, World, WRITER } from './support.ts';

const SEALED = { writerId: WRITER, epoch: 1 };

async function sealedStream(store: MemoryStore, objects: number): Promise<void> {
  await putStream(store, SEALED, objects);
  await putSeal(store, SEALED, objects);
}

test('a failing DELETE stops the pass where it failed; the next pass goes on from there', async () => {
  const store = new MemoryStore();
  await sealedStream(store, 4);
  const world = new World();
  world.setTieredEnd(1000);
  const lines: string[] = [];
  const metrics = new MetricsRegistry();
  const collector = collectorOf(store, world, 2, { metrics, log: (line) => lines.push(line) });
  store.injectFault({ operation: 'delete', kind: 'AccessDenied', keyPrefix: walObjectKey(PREFIX, SEALED, 1), count: 2 });
  await collector.collect();
  expect(await present(store, SEALED)).toEqual([1, 2, 3, 4]); // never past the one that failed: order holds (GI2)
  await collector.collect();
  expect(await present(store, SEALED)).toEqual([1, 2, 3, 4]);
  expect(lines.filter((line) => line.includes('failed'))).toHaveLength(1); // said once per spell
  expect(metrics.renderPrometheus()).toContain('ferry_wal_gc_failures_total 2');
  await collector.collect();
  expect(await present(store, SEALED)).toEqual([4]);
  expect(lines.at(-1)).toContain('works again');
});

test('a delete that failed after it took effect stops the pass; the next one goes on above it', async () => {
  const store = new MemoryStore();
  await sealedStream(store, 3);
  const world = new World();
  world.setTieredEnd(1000);
  const collector = collectorOf(store, world, 2);
  store.injectFault({ operation: 'delete', kind: 'AccessDenied', afterEffect: true, keyPrefix: walObjectKey(PREFIX, SEALED, 0) });
  await collector.collect();
  expect(await present(store, SEALED)).toEqual([1, 2, 3]);
  await collector.collect();
  expect(await present(store, SEALED)).toEqual([3]);
});

test('a failing GET of an index deletes nothing from it up, and resumes', async () => {
  const store = new MemoryStore();
  await sealedStream(store, 3);
  const world = new World();
  world.setTieredEnd(1000);
  const collector = collectorOf(store, world, 2);
  store.injectFault({ operation: 'get', kind: 'AccessDenied', keyPrefix: walObjectKey(PREFIX, SEALED, 1) });
  await collector.collect();
  expect(await present(store, SEALED)).toEqual([1, 2, 3]);
  await collector.collect();
  expect(await present(store, SEALED)).toEqual([3]);
});

test('a failing LIST deletes nothing, and resumes', async () => {
  const store = new MemoryStore();
  await sealedStream(store, 3);
  const world = new World();
  world.setTieredEnd(1000);
  const collector = collectorOf(store, world, 2);
  store.injectFault({ operation: 'list', kind: 'AccessDenied', keyPrefix: streamPrefix(PREFIX, SEALED) });
  await collector.collect();
  expect(await present(store, SEALED)).toEqual([0, 1, 2, 3]);
  await collector.collect();
  expect(await present(store, SEALED)).toEqual([3]);
});

test('a failing tier record read covers nothing', async () => {
  const store = new MemoryStore();
  await sealedStream(store, 3);
  const world = new World();
  world.setTieredEnd(1000);
  let failing = true;
  const sources = {
    ...bind(world),
    readTierRecord: async (topicId: string, partition: number) => {
      if (failing) throw new Error('tier records unreachable');
      return world.readTierRecord(topicId, partition);
    },
  };
  const collector = collectorOf(store, sources, 2);
  await collector.collect();
  expect(await present(store, SEALED)).toEqual([0, 1, 2, 3]);
  failing = false;
  await collector.collect();
  expect(await present(store, SEALED)).toEqual([3]);
});

test('background store faults over many passes never take an object GI1 keeps', async () => {
  for (const seed of [1, 2, 3, 4]) {
    const store = new MemoryStore({ seed, faults: { unavailableRate: 0.2, timeoutRate: 0.1 } });
    await untilItWorks(() => sealedStream(store, 8)); // plain puts: a retry of one that landed puts the same bytes
    const world = new World();
    world.setTieredEnd(45); // objects 0..3 covered; object 4 holds 40..49
    const collector = collectorOf(store, world, 2, { clock: systemClock });
    for (let pass = 0; pass < 40; pass++) await collector.collect();
    expect(await untilItWorks(() => present(store, SEALED))).toEqual([4, 5, 6, 7, 8]);
  }
});

test('a zombie collector after a takeover deletes nothing a rebuild from the tier end needs', async () => {
  const wal = new MemoryStore();
  const records = new TierRecords(new ControlStore(new MemoryStore(), ''));
  await putStream(wal, { writerId: WRITER, epoch: 2 }, 5); // offsets 0..49, the zombie's current stream
  await putSeal(wal, { writerId: WRITER, epoch: 2 }, 5); // sealed by the new leader [C4]
  await tier(records, 1, 0, 20); // the zombie tiered 0..20 before it was deposed
  await records.take(TOPIC_ID, 0, 2); // the new leader's [T1]; its rebuild starts at TE = 20 [K2]
  // The zombie still thinks it leads with every follower caught up: only TE, read fresh, holds it back.
  const zombie = collectorOf(wal, { readTierRecord: (id, p) => records.read(id, p), incarnationState: async () => 'live', tieringEnabled: () => true, inSyncFollowersEnd: () => Infinity }, 2);
  await zombie.collect();
  const te = tieredEnd(await records.read(TOPIC_ID, 0));
  const reader = new WalReader(wal, { ...DEFAULT_WAL_READER_CONFIG, prefix: PREFIX, wants: () => true }, { clock: new ManualClock(), random: new SeededRandom(1) });
  const offsets: number[] = [];
  for (const sequence of await present(wal, { writerId: WRITER, epoch: 2 })) {
    const read = await reader.read({ writerId: WRITER, epoch: 2 }, sequence);
    if (read.kind === 'data') for (const frame of read.frames) for (let o = frame.entry.baseOffset; o <= frame.entry.lastOffset; o++) offsets.push(o);
  }
  expect(offsets[0]).toBe(te);
  expect(offsets.filter((o) => o >= te)).toHaveLength(50 - te);
  await tier(records, 2, 20, 30); // the new leader tiers on: the zombie's next pass may take one more
  await zombie.collect();
  expect(await present(wal, { writerId: WRITER, epoch: 2 })).toEqual([3, 4, 5]);
});

/** A committed tiered segment [base, end) of partition 0 in `epoch`. */
async function tier(records: TierRecords, epoch: number, baseOffset: number, endOffset: number): Promise<void> {
  await records.take(TOPIC_ID, 0, epoch);
  const uploadId = `u-${baseOffset}`;
  await records.announce(TOPIC_ID, 0, epoch, { baseOffset, endOffset, uploadId });
  await records.commit(TOPIC_ID, 0, epoch, uploadId, { bytes: 1, maxTimestamp: 0, epochs: [], sections: {} });
}

function bind(world: World) {
  return {
    readTierRecord: world.readTierRecord.bind(world),
    incarnationState: world.incarnationState.bind(world),
    tieringEnabled: world.tieringEnabled.bind(world),
    inSyncFollowersEnd: world.inSyncFollowersEnd.bind(world),
  };
}

/** `run` again until no fault stops it. */
async function untilItWorks<T>(run: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await run();
    } catch {
      // a background fault: again
    }
  }
}
