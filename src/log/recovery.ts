import { parseBatchAt } from '../format/batch-parse.ts';
import { FerryError } from '../errors.ts';
import { LOG_OVERHEAD_BYTES } from '../format/record-batch.ts';
import type { LeaderEpochCache } from './leader-epoch-cache.ts';
import type { LogSegment } from './segment.ts';

/** Bytes read per step while scanning; a batch larger than this is read whole on its own. */
const SCAN_CHUNK_BYTES = 4 * 1024 * 1024;
/** Offset of batchLength inside a batch's log overhead. */
const BATCH_LENGTH_POSITION = 8;

export interface ScanOptions {
  readonly maxBatchBytes: number;
  readonly epochs: LeaderEpochCache;
  /** Learn epochs from the batches instead of checking them (the checkpoint file was missing). */
  readonly learnEpochs: boolean;
  /** Keep only batches below this offset (a follower truncating); Infinity keeps all. */
  readonly endOffset: number;
}

export interface ScanResult {
  /** Bytes cut from the end of the file: a torn or corrupt tail, or a truncation. */
  readonly truncatedBytes: number;
  /** Why the scan stopped before the file's end; null when every byte was a valid batch. */
  readonly stopReason: string | null;
}

/**
 * Rebuilds a segment's state and indexes from its file (Kafka's LogSegment.recover): every
 * batch is checked (bounds, magic, CRC32C, offset continuity, leader epoch) and the file is cut
 * at the first one that fails, so what remains is exactly the valid prefix.
 */
export function scanSegment(segment: LogSegment, options: ScanOptions): ScanResult {
  segment.resetForScan();
  const fileSizeBytes = segment.fileSizeBytes();
  let chunk: Uint8Array = new Uint8Array(0);
  let chunkStart = 0;
  let position = 0;
  let stopReason: string | null = null;
  while (position < fileSizeBytes && stopReason === null) {
    const local = position - chunkStart;
    let batch: ReturnType<typeof parseBatchAt>;
    try {
      batch = parseBatchAt(chunk, local, options.maxBatchBytes);
    } catch (error) {
      if (!(error instanceof FerryError)) throw error;
      stopReason = error.message;
      break;
    }
    if (batch === null) {
      const neededBytes = bytesNeeded(chunk, local);
      if (position + neededBytes > fileSizeBytes) {
        stopReason = `torn tail: ${fileSizeBytes - position} bytes at ${position} are not a whole batch`;
        break;
      }
      chunkStart = position;
      chunk = segment.readRaw(position, Math.min(fileSizeBytes - position, Math.max(SCAN_CHUNK_BYTES, neededBytes)));
      continue;
    }
    stopReason = checkBatch(segment, batch.baseOffset, batch.partitionLeaderEpoch, options);
    if (stopReason !== null) break;
    segment.noteBatch(batch.baseOffset, batch.lastOffset, batch.maxTimestamp, position, batch.sizeInBytes);
    position += batch.sizeInBytes;
  }
  const truncatedBytes = fileSizeBytes - segment.sizeBytes;
  if (truncatedBytes > 0) segment.cutFileToState();
  return { truncatedBytes, stopReason };
}

/** Why a structurally valid batch cannot follow the segment's current end; null if it can. */
function checkBatch(segment: LogSegment, baseOffset: number, epoch: number, options: ScanOptions): string | null {
  if (baseOffset >= options.endOffset) return `truncated at offset ${options.endOffset}`;
  if (baseOffset !== segment.nextOffset) return `batch at offset ${baseOffset} where ${segment.nextOffset} was expected`;
  if (options.learnEpochs) {
    if (epoch < options.epochs.latestEpoch) return `leader epoch ${epoch} at offset ${baseOffset} goes backwards`;
    options.epochs.assign(epoch, baseOffset);
    return null;
  }
  const expected = options.epochs.epochFor(baseOffset);
  return epoch === expected ? null : `leader epoch ${epoch} at offset ${baseOffset} but the epoch cache says ${expected}`;
}

/** Bytes needed at `local` for a whole batch: its header first, then its declared length. */
function bytesNeeded(chunk: Uint8Array, local: number): number {
  if (chunk.length - local < LOG_OVERHEAD_BYTES) return LOG_OVERHEAD_BYTES;
  const view = new DataView(chunk.buffer, chunk.byteOffset + local, LOG_OVERHEAD_BYTES);
  return LOG_OVERHEAD_BYTES + Math.max(0, view.getInt32(BATCH_LENGTH_POSITION));
}
