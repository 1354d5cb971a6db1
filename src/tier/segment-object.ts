/**
 * The tiered segment object of docs/tier-format.md: a batch-aligned range `[base, end)` of one
 * partition's log, byte for byte, with the offset index, time index, leader epochs and producer
 * state a reader needs without the local copy. Every constant here is a field there.
 */
import { CorruptObjectError, FerryError } from '../errors.ts';
import { BATCH_BYTES_MAX } from '../format/batch-builder.ts';
import { splitBatches } from '../format/batch-parse.ts';
import type { RecordBatch } from '../format/record-batch.ts';
import type { EpochEntry } from '../log/leader-epoch-cache.ts';
import { assert } from '../util/assert.ts';
import { isUuid, UUID_BYTES, type Uuid, uuidFromBytes, uuidToBytes, ZERO_UUID } from '../util/uuid.ts';
import { ByteReader, ByteWriter, xxh64, type Xxh64Stream, xxh64Stream } from '../wal/bytes.ts';
import { PARTITION_MAX } from './keys.ts';
import { decodeEpochs, encodeEpochs, encodeOffsetIndex, encodeTimeIndex, type IndexEntry, readIndexRange } from './segment-indexes.ts';

export { decodeEpochs, offsetForTimestamp, positionFor } from './segment-indexes.ts';

export const TIERED_SEGMENT_MAGIC = 0x46545331; // "FTS1"
export const TIERED_SEGMENT_FORMAT_VERSION = 1;
/** magic u32 + version u16 + reserved u16 + topicId + partition i32 + baseOffset i64 + uploadId. */
export const TIERED_HEADER_BYTES = 4 + 2 + 2 + UUID_BYTES + 4 + 8 + UUID_BYTES;
/** footerLength u32 + footer XXH64 u64 + magic u32: the object's last bytes, as in wal-format.md. */
export const TIERED_TRAILER_BYTES = 4 + 8 + 4;
/** Every section of a version 1 object, in object order; a kind's code is its index here. */
export const TIERED_SECTION_KINDS = ['header', 'log', 'offsetIndex', 'timeIndex', 'epochs', 'producers'] as const;
export type TieredSectionKind = (typeof TIERED_SECTION_KINDS)[number];
/** baseOffset i64 + endOffset i64 + maxTimestamp i64 + sectionCount u32. */
const FOOTER_FIXED_BYTES = 8 + 8 + 8 + 4;
/** kind u8 + position u64 + length u64 + XXH64 u64. */
const SECTION_ENTRY_BYTES = 1 + 8 + 8 + 8;
/** A version 1 footer lists every kind once, so its size is fixed. */
export const TIERED_FOOTER_BYTES = FOOTER_FIXED_BYTES + TIERED_SECTION_KINDS.length * SECTION_ENTRY_BYTES;
/** A suffix read of this many bytes holds the footer and the trailer: one ranged GET [T5]. */
export const TIERED_TAIL_BYTES = TIERED_FOOTER_BYTES + TIERED_TRAILER_BYTES;
/** Offset index positions are u32s counted from the log section's first byte. */
export const TIERED_LOG_BYTES_MAX = 0xffff_ffff;
/** Index entries hold `offset - base` as a u32. */
export const TIERED_OFFSET_SPAN_MAX = 0xffff_ffff;
/** Kafka's RecordBatch.NO_TIMESTAMP: the max timestamp of a range whose batches carry none. */
const NO_TIMESTAMP = -1;
const SEGMENT_NAME = 'tiered segment';
const HEADER_NAME = 'tiered segment header';
const FOOTER_NAME = 'tiered segment footer';
const TRAILER_NAME = 'tiered segment trailer';

assert(TIERED_HEADER_BYTES === 52, 'the tiered segment header is 52 bytes');
assert(TIERED_FOOTER_BYTES === 178, 'the version 1 footer is 178 bytes');

/** What the header says: everything known when an upload starts, so the header streams out first. */
export interface TieredSegmentHeader {
  readonly topicId: Uuid;
  readonly partition: number;
  readonly baseOffset: number;
  readonly uploadId: Uuid;
}

export interface TieredSectionRef {
  /** The section's first byte in the object. */
  readonly position: number;
  readonly length: number;
  /** XXH64 (seed 0) of the section, as a decimal string: JSON-safe in the tier record. */
  readonly checksum: string;
}

/** The footer's content (the tier record's entry repeats it, so a reader skips one GET). */
export interface TieredSegmentSummary {
  readonly baseOffset: number;
  /** Exclusive: the last batch's last offset + 1. */
  readonly endOffset: number;
  /** The object's size. */
  readonly bytes: number;
  /** The greatest batch maxTimestamp in the segment (-1 if no batch carries one). */
  readonly maxTimestamp: number;
  readonly sections: Readonly<Record<TieredSectionKind, TieredSectionRef>>;
}

export interface TieredSegmentBuilderOptions extends TieredSegmentHeader {
  /** The log's `index.interval.bytes`: log bytes between offset index entries. */
  readonly indexIntervalBytes: number;
}

export interface TieredSegmentTail {
  /** The leader-epoch entries covering `[base, end)`: epochs and start offsets strictly increasing. */
  readonly epochs: readonly EpochEntry[];
  /** The producer state at `end`, as the log snapshots it at a roll (kept as it is, not copied). */
  readonly producers: Uint8Array;
}

/**
 * Assembles one tiered segment from whole batches as they are read for the upload [T4]. The
 * header is final from the start and the log bytes follow it unchanged, so `drain` can hand a
 * multipart upload its parts while the rest is read; `finish` appends what depends on the whole
 * range (indexes, epochs, producers, footer, trailer). Batches stay views of the caller's
 * buffers; the indexes come from batch headers alone. The log's XXH64 streams once
 * loadXxh64Stream() (src/wal/bytes.ts) has resolved; before that the builder holds every log
 * chunk until finish, so an uploader of large ranges loads it first.
 */
export class TieredSegmentBuilder {
  readonly #header: Uint8Array;
  readonly #baseOffset: number;
  readonly #indexIntervalBytes: number;
  /** Streams when loadXxh64Stream has run; otherwise it holds the log chunks (views) until finish. */
  readonly #logHash: Xxh64Stream = xxh64Stream();
  readonly #indexEntries: IndexEntry[] = [];
  #pending: Uint8Array[];
  #logBytes = 0;
  #nextOffset: number;
  #maxTimestamp = NO_TIMESTAMP;
  #bytesSinceIndexEntry = 0;
  #finished = false;

  constructor(options: TieredSegmentBuilderOptions) {
    assert(Number.isInteger(options.indexIntervalBytes) && options.indexIntervalBytes >= 0, `index interval of ${options.indexIntervalBytes} bytes`);
    this.#header = encodeHeader(options);
    this.#baseOffset = options.baseOffset;
    this.#nextOffset = options.baseOffset;
    this.#indexIntervalBytes = options.indexIntervalBytes;
    this.#pending = [this.#header];
  }

  /** The offset the next batch must start at (the segment's end once finished). */
  get nextOffset(): number {
    return this.#nextOffset;
  }

  get logBytes(): number {
    return this.#logBytes;
  }

  /**
   * Adds whole batches (one or more, contiguous in memory) that continue exactly at `nextOffset`.
   * Throws FerryError('InvalidOffsets') for a gap or an overlap, CorruptRecordError for bytes
   * that are not whole valid batches; either way nothing is added.
   */
  add(batches: Uint8Array): void {
    assert(!this.#finished, 'batches go only into an unfinished tiered segment');
    const parsed = splitBatches(batches, BATCH_BYTES_MAX);
    this.#checkContinues(parsed);
    const endOffset = parsed.at(-1)!.nextOffset;
    if (this.#logBytes + batches.length > TIERED_LOG_BYTES_MAX || endOffset - this.#baseOffset > TIERED_OFFSET_SPAN_MAX) {
      throw new FerryError('InvalidArgument', `a tiered segment holds at most ${TIERED_LOG_BYTES_MAX} log bytes and ${TIERED_OFFSET_SPAN_MAX} offsets`);
    }
    for (const batch of parsed) this.#note(batch);
    this.#pending.push(batches);
    this.#logHash.update(batches);
  }

  /** The chunks made since the last drain: the object's next bytes, in order. */
  drain(): Uint8Array[] {
    const chunks = this.#pending;
    this.#pending = [];
    return chunks;
  }

  /** The remaining chunks (undrained log, indexes, epochs, producers, footer, trailer) and the summary. */
  finish(tail: TieredSegmentTail): { chunks: Uint8Array[]; summary: TieredSegmentSummary } {
    assert(!this.#finished, 'a tiered segment is finished once');
    assert(this.#logBytes > 0, 'a tiered segment holds at least one batch');
    this.#finished = true;
    const range = { baseOffset: this.#baseOffset, endOffset: this.#nextOffset };
    checkEpochs(tail.epochs, range.endOffset);
    const after: [TieredSectionKind, Uint8Array][] = [
      ['offsetIndex', encodeOffsetIndex(range, this.#indexEntries)],
      ['timeIndex', encodeTimeIndex(range, this.#indexEntries)],
      ['epochs', encodeEpochs(tail.epochs)],
      ['producers', tail.producers],
    ];
    const sections = describeSections([
      ['header', { length: this.#header.length, checksum: xxh64(this.#header) }],
      ['log', { length: this.#logBytes, checksum: this.#logHash.digest() }],
      ...after.map(([kind, bytes]): [TieredSectionKind, SectionDigest] => [kind, { length: bytes.length, checksum: xxh64(bytes) }]),
    ]);
    const footer = encodeFooter({ ...range, maxTimestamp: this.#maxTimestamp }, sections);
    const trailer = encodeTrailer(footer);
    const producers = sections.producers;
    const summary = { ...range, bytes: producers.position + producers.length + footer.length + trailer.length, maxTimestamp: this.#maxTimestamp, sections };
    const chunks = [...this.drain(), ...after.map(([, bytes]) => bytes), footer, trailer].filter((chunk) => chunk.length > 0);
    return { chunks, summary };
  }

  #checkContinues(batches: readonly RecordBatch[]): void {
    let expected = this.#nextOffset;
    for (const batch of batches) {
      if (batch.baseOffset !== expected) {
        throw new FerryError('InvalidOffsets', `batch at offset ${batch.baseOffset} does not continue the tiered segment from ${this.#baseOffset} at ${expected}`);
      }
      expected = batch.nextOffset;
    }
  }

  /** Indexes one batch as the local log does: the first batch, then one every indexIntervalBytes. */
  #note(batch: RecordBatch): void {
    if (this.#logBytes === 0 || this.#bytesSinceIndexEntry >= this.#indexIntervalBytes) {
      this.#indexEntries.push({ relativeOffset: batch.baseOffset - this.#baseOffset, position: this.#logBytes, maxTimestamp: NO_TIMESTAMP });
      this.#bytesSinceIndexEntry = 0;
    }
    this.#maxTimestamp = Math.max(this.#maxTimestamp, batch.maxTimestamp);
    // The open entry covers every batch up to the next entry: its max grows until then.
    this.#indexEntries.at(-1)!.maxTimestamp = this.#maxTimestamp;
    this.#bytesSinceIndexEntry += batch.sizeInBytes;
    this.#logBytes += batch.sizeInBytes;
    this.#nextOffset = batch.nextOffset;
  }
}

function encodeHeader(header: TieredSegmentHeader): Uint8Array {
  assert(isUuid(header.topicId) && header.topicId !== ZERO_UUID, `topic id ${header.topicId}`);
  assert(isUuid(header.uploadId) && header.uploadId !== ZERO_UUID, `upload id ${header.uploadId}`);
  assert(Number.isInteger(header.partition) && header.partition >= 0 && header.partition <= PARTITION_MAX, `partition ${header.partition}`);
  assert(Number.isSafeInteger(header.baseOffset) && header.baseOffset >= 0, `base offset ${header.baseOffset}`);
  const writer = new ByteWriter(TIERED_HEADER_BYTES);
  writer.u32(TIERED_SEGMENT_MAGIC);
  writer.u16(TIERED_SEGMENT_FORMAT_VERSION);
  writer.u16(0);
  writer.raw(uuidToBytes(header.topicId));
  writer.i32(header.partition);
  writer.i64(header.baseOffset);
  writer.raw(uuidToBytes(header.uploadId));
  assert(writer.position === TIERED_HEADER_BYTES, 'header size');
  return writer.bytes;
}

function checkEpochs(epochs: readonly EpochEntry[], endOffset: number): void {
  for (let i = 0; i < epochs.length; i++) {
    const entry = epochs[i]!;
    const previous = epochs[i - 1];
    assert(Number.isInteger(entry.epoch) && entry.epoch >= 0 && entry.startOffset >= 0 && entry.startOffset < endOffset, `epoch entry ${JSON.stringify(entry)} outside the segment's range`);
    assert(previous === undefined || (entry.epoch > previous.epoch && entry.startOffset > previous.startOffset), 'epochs and start offsets strictly increase');
  }
}

interface SectionDigest {
  readonly length: number;
  readonly checksum: bigint;
}

/** The footer's section entries: each section starts where the one before it ends. */
function describeSections(parts: readonly [TieredSectionKind, SectionDigest][]): Record<TieredSectionKind, TieredSectionRef> {
  assert(parts.map(([kind]) => kind).join() === TIERED_SECTION_KINDS.join(), 'sections in object order');
  const sections = {} as Record<TieredSectionKind, TieredSectionRef>;
  let position = 0;
  for (const [kind, digest] of parts) {
    sections[kind] = { position, length: digest.length, checksum: digest.checksum.toString() };
    position += digest.length;
  }
  return sections;
}

function encodeFooter(fields: { baseOffset: number; endOffset: number; maxTimestamp: number }, sections: Record<TieredSectionKind, TieredSectionRef>): Uint8Array {
  const writer = new ByteWriter(TIERED_FOOTER_BYTES);
  writer.i64(fields.baseOffset);
  writer.i64(fields.endOffset);
  writer.i64(fields.maxTimestamp);
  writer.u32(TIERED_SECTION_KINDS.length);
  TIERED_SECTION_KINDS.forEach((kind, code) => {
    writer.u8(code);
    writer.i64(sections[kind].position);
    writer.i64(sections[kind].length);
    writer.u64(BigInt(sections[kind].checksum));
  });
  assert(writer.position === TIERED_FOOTER_BYTES, 'footer size');
  return writer.bytes;
}

function encodeTrailer(footer: Uint8Array): Uint8Array {
  const writer = new ByteWriter(TIERED_TRAILER_BYTES);
  writer.u32(footer.length);
  writer.u64(xxh64(footer));
  writer.u32(TIERED_SEGMENT_MAGIC);
  return writer.bytes;
}

/** Reads the header at the start of an object (or of a prefix of it); verify it with verifySection first. */
export function decodeHeader(bytes: Uint8Array): TieredSegmentHeader {
  const reader = new ByteReader(bytes, 0, HEADER_NAME);
  const magic = reader.u32('magic');
  if (magic !== TIERED_SEGMENT_MAGIC) throw reader.error('magic', `0x${magic.toString(16)} is not 0x${TIERED_SEGMENT_MAGIC.toString(16)}`);
  const version = reader.u16('formatVersion');
  if (version !== TIERED_SEGMENT_FORMAT_VERSION) throw reader.error('formatVersion', `version ${version} is not supported (this reader knows ${TIERED_SEGMENT_FORMAT_VERSION})`);
  if (reader.u16('reserved') !== 0) throw reader.error('reserved', 'is not 0');
  const topicId = uuidFromBytes(reader.bytes('topicId', UUID_BYTES));
  if (topicId === ZERO_UUID) throw reader.error('topicId', 'is the zero UUID');
  const partition = reader.i32('partition');
  if (partition < 0) throw reader.error('partition', `${partition} is negative`);
  const baseOffset = reader.i64('baseOffset');
  if (baseOffset < 0) throw reader.error('baseOffset', `${baseOffset} is negative`);
  const uploadId = uuidFromBytes(reader.bytes('uploadId', UUID_BYTES));
  return { topicId, partition, baseOffset, uploadId };
}

/** Reads the trailer (the object's last TIERED_TRAILER_BYTES): the footer's length and checksum. */
export function parseTrailer(last16: Uint8Array): { footerLength: number; footerChecksum: bigint } {
  const reader = new ByteReader(last16, 0, TRAILER_NAME);
  if (last16.length !== TIERED_TRAILER_BYTES) throw reader.error('trailer', `needs ${TIERED_TRAILER_BYTES} bytes, got ${last16.length}`);
  const footerLength = reader.u32('footerLength');
  const footerChecksum = reader.u64('footerChecksum');
  const magic = reader.u32('magic');
  if (magic !== TIERED_SEGMENT_MAGIC) throw reader.error('magic', `0x${magic.toString(16)} is not 0x${TIERED_SEGMENT_MAGIC.toString(16)}`);
  if (footerLength !== TIERED_FOOTER_BYTES) throw reader.error('footerLength', `${footerLength} is not the version ${TIERED_SEGMENT_FORMAT_VERSION} footer's ${TIERED_FOOTER_BYTES}`);
  return { footerLength, footerChecksum };
}

/**
 * Verifies and reads the footer from `tail`, any suffix of the object holding footer and trailer
 * (TIERED_TAIL_BYTES, or the whole object). Positions in its errors count from the footer's start.
 */
export function parseFooter(tail: Uint8Array): TieredSegmentSummary {
  const trailer = parseTrailer(tail.subarray(Math.max(0, tail.length - TIERED_TRAILER_BYTES)));
  const footerEnd = tail.length - TIERED_TRAILER_BYTES;
  if (footerEnd < trailer.footerLength) throw new CorruptObjectError('footer', 0, `needs ${trailer.footerLength} bytes before the trailer, got ${footerEnd}`, FOOTER_NAME);
  const footer = tail.subarray(footerEnd - trailer.footerLength, footerEnd);
  const reader = new ByteReader(footer, 0, FOOTER_NAME);
  const actual = xxh64(footer);
  if (actual !== trailer.footerChecksum) throw reader.error('footerChecksum', `expected ${trailer.footerChecksum}, computed ${actual}`);
  const baseOffset = reader.i64('baseOffset');
  const endOffset = reader.i64('endOffset');
  if (baseOffset < 0 || endOffset <= baseOffset || endOffset - baseOffset > TIERED_OFFSET_SPAN_MAX) throw reader.error('endOffset', `range [${baseOffset}, ${endOffset}) is not a tiered segment's`);
  const maxTimestamp = reader.i64('maxTimestamp');
  const sectionCount = reader.u32('sectionCount');
  if (sectionCount !== TIERED_SECTION_KINDS.length) throw reader.error('sectionCount', `${sectionCount} sections, version ${TIERED_SEGMENT_FORMAT_VERSION} has ${TIERED_SECTION_KINDS.length}`);
  const sections = readSectionRefs(reader);
  const producers = sections.producers;
  return { baseOffset, endOffset, bytes: producers.position + producers.length + trailer.footerLength + TIERED_TRAILER_BYTES, maxTimestamp, sections };
}

/** The section entries: every kind once, in object order, each starting where the one before ends. */
function readSectionRefs(reader: ByteReader): Record<TieredSectionKind, TieredSectionRef> {
  const sections = {} as Record<TieredSectionKind, TieredSectionRef>;
  let expectedPosition = 0;
  TIERED_SECTION_KINDS.forEach((kind, code) => {
    const kindCode = reader.u8('kind');
    if (kindCode !== code) throw reader.error('kind', `section ${code} is kind ${kindCode}, expected ${code} (${kind})`);
    const position = reader.i64(`${kind} position`);
    if (position !== expectedPosition) throw reader.error(`${kind} position`, `${position}, expected ${expectedPosition}`);
    const length = reader.i64(`${kind} length`);
    if (length < 0) throw reader.error(`${kind} length`, `${length} is negative`);
    const checksum = reader.u64(`${kind} checksum`).toString();
    sections[kind] = { position, length, checksum };
    expectedPosition = position + length;
  });
  if (sections.header.length !== TIERED_HEADER_BYTES) throw reader.error('header length', `${sections.header.length}, expected ${TIERED_HEADER_BYTES}`);
  if (sections.log.length === 0 || sections.log.length > TIERED_LOG_BYTES_MAX) throw reader.error('log length', `${sections.log.length} is not 1 to ${TIERED_LOG_BYTES_MAX}`);
  return sections;
}

/** Checks one section read whole against the summary's (the footer's) length and XXH64. */
export function verifySection(kind: TieredSectionKind, bytes: Uint8Array, summary: TieredSegmentSummary): void {
  const section = summary.sections[kind];
  if (bytes.length !== section.length) throw new CorruptObjectError(`${kind} length`, section.position, `read ${bytes.length} bytes, the footer says ${section.length}`, SEGMENT_NAME);
  const actual = xxh64(bytes).toString();
  if (actual !== section.checksum) throw new CorruptObjectError(`${kind} checksum`, section.position, `expected ${section.checksum}, computed ${actual}`, SEGMENT_NAME);
}

/** One section of a whole object in memory, as a view. */
export function sectionOf(bytes: Uint8Array, summary: TieredSegmentSummary, kind: TieredSectionKind): Uint8Array {
  const section = summary.sections[kind];
  return bytes.subarray(section.position, section.position + section.length);
}

export interface DecodedTieredSegment {
  readonly header: TieredSegmentHeader;
  readonly summary: TieredSegmentSummary;
  /** Views of the object's log section. */
  readonly batches: RecordBatch[];
  readonly epochs: EpochEntry[];
  readonly producers: Uint8Array;
}

/**
 * Verifies a whole object held in memory (an upload read back [T4], [T5]): every section's
 * checksum, the header against the footer, the batches' offsets `[base, end)` without a gap,
 * and both indexes naming the offset range the footer does.
 */
export function decodeTieredSegment(bytes: Uint8Array): DecodedTieredSegment {
  const summary = parseFooter(bytes);
  const corrupt = (field: string, detail: string): CorruptObjectError => new CorruptObjectError(field, 0, detail, SEGMENT_NAME);
  if (summary.bytes !== bytes.length) throw corrupt('size', `the footer describes ${summary.bytes} bytes, the object has ${bytes.length}`);
  for (const kind of TIERED_SECTION_KINDS) verifySection(kind, sectionOf(bytes, summary, kind), summary);
  const header = decodeHeader(sectionOf(bytes, summary, 'header'));
  if (header.baseOffset !== summary.baseOffset) throw corrupt('baseOffset', `header says ${header.baseOffset}, footer says ${summary.baseOffset}`);
  const batches = splitBatches(sectionOf(bytes, summary, 'log'), BATCH_BYTES_MAX);
  let expected = summary.baseOffset;
  for (const batch of batches) {
    if (batch.baseOffset !== expected) throw corrupt('log', `batch at offset ${batch.baseOffset}, expected ${expected}`);
    expected = batch.nextOffset;
  }
  if (expected !== summary.endOffset) throw corrupt('log', `batches end at ${expected}, footer says ${summary.endOffset}`);
  for (const kind of ['offsetIndex', 'timeIndex'] as const) {
    const range = readIndexRange(sectionOf(bytes, summary, kind), kind);
    if (range.baseOffset !== summary.baseOffset || range.endOffset !== summary.endOffset)
      throw corrupt(kind, `names [${range.baseOffset}, ${range.endOffset}), footer says [${summary.baseOffset}, ${summary.endOffset})`);
  }
  return { header, summary, batches, epochs: decodeEpochs(sectionOf(bytes, summary, 'epochs')), producers: sectionOf(bytes, summary, 'producers') };
}
