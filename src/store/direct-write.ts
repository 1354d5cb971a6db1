/**
 * Object files written around the page cache (O_DIRECT), for the file store's larger puts.
 *
 * Why: a WAL object is written once, fsynced, read rarely (a follower, a takeover) and deleted
 * after the tier has its bytes. Written through the page cache it costs the kernel a copy into
 * page cache memory it must first find, which on the virtual machines measured here was most of
 * the broker's CPU: the host backs guest memory lazily, so memory the guest has not touched lately
 * is slow to touch (bench/README.md, issue 27 part three: 18 GB touched in 85 s; a 1 MiB put,
 * create + write + fsync + rename, 300 at a time: 640-680 ms of system time buffered against
 * 50-80 ms direct). Written direct, the device reads our buffer and the page cache stays out.
 *
 * O_DIRECT wants the buffer's address, the write's length and its file offset aligned to the
 * device's logical block. The object (header and body) is copied into an aligned staging buffer
 * (a memcpy into warm, reused memory), padded with zeros to a whole block, written in one write,
 * and the file is cut back to the object's size before the fsync that makes it durable (the fsync
 * is still needed: O_DIRECT alone promises nothing about the device's cache or the file's size).
 *
 * A filesystem that refuses O_DIRECT (EINVAL: tmpfs before Linux 6.6, some network filesystems)
 * is remembered and written buffered.
 */
import { constants } from 'node:fs';
import { type FileHandle, open, rm } from 'node:fs/promises';
import { ptr } from 'bun:ffi';
import { assert } from '../util/assert.ts';
import type { FileSync } from '../util/file-sync.ts';
import { writeFully } from './file-object.ts';
import { errnoOf } from './fs-errors.ts';

/** The alignment O_DIRECT needs of address, length and offset: the page size, a multiple of every logical block size Linux supports. */
export const DIRECT_IO_ALIGNMENT = 4096;
/** Linux's O_DIRECT flag (x86_64 and arm64); node:fs exports it as constants.O_DIRECT where the platform has it. */
const O_DIRECT: number | undefined = (constants as { O_DIRECT?: number }).O_DIRECT;
/**
 * Objects from this size go direct. Smaller ones (control records, a quiet writer's WAL objects)
 * stay buffered: their copy costs little, and they are read back soon (a scan reads every
 * control record), which direct writes would send to the device.
 */
export const DIRECT_WRITE_BYTES_MIN = 64 * 1024;
/** ...and up to this: a staging buffer per write in flight, kept for reuse. Larger objects go buffered. */
export const DIRECT_WRITE_BYTES_MAX = 8 * 1024 * 1024;
/**
 * Staging buffers kept per size class once their write is done: warm memory for the next writes.
 * A writer's objects fall in one or two classes; while busy it holds one per upload in flight.
 */
export const STAGING_KEPT_PER_CLASS = 2;

export function roundUpToAlignment(bytes: number): number {
  return Math.ceil(bytes / DIRECT_IO_ALIGNMENT) * DIRECT_IO_ALIGNMENT;
}

/** Aligned staging buffers in power-of-two size classes, reused across writes. */
export class StagingPool {
  readonly #free = new Map<number, Uint8Array[]>();

  take(bytes: number): Uint8Array {
    const size = classOf(bytes);
    return this.#free.get(size)?.pop() ?? alignedBuffer(size);
  }

  giveBack(buffer: Uint8Array): void {
    const list = this.#free.get(buffer.length) ?? [];
    if (list.length < STAGING_KEPT_PER_CLASS) list.push(buffer);
    this.#free.set(buffer.length, list);
  }
}

function classOf(bytes: number): number {
  return Math.max(DIRECT_IO_ALIGNMENT, 2 ** Math.ceil(Math.log2(bytes)));
}

/** `size` bytes starting at an aligned address (a view into a slightly larger buffer). */
function alignedBuffer(size: number): Uint8Array {
  const raw = new Uint8Array(size + DIRECT_IO_ALIGNMENT);
  const offset = (DIRECT_IO_ALIGNMENT - (ptr(raw) % DIRECT_IO_ALIGNMENT)) % DIRECT_IO_ALIGNMENT;
  return raw.subarray(offset, offset + size);
}

/** How a direct write creates its file: open(2) with the flags given (a test may refuse them). */
export type OpenForDirectWrite = (path: string, flags: number, mode: number) => Promise<FileHandle>;

/** One store's direct writes: whether its filesystem takes them, and its staging buffers. */
export class DirectWrites {
  #supported = O_DIRECT !== undefined;
  readonly #staging = new StagingPool();
  readonly #open: OpenForDirectWrite;

  constructor(openFile: OpenForDirectWrite = open) {
    this.#open = openFile;
  }

  /** Whether an object of `bytes` (header included) is written direct. */
  wants(bytes: number): boolean {
    return this.#supported && bytes >= DIRECT_WRITE_BYTES_MIN && bytes <= DIRECT_WRITE_BYTES_MAX;
  }

  /**
   * Creates `path` (which must not exist) holding `chunks` back to back, written direct and cut to
   * their size, fsynced if `sync`. False if no direct descriptor could be had (#openDirect: nothing
   * was created, and the caller writes this one buffered).
   */
  async write(path: string, chunks: readonly Uint8Array[], sync: boolean, files: FileSync): Promise<boolean> {
    let size = 0;
    for (const chunk of chunks) size += chunk.length;
    const handle = await this.#create(path);
    if (handle === null) return false;
    const staging = this.#staging.take(roundUpToAlignment(size));
    try {
      const padded = stage(staging, chunks, size);
      let done = 0;
      while (done < padded.length) {
        const { bytesWritten } = await handle.write(padded, done, padded.length - done, done);
        assert(bytesWritten > 0 && bytesWritten % DIRECT_IO_ALIGNMENT === 0, `a direct write moves whole blocks (${bytesWritten} bytes)`);
        done += bytesWritten;
      }
      await handle.truncate(size);
      if (sync) await files.sync(handle.fd);
    } finally {
      this.#staging.giveBack(staging); // the writes have settled: no view of it is in use
      await handle.close();
    }
    return true;
  }

  /**
   * A direct descriptor of `path` (created already, empty) for a sequential write whose first
   * `leading` bytes the caller fills at the end; null if this store writes buffered.
   */
  async appender(path: string, leading: number): Promise<DirectAppender | null> {
    if (!this.#supported) return null;
    const handle = await this.#openDirect(path, 0);
    if (handle === null) return null;
    return new DirectAppender(handle, this.#staging, this.#staging.take(DIRECT_APPEND_STAGING_BYTES), leading);
  }

  async #create(path: string) {
    return this.#openDirect(path, constants.O_CREAT | constants.O_EXCL);
  }

  /**
   * The direct descriptor, or null to write buffered: for good when the filesystem refuses
   * O_DIRECT (EINVAL), for this write when the process is out of descriptors (EMFILE, ENFILE), so
   * that a sequential write, which needs a second descriptor here, uses no more than it did
   * buffered: a broker short of descriptors fails as it did before (KAFKA_STORAGE_ERROR per
   * request), never for this optimization.
   */
  async #openDirect(path: string, creation: number) {
    try {
      return await this.#open(path, constants.O_WRONLY | creation | O_DIRECT!, 0o644);
    } catch (error) {
      const code = errnoOf(error);
      if (code === 'EMFILE' || code === 'ENFILE') return null;
      if (code !== 'EINVAL') throw error;
      this.#supported = false;
      // Linux judges O_DIRECT after O_CREAT made the file: a create refused here may leave it, and
      // the caller's buffered create of the same (unique, temporary) path must find none.
      if ((creation & constants.O_CREAT) !== 0) await rm(path, { force: true });
      return null;
    }
  }
}

/** A sequential write's staging: appended bytes wait here until they fill whole blocks (1 MiB, a run's usual size). */
export const DIRECT_APPEND_STAGING_BYTES = 1024 * 1024;

/**
 * A file written front to back around the page cache (the file store's sequential writes: the
 * tier's segment pieces). Appended bytes are copied into an aligned staging buffer and go out by an
 * O_DIRECT descriptor of the file in whole blocks; the rest of the last block waits, and at the end
 * goes through the caller's buffered descriptor (`finishInto`), which also writes the header into
 * block 0 (the kernel reads that block back: direct and buffered writes never overlap in time). The
 * file's fsync, through the buffered descriptor, covers both.
 */
export class DirectAppender {
  readonly #handle: FileHandle;
  readonly #pool: StagingPool;
  readonly #staging: Uint8Array;
  /** Bytes of the file written so far by the direct descriptor: whole blocks. */
  #flushed = 0;
  /** Bytes waiting in the staging buffer, the file's from #flushed on. */
  #staged = 0;
  /** The append under way: close waits for it, so the staging never goes back while a write still uses it. */
  #appending: Promise<void> | null = null;
  #closed = false;

  constructor(handle: FileHandle, pool: StagingPool, staging: Uint8Array, leading: number) {
    this.#handle = handle;
    this.#pool = pool;
    this.#staging = staging;
    this.#staging.fill(0, 0, leading); // room for the header the caller writes at the end
    this.#staged = leading;
  }

  /** Appends `chunks` after everything before; resolves once every whole block of them is written. */
  append(chunks: readonly Uint8Array[]): Promise<void> {
    assert(!this.#closed && this.#appending === null, 'a direct appender takes one append at a time, before it is closed');
    const appending = this.#append(chunks).finally(() => {
      this.#appending = null;
    });
    this.#appending = appending;
    return appending;
  }

  async #append(chunks: readonly Uint8Array[]): Promise<void> {
    for (const chunk of chunks) {
      for (let from = 0; from < chunk.length; ) {
        const take = Math.min(chunk.length - from, this.#staging.length - this.#staged);
        this.#staging.set(chunk.subarray(from, from + take), this.#staged);
        this.#staged += take;
        from += take;
        if (this.#staged === this.#staging.length) await this.#writeBlocks();
      }
    }
    await this.#writeBlocks();
  }

  /** Writes the bytes still staged through `buffered` (the same file, opened without O_DIRECT), then closes the direct descriptor. */
  async finishInto(buffered: FileHandle): Promise<void> {
    await writeFully(buffered, this.#staging.subarray(0, this.#staged), this.#flushed);
    this.#flushed += this.#staged;
    this.#staged = 0;
    await this.close();
  }

  /**
   * Closes the direct descriptor and gives the staging back (idempotent). An abort may come while
   * an append is under way (StreamingUpload aborts without waiting for it): the append is let to
   * settle first, its writes to this descriptor and its copies within the staging done, so no
   * other write can be handed the staging while this one still uses it.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#appending?.catch(() => undefined);
    this.#pool.giveBack(this.#staging);
    await this.#handle.close();
  }

  async #writeBlocks(): Promise<void> {
    const whole = this.#staged - (this.#staged % DIRECT_IO_ALIGNMENT);
    for (let done = 0; done < whole; ) {
      const { bytesWritten } = await this.#handle.write(this.#staging, done, whole - done, this.#flushed + done);
      assert(bytesWritten > 0 && bytesWritten % DIRECT_IO_ALIGNMENT === 0, `a direct write moves whole blocks (${bytesWritten} bytes)`);
      done += bytesWritten;
    }
    this.#staging.copyWithin(0, whole, this.#staged);
    this.#staged -= whole;
    this.#flushed += whole;
  }
}

/** Copies `chunks` into `staging` and zeroes the rest of the last block; returns the block-aligned view to write. */
function stage(staging: Uint8Array, chunks: readonly Uint8Array[], size: number): Uint8Array {
  let at = 0;
  for (const chunk of chunks) {
    staging.set(chunk, at);
    at += chunk.length;
  }
  const padded = staging.subarray(0, roundUpToAlignment(size));
  padded.fill(0, size);
  return padded;
}
