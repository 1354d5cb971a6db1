import { describe, expect, test } from 'bun:test';
import { isFerryError } from '../../src/errors.ts';
import { buildRecordBatch, type ProducerRecord } from '../../src/format/batch-builder.ts';
import { parseBatchAt, splitBatches } from '../../src/format/batch-parse.ts';
import type { RecordBatch } from '../../src/format/record-batch.ts';
import type { EpochEntry } from '../../src/log/leader-epoch-cache.ts';
import {
  decodeEpochs,
  decodeHeader,
  decodeTieredSegment,
  offsetForTimestamp,
  parseFooter,
  parseTrailer,
  positionFor,
  sectionOf,
  TIERED_SECTION_KINDS,
  TIERED_TAIL_BYTES,
  TIERED_TRAILER_BYTES,
  TieredSegmentBuilder,
  type TieredSegmentSummary,
  verifySection,
} from '../../src/tier/segment-object.ts';
import { concatBytes } from '../../src/util/bytes.ts';
import { loadXxh64Stream } from '../../src/wal/bytes.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { randomUuid, type Uuid } from '../../src/util/uuid.ts';
import { idOf } from '../support/topic-ids.ts';

const T0 = 1_700_000_000_000;
const SEEDS = 60;
const INDEX_INTERVALS_BYTES = [0, 1, 200, 1000, 4096];

interface Sample {
  readonly topicId: Uuid;
  readonly partition: number;
  readonly baseOffset: number;
  readonly uploadId: Uuid;
  readonly indexIntervalBytes: number;
  /** The batches as groups, each group one buffer given to one `add`. */
  readonly groups: Uint8Array[];
  readonly epochs: EpochEntry[];
  readonly producers: Uint8Array;
}

/** Real batches with random sizes and timestamps that wander down as well as up. */
function randomBatch(random: SeededRandom, baseOffset: number, clock: { ms: number }): Uint8Array {
  const records: ProducerRecord[] = [];
  const count = 1 + random.nextInt(5);
  for (let i = 0; i < count; i++) {
    clock.ms += random.nextInt(200) - 60;
    records.push({ key: `k${random.nextInt(50)}`, value: 'v'.repeat(random.nextInt(300)), timestamp: clock.ms });
  }
  return buildRecordBatch(records, { nowMs: clock.ms, baseOffset, partitionLeaderEpoch: 4 });
}

function randomSample(seed: number): Sample {
  const random = new SeededRandom(seed);
  const baseOffset = random.nextInt(3) === 0 ? 0 : random.nextInt(1_000_000);
  const clock = { ms: T0 + random.nextInt(1_000_000) };
  const groups: Uint8Array[] = [];
  let next = baseOffset;
  const groupCount = 1 + random.nextInt(25);
  for (let g = 0; g < groupCount; g++) {
    const batches: Uint8Array[] = [];
    const batchCount = 1 + random.nextInt(4);
    for (let b = 0; b < batchCount; b++) {
      const batch = randomBatch(random, next, clock);
      next = splitBatches(batch, Number.MAX_SAFE_INTEGER)[0]!.nextOffset;
      batches.push(batch);
    }
    groups.push(concatBytes(batches));
  }
  const epochs: EpochEntry[] = [];
  let epochStart = Math.max(0, baseOffset - random.nextInt(100));
  for (let epoch = random.nextInt(3); epochStart < next && epochs.length < 1 + random.nextInt(4); epoch += 1 + random.nextInt(3)) {
    epochs.push({ epoch, startOffset: epochStart });
    epochStart += 1 + random.nextInt(Math.max(1, next - epochStart));
  }
  const producers = Uint8Array.from({ length: 1 + random.nextInt(200) }, () => random.nextInt(256));
  return {
    topicId: idOf(`topic-${seed % 7}`),
    partition: random.nextInt(64),
    baseOffset,
    uploadId: randomUuid(random),
    indexIntervalBytes: INDEX_INTERVALS_BYTES[random.nextInt(INDEX_INTERVALS_BYTES.length)]!,
    groups,
    epochs,
    producers,
  };
}

/** Builds the sample's object; `drainAfter` says after which adds the chunks so far are handed out. */
function build(sample: Sample, drainAfter: (index: number) => boolean = () => false): { bytes: Uint8Array; chunks: Uint8Array[]; summary: TieredSegmentSummary } {
  const { topicId, partition, baseOffset, uploadId, indexIntervalBytes } = sample;
  const builder = new TieredSegmentBuilder({ topicId, partition, baseOffset, uploadId, indexIntervalBytes });
  const chunks: Uint8Array[] = [];
  sample.groups.forEach((group, index) => {
    builder.add(group);
    if (drainAfter(index)) chunks.push(...builder.drain());
  });
  const finished = builder.finish({ epochs: sample.epochs, producers: sample.producers });
  chunks.push(...finished.chunks);
  return { bytes: concatBytes(chunks), chunks, summary: finished.summary };
}

function batchesOf(sample: Sample): RecordBatch[] {
  return sample.groups.flatMap((group) => splitBatches(group, Number.MAX_SAFE_INTEGER));
}

/** The batch positions the local log would index, computed here independently of the builder. */
function expectedIndexed(batches: readonly RecordBatch[], intervalBytes: number): { offset: number; position: number }[] {
  const indexed: { offset: number; position: number }[] = [];
  let position = 0;
  let sinceEntry = 0;
  for (const batch of batches) {
    if (position === 0 || sinceEntry >= intervalBytes) {
      indexed.push({ offset: batch.baseOffset, position });
      sinceEntry = 0;
    }
    sinceEntry += batch.sizeInBytes;
    position += batch.sizeInBytes;
  }
  return indexed;
}

function thrownBy(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('tiered segment object', () => {
  test('seeded random batch sequences round trip: header, log, indexes, epochs, producers', () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      const sample = randomSample(seed);
      const { bytes, summary } = build(sample);
      const batches = batchesOf(sample);
      const endOffset = batches.at(-1)!.nextOffset;
      expect(summary.bytes).toBe(bytes.length);
      expect([summary.baseOffset, summary.endOffset]).toEqual([sample.baseOffset, endOffset]);
      expect(summary.maxTimestamp).toBe(Math.max(...batches.map((batch) => batch.maxTimestamp)));
      expect(parseFooter(bytes)).toEqual(summary);
      expect(parseFooter(bytes.subarray(bytes.length - TIERED_TAIL_BYTES))).toEqual(summary);
      expect(JSON.parse(JSON.stringify(summary))).toEqual(summary);

      const decoded = decodeTieredSegment(bytes);
      expect(decoded.header).toEqual({ topicId: sample.topicId, partition: sample.partition, baseOffset: sample.baseOffset, uploadId: sample.uploadId });
      expect(Uint8Array.from(sectionOf(bytes, summary, 'log'))).toEqual(Uint8Array.from(concatBytes(sample.groups)));
      expect(decoded.epochs).toEqual(sample.epochs);
      expect(decodeEpochs(sectionOf(bytes, summary, 'epochs'))).toEqual(sample.epochs);
      expect(Uint8Array.from(decoded.producers)).toEqual(Uint8Array.from(sample.producers));
      checkOffsetIndex(bytes, summary, sample, batches);
      checkTimeIndex(bytes, summary, sample, batches);
    }
  });

  test('drained chunks concatenated equal the one-shot bytes, and batches are not copied', () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      const sample = randomSample(seed);
      const random = new SeededRandom(seed * 7919);
      const streamed = build(sample, () => random.nextInt(2) === 0);
      const oneShot = build(sample);
      expect(streamed.bytes).toEqual(oneShot.bytes);
      expect(streamed.summary).toEqual(oneShot.summary);
      expect(sample.groups.every((group) => streamed.chunks.some((chunk) => chunk === group))).toBe(true);
      expect(streamed.chunks.some((chunk) => chunk === sample.producers)).toBe(true);
    }
  });

  test('an entry for the first batch, then one each time indexIntervalBytes have passed, as the local log', () => {
    const batches: Uint8Array[] = [];
    for (let offset = 40; offset < 50; offset++) batches.push(buildRecordBatch([{ value: 'same size', timestamp: T0 + offset }], { nowMs: T0, baseOffset: offset }));
    const batchBytes = batches[0]!.length;
    const builder = new TieredSegmentBuilder({ topicId: idOf('t'), partition: 0, baseOffset: 40, uploadId: randomUuid(new SeededRandom(1)), indexIntervalBytes: 2 * batchBytes });
    for (const batch of batches) builder.add(batch);
    const { chunks, summary } = builder.finish({ epochs: [{ epoch: 0, startOffset: 40 }], producers: new Uint8Array(0) });
    const index = sectionOf(concatBytes(chunks), summary, 'offsetIndex');
    expect([40, 41, 42, 43, 44, 49].map((offset) => positionFor(index, offset))).toEqual([
      { position: 0, offset: 40 },
      { position: 0, offset: 40 },
      { position: 2 * batchBytes, offset: 42 },
      { position: 2 * batchBytes, offset: 42 },
      { position: 4 * batchBytes, offset: 44 },
      { position: 8 * batchBytes, offset: 48 },
    ]);
    expect(summary.sections.offsetIndex.length).toBe(16 + 5 * 8);
  });

  test('the first drain holds the header then the log bytes added so far', () => {
    const sample = randomSample(3);
    const builder = new TieredSegmentBuilder({ ...sample });
    builder.add(sample.groups[0]!);
    const first = concatBytes(builder.drain());
    expect(decodeHeader(first)).toEqual({ topicId: sample.topicId, partition: sample.partition, baseOffset: sample.baseOffset, uploadId: sample.uploadId });
    expect(builder.drain()).toEqual([]);
    const whole = build(sample).bytes;
    expect(first).toEqual(whole.subarray(0, first.length));
  });

  test('a flipped byte in every section, the footer and the trailer is detected', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const sample = randomSample(seed);
      const { bytes, summary } = build(sample);
      const random = new SeededRandom(seed);
      for (const kind of TIERED_SECTION_KINDS) {
        const section = summary.sections[kind];
        const corrupted = flipped(bytes, section.position + random.nextInt(section.length));
        expectCorrupt(() => verifySection(kind, sectionOf(corrupted, summary, kind), summary), `${kind} checksum`);
        expectCorrupt(() => decodeTieredSegment(corrupted), `${kind} checksum`);
      }
      const footerStart = bytes.length - TIERED_TAIL_BYTES;
      for (let at = footerStart; at < bytes.length; at++) expectCorrupt(() => parseFooter(flipped(bytes, at)), '');
      expectCorrupt(() => parseFooter(flipped(bytes, footerStart + random.nextInt(TIERED_TAIL_BYTES - TIERED_TRAILER_BYTES))), 'footerChecksum');
      expectCorrupt(() => verifySection('log', sectionOf(bytes, summary, 'log').subarray(1), summary), 'log length');
    }
  });

  test('a batch that does not continue the offsets is refused and nothing of it is added', () => {
    const sample = randomSample(5);
    const builder = new TieredSegmentBuilder({ ...sample });
    const clock = { ms: T0 };
    const random = new SeededRandom(5);
    expect(kindOf(() => builder.add(randomBatch(random, sample.baseOffset + 1, clock)))).toBe('InvalidOffsets');
    builder.add(sample.groups[0]!);
    const next = builder.nextOffset;
    for (const wrong of [next + 1, next - 1, sample.baseOffset]) {
      expect(kindOf(() => builder.add(randomBatch(random, wrong, clock)))).toBe('InvalidOffsets');
    }
    // A group whose first batch continues but whose second leaves a gap is refused whole.
    const good = randomBatch(random, next, clock);
    const gapped = randomBatch(random, splitBatches(good, Number.MAX_SAFE_INTEGER)[0]!.nextOffset + 3, clock);
    expect(kindOf(() => builder.add(concatBytes([good, gapped])))).toBe('InvalidOffsets');
    expect(builder.nextOffset).toBe(next);
    for (const group of sample.groups.slice(1)) builder.add(group);
    const bytes = concatBytes(builder.finish({ epochs: sample.epochs, producers: sample.producers }).chunks);
    expect(bytes).toEqual(build(sample).bytes);
  });

  test('bytes that are not whole batches are refused', () => {
    const sample = randomSample(6);
    const builder = new TieredSegmentBuilder({ ...sample });
    expect(kindOf(() => builder.add(sample.groups[0]!.subarray(0, sample.groups[0]!.length - 1)))).toBe('CorruptRecord');
    expect(builder.logBytes).toBe(0);
  });

  test('with the streaming log hash loaded, every object still verifies', async () => {
    await loadXxh64Stream();
    for (let seed = 1; seed <= 20; seed++) {
      const sample = randomSample(seed);
      const { bytes, summary } = build(sample, () => seed % 2 === 0);
      expect(decodeTieredSegment(bytes).summary).toEqual(summary);
    }
  });

  test('the header and trailer readers refuse another magic or version', () => {
    const { bytes } = build(randomSample(8));
    expectCorrupt(() => decodeHeader(flipped(bytes, 0)), 'magic');
    expectCorrupt(() => decodeHeader(flipped(bytes, 5)), 'formatVersion');
    expectCorrupt(() => parseTrailer(flipped(bytes, bytes.length - 1).subarray(bytes.length - TIERED_TRAILER_BYTES)), 'magic');
    expectCorrupt(() => parseTrailer(bytes.subarray(bytes.length - 15)), 'trailer');
  });
});

function checkOffsetIndex(bytes: Uint8Array, summary: TieredSegmentSummary, sample: Sample, batches: readonly RecordBatch[]): void {
  const index = sectionOf(bytes, summary, 'offsetIndex');
  const log = sectionOf(bytes, summary, 'log');
  const indexed = expectedIndexed(batches, sample.indexIntervalBytes);
  for (const batch of batches) {
    for (const offset of [batch.baseOffset, batch.lastOffset, (batch.baseOffset + batch.lastOffset) >> 1]) {
      const expected = indexed.findLast((entry) => entry.offset <= offset)!;
      const found = positionFor(index, offset);
      expect(found).toEqual(expected);
      // The position is a batch boundary, and scanning forward from it reaches the offset.
      let at = found.position;
      let scanned = parseBatchAt(log, at, Number.MAX_SAFE_INTEGER)!;
      expect(scanned.baseOffset).toBe(found.offset);
      while (scanned.lastOffset < offset) {
        at += scanned.sizeInBytes;
        scanned = parseBatchAt(log, at, Number.MAX_SAFE_INTEGER)!;
      }
      expect(scanned.baseOffset).toBe(batch.baseOffset);
    }
  }
  for (const outside of [summary.baseOffset - 1, summary.endOffset, summary.endOffset + 1000]) {
    expect(kindOf(() => positionFor(index, outside))).toBe('OffsetOutOfRange');
  }
}

function checkTimeIndex(bytes: Uint8Array, summary: TieredSegmentSummary, sample: Sample, batches: readonly RecordBatch[]): void {
  const index = sectionOf(bytes, summary, 'timeIndex');
  const indexed = expectedIndexed(batches, sample.indexIntervalBytes);
  const timestamps = batches.flatMap((batch) => [batch.maxTimestamp - 1, batch.maxTimestamp, batch.maxTimestamp + 1]);
  for (const timestamp of [...timestamps, Number.MIN_SAFE_INTEGER, summary.maxTimestamp + 1]) {
    // A linear scan: the first batch reaching the timestamp, then the index entry at or below it.
    const first = batches.find((batch) => batch.maxTimestamp >= timestamp);
    const expected = first === undefined ? null : indexed.findLast((entry) => entry.offset <= first.baseOffset)!.offset;
    expect(offsetForTimestamp(index, timestamp)).toBe(expected);
  }
}

function flipped(bytes: Uint8Array, at: number): Uint8Array {
  const copy = Uint8Array.from(bytes);
  copy[at]! ^= 0x10;
  return copy;
}

function expectCorrupt(action: () => unknown, field: string): void {
  const error = thrownBy(action);
  expect(isFerryError(error, 'CorruptObject')).toBe(true);
  const message = (error as Error).message;
  expect(message).toContain(field);
  expect(message).not.toContain('\n');
}

function kindOf(action: () => unknown): string {
  const error = thrownBy(action);
  return isFerryError(error) ? error.kind : String(error);
}
