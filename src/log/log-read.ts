/**
 * Reads and lookups of a partition's log (PartitionLog's read side): which segment holds an
 * offset, where in its file (the offset index, then a walk over batch headers), whole batches
 * from there, and the records found by timestamp. Nothing here writes.
 */
import { FerryError } from '../errors.ts';
import { BatchHeader, LOG_OVERHEAD_BYTES, RECORD_BATCH_HEADER_BYTES, RecordBatch } from '../format/record-batch.ts';
import { firstRecordAtOrAfter, type TimestampAndOffset } from '../format/timestamp-lookup.ts';
import { assert } from '../util/assert.ts';
import type { LogConfig } from './config.ts';
import type { LogSegment, ReadAllocator } from './segment.ts';

/** Batch header bytes needed to skip a batch: baseOffset, batchLength, ..., lastOffsetDelta. */
const SKIP_HEADER_BYTES = 27;
const LAST_OFFSET_DELTA_POSITION = 23;
/**
 * Bytes read at once while skipping from an index entry to a fetch's first batch: one read
 * covers a whole index interval of small batches instead of a read per batch header.
 */
const SKIP_WINDOW_BYTES_MIN = 8 * 1024;
/**
 * Bytes read at once by a walk over batch headers: a window holds the headers of many small
 * batches; past a batch larger than it, the next window starts at the next header. So the walk
 * reads much less than the batches only where they are much larger than this (a 1 MB produce
 * request's batch: 7% of the bytes); for small batches it reads about all of them, as before.
 */
const HEADER_WINDOW_BYTES = 64 * 1024;
/**
 * The skip window's memory, one for every log of the process: positionOf reads into it and looks
 * at it synchronously, and nothing of it leaves positionOf, so no read can see another's bytes.
 * Grown to the largest window asked for (index.interval.bytes plus a header) up to
 * SKIP_WINDOW_KEPT_BYTES_MAX; a larger window is a buffer of its own, dropped after the read, so a
 * topic with a huge index.interval.bytes does not pin a segment's worth of memory for good (review).
 */
const SKIP_WINDOW_KEPT_BYTES_MAX = 1024 * 1024;
let skipWindow: Uint8Array = new Uint8Array(0);
const skipWindowMemory: ReadAllocator = (length) => {
  if (length > SKIP_WINDOW_KEPT_BYTES_MAX) return Buffer.allocUnsafeSlow(length);
  if (skipWindow.length < length) skipWindow = Buffer.allocUnsafeSlow(Math.max(length, SKIP_WINDOW_BYTES_MIN));
  return skipWindow.subarray(0, length);
};

export interface ReadResult {
  /** Whole batches, starting with the one that holds the requested offset; views of one buffer per segment. */
  readonly batches: RecordBatch[];
  readonly logStartOffset: number;
  readonly logEndOffset: number;
}

/**
 * Reads whole batches of `segments` from `offset` on: the first holds `offset` and is returned
 * even when larger than `maxBytes`; later ones only while the total stays within `maxBytes`.
 * The batches are views of memory from `allocate` (fresh buffers unless given).
 */
export function readBatches(segments: readonly LogSegment[], offset: number, maxBytes: number, indexIntervalBytes: number, allocate?: ReadAllocator): ReadResult {
  const result: ReadResult = { batches: [], logStartOffset: segments[0]!.baseOffset, logEndOffset: segments.at(-1)!.nextOffset };
  if (offset < result.logStartOffset || offset > result.logEndOffset || !Number.isSafeInteger(offset)) {
    throw new FerryError('OffsetOutOfRange', `offset ${offset} is outside the log [${result.logStartOffset}, ${result.logEndOffset}]`);
  }
  let budgetBytes = maxBytes;
  let segmentIndex = segmentIndexFor(segments, offset);
  let position = positionOf(segments[segmentIndex]!, offset, indexIntervalBytes);
  while (segmentIndex < segments.length) {
    const segment = segments[segmentIndex]!;
    const mustReturnOne = result.batches.length === 0;
    const taken = readWholeBatches(segment, position, budgetBytes, mustReturnOne, result.batches, allocate);
    budgetBytes -= taken;
    if (budgetBytes <= 0 || position + taken < segment.sizeBytes) break;
    segmentIndex++;
    position = 0;
  }
  return result;
}

/**
 * Hands `visit` the header of each batch of `segments` whose base offset lies in [from, to),
 * oldest first, reading headers only (HEADER_WINDOW_BYTES at a time, and skipping the records of
 * batches larger than that): for a walk that needs offsets, producers and timestamps, not records.
 * A length that frames no whole batch inside the segment fails the walk, as a whole-batch read
 * fails (readWholeBatches): the bytes past it are not the log's to skip.
 */
export function readBatchHeaders(segments: readonly LogSegment[], from: number, to: number, indexIntervalBytes: number, visit: (header: BatchHeader) => void): void {
  if (from >= to) return;
  let segmentIndex = segmentIndexFor(segments, from);
  let position = positionOf(segments[segmentIndex]!, from, indexIntervalBytes);
  for (; segmentIndex < segments.length; segmentIndex++, position = 0) {
    const segment = segments[segmentIndex]!;
    while (position + RECORD_BATCH_HEADER_BYTES <= segment.sizeBytes) {
      const window = segment.read(position, HEADER_WINDOW_BYTES);
      let at = 0;
      while (at + RECORD_BATCH_HEADER_BYTES <= window.length) {
        const header = new BatchHeader(window.subarray(at, at + RECORD_BATCH_HEADER_BYTES));
        const size = header.sizeInBytes;
        assert(size >= RECORD_BATCH_HEADER_BYTES && position + at + size <= segment.sizeBytes, `no whole batch at position ${position + at} of segment ${segment.baseOffset}`);
        if (header.baseOffset >= to) return;
        if (header.baseOffset >= from) visit(header);
        at += size;
      }
      assert(at > 0, `segment ${segment.baseOffset}: no whole batch header at position ${position}`);
      position += at;
    }
  }
}

/** Bytes from the batch holding `offset` (clamped to the log start) to the log end. */
export function bytesFrom(segments: readonly LogSegment[], offset: number, indexIntervalBytes: number): number {
  if (offset >= segments.at(-1)!.nextOffset) return 0;
  const from = Math.max(offset, segments[0]!.baseOffset);
  const index = segmentIndexFor(segments, from);
  const holding = segments[index]!;
  const later = segments.slice(index + 1).reduce((sum, segment) => sum + segment.sizeBytes, 0);
  return holding.sizeBytes - positionOf(holding, from, indexIntervalBytes) + later;
}

/** The first record at or above `fromOffset` whose timestamp is at or after `timestamp`, and that timestamp; null if none. */
export function offsetForTimestamp(segments: readonly LogSegment[], timestamp: number, fromOffset: number, config: LogConfig): TimestampAndOffset | null {
  for (const segment of segments) {
    if (segment.maxTimestamp < timestamp) continue;
    const found = firstRecordAt(segment, timestamp, fromOffset, config);
    if (found !== null) return found; // none in it at or above the log start: look further
  }
  return null;
}

/**
 * KIP-734's MAX_TIMESTAMP: the record with the largest timestamp in the log (the first of them
 * if several share it), and that timestamp; null for an empty log. Only the segment holding it
 * is scanned (each segment knows its largest batch timestamp).
 */
export function maxTimestampRecord(segments: readonly LogSegment[], fromOffset: number, config: LogConfig): TimestampAndOffset | null {
  let latest: LogSegment | undefined;
  for (const segment of segments) if (segment.maxTimestamp >= 0 && (latest === undefined || segment.maxTimestamp > latest.maxTimestamp)) latest = segment;
  if (latest === undefined) return null;
  return firstRecordAt(latest, latest.maxTimestamp, fromOffset, config);
}

function firstRecordAt(segment: LogSegment, timestamp: number, fromOffset: number, config: LogConfig): TimestampAndOffset | null {
  let position = positionOf(segment, segment.timeIndex.lookup(timestamp), config.indexIntervalBytes);
  while (position < segment.sizeBytes) {
    const batches: RecordBatch[] = [];
    position += readWholeBatches(segment, position, config.maxBatchBytes, true, batches);
    for (const batch of batches) {
      const found = firstRecordAtOrAfter(batch, timestamp, fromOffset);
      if (found !== null) return found;
    }
  }
  return null;
}

/** Index of the last segment whose base offset is at or below `offset`. */
export function segmentIndexFor(segments: readonly LogSegment[], offset: number): number {
  let low = 0;
  let high = segments.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >>> 1;
    if (segments[middle]!.baseOffset <= offset) low = middle;
    else high = middle - 1;
  }
  return low;
}

/**
 * File position of the batch holding `offset` in `segment`: index lookup, then skip headers, read
 * into the one skip window (no buffer per fetch: the window's bytes are looked at here and dropped).
 */
export function positionOf(segment: LogSegment, offset: number, indexIntervalBytes: number): number {
  let position = segment.offsetIndex.lookup(offset);
  const windowBytes = Math.max(SKIP_WINDOW_BYTES_MIN, indexIntervalBytes + SKIP_HEADER_BYTES);
  while (position < segment.sizeBytes) {
    const window = segment.read(position, windowBytes, skipWindowMemory);
    let at = 0;
    while (at + SKIP_HEADER_BYTES <= window.length) {
      if (readInt64At(window, at) + readInt32At(window, at + LAST_OFFSET_DELTA_POSITION) >= offset) return position + at;
      at += LOG_OVERHEAD_BYTES + readInt32At(window, at + LOG_OVERHEAD_BYTES - 4);
    }
    if (at === 0) break; // the window ends inside the batch's header: impossible for whole batches
    position += at;
  }
  return position;
}

/**
 * Appends to `out` the whole batches found from `position`, up to `budgetBytes` (at least one
 * when `mustReturnOne`), all views of one read buffer. Returns the bytes taken.
 */
function readWholeBatches(segment: LogSegment, position: number, budgetBytes: number, mustReturnOne: boolean, out: RecordBatch[], allocate?: ReadAllocator): number {
  if (position >= segment.sizeBytes || (budgetBytes <= 0 && !mustReturnOne)) return 0;
  let chunk = segment.read(position, Math.max(budgetBytes, LOG_OVERHEAD_BYTES), allocate);
  const firstSize = batchSizeAt(chunk, 0);
  if (firstSize > chunk.length) {
    if (!mustReturnOne) return 0;
    chunk = segment.read(position, firstSize, allocate);
  }
  let at = 0;
  while (at + LOG_OVERHEAD_BYTES <= chunk.length) {
    const size = batchSizeAt(chunk, at);
    if (at + size > chunk.length) break;
    out.push(new RecordBatch(chunk.subarray(at, at + size)));
    at += size;
  }
  assert(at > 0 || !mustReturnOne, `no whole batch at position ${position} of segment ${segment.baseOffset}`);
  return at;
}

/** The size of the batch at `at` of `chunk`, its log overhead included, read off its header. */
export function batchSizeAt(chunk: Uint8Array, at: number): number {
  return LOG_OVERHEAD_BYTES + readInt32At(chunk, at + LOG_OVERHEAD_BYTES - 4);
}

/** Big-endian reads by byte arithmetic: cheaper than a DataView per batch on the read path. */
function readInt32At(bytes: Uint8Array, at: number): number {
  return (bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!;
}

function readInt64At(bytes: Uint8Array, at: number): number {
  return readInt32At(bytes, at) * 0x1_0000_0000 + (readInt32At(bytes, at + 4) >>> 0);
}
