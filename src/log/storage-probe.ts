import type { Disk } from '../util/disk.ts';
import { isOsError } from '../util/os-error.ts';
import type { StorageObserver } from './storage-health.ts';

/** The probe file's name in the engine's directory: no partition directory is named with a leading dot. */
export const STORAGE_PROBE_FILE = '.storage-probe';
/** What a probe writes at least: one page, the least a write of a real segment needs room for. */
export const STORAGE_PROBE_BYTES = 4096;

/**
 * Whether the local disk takes writes again, asked while they fail (a full disk): a broker that
 * leads nothing while its writes fail has no write of its own to find out with. Writes and syncs
 * `bytes` (at least a page: as much as the largest write that failed, or a disk with a page of
 * room would end a spell its real writes are still in) in `directory`, then removes it, and
 * reports the outcome to `observer` as a log's write would. An error that is not the operating
 * system's is a bug and is thrown.
 */
export function probeStorage(disk: Disk, directory: string, observer: StorageObserver, bytes = STORAGE_PROBE_BYTES): boolean {
  const path = `${directory}/${STORAGE_PROBE_FILE}`;
  const size = Math.max(STORAGE_PROBE_BYTES, bytes);
  try {
    const fd = disk.openSync(path, 'w');
    try {
      disk.writeSync(fd, new Uint8Array(size), 0, size, 0);
      disk.dataSyncSync(fd);
    } finally {
      disk.closeSync(fd);
      disk.unlinkSync(path);
    }
  } catch (error) {
    if (!isOsError(error)) throw error;
    observer.writeFailed(directory, error);
    return false;
  }
  observer.writeSucceeded();
  return true;
}
