/**
 * The index sections of a tiered segment (docs/tier-format.md): the offset index, the time
 * index and the leader epochs. Each index section starts with the range it covers, so a reader
 * holding only that section (one ranged GET, cached [D2]) can answer a lookup.
 */
import { CorruptObjectError, FerryError } from '../errors.ts';
import type { EpochEntry } from '../log/leader-epoch-cache.ts';
import { assert } from '../util/assert.ts';
import { ByteReader, ByteWriter } from '../wal/bytes.ts';

/** baseOffset i64 + endOffset i64, at the start of each index section. */
export const INDEX_RANGE_BYTES = 8 + 8;
/** offset - base u32 + position in the log section u32. */
export const OFFSET_INDEX_ENTRY_BYTES = 4 + 4;
/** maxTimestamp so far i64 + offset - base u32. */
export const TIME_INDEX_ENTRY_BYTES = 8 + 4;
const EPOCH_COUNT_BYTES = 4;
/** epoch i32 + startOffset i64. */
export const EPOCH_ENTRY_BYTES = 4 + 8;

export type IndexSectionKind = 'offsetIndex' | 'timeIndex';
const ENTRY_BYTES: Record<IndexSectionKind, number> = { offsetIndex: OFFSET_INDEX_ENTRY_BYTES, timeIndex: TIME_INDEX_ENTRY_BYTES };
const SECTION_NAMES: Record<IndexSectionKind | 'epochs', string> = {
  offsetIndex: 'tiered segment offset index',
  timeIndex: 'tiered segment time index',
  epochs: 'tiered segment epochs',
};

/** One indexed batch: where it starts, and the greatest batch maxTimestamp up to the next indexed batch. */
export interface IndexEntry {
  readonly relativeOffset: number;
  readonly position: number;
  maxTimestamp: number;
}

export interface IndexRange {
  readonly baseOffset: number;
  readonly endOffset: number;
  readonly entryCount: number;
}

function writeRange(kind: IndexSectionKind, range: { baseOffset: number; endOffset: number }, entryCount: number): ByteWriter {
  const writer = new ByteWriter(INDEX_RANGE_BYTES + entryCount * ENTRY_BYTES[kind]);
  writer.i64(range.baseOffset);
  writer.i64(range.endOffset);
  return writer;
}

export function encodeOffsetIndex(range: { baseOffset: number; endOffset: number }, entries: readonly IndexEntry[]): Uint8Array {
  assert(entries[0]?.relativeOffset === 0 && entries[0].position === 0, 'the first batch is always indexed');
  const writer = writeRange('offsetIndex', range, entries.length);
  for (const entry of entries) {
    writer.u32(entry.relativeOffset);
    writer.u32(entry.position);
  }
  return writer.bytes;
}

export function encodeTimeIndex(range: { baseOffset: number; endOffset: number }, entries: readonly IndexEntry[]): Uint8Array {
  const writer = writeRange('timeIndex', range, entries.length);
  let previous = -Infinity;
  for (const entry of entries) {
    assert(entry.maxTimestamp >= previous, 'a max timestamp so far never falls');
    writer.i64(entry.maxTimestamp);
    writer.u32(entry.relativeOffset);
    previous = entry.maxTimestamp;
  }
  return writer.bytes;
}

/**
 * The range an index section covers and how many entries it holds; throws CorruptObjectError
 * when its length is not the range plus whole entries, at least one. Verify its checksum first.
 */
export function readIndexRange(section: Uint8Array, kind: IndexSectionKind): IndexRange {
  const reader = new ByteReader(section, 0, SECTION_NAMES[kind]);
  const baseOffset = reader.i64('baseOffset');
  const endOffset = reader.i64('endOffset');
  if (baseOffset < 0 || endOffset <= baseOffset) throw reader.error('endOffset', `range [${baseOffset}, ${endOffset}) is empty`);
  const entryBytes = ENTRY_BYTES[kind];
  if (reader.remaining === 0 || reader.remaining % entryBytes !== 0) throw reader.error('entries', `${reader.remaining} bytes are not whole ${entryBytes}-byte entries, at least one`);
  return { baseOffset, endOffset, entryCount: reader.remaining / entryBytes };
}

function entryView(section: Uint8Array): DataView {
  return new DataView(section.buffer, section.byteOffset + INDEX_RANGE_BYTES, section.length - INDEX_RANGE_BYTES);
}

/**
 * The greatest offset index entry at or below `offset`: a batch boundary (`position` counts from
 * the log section's first byte) from which a forward scan reaches `offset`. Throws
 * FerryError('OffsetOutOfRange') outside the segment's `[base, end)`.
 */
export function positionFor(offsetIndexSection: Uint8Array, offset: number): { position: number; offset: number } {
  const range = readIndexRange(offsetIndexSection, 'offsetIndex');
  if (!(offset >= range.baseOffset && offset < range.endOffset)) {
    throw new FerryError('OffsetOutOfRange', `offset ${offset} is outside the tiered segment [${range.baseOffset}, ${range.endOffset})`);
  }
  const view = entryView(offsetIndexSection);
  const relative = offset - range.baseOffset;
  // Invariant: entry `low` is at or below `relative` (entry 0 is relative offset 0).
  let low = 0;
  let high = range.entryCount - 1;
  while (low < high) {
    const middle = (low + high + 1) >>> 1;
    if (view.getUint32(middle * OFFSET_INDEX_ENTRY_BYTES) <= relative) low = middle;
    else high = middle - 1;
  }
  const found = view.getUint32(low * OFFSET_INDEX_ENTRY_BYTES);
  if (found > relative) throw new CorruptObjectError('entries', INDEX_RANGE_BYTES, `the first entry is relative offset ${found}, not 0`, SECTION_NAMES.offsetIndex);
  return { position: view.getUint32(low * OFFSET_INDEX_ENTRY_BYTES + 4), offset: range.baseOffset + found };
}

/**
 * Where a scan for the first record with timestamp >= `timestamp` starts: the offset of the
 * first time index entry whose max timestamp so far reaches it (no batch before that offset
 * does), or null when no batch of the segment reaches it.
 */
export function offsetForTimestamp(timeIndexSection: Uint8Array, timestamp: number): number | null {
  const range = readIndexRange(timeIndexSection, 'timeIndex');
  const reader = new ByteReader(timeIndexSection, 0, SECTION_NAMES.timeIndex);
  const timestampAt = (index: number): number => {
    reader.position = INDEX_RANGE_BYTES + index * TIME_INDEX_ENTRY_BYTES;
    return reader.i64('maxTimestamp');
  };
  // Entries' max timestamps never fall: find the first at or above `timestamp`.
  let low = 0;
  let high = range.entryCount;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (timestampAt(middle) >= timestamp) high = middle;
    else low = middle + 1;
  }
  if (low === range.entryCount) return null;
  return range.baseOffset + entryView(timeIndexSection).getUint32(low * TIME_INDEX_ENTRY_BYTES + 8);
}

export function encodeEpochs(epochs: readonly EpochEntry[]): Uint8Array {
  const writer = new ByteWriter(EPOCH_COUNT_BYTES + epochs.length * EPOCH_ENTRY_BYTES);
  writer.u32(epochs.length);
  for (const entry of epochs) {
    writer.i32(entry.epoch);
    writer.i64(entry.startOffset);
  }
  return writer.bytes;
}

/** The leader-epoch entries of an epochs section: epochs and start offsets strictly increasing. */
export function decodeEpochs(section: Uint8Array): EpochEntry[] {
  const reader = new ByteReader(section, 0, SECTION_NAMES.epochs);
  const count = reader.u32('count');
  if (count * EPOCH_ENTRY_BYTES !== reader.remaining) throw reader.error('count', `${count} entries, ${reader.remaining} bytes follow`);
  const entries: EpochEntry[] = [];
  for (let i = 0; i < count; i++) {
    const epoch = reader.i32('epoch');
    const startOffset = reader.i64('startOffset');
    const previous = entries.at(-1);
    if (epoch < 0 || startOffset < 0) throw reader.error('epoch', `entry (${epoch}, ${startOffset}) is negative`);
    if (previous !== undefined && (epoch <= previous.epoch || startOffset <= previous.startOffset))
      throw reader.error('epoch', `entry (${epoch}, ${startOffset}) does not follow (${previous.epoch}, ${previous.startOffset})`);
    entries.push({ epoch, startOffset });
  }
  return entries;
}
