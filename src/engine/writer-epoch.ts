import { join } from 'node:path';
import { FerryError } from '../errors.ts';
import { type Disk, readTextFileSync, systemDisk } from '../util/disk.ts';
import { writeFileAtomicSync } from '../util/files.ts';

export const WRITER_EPOCH_FILE = 'wal-writer-epoch';
/** Epochs are u32 in WAL headers and 10 digits in keys. */
const WRITER_EPOCH_MAX = 0xffff_ffff;

/**
 * The WAL stream epoch for this opening of the engine: one more than the last, stored durably
 * before any object is written, so a restarted engine never writes into its old stream's keys;
 * and at least `floor` (one more than the last epoch the object store holds of this writer id),
 * so an engine on an empty directory (a stateless broker replaced) never reuses a stream either.
 */
export function nextWriterEpoch(directory: string, floor = 0, disk: Disk = systemDisk): number {
  const path = join(directory, WRITER_EPOCH_FILE);
  const previous = disk.existsSync(path) ? Number(readTextFileSync(disk, path).trim()) : -1;
  if (!Number.isSafeInteger(previous) || previous < -1 || previous >= WRITER_EPOCH_MAX) {
    throw new FerryError('Storage', `${path} holds ${JSON.stringify(readTextFileSync(disk, path))}, not a writer epoch`);
  }
  const epoch = Math.max(previous + 1, floor);
  if (epoch > WRITER_EPOCH_MAX) throw new FerryError('Storage', `writer epoch ${epoch} is past the largest a WAL key holds`);
  writeFileAtomicSync(path, new TextEncoder().encode(`${epoch}\n`), disk);
  return epoch;
}
