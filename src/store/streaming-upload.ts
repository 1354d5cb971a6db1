import { assert } from '../util/assert.ts';
import { regressed } from '../util/regressions.ts';
import { stageTimers } from '../metrics/stage-timers.ts';
import { concatBytes } from '../util/bytes.ts';
import { StoreError } from './errors.ts';
import { MULTIPART_PART_BYTES_MIN, MULTIPART_PARTS_MAX, type MultipartUpload, type ObjectStore, type PutResult, type SequentialWrite, type UploadedPart } from './object-store.ts';

/**
 * Bytes of one multipart part. 8 MiB: S3's 5 MiB floor plus room, and a part takes ~55 ms at
 * S3 Express's ~150 MB/s per connection; memory held is (concurrency + 1) of these.
 */
export const STREAMING_PART_BYTES_DEFAULT = 8 * 1024 * 1024;
/** Parts in flight at once: 4 connections fill ~600 MB/s to S3 Express, and hold 32 MiB. */
export const STREAMING_CONCURRENCY_DEFAULT = 4;
assert(STREAMING_PART_BYTES_DEFAULT >= MULTIPART_PART_BYTES_MIN, 'the default part size must meet S3 minimum');
/**
 * A sequential write gets chunks in runs of this many bytes, one write each: the tier hands over
 * one chunk per batch, and a write per 1 KiB batch made a 32 MiB piece 3x slower than parts
 * (review 27b); 1 MiB costs one syscall per MiB and holds that much.
 */
export const SEQUENTIAL_APPEND_BYTES = 1024 * 1024;
/** ...or of this many chunks: one writev takes at most IOV_MAX (1024 on Linux) buffers. */
export const SEQUENTIAL_APPEND_CHUNKS_MAX = 512;

/** How a StreamingUpload cuts and sends its parts. */
export interface StreamingUploadOptions {
  /** Bytes per part (every part but the last). Must meet the store's minimum; default 8 MiB. */
  readonly partBytes?: number;
  /** Parts uploading at once; default 4. */
  readonly concurrency?: number;
  /** Create the object only if the key is absent (WAL objects: docs/design.md contract 4). */
  readonly ifNoneMatch?: '*';
}

/**
 * Streams an object of unknown length into any ObjectStore: parts start uploading while more
 * data arrives, at most `concurrency` at once, and `write` waits when they are all busy
 * (backpressure), so memory held stays below (concurrency + 1) × partBytes. An object that ends
 * within one part goes up as ONE put instead (one request instead of three). Any failure aborts
 * the multipart upload, so nothing is ever visible under the key but a complete object.
 *
 * Zero copy until a part is assembled: `write` keeps views of the caller's chunks, so the caller
 * must not modify a chunk after passing it in. A part made of one chunk (or one slice of it) goes
 * up as that view; a part spanning chunks is copied once into a contiguous buffer, counted in
 * `copiedBytes`.
 *
 * A store that writes objects front to back more cheaply (ObjectStore.openSequentialWrite: the
 * file store) gets the chunks appended as they come instead, in runs of SEQUENTIAL_APPEND_BYTES,
 * or of `partBytes` when that is smaller (the simulation's small objects then append several
 * runs), one writev each: no parts, no copies, at most a run and a chunk held.
 */
export class StreamingUpload {
  /** Where the object appears once finished. */
  readonly key: string;
  readonly #store: ObjectStore;
  readonly #partBytes: number;
  readonly #concurrency: number;
  readonly #ifNoneMatch: boolean;
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;
  #upload: Promise<MultipartUpload> | null = null;
  /** The store's sequential write, when it has one (then no part is ever cut). */
  #sequential: Promise<SequentialWrite> | null = null;
  readonly #sequentialStore: boolean;
  readonly #inFlight = new Set<Promise<void>>();
  #inFlightBytes = 0;
  readonly #parts: UploadedPart[] = [];
  #nextPartNumber = 1;
  /** Writes run one after another, so backpressure holds even if the caller does not await. */
  #writes: Promise<void> = Promise.resolve();
  #failure: unknown = null;
  #aborting: Promise<void> | null = null;
  #finished = false;
  #completed = false;
  #copiedBytes = 0;
  #bufferedBytesMax = 0;

  constructor(store: ObjectStore, key: string, options: StreamingUploadOptions = {}) {
    this.key = key;
    this.#store = store;
    this.#partBytes = options.partBytes ?? STREAMING_PART_BYTES_DEFAULT;
    this.#concurrency = options.concurrency ?? STREAMING_CONCURRENCY_DEFAULT;
    this.#ifNoneMatch = options.ifNoneMatch === '*';
    this.#sequentialStore = store.openSequentialWrite !== undefined;
    if (!Number.isSafeInteger(this.#partBytes) || this.#partBytes < 1)
      throw new StoreError('InvalidArgument', `streaming upload of ${key}: partBytes must be a positive integer, not ${this.#partBytes}`, { key });
    if (!Number.isSafeInteger(this.#concurrency) || this.#concurrency < 1)
      throw new StoreError('InvalidArgument', `streaming upload of ${key}: concurrency must be a positive integer, not ${this.#concurrency}`, { key });
  }

  /** Bytes copied to assemble parts (zero when every part was one chunk's view). */
  get copiedBytes(): number {
    return this.#copiedBytes;
  }

  /** The most bytes held at once (in flight plus pending); with chunks no larger than a part, at most (concurrency + 1) × partBytes. */
  get bufferedBytesMax(): number {
    return this.#bufferedBytesMax;
  }

  /** Parts handed to the store so far. */
  get partsStarted(): number {
    return this.#nextPartNumber - 1;
  }

  /** Adds `chunk`; resolves once it is pending or in a part in flight, with room for more. */
  write(chunk: Uint8Array): Promise<void> {
    if (this.#finished) return Promise.reject(new StoreError('InvalidArgument', `streaming upload of ${this.key}: write after finish or abort`, { key: this.key }));
    const next = this.#writes.then(() => this.#write(chunk));
    this.#writes = next.catch(() => undefined);
    return next;
  }

  /** Uploads what is left and makes the object visible; rejects (having aborted) on any failure. */
  async finish(): Promise<PutResult> {
    if (this.#finished) throw new StoreError('InvalidArgument', `streaming upload of ${this.key}: finish called twice`, { key: this.key });
    this.#finished = true;
    await this.#writes;
    await this.#throwIfFailed();
    if (this.#sequentialStore) {
      if (!regressed('sequential-finish-drops-tail')) await this.#appendPending();
      return this.#finishSequential();
    }
    if (this.#upload === null) {
      const result = await this.#store.put(this.key, this.#takePart(this.#pendingBytes), this.#ifNoneMatch ? { ifNoneMatch: '*' } : {});
      this.#completed = true;
      return result;
    }
    if (this.#pendingBytes > 0) {
      await this.#roomForPart();
      this.#startPart(this.#takePart(this.#pendingBytes));
    }
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
    await this.#throwIfFailed();
    const parts = [...this.#parts].sort((a, b) => a.partNumber - b.partNumber);
    try {
      const result = await (await this.#upload).complete(parts);
      this.#completed = true;
      return result;
    } catch (error) {
      this.#fail(error);
      await this.#throwIfFailed();
      throw error;
    }
  }

  /** Gives up: nothing becomes visible, and the parts uploaded so far are discarded. No effect once finished. */
  async abort(): Promise<void> {
    if (this.#completed) return;
    this.#finished = true;
    this.#fail(new StoreError('InvalidArgument', `streaming upload of ${this.key} was aborted by its caller`, { key: this.key }));
    await this.#aborting;
  }

  async #write(chunk: Uint8Array): Promise<void> {
    await this.#throwIfFailed();
    if (chunk.length === 0) return;
    this.#pending.push(chunk);
    this.#pendingBytes += chunk.length;
    if (this.#sequentialStore) {
      this.#noteBuffered();
      if (this.#pendingBytes >= Math.min(SEQUENTIAL_APPEND_BYTES, this.#partBytes) || this.#pending.length >= SEQUENTIAL_APPEND_CHUNKS_MAX) await this.#appendPending();
      return;
    }
    // Strictly more than a part: an object of exactly partBytes still goes up as one put.
    while (this.#pendingBytes > this.#partBytes) {
      await this.#roomForPart();
      this.#startPart(this.#takePart(this.#partBytes));
    }
    this.#noteBuffered();
    assert(this.#inFlightBytes + this.#pendingBytes <= (this.#concurrency + 1) * this.#partBytes, 'a streaming upload holds at most (concurrency + 1) parts');
  }

  /** Waits until fewer than `concurrency` parts are in flight; rejects if the upload failed. */
  async #roomForPart(): Promise<void> {
    while (this.#inFlight.size >= this.#concurrency) await Promise.race(this.#inFlight);
    await this.#throwIfFailed();
  }

  /** The first `bytes` pending bytes as one buffer: a view if they lie in one chunk, else one copy. */
  #takePart(bytes: number): Uint8Array {
    const views: Uint8Array[] = [];
    let taken = 0;
    while (taken < bytes) {
      const head = this.#pending[0]!;
      const wanted = bytes - taken;
      if (head.length <= wanted) {
        views.push(head);
        this.#pending.shift();
        taken += head.length;
      } else {
        views.push(head.subarray(0, wanted));
        this.#pending[0] = head.subarray(wanted);
        taken += wanted;
      }
    }
    this.#pendingBytes -= bytes;
    if (views.length === 1) return views[0]!;
    this.#copiedBytes += bytes;
    stageTimers.copied('streaming-part', bytes);
    return concatBytes(views);
  }

  #startPart(body: Uint8Array): void {
    // Failed since the caller's check (an abort a microtask later): #fail aborted the upload it saw, so none may start now.
    if (this.#failure !== null) return;
    const partNumber = this.#nextPartNumber++;
    if (partNumber > MULTIPART_PARTS_MAX) {
      this.#fail(new StoreError('InvalidArgument', `streaming upload of ${this.key}: more than ${MULTIPART_PARTS_MAX} parts of ${this.#partBytes} bytes; use larger parts`, { key: this.key }));
      return;
    }
    this.#upload ??= this.#store.createMultipartUpload(this.key, this.#ifNoneMatch ? { ifNoneMatch: '*' } : {});
    this.#inFlightBytes += body.length;
    this.#noteBuffered();
    const task: Promise<void> = this.#upload
      .then((upload) => upload.uploadPart(partNumber, body))
      .then(
        (part) => void this.#parts.push(part),
        (error: unknown) => this.#fail(error),
      )
      .finally(() => {
        this.#inFlight.delete(task);
        this.#inFlightBytes -= body.length;
      });
    this.#inFlight.add(task);
  }

  async #sequentialWrite(): Promise<SequentialWrite> {
    // Checked in the turn that opens it: #fail aborts only the write it saw, so none may open after a failure.
    if (this.#sequential === null && this.#failure !== null) await this.#throwIfFailed();
    this.#sequential ??= this.#store.openSequentialWrite!(this.key, this.#ifNoneMatch ? { ifNoneMatch: '*' } : {});
    return this.#sequential;
  }

  /** Appends the pending chunks as one run. */
  async #appendPending(): Promise<void> {
    if (this.#pending.length === 0) return;
    const run = this.#pending;
    this.#pending = [];
    this.#inFlightBytes = this.#pendingBytes;
    this.#pendingBytes = 0;
    try {
      await (await this.#sequentialWrite()).append(run);
    } catch (error) {
      this.#fail(error);
      await this.#throwIfFailed();
    } finally {
      this.#inFlightBytes = 0;
    }
  }

  async #finishSequential(): Promise<PutResult> {
    try {
      const result = await (await this.#sequentialWrite()).finish();
      this.#completed = true;
      return result;
    } catch (error) {
      this.#fail(error);
      await this.#throwIfFailed();
      throw error;
    }
  }

  /** Records the first failure and starts aborting: after the parts in flight settle, so none lingers. */
  #fail(error: unknown): void {
    if (this.#failure !== null) return;
    this.#failure = error;
    const upload = this.#upload;
    const sequential = this.#sequential;
    this.#aborting = (async () => {
      while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
      if (upload !== null) await upload.then((u) => u.abort()).catch(() => undefined);
      if (sequential !== null) await sequential.then((write) => write.abort()).catch(() => undefined);
    })();
  }

  async #throwIfFailed(): Promise<void> {
    if (this.#failure === null) return;
    await this.#aborting;
    throw this.#failure;
  }

  #noteBuffered(): void {
    this.#bufferedBytesMax = Math.max(this.#bufferedBytesMax, this.#inFlightBytes + this.#pendingBytes);
  }
}
