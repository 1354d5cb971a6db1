import { closeSync, existsSync, fstatSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, statfsSync, unlinkSync, writeSync, writevSync } from 'node:fs';
import { DirLock } from './dir-lock.ts';
import { type FileSync, systemFileSync } from './file-sync.ts';

/**
 * How a file is opened, as node:fs spells it: 'r' read, 'r+' read and write, 'w' truncate or
 * create for writing, 'wx' / 'wx+' create and fail with EEXIST if the name exists.
 */
export type OpenFlags = 'r' | 'r+' | 'w' | 'wx' | 'wx+';

/**
 * The local disk of Ferry's logs and engine files (docs/design.md contract 8: I/O reaches code through
 * an injected interface): every synchronous file operation the log, the engine, the follower and
 * the broker's files make, plus the durability barriers (FileSync) and the directory lock. The
 * system's is node:fs; the simulation's (src/sim/disk.ts) keeps files in memory and loses, at a
 * crash, what was never synced. Failures are node's: errors with an errno `code` ('ENOENT',
 * 'EEXIST', 'ENOSPC', ...) and the `syscall` that failed (isOsError, PartitionLog's failed writes).
 * Writes are positional: a descriptor has no file position.
 */
export interface Disk extends FileSync {
  openSync(path: string, flags: OpenFlags): number;
  closeSync(fd: number): void;
  /** Writes up to `length` bytes of `bytes` from `offset` at `position`; returns how many went down. */
  writeSync(fd: number, bytes: Uint8Array, offset: number, length: number, position: number): number;
  /** Writes the buffers one after another at `position`; returns how many bytes went down. */
  writevSync(fd: number, buffers: readonly Uint8Array[], position: number): number;
  /** Reads up to `length` bytes at `position` into `into` from `offset`; returns how many (0 at the end). */
  readSync(fd: number, into: Uint8Array, offset: number, length: number, position: number): number;
  fstatSync(fd: number): { readonly size: number };
  ftruncateSync(fd: number, length: number): void;
  existsSync(path: string): boolean;
  readFileSync(path: string): Uint8Array;
  /** The names in a directory (not `.` and `..`), in no promised order. */
  readdirSync(path: string): string[];
  unlinkSync(path: string): void;
  renameSync(from: string, to: string): void;
  /** mkdir -p: returns the first directory it created, undefined if all existed (as node's). */
  mkdirSync(path: string, options: { readonly recursive: true }): string | undefined;
  /** rm -rf: removes a file or a whole tree; a missing path is no error. */
  rmSync(path: string, options: { readonly recursive: true; readonly force: true }): void;
  /**
   * Takes the exclusive lock of `directory` (one Ferry log or engine per directory). Throws
   * FerryError('Locked') when it is held; returns the release. A crash of the holder releases it.
   */
  lockSync(directory: string): () => void;
  /**
   * The size of the file system holding `path` and the bytes free for this process (statfs(2):
   * blocks and available blocks times the block size). Optional: a disk that cannot say omits it.
   */
  statfsSync?(path: string): FileSystemSpace;
}

/** What statfs says of a file system, in bytes. */
export interface FileSystemSpace {
  readonly totalBytes: number;
  /** Free for an unprivileged process (statfs' f_bavail, Kafka's usable bytes). */
  readonly usableBytes: number;
}

/** The operating system's disk: node:fs, the system's barriers, flock(2) on `<dir>/.lock`. */
export const systemDisk: Disk = {
  ...systemFileSync,
  openSync: (path, flags) => openSync(path, flags),
  closeSync: (fd) => closeSync(fd),
  writeSync: (fd, bytes, offset, length, position) => writeSync(fd, bytes, offset, length, position),
  writevSync: (fd, buffers, position) => writevSync(fd, buffers as Uint8Array[], position),
  readSync: (fd, into, offset, length, position) => readSync(fd, into, offset, length, position),
  fstatSync: (fd) => fstatSync(fd),
  ftruncateSync: (fd, length) => ftruncateSync(fd, length),
  existsSync: (path) => existsSync(path),
  readFileSync: (path) => readFileSync(path),
  readdirSync: (path) => readdirSync(path),
  unlinkSync: (path) => unlinkSync(path),
  renameSync: (from, to) => renameSync(from, to),
  mkdirSync: (path, options) => mkdirSync(path, options),
  rmSync: (path, options) => rmSync(path, options),
  lockSync(directory) {
    const lock = DirLock.acquire(directory);
    return () => lock.release();
  },
  statfsSync(path) {
    const space = statfsSync(path);
    return { totalBytes: Number(space.blocks) * Number(space.bsize), usableBytes: Number(space.bavail) * Number(space.bsize) };
  },
};

/**
 * `disk` with its durability barriers replaced by `sync`'s: a test that records fsyncs to
 * rebuild a power cut (test/support/power-loss.ts), makes them fail or skips them runs on the
 * same files. Every call is delegated (a class's methods do not spread).
 */
export function diskWithSync(disk: Disk, sync: FileSync): Disk {
  return {
    openSync: (path, flags) => disk.openSync(path, flags),
    closeSync: (fd) => disk.closeSync(fd),
    writeSync: (fd, bytes, offset, length, position) => disk.writeSync(fd, bytes, offset, length, position),
    writevSync: (fd, buffers, position) => disk.writevSync(fd, buffers, position),
    readSync: (fd, into, offset, length, position) => disk.readSync(fd, into, offset, length, position),
    fstatSync: (fd) => disk.fstatSync(fd),
    ftruncateSync: (fd, length) => disk.ftruncateSync(fd, length),
    existsSync: (path) => disk.existsSync(path),
    readFileSync: (path) => disk.readFileSync(path),
    readdirSync: (path) => disk.readdirSync(path),
    unlinkSync: (path) => disk.unlinkSync(path),
    renameSync: (from, to) => disk.renameSync(from, to),
    mkdirSync: (path, options) => disk.mkdirSync(path, options),
    rmSync: (path, options) => disk.rmSync(path, options),
    lockSync: (directory) => disk.lockSync(directory),
    ...(disk.statfsSync === undefined ? {} : { statfsSync: (path: string) => disk.statfsSync!(path) }),
    syncSync: (fd) => sync.syncSync(fd),
    sync: (fd) => sync.sync(fd),
    dataSyncSync: (fd) => sync.dataSyncSync(fd),
    dataSync: (fd) => sync.dataSync(fd),
    syncDirectorySync: (path) => sync.syncDirectorySync(path),
    syncDirectory: (path) => sync.syncDirectory(path),
  };
}

/** A text file's contents (UTF-8). */
export function readTextFileSync(disk: Disk, path: string): string {
  return new TextDecoder().decode(disk.readFileSync(path));
}
