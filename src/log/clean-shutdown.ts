/**
 * The clean-shutdown file of a partition's log: written at a clean close with the active
 * segment's state, read and removed at the next open, where it spares the recovery scan of that
 * segment. Its absence means the last run crashed.
 */
import { join } from 'node:path';
import { type Disk, readTextFileSync } from '../util/disk.ts';
import { writeFileAtomicSync } from '../util/files.ts';
import type { LogSegment } from './segment.ts';

/** Written at a clean close, removed at open: its absence means the last run crashed. */
export const CLEAN_SHUTDOWN_FILE = 'clean-shutdown';

export interface CleanShutdownState {
  readonly logEndOffset: number;
  readonly activeSizeBytes: number;
  readonly activeMaxTimestamp: number;
  readonly activeFirstBatchTimestamp: number;
  readonly activeLastBatchBaseOffset: number;
}

export function writeCleanShutdown(directory: string, active: LogSegment, logEndOffset: number, disk: Disk): void {
  const state: CleanShutdownState = {
    logEndOffset,
    activeSizeBytes: active.sizeBytes,
    activeMaxTimestamp: active.maxTimestamp,
    activeFirstBatchTimestamp: active.firstBatchTimestamp,
    activeLastBatchBaseOffset: active.state.lastBatchBaseOffset,
  };
  writeFileAtomicSync(join(directory, CLEAN_SHUTDOWN_FILE), new TextEncoder().encode(JSON.stringify(state)), disk);
}

/** Reads and removes the marker: from here on, a crash must trigger recovery. */
export function readCleanShutdown(directory: string, disk: Disk): CleanShutdownState | null {
  const path = join(directory, CLEAN_SHUTDOWN_FILE);
  if (!disk.existsSync(path)) return null;
  let state: CleanShutdownState | null = null;
  try {
    state = JSON.parse(readTextFileSync(disk, path)) as CleanShutdownState;
  } catch {
    state = null; // unreadable: recover as after a crash
  }
  disk.unlinkSync(path);
  // Durably gone: a marker back from the dead after a power loss would vouch for a changed file.
  disk.syncDirectorySync(directory);
  return state;
}

/** The active segment's state and indexes as the marker has them, if its file is still the size it says; false: scan it. */
export function restoreActive(segment: LogSegment, clean: CleanShutdownState): boolean {
  if (segment.fileSizeBytes() !== clean.activeSizeBytes || !segment.restoreIndexes(clean.logEndOffset)) return false;
  segment.restoreState({
    sizeBytes: clean.activeSizeBytes,
    nextOffset: clean.logEndOffset,
    maxTimestamp: clean.activeMaxTimestamp,
    firstBatchTimestamp: clean.activeFirstBatchTimestamp,
    lastBatchBaseOffset: clean.activeLastBatchBaseOffset,
  });
  return true;
}
