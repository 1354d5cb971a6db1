import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/** Makes a rename or a new file in `directory` durable: fsync the directory itself. */
export function fsyncDirectorySync(directory: string): void {
  const fd = openSync(directory, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Replaces `path` with `bytes` atomically and durably: a reader sees the old file or the new
 * one, never a mix, and after return a crash keeps the new one.
 */
export function writeFileAtomicSync(path: string, bytes: Uint8Array): void {
  const temporary = `${path}.tmp`;
  const fd = openSync(temporary, 'w');
  try {
    writeAllSync(fd, bytes, 0);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
  fsyncDirectorySync(dirname(path));
}

/** writeSync may write less than asked; loop until every byte is down. */
export function writeAllSync(fd: number, bytes: Uint8Array, position: number): void {
  let written = 0;
  while (written < bytes.length) {
    written += writeSync(fd, bytes, written, bytes.length - written, position + written);
  }
}
