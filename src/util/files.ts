import { closeSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { type FileSync, systemFileSync } from './file-sync.ts';

/** Makes a rename or a new file in `directory` durable: fsync the directory itself. */
export function fsyncDirectorySync(directory: string, files: FileSync = systemFileSync): void {
  files.syncDirectorySync(directory);
}

/**
 * mkdir -p that survives a power loss: fsyncs the parent of every directory it created, so the
 * new names are durable before anything inside them is relied on.
 */
export function makeDirectoriesSync(directory: string, files: FileSync = systemFileSync): void {
  const first = mkdirSync(directory, { recursive: true });
  if (first === undefined) return;
  for (let created = directory; created.length >= first.length; created = dirname(created)) files.syncDirectorySync(dirname(created));
}

/**
 * Replaces `path` with `bytes` atomically and durably: a reader sees the old file or the new
 * one, never a mix, and after return a crash keeps the new one.
 */
export function writeFileAtomicSync(path: string, bytes: Uint8Array, files: FileSync = systemFileSync): void {
  const temporary = `${path}.tmp`;
  const fd = openSync(temporary, 'w');
  try {
    writeAllSync(fd, bytes, 0);
    files.syncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temporary, { force: true }); // on a full disk, the room it took is what the disk needs back
    throw error;
  }
  closeSync(fd);
  renameSync(temporary, path);
  files.syncDirectorySync(dirname(path));
}

/** writeSync may write less than asked; loop until every byte is down. */
export function writeAllSync(fd: number, bytes: Uint8Array, position: number): void {
  let written = 0;
  while (written < bytes.length) {
    written += writeSync(fd, bytes, written, bytes.length - written, position + written);
  }
}
