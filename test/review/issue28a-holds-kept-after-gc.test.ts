// [K7] holds: "GC only removes [an object]; a kept copy then serves bytes the stream held, which a
// rebuild applies or skips as it would have". A rebuild that LISTed before WAL GC collected a
// prefix of the stream (its LIST the one shared by the rebuilds), with another rebuild beside it
// that had read (and kept) that prefix, takes the kept copies and builds the log a rebuild without
// GC would; one that starts after GC, from the new tiered end, skips the kept copies below it; one
// whose first read finds a collected object nobody kept LISTs fresh and restarts from the new
// tiered end [K2]. Every log is byte-identical to the stream's frames.
import { expect, test } from 'bun:test';
import { rebuildFromTierAndChain } from '../../src/partition/rebuild.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ListOptions, ListPage } from '../../src/store/object-store.ts';
import { concatBytes } from '../../src/util/bytes.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { encodeSeal, WalObjectBuilder } from '../../src/wal/format.ts';
import { floorMarkKey, type StreamId, walObjectKey } from '../../src/wal/keys.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { SharedWalReads } from '../../src/wal/shared-reads.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import type { TierStart } from '../../src/tier/tier-start.ts';
import { bytesFrom } from '../support/wal-chain.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';

const TOPIC_ID = idOf('t');
const STREAM: StreamId = { writerId: 'broker-1', epoch: 3 };
const OBJECTS = 6;
const PER_OBJECT = 5;
const COLLECTED = 3;
const TIERED_END = COLLECTED * PER_OBJECT;

class HookedStore extends MemoryStore {
  onList: (() => Promise<void>) | null = null;
  override async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    const page = await super.list(prefix, options);
    const hook = this.onList;
    this.onList = null;
    if (hook !== null) await hook();
    return page;
  }
}

async function stream(store: MemoryStore): Promise<void> {
  for (let sequence = 0; sequence < OBJECTS; sequence++) {
    const builder = new WalObjectBuilder({ kind: 'data', writerId: STREAM.writerId, epoch: STREAM.epoch, sequence, createdMs: 0 });
    const base = sequence * PER_OBJECT;
    for (const partition of [0, 1]) {
      const data = buildRecordBatch(
        Array.from({ length: PER_OBJECT }, (_, i) => ({ value: `p${partition}-${base + i}`, timestamp: 0 })),
        { nowMs: 0, baseOffset: base },
      );
      builder.addFrame({ topic: 't', topicId: TOPIC_ID, partition, leaderEpoch: 0, baseOffset: base, lastOffset: base + PER_OBJECT - 1, data });
    }
    await store.put(walObjectKey('', STREAM, sequence), concatBytes(builder.finish()));
  }
  await store.put(walObjectKey('', STREAM, OBJECTS), encodeSeal({ writerId: 'sealer', epoch: STREAM.epoch, sequence: OBJECTS, createdMs: 0 }));
}

async function collect(store: MemoryStore): Promise<void> {
  await store.put(floorMarkKey('', STREAM, COLLECTED), new Uint8Array(0));
  for (let sequence = 0; sequence < COLLECTED; sequence++) await store.delete(walObjectKey('', STREAM, sequence));
}

const readerOver = (store: MemoryStore) => (wants: (topic: string, partition: number, id: string) => boolean) =>
  new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants }, { clock: new ManualClock(), random: new SeededRandom(1) });

/** The partition's frames of the untouched stream from `from` on, applied to an empty log. */
async function reference(partition: number, from: number): Promise<Uint8Array> {
  const store = new MemoryStore();
  await stream(store);
  const log = PartitionLog.open(tempDir());
  if (from > 0) log.startAt(from, [], null);
  await rebuildFromTierAndChain(
    readerOver(store)((_topic, p) => p === partition),
    log,
    [STREAM],
    TOPIC_ID,
    async () => (from === 0 ? null : { offset: from, epochs: [], producers: null }),
  );
  return bytesFrom(log, from);
}

test('objects GC collected under rebuilds sharing reads: kept copies, new floors and restarts all give the stream s own bytes', async () => {
  const store = new HookedStore();
  await stream(store);
  const shared = new SharedWalReads(readerOver(store));
  let tier: TierStart | null = null; // nothing tiered until GC's round
  const startOf = async () => tier;
  const view = (partition: number) => shared.view((t, p, id) => t === 't' && p === partition && id === TOPIC_ID);
  let release: () => void = () => {};
  const holding = shared.hold(() => new Promise<void>((resolve) => (release = resolve)));
  // Partition 0 reads the whole stream: every object kept.
  const first = PartitionLog.open(tempDir());
  await shared.hold(() => rebuildFromTierAndChain(view(0), first, [STREAM], TOPIC_ID, startOf));
  // Partition 1 reads the tier (nothing tiered), then the tier moves to 15 and GC collects 0..2; its LIST is the
  // one partition 0 made (shared, floor 0): the kept copies serve 0..2.
  // (the shared session's rebuilds of partitions 0 and 1 run one after the other here, beside a parked holder.)
  const second = PartitionLog.open(tempDir());
  const startThenCollect = async () => {
    const before = tier;
    tier = { offset: TIERED_END, epochs: [], producers: null };
    await collect(store);
    return before;
  };
  const secondOutcome = await shared.hold(() => rebuildFromTierAndChain(view(1), second, [STREAM], TOPIC_ID, startThenCollect));
  // Partition 0 again, after GC: from the tiered end (the shared LIST's floor is the old one; the kept copies below the end are skipped).
  const third = PartitionLog.open(tempDir());
  await shared.hold(() => rebuildFromTierAndChain(view(0), third, [STREAM], TOPIC_ID, startOf));
  release();
  await holding;
  // A fresh session: a rebuild that LISTed before GC, nothing kept, restarts [K2].
  const again = new HookedStore();
  await stream(again);
  const fresh = new SharedWalReads(readerOver(again));
  tier = null;
  again.onList = async () => {
    tier = { offset: TIERED_END, epochs: [], producers: null };
    await collect(again);
  };
  const fourth = PartitionLog.open(tempDir());
  let releaseFresh: () => void = () => {};
  const freshHolding = fresh.hold(() => new Promise<void>((resolve) => (releaseFresh = resolve))); // shared whole reads here too
  const fourthOutcome = await fresh.hold(() =>
    rebuildFromTierAndChain(
      fresh.view((_topic, p, id) => p === 1 && id === TOPIC_ID),
      fourth,
      [STREAM],
      TOPIC_ID,
      async () => tier,
    ),
  );
  releaseFresh();
  await freshHolding;

  expect(bytesFrom(first, 0)).toEqual(await reference(0, 0));
  expect(secondOutcome.restarts).toBe(0);
  expect([second.logStartOffset, second.logEndOffset]).toEqual([0, OBJECTS * PER_OBJECT]);
  expect(bytesFrom(second, 0)).toEqual(await reference(1, 0));
  expect([third.logStartOffset, third.logEndOffset]).toEqual([TIERED_END, OBJECTS * PER_OBJECT]);
  expect(bytesFrom(third, TIERED_END)).toEqual(await reference(0, TIERED_END));
  expect(fourthOutcome.restarts).toBe(1);
  expect(bytesFrom(fourth, TIERED_END)).toEqual(await reference(1, TIERED_END));
});
