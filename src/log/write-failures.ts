/**
 * What a partition's log does when its disk fails it: a failed write becomes the Storage error its
 * caller gets (told to the storage observer), and after a failed fdatasync the unsynced bytes are
 * read back, then written and synced again before the log takes writes again (or, read back
 * damaged, the log stays failed until a restart).
 */
import { FerryError, isFerryError } from '../errors.ts';
import { parseBatchAt } from '../format/batch-parse.ts';
import { LOG_OVERHEAD_BYTES, type RecordBatch } from '../format/record-batch.ts';
import type { GroupCommit } from './group-commit.ts';
import { batchSizeAt, positionOf } from './log-read.ts';
import type { LogSegment } from './segment.ts';
import type { StorageObserver } from './storage-health.ts';

/** A failed write as the Storage error the caller gets, told to the observer; bugs and bad input pass through. */
export function failedWriteError(error: unknown, directory: string, storage: StorageObserver | null, bytes = 0): unknown {
  const system = error as { code?: unknown; syscall?: unknown } | null;
  const fromDisk = isFerryError(error, 'Storage') || (typeof system?.code === 'string' && typeof system.syscall === 'string');
  if (!fromDisk) return error;
  storage?.writeFailed(directory, error, bytes);
  if (isFerryError(error)) return error;
  return new FerryError('Storage', `log ${directory}: write failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
}

/**
 * After a failed fdatasync: the kernel may have marked the unsynced pages clean, so a second
 * fdatasync alone could report success for bytes that never reached the disk. The active
 * segment's bytes since the last good sync are written again and synced; then the log takes
 * writes again. A roll syncs the segment it seals, so only the active segment can hold them.
 * Returns null, or the Storage error of unsynced bytes read back damaged (nothing is rewritten).
 */
export function recoverFromFailedSync(active: LogSegment, commit: GroupCommit, indexIntervalBytes: number, directory: string): FerryError | null {
  const flushed = commit.flushedOffset;
  const from = flushed <= active.baseOffset ? 0 : positionOf(active, flushed, indexIntervalBytes);
  const damage = readBackDamage(active, from, Math.max(flushed, active.baseOffset), directory);
  if (damage !== null) return damage;
  active.rewriteFrom(from);
  commit.recovered(active.nextOffset);
  return null;
}

/**
 * The unsynced bytes read back must be the batches written: a failed writeback may leave their
 * pages clean, and once evicted they read as what the disk held before ("fsyncgate"). Synced
 * again as read, they would be acknowledged garbage. Then nothing here can make them durable:
 * the log stays failed (Storage) until a restart, whose recovery cuts the log where the bytes go
 * bad (they were never acknowledged through this log; a WAL engine rebuilds them from its WAL).
 */
function readBackDamage(segment: LogSegment, from: number, fromOffset: number, directory: string): FerryError | null {
  let position = from;
  let expected = fromOffset;
  while (position < segment.sizeBytes) {
    const header = segment.read(position, LOG_OVERHEAD_BYTES);
    const size = header.length === LOG_OVERHEAD_BYTES ? batchSizeAt(header, 0) : 0;
    const bytes = size > LOG_OVERHEAD_BYTES && position + size <= segment.sizeBytes ? segment.read(position, size) : header;
    let batch: RecordBatch | null = null;
    try {
      batch = parseBatchAt(bytes, 0, Number.MAX_SAFE_INTEGER);
    } catch {
      batch = null;
    }
    if (batch === null || batch.baseOffset !== expected) {
      return new FerryError('Storage', `log ${directory}: after a failed fdatasync the unsynced batch at offset ${expected} reads back damaged (its pages were dropped); restart to recover`);
    }
    expected = batch.nextOffset;
    position += size;
  }
  return null;
}
