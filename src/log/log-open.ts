/**
 * Opening a partition's log and recovering it (PartitionLog's start): its segments listed and
 * opened, those a crash may have torn scanned back to their valid prefix (recovery.ts), the
 * clean-shutdown file sparing that scan; and the producer state rebuilt by replaying the batches
 * after its newest snapshot, at open and after a truncation.
 */
import { FerryError } from '../errors.ts';
import type { BatchHeader } from '../format/record-batch.ts';
import type { Disk } from '../util/disk.ts';
import { readCleanShutdown, restoreActive } from './clean-shutdown.ts';
import type { LogConfig } from './config.ts';
import type { LeaderEpochCache } from './leader-epoch-cache.ts';
import { STORED_BATCH_BYTES_MAX } from './log-append.ts';
import { readBatchHeaders } from './log-read.ts';
import type { ProducerStateManager } from './producer-state.ts';
import { scanSegment } from './recovery.ts';
import { LogSegment, parseSegmentFileName } from './segment.ts';

export interface RecoveryReport {
  readonly cleanShutdown: boolean;
  readonly segmentsScanned: number;
  readonly truncatedBytes: number;
  readonly stopReason: string | null;
}

/** Lists, opens and (after a crash) recovers the segments of `directory`. */
export function openSegments(directory: string, config: LogConfig, epochs: LeaderEpochCache, learnEpochs: boolean, disk: Disk): { segments: LogSegment[]; report: RecoveryReport } {
  const baseOffsets = disk
    .readdirSync(directory)
    .map(parseSegmentFileName)
    .filter((offset) => offset !== null)
    .sort((a, b) => a - b);
  if (baseOffsets.length === 0) {
    return { segments: [LogSegment.create(directory, 0, config.indexIntervalBytes, disk)], report: { cleanShutdown: true, segmentsScanned: 0, truncatedBytes: 0, stopReason: null } };
  }
  const segments = baseOffsets.map((baseOffset) => LogSegment.open(directory, baseOffset, config.indexIntervalBytes, disk));
  const clean = readCleanShutdown(directory, disk);
  const scanOptions = { maxBatchBytes: STORED_BATCH_BYTES_MAX, epochs, learnEpochs, endOffset: Infinity };
  let scanned = 0;
  let truncatedBytes = 0;
  let stopReason: string | null = null;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const isActive = i === segments.length - 1;
    const restored = isActive ? clean !== null && restoreActive(segment, clean) : !learnEpochs && segment.restoreIndexes(segments[i + 1]!.baseOffset);
    if (restored) continue;
    const result = scanSegment(segment, scanOptions);
    scanned++;
    truncatedBytes += result.truncatedBytes;
    stopReason ??= result.stopReason;
    const next = segments[i + 1];
    if (next !== undefined && segment.nextOffset !== next.baseOffset) {
      throw new FerryError('Storage', `segment ${segment.baseOffset} ends at offset ${segment.nextOffset} but the next starts at ${next.baseOffset}: ${result.stopReason ?? 'gap'}`);
    }
  }
  epochs.truncateFromEnd(segments.at(-1)!.nextOffset);
  // What survived a crash may sit only in the page cache; sync so flushedOffset = logEndOffset holds.
  segments.at(-1)!.flushSync();
  return { segments, report: { cleanShutdown: clean !== null, segmentsScanned: scanned, truncatedBytes, stopReason } };
}

/**
 * Producer state from the newest snapshot at or below the log end, then the batches after it
 * replayed through the same `apply` as appends (after a crash or a truncation only the tail).
 */
export function rebuildProducerState(producers: ProducerStateManager, segments: readonly LogSegment[], indexIntervalBytes: number): void {
  const logEnd = segments.at(-1)!.nextOffset;
  const offset = Math.max(producers.loadSnapshot(logEnd), segments[0]!.baseOffset);
  producers.skipTo(offset);
  replayBatches(segments, offset, logEnd, indexIntervalBytes, (batch) => producers.apply(batch));
}

/**
 * Hands `apply` the header of each batch of `segments` whose base offset lies in [from, to),
 * oldest first: the producer state needs nothing else, so only the headers are read (issue 27:
 * the tierer's replay of each 32 MiB piece read all of it, a second read of every tiered byte).
 */
export function replayBatches(segments: readonly LogSegment[], from: number, to: number, indexIntervalBytes: number, apply: (batch: BatchHeader) => void): void {
  readBatchHeaders(segments, from, to, indexIntervalBytes, apply);
}

/** Kafka's `<offset>.snapshot` at a roll and a clean close, so recovery replays only what came after. */
export function snapshotProducers(producers: ProducerStateManager): void {
  try {
    producers.writeSnapshot();
  } catch {
    // Only a shortcut is lost: recovery replays from an older snapshot or from the log start.
  }
}
