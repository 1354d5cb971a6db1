import { closeSync, fdatasync, fdatasyncSync, fsync, fsyncSync, openSync } from 'node:fs';
import { open } from 'node:fs/promises';

/**
 * The durability barriers of Ferry's local files (docs/design.md contract 8: I/O reaches code through
 * an injected interface): the one place where bytes written to a file, and names created,
 * renamed or removed in a directory, are made to survive a power loss. The rest of the file
 * operations are the Disk's (disk.ts), which extends this. A test implementation records what
 * each barrier covered and can rebuild the disk as a power cut would leave it
 * (test/support/power-loss.ts; on real files through diskWithSync); the simulation's disk
 * (src/sim/disk.ts) keeps both in memory.
 */
export interface FileSync {
  /** fsync(2): the file's bytes and metadata written so far survive a power loss. */
  syncSync(fd: number): void;
  sync(fd: number): Promise<void>;
  /** fdatasync(2): the file's bytes (and its size) written so far survive a power loss. */
  dataSyncSync(fd: number): void;
  dataSync(fd: number): Promise<void>;
  /** fsync(2) of a directory: the names created, renamed or removed in it so far survive a power loss. */
  syncDirectorySync(path: string): void;
  syncDirectory(path: string): Promise<void>;
}

/** The operating system's barriers. */
export const systemFileSync: FileSync = {
  syncSync: (fd) => fsyncSync(fd),
  sync: (fd) => new Promise((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve()))),
  dataSyncSync: (fd) => fdatasyncSync(fd),
  dataSync: (fd) => new Promise((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve()))),
  syncDirectorySync(path) {
    const fd = openSync(path, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  },
  async syncDirectory(path) {
    const handle = await open(path, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
};

/**
 * No barriers at all: for files that are a cache of what is durable elsewhere and that nothing
 * reads again after a crash (an adopted partition's log, docs/cluster-protocol.md [C5]).
 */
export const noFileSync: FileSync = {
  syncSync: () => {},
  sync: async () => {},
  dataSyncSync: () => {},
  dataSync: async () => {},
  syncDirectorySync: () => {},
  syncDirectory: async () => {},
};
