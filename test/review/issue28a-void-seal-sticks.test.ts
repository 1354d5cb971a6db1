// [K7] "once a read found the seal every later sequence of that stream is answered absent without
// a GET" (SharedWalReads.#sealAt), and the seal read itself is kept. Not every seal a read finds is
// the stream's end: a seal below the stream's highest floor mark is VOID (docs/wal-protocol.md [F2],
// docs/tier-protocol.md [G4]): a sealer that listed before the live writer filled slot f, and put
// its seal there after WAL GC collected f, lands below objects the writer acknowledged; it finds
// the seal void and deletes it. A rebuild whose read-ahead reads slot f in that window (it races
// the same GC, [K2]) records the void seal as the stream's end for as long as any rebuild holds
// the shared reads: its own restart [K2], which must read the stream from its new floor above f,
// then hears "absent" for every sequence (no GET), and fails with "no seal" instead of restarting
// correctly. Without the shared reads (a plain WalReader) the same restart rebuilds the log.
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
import { bytesFrom } from '../support/wal-chain.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';

const TOPIC = 't';
const TOPIC_ID = idOf(TOPIC);
const STREAM: StreamId = { writerId: 'broker-1', epoch: 3 };
const OBJECTS = 6; // data 0..5, seal at 6
const PER_OBJECT = 5; // object k holds offsets 5k..5k+4
const COLLECTED = 3; // GC collects 0..2 (tiered: the tier's end moves to 15)

/** Runs `afterList[n]` once the n-th LIST of the stream answered (the page is taken before it runs). */
class HookedStore extends MemoryStore {
  lists = 0;
  afterList: Record<number, () => Promise<void>> = {};
  override async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    const page = await super.list(prefix, options);
    const hook = this.afterList[++this.lists];
    if (hook !== undefined) await hook();
    return page;
  }
}

async function deadStream(store: MemoryStore): Promise<void> {
  for (let sequence = 0; sequence < OBJECTS; sequence++) {
    const builder = new WalObjectBuilder({ kind: 'data', writerId: STREAM.writerId, epoch: STREAM.epoch, sequence, createdMs: 0 });
    const base = sequence * PER_OBJECT;
    const data = buildRecordBatch(
      Array.from({ length: PER_OBJECT }, (_, i) => ({ value: `r${base + i}`, timestamp: 0 })),
      { nowMs: 0, baseOffset: base },
    );
    builder.addFrame({ topic: TOPIC, topicId: TOPIC_ID, partition: 0, leaderEpoch: 0, baseOffset: base, lastOffset: base + PER_OBJECT - 1, data });
    await store.put(walObjectKey('', STREAM, sequence), concatBytes(builder.finish()));
  }
  await store.put(walObjectKey('', STREAM, OBJECTS), encodeSeal({ writerId: 'sealer-1', epoch: STREAM.epoch, sequence: OBJECTS, createdMs: 0 }));
}

test('a void seal a rebuild read while racing GC is not taken for the stream end by its restart', async () => {
  const store = new HookedStore();
  await deadStream(store);
  // What the rebuild's LIST would find after GC and after the void seal is gone: the reference log.
  const reference = new HookedStore();
  await deadStream(reference);
  const shared = new SharedWalReads((wants) => new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants }, { clock: new ManualClock(), random: new SeededRandom(1) }));
  // 1st LIST (the rebuild's, floor 0): meanwhile GC [G4] marks floor 3 and deletes 0..2, and a sealer that
  // listed before the writer filled slot 2 puts its seal there [F2]: void (below the mark).
  store.afterList[1] = async () => {
    await store.put(floorMarkKey('', STREAM, COLLECTED), new Uint8Array(0));
    for (let sequence = 0; sequence < COLLECTED; sequence++) await store.delete(walObjectKey('', STREAM, sequence));
    await store.put(walObjectKey('', STREAM, 2), encodeSeal({ writerId: 'sealer-2', epoch: STREAM.epoch, sequence: 2, createdMs: 0 }), { ifNoneMatch: '*' });
  };
  // 2nd LIST (the rebuild finding object 0 gone): the sealer has found its seal void and deleted it.
  store.afterList[2] = async () => {
    await store.delete(walObjectKey('', STREAM, 2));
  };
  let starts = 0;
  const startOf = async () => (starts++ === 0 ? null : { offset: COLLECTED * PER_OBJECT, epochs: [], producers: null }); // the tier's end moved to 15
  const view = shared.view((topic, partition, id) => topic === TOPIC && partition === 0 && id === TOPIC_ID);
  const log = PartitionLog.open(tempDir());
  let release: () => void = () => {};
  const other = shared.hold(() => new Promise<void>((resolve) => (release = resolve))); // another partition's rebuild runs beside it
  try {
    const outcome = await shared.hold(() => rebuildFromTierAndChain(view, log, [STREAM], TOPIC_ID, startOf));
    expect(outcome.restarts).toBe(1); // [K2]: GC raced it once, it started over from the tier's end
    expect([log.logStartOffset, log.logEndOffset]).toEqual([COLLECTED * PER_OBJECT, OBJECTS * PER_OBJECT]);
    // Byte-identical to the chain's frames from the tier's end on.
    const expected = PartitionLog.open(tempDir());
    expected.startAt(COLLECTED * PER_OBJECT, [], null);
    for (let sequence = COLLECTED; sequence < OBJECTS; sequence++) {
      const read = await new WalReader(reference, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants: () => true }, { clock: new ManualClock(), random: new SeededRandom(1) }).read(STREAM, sequence);
      if (read.kind !== 'data') throw new Error('data');
      for (const frame of read.frames) expected.appendReplica(frame.data);
    }
    expect(bytesFrom(log, COLLECTED * PER_OBJECT)).toEqual(bytesFrom(expected, COLLECTED * PER_OBJECT));
  } finally {
    release();
    await other;
  }
});
