import { CorruptObjectError } from '../errors.ts';
import { BATCH_BYTES_MAX } from '../format/batch-builder.ts';
import {
  BATCH_LENGTH_MIN_BYTES,
  BATCH_LENGTH_OFFSET,
  BASE_OFFSET_OFFSET,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD_BYTES,
  MAGIC_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  PARTITION_LEADER_EPOCH_OFFSET,
  RECORD_BATCH_HEADER_BYTES,
  RECORD_BATCH_MAGIC,
  RecordBatch,
  readInt64,
} from '../format/record-batch.ts';
import { assert } from '../util/assert.ts';
import type { EpochEntry } from '../log/leader-epoch-cache.ts';
import type { ChunkCache, TieredSegmentRef } from './chunk-cache.ts';

/** A batch's header fields, read from its first RECORD_BATCH_HEADER_BYTES and checked against where it lies. */
export interface BatchFrame {
  /** Where the batch starts in the log section. */
  readonly position: number;
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly sizeBytes: number;
  readonly maxTimestamp: number;
}

/**
 * Walks a tiered segment's log section batch by batch from an offset index entry, trusting
 * nothing it reads (docs/tier-format.md, "Reading"): every batch must continue the previous one's
 * offsets, lie inside the segment's [base, end), have a sane length and magic, and the last must
 * end at `end`; a batch handed out whole also has a valid CRC32C. A failure is a
 * CorruptObjectError naming the object and the byte, and nothing of the batch is served.
 */
export class SegmentBatchWalk {
  readonly #chunks: ChunkCache;
  readonly #segment: TieredSegmentRef;
  readonly #logBytes: number;
  #position: number;
  #nextOffset: number;

  constructor(chunks: ChunkCache, segment: TieredSegmentRef, from: { position: number; offset: number }) {
    this.#chunks = chunks;
    this.#segment = segment;
    this.#logBytes = segment.summary.sections.log.length;
    if (!(from.position >= 0 && from.position < this.#logBytes)) throw this.#corrupt('offset index', from.position, `position ${from.position} is outside the log section of ${this.#logBytes} bytes`);
    this.#position = from.position;
    this.#nextOffset = from.offset;
  }

  /** The offset the next batch must start at. */
  get nextOffset(): number {
    return this.#nextOffset;
  }

  /** The walk has passed the segment's last batch. */
  get atEnd(): boolean {
    return this.#position === this.#logBytes;
  }

  /** The header of the batch at the walk's position, checked; the walk stays there. */
  async frame(): Promise<BatchFrame> {
    assert(!this.atEnd, `a frame past the end of ${this.#segment.key}`);
    const position = this.#position;
    if (position + RECORD_BATCH_HEADER_BYTES > this.#logBytes) throw this.#corrupt('batch header', position, `runs past the log section's end (${this.#logBytes} bytes)`);
    const header = await this.#chunks.logBytes(this.#segment, position, position + RECORD_BATCH_HEADER_BYTES, false);
    const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
    const batchLength = view.getInt32(BATCH_LENGTH_OFFSET);
    const sizeBytes = LOG_OVERHEAD_BYTES + batchLength;
    if (batchLength < BATCH_LENGTH_MIN_BYTES || sizeBytes > BATCH_BYTES_MAX || position + sizeBytes > this.#logBytes) {
      throw this.#corrupt(
        'batchLength',
        position,
        `${batchLength} does not fit between ${BATCH_LENGTH_MIN_BYTES} and the ${this.#logBytes - position - LOG_OVERHEAD_BYTES} bytes left in the log section`,
      );
    }
    if (view.getInt8(MAGIC_OFFSET) !== RECORD_BATCH_MAGIC) throw this.#corrupt('magic', position, `${view.getInt8(MAGIC_OFFSET)}, expected ${RECORD_BATCH_MAGIC}`);
    const baseOffset = readInt64(view, BASE_OFFSET_OFFSET);
    const lastOffset = baseOffset + view.getInt32(LAST_OFFSET_DELTA_OFFSET);
    const { baseOffset: segmentBase, endOffset: segmentEnd } = this.#segment.summary;
    if (baseOffset !== this.#nextOffset) throw this.#corrupt('baseOffset', position, `${baseOffset}, expected ${this.#nextOffset} (the previous batch's next offset)`);
    if (!(baseOffset >= segmentBase && lastOffset >= baseOffset && lastOffset < segmentEnd))
      throw this.#corrupt('lastOffsetDelta', position, `batch [${baseOffset}, ${lastOffset}] is outside the segment [${segmentBase}, ${segmentEnd})`);
    // partitionLeaderEpoch lies outside the batch CRC: checked against the segment's epochs (KIP-320 clients fence and truncate by it).
    const epoch = view.getInt32(PARTITION_LEADER_EPOCH_OFFSET);
    const expected = epochAt(this.#segment.epochs, baseOffset);
    if (expected !== null && epoch !== expected) throw this.#corrupt('partitionLeaderEpoch', position, `${epoch}, but epoch ${expected} wrote offset ${baseOffset}`);
    return { position, baseOffset, lastOffset, sizeBytes, maxTimestamp: readInt64(view, MAX_TIMESTAMP_OFFSET) };
  }

  /** The whole batch `frame` describes, its CRC32C checked: a view of a cached chunk, or a copy when it spans chunks. */
  async batch(frame: BatchFrame): Promise<RecordBatch> {
    assert(frame.position === this.#position, `batch at ${frame.position}, the walk is at ${this.#position}`);
    const bytes = await this.#chunks.logBytes(this.#segment, frame.position, frame.position + frame.sizeBytes);
    const batch = new RecordBatch(bytes, frame.position);
    if (!batch.isCrcValid()) throw this.#corrupt('crc', frame.position, `0x${batch.crc.toString(16)}, computed 0x${batch.computeCrc().toString(16)}`);
    return batch;
  }

  /** Moves past `frame`'s batch; past the last one, the offsets must have reached the segment's end. */
  advance(frame: BatchFrame): void {
    assert(frame.position === this.#position, `advance from ${frame.position}, the walk is at ${this.#position}`);
    this.#position += frame.sizeBytes;
    this.#nextOffset = frame.lastOffset + 1;
    if (this.atEnd && this.#nextOffset !== this.#segment.summary.endOffset) {
      throw this.#corrupt('log', this.#position, `batches end at offset ${this.#nextOffset}, the segment at ${this.#segment.summary.endOffset}`);
    }
  }

  #corrupt(field: string, logPosition: number, detail: string): CorruptObjectError {
    return new CorruptObjectError(field, this.#segment.summary.sections.log.position + logPosition, detail, `tiered segment ${this.#segment.key}`);
  }
}

/** The epoch in effect at `offset` by the segment's epoch entries; null when they do not cover it (nothing to check against). */
function epochAt(epochs: readonly EpochEntry[], offset: number): number | null {
  let epoch: number | null = null;
  for (const entry of epochs) {
    if (entry.startOffset > offset) break;
    epoch = entry.epoch;
  }
  return epoch;
}
