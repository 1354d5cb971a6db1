import { dirname } from 'node:path';
import { type Disk, systemDisk } from './disk.ts';

/** Makes a rename or a new file in `directory` durable: fsync the directory itself. */
export function fsyncDirectorySync(directory: string, disk: Disk = systemDisk): void {
  disk.syncDirectorySync(directory);
}

/**
 * mkdir -p that survives a power loss: fsyncs the parent of every directory it created, so the
 * new names are durable before anything inside them is relied on.
 */
export function makeDirectoriesSync(directory: string, disk: Disk = systemDisk): void {
  const first = disk.mkdirSync(directory, { recursive: true });
  if (first === undefined) return;
  for (let created = directory; created.length >= first.length; created = dirname(created)) disk.syncDirectorySync(dirname(created));
}

/**
 * Replaces `path` with `bytes` atomically and durably: a reader sees the old file or the new
 * one, never a mix, and after return a crash keeps the new one.
 */
export function writeFileAtomicSync(path: string, bytes: Uint8Array, disk: Disk = systemDisk): void {
  const temporary = `${path}.tmp`;
  const fd = disk.openSync(temporary, 'w');
  try {
    writeAllSync(fd, bytes, 0, disk);
    disk.syncSync(fd);
  } catch (error) {
    disk.closeSync(fd);
    disk.rmSync(temporary, { recursive: true, force: true }); // on a full disk, the room it took is what the disk needs back
    throw error;
  }
  disk.closeSync(fd);
  disk.renameSync(temporary, path);
  disk.syncDirectorySync(dirname(path));
}

/** writeSync may write less than asked; loop until every byte is down. */
export function writeAllSync(fd: number, bytes: Uint8Array, position: number, disk: Disk = systemDisk): void {
  let written = 0;
  while (written < bytes.length) {
    written += disk.writeSync(fd, bytes, written, bytes.length - written, position + written);
  }
}
