// The tierer (docs/tier-protocol.md [T1]-[T5]): rolled segments below the high watermark go to
// the tier, byte for byte, with the epochs and producer state a reader needs without the local
// copy; an upload that failed is redone under a new upload id; a deposed leader commits nothing.
import { describe, expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { parseTieredSegmentKey } from '../../src/tier/keys.ts';
import { decodeTieredSegment } from '../../src/tier/segment-object.ts';
import { copiedSegments, namedUploadIds, TierRecords, tieredEnd } from '../../src/tier/tier-record.ts';
import { dueMerge, TIER_MERGE_RUN } from '../../src/tier/merge-plan.ts';
import { dueRange, epochsIn, Tierer, type TierSource } from '../../src/tier/tierer.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { idOf } from '../support/topic-ids.ts';
import { tempDir } from '../support/temp-dir.ts';

const T0 = 1_700_000_000_000;
const TOPIC_ID = idOf('t');

function batch(producerSequence: number): Uint8Array {
  return buildRecordBatch(
    [
      { value: `v${producerSequence}`, timestamp: T0 + producerSequence },
      { value: `w${producerSequence}`, timestamp: T0 + producerSequence },
    ],
    { nowMs: T0, producerId: 9, producerEpoch: 0, baseSequence: producerSequence * 2 },
  );
}

/** A log of three segments [0, 10), [10, 20), [20, 24): 2-record batches, epoch 1 then 2 from offset 14. */
function threeSegmentLog(): PartitionLog {
  const log = PartitionLog.open(tempDir(), { config: { indexIntervalBytes: 100 } });
  for (let i = 0; i < 12; i++) {
    if (i === 5 || i === 10) log.roll();
    log.append(batch(i), i < 7 ? 1 : 2);
  }
  return log;
}

function setup(log: PartitionLog, options: { highWatermark?: number; leaderEpoch?: number; tailMaxBytes?: number; localMergeBytesMax?: number } = {}) {
  const tierStore = new MemoryStore();
  const records = new TierRecords(new ControlStore(new MemoryStore(), 'cluster'));
  const source: { -readonly [K in keyof TierSource]: TierSource[K] } = {
    topic: 't',
    topicId: TOPIC_ID,
    partition: 0,
    leaderEpoch: options.leaderEpoch ?? 2,
    log,
    highWatermark: options.highWatermark ?? log.logEndOffset,
  };
  const logLines: string[] = [];
  const tierer = new Tierer({
    store: tierStore,
    prefix: 'tiered',
    records,
    clock: new ManualClock(),
    random: new SeededRandom(5),
    partitions: () => [source],
    log: (line) => logLines.push(line),
    ...(options.tailMaxBytes === undefined ? {} : { tailMaxBytes: options.tailMaxBytes }),
    ...(options.localMergeBytesMax === undefined ? {} : { localMergeBytesMax: options.localMergeBytesMax }),
  });
  return { tierStore, records, source, tierer, logLines };
}

async function objectsOf(store: MemoryStore): Promise<string[]> {
  return (await store.list('tiered/')).objects.map((object) => object.key);
}

test('rolled segments below the high watermark are tiered one per round, byte for byte, with their epochs and producer state', async () => {
  const log = threeSegmentLog();
  const { tierStore, records, tierer } = setup(log);
  expect(await tierer.tierDue()).toBe(1);
  expect(await tierer.tierDue()).toBe(1);
  expect(await tierer.tierDue()).toBe(0); // [20, 24) is the active segment
  const record = await records.read(TOPIC_ID, 0);
  expect(tieredEnd(record)).toBe(20);
  const segments = copiedSegments(record);
  expect(segments.map((s) => [s.baseOffset, s.endOffset])).toEqual([
    [0, 10],
    [10, 20],
  ]);
  for (const segment of segments) {
    const key = (await objectsOf(tierStore)).find((k) => parseTieredSegmentKey(k)?.uploadId === segment.uploadId)!;
    const decoded = decodeTieredSegment((await tierStore.get(key)).body);
    const local = log.read(segment.baseOffset, 1 << 20).batches.filter((b) => b.baseOffset < segment.endOffset);
    expect(decoded.batches.map((b) => [...b.bytes])).toEqual(local.map((b) => [...b.bytes]));
    expect(decoded.epochs).toEqual(epochsIn(log.leaderEpochs, segment.baseOffset, segment.endOffset));
    expect([...decoded.producers]).toEqual([...log.producerSnapshotAt(segment.endOffset)]);
    expect(segment.sections).toEqual(decoded.summary.sections);
  }
  expect(segments[1]!.epochs).toEqual([
    { epoch: 1, startOffset: 0 },
    { epoch: 2, startOffset: 14 },
  ]);
  await log.close();
});

test('nothing at or above the high watermark is tiered', async () => {
  const log = threeSegmentLog();
  const { records, tierer } = setup(log, { highWatermark: 19 });
  expect(await tierer.tierDue()).toBe(1);
  expect(await tierer.tierDue()).toBe(0); // [10, 20) ends above 19
  expect(tieredEnd(await records.read(TOPIC_ID, 0))).toBe(10);
  await log.close();
});

test('an upload that failed is redone under a new upload id, and the tiered end moves only once it is whole', async () => {
  const log = threeSegmentLog();
  const { tierStore, records, tierer, logLines } = setup(log);
  tierStore.injectFault({ operation: 'put', kind: 'Unavailable', count: 1 });
  expect(await tierer.tierDue()).toBe(0);
  expect(logLines.join('\n')).toMatch(/tiering of t-0 failed/);
  const after = await records.read(TOPIC_ID, 0);
  expect([tieredEnd(after), after.segments.map((s) => s.state)]).toEqual([0, ['copying']]);
  expect(await tierer.tierDue()).toBe(1);
  const record = await records.read(TOPIC_ID, 0);
  expect([tieredEnd(record), record.segments.length]).toEqual([10, 1]);
  await log.close();
});

test('a deposed leader commits nothing: the record taken by a later epoch refuses it', async () => {
  const log = threeSegmentLog();
  const { records, tierer } = setup(log, { leaderEpoch: 2 });
  expect(await tierer.tierDue()).toBe(1);
  await records.take(TOPIC_ID, 0, 3); // the next leader took the record
  expect(await tierer.tierDue()).toBe(0);
  const record = await records.read(TOPIC_ID, 0);
  expect([record.leaderEpoch, tieredEnd(record), record.segments.length]).toEqual([3, 10, 1]);
  await log.close();
});

describe('dueRange', () => {
  test('is the rest of the segment holding the tiered end, once a later segment exists and the high watermark passed it', async () => {
    const log = threeSegmentLog();
    expect(dueRange(log, 0, 24)).toEqual({ baseOffset: 0, endOffset: 10 });
    expect(dueRange(log, 14, 24)).toEqual({ baseOffset: 14, endOffset: 20 }); // a promoted follower's tiered end inside a local segment
    expect(dueRange(log, 20, 24)).toBeNull();
    expect(dueRange(log, 0, 9)).toBeNull();
    log.startAt(30, [], null);
    expect(() => dueRange(log, 20, 30)).toThrow(/offsets in between are in neither/);
    await log.close();
  });

  test('inside the active segment: the committed batches above the tiered end, once they hold tailMaxBytes', async () => {
    const log = threeSegmentLog(); // the active segment [20, 24) holds two batches
    const batchBytes = log.bytesFrom(22);
    expect(log.bytesFrom(20)).toBe(2 * batchBytes);
    expect(dueRange(log, 20, 24, 2 * batchBytes)).toEqual({ baseOffset: 20, endOffset: 24 });
    expect(dueRange(log, 20, 24, 2 * batchBytes + 1)).toBeNull(); // not yet that many bytes
    expect(dueRange(log, 20, 23, batchBytes)).toEqual({ baseOffset: 20, endOffset: 22 }); // whole batches, at or below the high watermark
    expect(dueRange(log, 20, 23, 2 * batchBytes)).toBeNull(); // what is committed is less
    expect(dueRange(log, 22, 24, batchBytes)).toEqual({ baseOffset: 22, endOffset: 24 });
    await log.close();
  });
});

test('the active segment is tiered in tailMaxBytes steps, and a log started at such an end still knows its producers', async () => {
  const log = threeSegmentLog();
  const batchBytes = log.bytesFrom(22);
  const { records, source, tierer } = setup(log, { tailMaxBytes: 3 * batchBytes });
  for (let i = 12; i < 20; i++) {
    // the active segment grows to [20, 40), a batch at a time
    log.append(batch(i), 2);
    source.highWatermark = log.logEndOffset;
    while ((await tierer.tierDue()) > 0);
  }
  const record = await records.read(TOPIC_ID, 0);
  expect(copiedSegments(record).map((s) => [s.baseOffset, s.endOffset])).toEqual([
    [0, 10],
    [10, 20],
    [20, 26],
    [26, 32],
    [32, 38],
  ]);
  expect(log.segmentBaseOffsets).toEqual([0, 10, 20]); // nothing rolled: the local segments are as Kafka's segment.bytes made them
  // [K2] A new leader starts at the tiered end with the producer state there: the retry of an acknowledged batch is a duplicate.
  const fresh = PartitionLog.open(tempDir());
  fresh.startAt(38, epochsIn(log.leaderEpochs, 0, 38), log.producerSnapshotAt(38));
  expect(fresh.append(batch(18), 2)).toMatchObject({ duplicate: true, baseOffset: 36 });
  expect(fresh.append(batch(19), 2)).toMatchObject({ duplicate: false, baseOffset: 38 });
  await Promise.all([log.close(), fresh.close()]);
});

test('[T8] once the segment tiered in pieces rolls, one object replaces the pieces; until then it stays on the local disk', async () => {
  const log = threeSegmentLog();
  const batchBytes = log.bytesFrom(22);
  const { tierStore, records, source, tierer, logLines } = setup(log, { tailMaxBytes: 3 * batchBytes });
  for (let i = 12; i < 20; i++) {
    log.append(batch(i), 2);
    source.highWatermark = log.logEndOffset;
    while ((await tierer.tierDue()) > 0);
  }
  log.roll(); // [20, 40) is a rolled segment now, tiered in pieces up to 38
  log.append(batch(20), 2);
  source.highWatermark = log.logEndOffset;
  expect(dueMerge(log, await records.read(TOPIC_ID, 0))).toBeNull(); // [38, 40) is not tiered yet
  expect(tierer.localDeletableEndOf(TOPIC_ID, 0, log)).toBe(38);
  const commitMerge = records.commitMerge.bind(records); // the round's merge fails once
  records.commitMerge = async () => {
    records.commitMerge = commitMerge;
    throw new Error('injected: the merge commit fails once');
  };
  await tierer.tierDue(); // the rest of the rolled segment, [38, 40), then the merge, which fails
  expect(dueMerge(log, await records.read(TOPIC_ID, 0))).toEqual({ baseOffset: 20, endOffset: 40, fromTier: false });
  expect(tierer.localDeletableEndOf(TOPIC_ID, 0, log)).toBeNull(); // the failed step let go of the record: nothing leaves the disk until it is read again
  await tierer.tierDue(); // nothing more to tier: the merge again
  const record = await records.read(TOPIC_ID, 0);
  expect(copiedSegments(record).map((s) => [s.baseOffset, s.endOffset])).toEqual([
    [0, 10],
    [10, 20],
    [20, 40],
  ]);
  expect(record.merging).toBeUndefined();
  expect(logLines.join('\n')).toMatch(/merged 4 tiered segments of t-0 into one, offsets 20\.\.40/);
  expect(tierer.localDeletableEndOf(TOPIC_ID, 0, log)).toBe(40);
  const merged = copiedSegments(record)[2]!;
  const key = (await objectsOf(tierStore)).find((k) => parseTieredSegmentKey(k)?.uploadId === merged.uploadId)!;
  const decoded = decodeTieredSegment((await tierStore.get(key)).body);
  const local = log.read(20, 1 << 20).batches.filter((b) => b.baseOffset < 40);
  expect(decoded.batches.map((b) => [...b.bytes])).toEqual(local.map((b) => [...b.bytes]));
  expect([...decoded.producers]).toEqual([...log.producerSnapshotAt(40)]);
  expect(decoded.epochs).toEqual(epochsIn(log.leaderEpochs, 20, 40));
  await log.close();
});

test('[T8] a merge announced by a deposed leader, or reaching below retention, is dropped and replaces nothing', async () => {
  const records = new TierRecords(new ControlStore(new MemoryStore(), 'cluster'));
  await records.take(TOPIC_ID, 0, 1);
  const details = { bytes: 1, maxTimestamp: 0, epochs: [], sections: {} };
  for (const [base, end, id] of [
    [0, 5, 'a'],
    [5, 10, 'b'],
    [10, 20, 'c'],
  ] as const) {
    await records.announce(TOPIC_ID, 0, 1, { baseOffset: base, endOffset: end, uploadId: id });
    await records.commit(TOPIC_ID, 0, 1, id, details);
  }
  await expect(records.announceMerge(TOPIC_ID, 0, 1, { baseOffset: 0, endOffset: 5, uploadId: 'm0' })).rejects.toThrow(/no two or more/);
  await records.announceMerge(TOPIC_ID, 0, 1, { baseOffset: 0, endOffset: 10, uploadId: 'm1' });
  await records.take(TOPIC_ID, 0, 2); // a new leader: the merge died with the old one
  await expect(records.commitMerge(TOPIC_ID, 0, 1, 'm1', details)).rejects.toThrow(/held in leader epoch 2/);
  expect((await records.read(TOPIC_ID, 0)).merging).toBeUndefined();
  await records.announceMerge(TOPIC_ID, 0, 2, { baseOffset: 0, endOffset: 10, uploadId: 'm2' });
  expect(namedUploadIds(await records.read(TOPIC_ID, 0)).has('m2')).toBe(true); // TI3: its object is no orphan while announced
  await records.expireBefore(TOPIC_ID, 0, 2, 5); // retention past the merge's base
  await expect(records.commitMerge(TOPIC_ID, 0, 2, 'm2', details)).rejects.toThrow(/no longer announced/);
  const record = await records.read(TOPIC_ID, 0);
  expect(copiedSegments(record).map((s) => s.uploadId)).toEqual(['b', 'c']);
});

test(`[T8] ${TIER_MERGE_RUN} pieces of one level inside a segment become one of the next level, so a segment tiered in small pieces stays a few entries`, async () => {
  const log = threeSegmentLog();
  const batchBytes = log.bytesFrom(22);
  const { records, source, tierer } = setup(log, { tailMaxBytes: batchBytes }); // a piece per batch
  for (let i = 12; i < 12 + 2 * TIER_MERGE_RUN + 3; i++) {
    log.append(batch(i), 2);
    source.highWatermark = log.logEndOffset;
    while ((await tierer.tierDue()) > 0);
  }
  const record = await records.read(TOPIC_ID, 0);
  expect(tieredEnd(record)).toBe(log.logEndOffset);
  const active = copiedSegments(record).filter((s) => s.baseOffset >= 20);
  // the active segment [20, 94) in 35 pieces (the first of the 3 batches there at the start, then one a batch): 2 of level 1 and 3 of level 0
  expect(active.map((s) => s.level ?? 0)).toEqual([1, 1, 0, 0, 0]);
  expect(active.map((s) => [s.baseOffset, s.endOffset])).toEqual([
    [20, 56],
    [56, 88],
    [88, 90],
    [90, 92],
    [92, 94],
  ]);
  await log.close();
});

test(`[T8] pieces whose run of ${TIER_MERGE_RUN} would merge more than localMergeBytesMax wait for the roll: each byte is uploaded twice, not once per level`, async () => {
  const log = threeSegmentLog();
  const batchBytes = log.bytesFrom(22);
  const { records, source, tierer, tierStore } = setup(log, { tailMaxBytes: batchBytes, localMergeBytesMax: 8 * batchBytes }); // a piece per batch, runs of 16 too big
  const uploaded = () => tierStore.stats().bytesIn;
  for (let i = 12; i < 12 + 2 * TIER_MERGE_RUN + 3; i++) {
    log.append(batch(i), 2);
    source.highWatermark = log.logEndOffset;
    while ((await tierer.tierDue()) > 0);
  }
  const pieces = copiedSegments(await records.read(TOPIC_ID, 0)).filter((s) => s.baseOffset >= 20);
  expect(pieces.length).toBe(2 * TIER_MERGE_RUN + 3); // the active segment [20, 94) stays in its pieces
  expect(pieces.every((s) => (s.level ?? 0) === 0)).toBe(true);
  const beforeRoll = uploaded();
  log.roll();
  log.append(batch(12 + 2 * TIER_MERGE_RUN + 3), 2); // the next in sequence, in the new active segment
  while ((await tierer.tierDue()) > 0);
  const record = await records.read(TOPIC_ID, 0);
  expect(copiedSegments(record).map((s) => [s.baseOffset, s.endOffset])).toEqual([
    [0, 10],
    [10, 20],
    [20, 94],
  ]); // the roll's merge made the segment one object
  const segmentBytes = copiedSegments(record)[2]!.bytes;
  expect(uploaded() - beforeRoll).toBe(segmentBytes); // uploaded once more, whole, at the roll
  await log.close();
});

test('[T2] a leader new in its epoch tiers the committed tail it inherited at its first round, however small', async () => {
  const log = threeSegmentLog(); // the active segment [20, 24): two batches, far below TIER_TAIL_MAX_BYTES
  const { records, source, tierer } = setup(log);
  while ((await tierer.tierDue()) > 0);
  expect(tieredEnd(await records.read(TOPIC_ID, 0))).toBe(20); // the first leader: its active segment waits for TIER_TAIL_MAX_MS or TIER_TAIL_MAX_BYTES
  log.append(batch(12), 2);
  source.highWatermark = log.logEndOffset;
  expect(await tierer.tierDue()).toBe(0);
  source.leaderEpoch = 3; // a later epoch's leader (a takeover) of a partition an earlier one tiered: the tail [20, 26) is inherited
  expect(await tierer.tierDue()).toBe(1);
  expect(tieredEnd(await records.read(TOPIC_ID, 0))).toBe(26);
  await log.close();
});
