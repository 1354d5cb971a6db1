import { join } from 'node:path';
import { FerryError } from '../errors.ts';
import { type Disk, readTextFileSync } from '../util/disk.ts';
import { writeFileAtomicSync } from '../util/files.ts';

/**
 * Kafka's log-start-offset checkpoint, one per partition directory: the log start DeleteRecords
 * moved the log to. Offsets below it are gone for clients even while a segment that holds them
 * is still on local disk (or in the tier): only whole segments are deleted.
 */
export const LOG_START_CHECKPOINT_FILE = 'log-start-offset';

interface LogStartCheckpoint {
  readonly logStartOffset: number;
}

/** The checkpointed log start; 0 when none was written (nothing deleted by DeleteRecords). */
export function readLogStartCheckpoint(directory: string, disk: Disk): number {
  const path = join(directory, LOG_START_CHECKPOINT_FILE);
  if (!disk.existsSync(path)) return 0;
  const { logStartOffset } = JSON.parse(readTextFileSync(disk, path)) as LogStartCheckpoint;
  if (!Number.isSafeInteger(logStartOffset) || logStartOffset < 0) throw new FerryError('Storage', `${path}: malformed log start ${JSON.stringify(logStartOffset)}`);
  return logStartOffset;
}

/** Durably (written, synced, renamed): a restart never serves what a DeleteRecords acknowledged as deleted. */
export function writeLogStartCheckpoint(directory: string, logStartOffset: number, disk: Disk): void {
  const checkpoint: LogStartCheckpoint = { logStartOffset };
  writeFileAtomicSync(join(directory, LOG_START_CHECKPOINT_FILE), new TextEncoder().encode(JSON.stringify(checkpoint)), disk);
}
