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
 * Barriers skipped until `arm()`, then `inner`'s: for files that are a cache of what is durable
 * elsewhere while they are being filled, and are read and written like any other afterwards (an
 * adopted partition's log, docs/cluster-protocol.md [C5]: its rebuild writes without fsyncs; once
 * it serves, its fsyncs run again, and are where a failing disk shows, [C1]).
 */
export class BarriersOnceArmed implements FileSync {
  readonly #inner: FileSync;
  #armed = false;

  constructor(inner: FileSync) {
    this.#inner = inner;
  }

  /** From now on every barrier is `inner`'s. */
  arm(): void {
    this.#armed = true;
  }

  syncSync(fd: number): void {
    if (this.#armed) this.#inner.syncSync(fd);
  }

  async sync(fd: number): Promise<void> {
    if (this.#armed) await this.#inner.sync(fd);
  }

  dataSyncSync(fd: number): void {
    if (this.#armed) this.#inner.dataSyncSync(fd);
  }

  async dataSync(fd: number): Promise<void> {
    if (this.#armed) await this.#inner.dataSync(fd);
  }

  syncDirectorySync(path: string): void {
    if (this.#armed) this.#inner.syncDirectorySync(path);
  }

  async syncDirectory(path: string): Promise<void> {
    if (this.#armed) await this.#inner.syncDirectory(path);
  }
}
