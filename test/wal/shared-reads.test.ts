// [K7] Rebuilds running at once share whole-object reads of a sealed stream: a takeover adopting
// many partitions of a dead broker reads each of its objects once (issue 28: a kill -9 of a broker
// leading 334 partitions made ~420 GETs a partition), each rebuild takes only its own frames, and
// nothing is kept once the last rebuild ends.
import { expect, test } from 'bun:test';
import { rebuildFromChain } from '../../src/partition/rebuild.ts';
import type { MemoryStore } from '../../src/store/memory.ts';
import { concatBytes } from '../../src/util/bytes.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { encodeSeal, WalObjectBuilder } from '../../src/wal/format.ts';
import { type StreamId, walObjectKey } from '../../src/wal/keys.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { type FrameWants, SHARED_READ_AHEAD, SharedWalReads } from '../../src/wal/shared-reads.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { GetCountingStore } from '../support/get-counting-store.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';

const TOPIC = 't';
const TOPIC_ID = idOf(TOPIC);
const PARTITIONS = 6;
const OBJECTS = 12;
const RECORDS_PER_FRAME = 5;
const STREAM: StreamId = { writerId: 'broker-1', epoch: 3 };
const NOW_MS = 1_700_000_000_000;

/** OBJECTS data objects of STREAM, each with one frame of every partition (offsets in step), then its seal. */
async function deadStream(): Promise<GetCountingStore> {
  const store = new GetCountingStore();
  for (let sequence = 0; sequence < OBJECTS; sequence++) {
    const builder = new WalObjectBuilder({ kind: 'data', writerId: STREAM.writerId, epoch: STREAM.epoch, sequence, createdMs: 0 });
    const base = sequence * RECORDS_PER_FRAME;
    for (let partition = 0; partition < PARTITIONS; partition++) {
      const records = Array.from({ length: RECORDS_PER_FRAME }, (_, index) => ({ value: `p${partition}-${base + index}`, timestamp: NOW_MS }));
      const data = buildRecordBatch(records, { nowMs: NOW_MS, baseOffset: base });
      builder.addFrame({ topic: TOPIC, topicId: TOPIC_ID, partition, leaderEpoch: 0, baseOffset: base, lastOffset: base + RECORDS_PER_FRAME - 1, data });
    }
    await store.put(walObjectKey('', STREAM, sequence), concatBytes(builder.finish()));
  }
  await store.put(walObjectKey('', STREAM, OBJECTS), encodeSeal({ writerId: 'broker-2', epoch: STREAM.epoch, sequence: OBJECTS, createdMs: 0 }));
  store.gets = 0;
  return store;
}

function sharedOver(store: MemoryStore, bytesMax?: number): SharedWalReads {
  return new SharedWalReads((wants) => new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants }, { clock: new ManualClock(), random: new SeededRandom(1) }), bytesMax);
}

/** The size of one object of the dead stream (all are alike); the GET that learns it is not counted. */
async function objectBytesOf(store: GetCountingStore): Promise<number> {
  const bytes = (await store.get(walObjectKey('', STREAM, 0))).body.length;
  store.gets = 0;
  return bytes;
}

/** Another rebuild holding the reads, as in a takeover's batch (they are shared and kept) until `release`. */
function heldOpen(shared: SharedWalReads): { release: () => void; holding: Promise<void> } {
  let release: () => void = () => {};
  const holding = shared.hold(() => new Promise<void>((resolve) => (release = resolve)));
  return { release: () => release(), holding };
}

const partitionWants =
  (partition: number): FrameWants =>
  (topic, p, id) =>
    topic === TOPIC && p === partition && id === TOPIC_ID;

test('partitions rebuilt at once from one dead stream read each of its objects once, and each log gets its own frames only', async () => {
  const store = await deadStream();
  const shared = sharedOver(store);
  const logs = Array.from({ length: PARTITIONS }, () => PartitionLog.open(tempDir()));
  await Promise.all(logs.map((log, partition) => shared.hold(() => rebuildFromChain(shared.view(partitionWants(partition)), log, [STREAM], TOPIC_ID))));
  for (const [partition, log] of logs.entries()) {
    expect(log.logEndOffset).toBe(OBJECTS * RECORDS_PER_FRAME);
    const values = log.read(0, 1 << 24).batches.flatMap((batch) => [...batch.records()].map((record) => new TextDecoder().decode(record.value!)));
    expect(values).toEqual(Array.from({ length: OBJECTS * RECORDS_PER_FRAME }, (_, offset) => `p${partition}-${offset}`));
  }
  // One LIST each is not a GET; the objects and the seal once, and at most the reads issued past
  // the seal before any rebuild had read it: far from PARTITIONS x (OBJECTS + 1).
  expect(store.gets).toBeLessThanOrEqual(OBJECTS + 1 + 8);
  expect(shared.keptBytes).toBe(0); // the last rebuild let go: nothing kept
});

test('a lone rebuild reads as a follower does: only its frames, from its offset on', async () => {
  const store = await deadStream();
  const shared = sharedOver(store);
  const view = shared.view(partitionWants(2));
  const read = await shared.hold(() => view.read(STREAM, 4, 4 * RECORDS_PER_FRAME + 1));
  if (read.kind !== 'data') throw new Error('a data object');
  expect(read.frames.map((frame) => [frame.entry.partition, frame.entry.baseOffset])).toEqual([[2, 4 * RECORDS_PER_FRAME]]);
  expect(shared.keptBytes).toBe(0);
});

test('what is kept stays within its budget, oldest out first, and a read past a seal found valid asks the store nothing', async () => {
  const store = await deadStream();
  const objectBytes = await objectBytesOf(store);
  const shared = sharedOver(store, 3 * objectBytes);
  const [first, second] = [shared.view(partitionWants(0)), shared.view(partitionWants(1))];
  const { release, holding } = heldOpen(shared);
  await shared.hold(async () => {
    for (let sequence = 0; sequence <= OBJECTS; sequence++) await first.read(STREAM, sequence);
    expect(await first.sealIsVoid(STREAM, OBJECTS)).toBe(false); // as a rebuild asks of the seal it meets [F2]
    expect(shared.keptBytes).toBeLessThanOrEqual(3 * objectBytes);
    const getsBefore = store.gets;
    await second.read(STREAM, OBJECTS - 1); // kept: no GET
    await second.read(STREAM, OBJECTS + 5); // past the seal: no GET
    expect(store.gets).toBe(getsBefore);
    await second.read(STREAM, 0); // made room for later ones: read again
    expect(store.gets).toBe(getsBefore + 1);
  });
  release();
  await holding;
  expect(shared.keptBytes).toBe(0);
});

test('a batch of adoptions kept together reads each object once however it is paced: rebuilds that start after others ended find their objects', async () => {
  const store = await deadStream();
  const lists = { count: 0 };
  const list = store.list.bind(store);
  store.list = (prefix, options) => {
    lists.count++;
    return list(prefix, options);
  };
  const shared = sharedOver(store);
  const logs = Array.from({ length: PARTITIONS }, () => PartitionLog.open(tempDir()));
  const rebuild = (partition: number) => shared.hold(() => rebuildFromChain(shared.view(partitionWants(partition)), logs[partition]!, [STREAM], TOPIC_ID));
  await shared.keep(async () => {
    // Two at a time, as a scan's pool paces them ([K4]): between the pairs no rebuild holds the reads.
    for (let partition = 0; partition < PARTITIONS; partition += 2) await Promise.all([rebuild(partition), rebuild(partition + 1)]);
  });
  for (const [partition, log] of logs.entries()) expect(bytesOf(log)).toEqual(Array.from({ length: OBJECTS * RECORDS_PER_FRAME }, (_, offset) => `p${partition}-${offset}`));
  // Each object and the seal once (whole: one GET each), the reads the first pair issued past the
  // seal before it was judged, and no more: without the batch kept each pair read the stream again.
  expect(store.gets).toBeLessThanOrEqual(OBJECTS + 1 + 2 * 8);
  // One LIST of the stream for the batch, and the floor marks' LIST of the seal's check [F2].
  expect(lists.count).toBe(2);
  expect(shared.keptBytes).toBe(0); // the batch ended: nothing kept
});

test('shared reads fetch an object larger than the reader s probe in one GET', async () => {
  const store = await deadStream();
  const objectBytes = (await store.get(walObjectKey('', STREAM, 0))).body.length;
  store.gets = 0;
  const probe = Math.floor(objectBytes / 4); // a follower's read of it takes a probe, the footer's range and the frames' ranges
  const shared = new SharedWalReads(
    (wants) => new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, tailProbeBytes: probe, prefix: '', wants }, { clock: new ManualClock(), random: new SeededRandom(1) }),
  );
  const [first, second] = [shared.view(partitionWants(0)), shared.view(partitionWants(5))];
  await shared.hold(() =>
    shared.hold(async () => {
      const [a, b] = await Promise.all([first.read(STREAM, 3), second.read(STREAM, 3)]);
      if (a.kind !== 'data' || b.kind !== 'data') throw new Error('data objects');
      expect(a.frames.map((frame) => frame.entry.partition)).toEqual([0]);
      expect(b.frames.map((frame) => frame.entry.partition)).toEqual([5]);
    }),
  );
  expect(store.gets).toBe(1);
});

function bytesOf(log: PartitionLog): string[] {
  return log.read(0, 1 << 24).batches.flatMap((batch) => [...batch.records()].map((record) => new TextDecoder().decode(record.value!)));
}

/** `objects` data objects of STREAM, partition 0 in every one, partition 1 only in `partitionOneIn` (its offsets in step there), then the seal. */
async function skewedStream(objects: number, partitionOneIn: readonly number[]): Promise<GetCountingStore> {
  const store = new GetCountingStore();
  let partitionOneBase = 0;
  for (let sequence = 0; sequence < objects; sequence++) {
    const builder = new WalObjectBuilder({ kind: 'data', writerId: STREAM.writerId, epoch: STREAM.epoch, sequence, createdMs: 0 });
    const frame = (partition: number, base: number) => {
      const records = Array.from({ length: RECORDS_PER_FRAME }, (_, index) => ({ value: `p${partition}-${base + index}`, timestamp: NOW_MS }));
      builder.addFrame({
        topic: TOPIC,
        topicId: TOPIC_ID,
        partition,
        leaderEpoch: 0,
        baseOffset: base,
        lastOffset: base + RECORDS_PER_FRAME - 1,
        data: buildRecordBatch(records, { nowMs: NOW_MS, baseOffset: base }),
      });
    };
    frame(0, sequence * RECORDS_PER_FRAME);
    if (partitionOneIn.includes(sequence)) {
      frame(1, partitionOneBase);
      partitionOneBase += RECORDS_PER_FRAME;
    }
    await store.put(walObjectKey('', STREAM, sequence), concatBytes(builder.finish()));
  }
  await store.put(walObjectKey('', STREAM, objects), encodeSeal({ writerId: 'broker-2', epoch: STREAM.epoch, sequence: objects, createdMs: 0 }));
  store.gets = 0;
  return store;
}

test('a rebuild passes over the objects already read whole that hold none of its frames, and its log is the same', async () => {
  const objects = 64;
  const partitionOneIn = [5, 40];
  const store = await skewedStream(objects, partitionOneIn);
  const shared = sharedOver(store);
  const [busy, sparse] = [PartitionLog.open(tempDir()), PartitionLog.open(tempDir())];
  const reads = { sparse: 0 };
  // Another rebuild holds the reads all along, as in a takeover's batch: they are shared and kept.
  const { release, holding } = heldOpen(shared);
  await shared.hold(() => rebuildFromChain(shared.view(partitionWants(0), { topic: TOPIC, partition: 0 }), busy, [STREAM], TOPIC_ID));
  const view = shared.view(partitionWants(1), { topic: TOPIC, partition: 1 });
  const counted = { ...view, read: (...args: Parameters<typeof view.read>) => (reads.sparse++, view.read(...args)) };
  const outcome = await shared.hold(() => rebuildFromChain(counted, sparse, [STREAM], TOPIC_ID));
  expect(outcome.objectsRead).toBe(objects); // every object covered, as before
  release();
  await holding;
  expect(bytesOf(busy)).toEqual(Array.from({ length: objects * RECORDS_PER_FRAME }, (_, offset) => `p0-${offset}`));
  expect(bytesOf(sparse)).toEqual(Array.from({ length: partitionOneIn.length * RECORDS_PER_FRAME }, (_, offset) => `p1-${offset}`));
  // Read: its two objects and the seal, each with the read-ahead issued from there; not all 64.
  expect(reads.sparse).toBeLessThanOrEqual(3 * 8);
  expect(store.gets).toBeLessThanOrEqual(objects + 1 + 8); // the busy rebuild read each object once; the sparse one no more
});

test('a shared read fetches the objects its stream s LIST holds ahead of it, and the last holder to let go waits for them', async () => {
  const store = await deadStream();
  const shared = sharedOver(store);
  const view = shared.view(partitionWants(0), { topic: TOPIC, partition: 0 });
  const { release, holding } = heldOpen(shared);
  let getsAfterFirst = 0;
  const reading = shared.hold(async () => {
    await view.list(STREAM);
    await view.read(STREAM, 0); // alone: nothing is fetched ahead before an object's size is known
    expect(store.gets).toBe(1);
    await view.read(STREAM, 1);
    getsAfterFirst = store.gets; // then every later object the LIST holds (the seal's slot too), at once
  });
  await reading;
  expect(getsAfterFirst).toBe(OBJECTS + 1);
  expect(OBJECTS + 1).toBeLessThanOrEqual(1 + SHARED_READ_AHEAD);
  const getsBefore = store.gets;
  for (let sequence = 2; sequence < OBJECTS; sequence++) await shared.hold(() => view.read(STREAM, sequence)); // kept: no GET
  expect(store.gets).toBe(getsBefore);
  release();
  await holding;
  expect(shared.keptBytes).toBe(0);
});

test('reads ahead stay within half the budget, those in flight counted too: with room for a few objects each is still read once', async () => {
  const store = await deadStream();
  const objectBytes = await objectBytesOf(store);
  const shared = sharedOver(store, 6 * objectBytes);
  const view = shared.view(partitionWants(0), { topic: TOPIC, partition: 0 });
  const { release, holding } = heldOpen(shared);
  await shared.hold(async () => {
    await view.list(STREAM);
    for (let sequence = 0; sequence < OBJECTS; sequence++) await view.read(STREAM, sequence);
  });
  // Each object once (and the seal's slot, fetched ahead): reads ahead no longer evict each other before use.
  expect(store.gets).toBeLessThanOrEqual(OBJECTS + 1);
  release();
  await holding;
});
