import { CorruptObjectError, FerryError } from '../errors.ts';
import { stageTimers } from '../metrics/stage-timers.ts';
import { isStoreError } from '../store/errors.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { assert } from '../util/assert.ts';
import { regressed } from '../util/regressions.ts';
import { type BackoffPolicy, backoffDelayMs, sleep } from '../util/backoff.ts';
import type { Clock, Timer } from '../util/clock.ts';
import type { Random } from '../util/random.ts';
import { STREAMING_PART_BYTES_DEFAULT, StreamingUpload } from '../store/streaming-upload.ts';
import { BufferPool } from '../util/buffer-pool.ts';
import type { Uuid } from '../util/uuid.ts';
import { decodeWalObject, type WalFrameInput, WalObjectBuilder } from './format.ts';
import { type StreamId, validateWriterId, walObjectKey } from './keys.ts';

export interface WalWriterConfig {
  /** Object-store key prefix under which `wal/` lives. */
  readonly prefix: string;
  readonly stream: StreamId;
  /** Close the open object once it reaches this size (`wal.upload.bytes`). */
  readonly uploadBytes: number;
  /** ...or this long after its first frame (`wal.upload.interval.ms`). */
  readonly uploadIntervalMs: number;
  /**
   * [W8] Close the open object on the turn after the one that gave it frames when no upload is in
   * flight or queued, instead of waiting out the interval: an idle writer's acknowledgement is one
   * PUT away. While uploads are in flight the interval and size close objects as before, and the
   * open object closes as soon as the last of them lands.
   */
  readonly uploadWhenIdle: boolean;
  /** Objects uploading at once; durability still advances in sequence order. */
  readonly maxInFlight: number;
  /** Bytes held (open object plus objects not yet uploaded) before `reserve` makes producers wait. */
  readonly maxBufferedBytes: number;
  readonly retry: BackoffPolicy;
  /**
   * An object that grows past this starts streaming as a multipart upload while it still fills
   * (parts of this size, at least S3's 5 MiB); smaller objects go up in one PUT.
   */
  readonly multipartPartBytes: number;
}

/**
 * A retriable upload fault (throttling, 5xx, a timeout, a full disk under the file store) is an
 * outage to ride out, not a reason to stop acknowledging for good (issue 9 finding 16): uploads
 * retry it without a bound, backing off to `retry.capMs`, while backpressure holds producers at
 * maxBufferedBytes. Fencing and non-retriable faults (access denied) still fail the writer [W4].
 */
export const UPLOAD_ATTEMPTS_UNBOUNDED = Number.POSITIVE_INFINITY;

/**
 * Chosen by bench/wal.bench.ts (s3-express profile, 64 partitions, sweep of size x interval):
 * up to ~50 MB/s the 5 ms interval closes objects (at most 200 PUTs/s per writer; ~17,000
 * PUTs/GB, $0.02/GB of requests at 10 MB/s) and p50 is one PUT plus 3-5 ms (8.8 ms vs a 7.5 ms
 * floor). At 100 MB/s objects reach ~500 KB: ~2,100 PUTs/GB, $0.0024/GB of requests, under the
 * $0.0032/GB upload fee; 256 KiB would pay twice that for ~3 ms less.
 */
export const DEFAULT_WAL_WRITER_CONFIG: Omit<WalWriterConfig, 'prefix' | 'stream'> = {
  uploadBytes: 1024 * 1024,
  uploadIntervalMs: 5,
  uploadWhenIdle: true,
  maxInFlight: 8,
  maxBufferedBytes: 64 * 1024 * 1024,
  retry: { attempts: UPLOAD_ATTEMPTS_UNBOUNDED, baseMs: 10, capMs: 1000 },
  multipartPartBytes: STREAMING_PART_BYTES_DEFAULT,
};

/**
 * How far an object may outgrow uploadBytes while every upload slot is busy: larger objects
 * when behind, but bounded, since each one is copied and read whole in one go.
 */
const DEFERRED_GROWTH_FACTOR = 4;

/** Per-frame facts kept until the object is durable: enough to advance offsets and time it. */
interface FrameRecord {
  readonly partitionKey: string;
  readonly endOffset: number;
  readonly appendedMs: number;
}

/** Settles once an object is durable with every lower sequence [W5], or once the writer fails [W6]. */
interface Durability {
  readonly promise: Promise<void>;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

function durability(): Durability {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => {}); // a frame whose caller did not wait (acks=1) must not be an unhandled rejection
  return { promise, resolve, reject };
}

interface ClosedObject {
  readonly sequence: number;
  readonly durability: Durability;
  readonly sizeBytes: number;
  readonly frames: readonly FrameRecord[];
  /** The object's bytes in order (views); dropped once uploaded, so memory follows the bound. */
  chunks: Uint8Array[] | null;
  /** Set when the object streamed out as a multipart upload while it filled. */
  readonly streamed: Promise<unknown> | null;
  /** Monotonic time it was closed: no request that completes a streamed upload was sent before. */
  readonly closedMs: number;
}

interface OpenObject {
  readonly builder: WalObjectBuilder;
  readonly sequence: number;
  readonly durability: Durability;
  readonly frames: FrameRecord[];
  /** Every chunk so far, kept for a plain PUT should the multipart upload fail. */
  readonly chunks: Uint8Array[];
  streaming: StreamingUpload | null;
  /** Frame data bytes added so far, counted in bufferedBytes until the object is closed. */
  dataBytes: number;
  timer: Timer | null;
  /** [W8] Armed while the writer is idle: closes the object on the next turn. */
  idleClose: Timer | null;
  /** Due (size or interval) but waiting for a free upload slot. */
  closeWanted: boolean;
}

export interface WalWriterStats {
  readonly objectsClosed: number;
  readonly objectsDurable: number;
  readonly bytesDurable: number;
  readonly putAttempts: number;
  readonly retries: number;
  readonly bufferedBytes: number;
  readonly uploadsInFlight: number;
  readonly queuedObjects: number;
}

/** Observations a metrics sink takes; all optional. */
export interface WalWriterObserver {
  uploadLatencyMs?(ms: number): void;
  objectBytes?(bytes: number): void;
  produceToDurableMs?(ms: number): void;
  durable?(topicPartition: string, endOffset: number): void;
  /** An upload attempt met a retriable fault and will be retried (`attempt` counts from 0). */
  uploadRetry?(key: string, attempt: number, error: Error): void;
  /** Uploads succeed again after at least one retried fault. */
  uploadRecovered?(): void;
  /** A put attempt that started at `startedMs` (monotonic) failed, retriable or not (a precondition that fences aside). */
  uploadFailed?(startedMs: number): void;
  /** An object landed in the store, by a put sent at `startedMs` (monotonic) or later. */
  uploadLanded?(startedMs: number): void;
}

/**
 * A partition of one incarnation of a topic: keyed by the topic's id, not its name, so a topic
 * deleted and created again starts from nothing here (no durable offsets or waiters carried over).
 */
export function partitionKey(topicId: Uuid, partition: number): string {
  return `${topicId}\u0000${partition}`;
}

/**
 * The leader side of WAL shipping (docs/wal-protocol.md, steps W1-W6): frames of many
 * partitions go into one object; objects upload put-if-absent with bounded concurrency; a
 * partition's durable offset advances only over contiguous durable sequences.
 */
export class WalWriter {
  readonly config: WalWriterConfig;
  readonly #store: ObjectStore;
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #observer: WalWriterObserver;
  #open: OpenObject | null = null;
  #nextSequence = 0;
  readonly #queue: ClosedObject[] = [];
  #inFlight = 0;
  readonly #uploadedObjects = new Map<number, ClosedObject>();
  #durableSequence = -1;
  /** Each partition's durable end in this stream: for the shipped checkpoint only, never for acknowledgements. */
  readonly #durable = new Map<string, number>();
  /** Objects opened and not yet durable, by sequence: what a failure must reject. */
  readonly #pending = new Map<number, Durability>();
  readonly #capacityWaiters: { bytes: number; resolve: () => void; reject: (error: Error) => void }[] = [];
  readonly #idleWaiters: { resolve: () => void; reject: (error: Error) => void }[] = [];
  #bufferedBytes = 0;
  #failure: FerryError | null = null;
  readonly #failed: Promise<FerryError>;
  #announceFailure!: (failure: FerryError) => void;
  /** Object bodies, reused: one per upload in flight plus a spare per size class. */
  readonly #bodies: BufferPool;
  #stats = { objectsClosed: 0, objectsDurable: 0, bytesDurable: 0, putAttempts: 0, retries: 0 };

  constructor(store: ObjectStore, config: WalWriterConfig, deps: { clock: Clock; random: Random; observer?: WalWriterObserver }) {
    validateWriterId(config.stream.writerId);
    assert(config.maxInFlight >= 1 && config.uploadBytes > 0 && config.maxBufferedBytes >= config.uploadBytes, 'WAL writer limits are inconsistent');
    this.#store = store;
    this.config = config;
    this.#clock = deps.clock;
    this.#random = deps.random;
    this.#observer = deps.observer ?? {};
    this.#bodies = new BufferPool(config.maxInFlight + 1);
    this.#failed = new Promise((resolve) => (this.#announceFailure = resolve));
  }

  /** Resolves with the failure once the writer is fenced or fails [W6] (a cluster then starts a new epoch). */
  whenFailed(): Promise<FerryError> {
    return this.#failed;
  }

  /** Set once the writer was fenced or failed; it then acknowledges nothing. */
  get failure(): FerryError | null {
    return this.#failure;
  }

  /**
   * Offsets of the partition below this are in durable objects of this stream; -1 if none yet.
   * An observation only: an acknowledgement waits on its own append's promise [W5].
   */
  durableOffset(topicId: Uuid, partition: number): number {
    return this.#durable.get(partitionKey(topicId, partition)) ?? -1;
  }

  /** Every sequence up to this one is durable; -1 before the first. */
  get durableSequence(): number {
    return this.#durableSequence;
  }

  /** Each partition's durable end (exclusive), keyed by partitionKey: for the engine's checkpoint. */
  durableEnds(): ReadonlyMap<string, number> {
    return this.#durable;
  }

  stats(): WalWriterStats {
    return { ...this.#stats, bufferedBytes: this.#bufferedBytes, uploadsInFlight: this.#inFlight, queuedObjects: this.#queue.length };
  }

  /** [W6] Stops this writer as if fenced: nothing more is acknowledged or uploaded (a new epoch replaces it). */
  fence(reason: string): void {
    this.#fail(new FerryError('Fenced', `WAL stream ${this.config.stream.writerId}/${this.config.stream.epoch} is fenced: ${reason}`));
  }

  /**
   * Backpressure: resolves when `bytes` more fit under maxBufferedBytes (always when nothing is
   * held). `signal` gives up the wait (a request's timeout: during a store outage room may not come
   * for a long time); it then rejects with the signal's reason and takes no room.
   */
  reserve(bytes: number, signal?: AbortSignal): Promise<void> {
    if (this.#failure !== null) return Promise.reject(this.#failure);
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    if (this.#capacityWaiters.length === 0 && (this.#bufferedBytes === 0 || this.#bufferedBytes + bytes <= this.config.maxBufferedBytes)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter = { bytes, resolve, reject };
      this.#capacityWaiters.push(waiter);
      signal?.addEventListener(
        'abort',
        () => {
          const at = this.#capacityWaiters.indexOf(waiter);
          if (at < 0) return; // granted (or failed) already
          this.#capacityWaiters.splice(at, 1);
          reject(signal.reason);
          this.#wakeCapacity(); // the first waiter may have been the one that did not fit
        },
        { once: true },
      );
    });
  }

  /**
   * [W1-W2] Adds one frame (its data stays a view until upload) and closes the object when due.
   * The promise resolves once the object holding this frame and every lower sequence are
   * durable [W5], and rejects if the writer fails or is fenced first [W6]: the acknowledgement of
   * this frame depends on nothing else (no per-partition offset that outlives a re-adoption).
   */
  append(frame: WalFrameInput): Promise<void> {
    return stageTimers.time('wal-frame', () => this.#append(frame));
  }

  #append(frame: WalFrameInput): Promise<void> {
    if (this.#failure !== null) throw this.#failure;
    const open = this.#open ?? this.#openObject();
    open.builder.addFrame(frame);
    open.frames.push({ partitionKey: partitionKey(frame.topicId, frame.partition), endOffset: frame.lastOffset + 1, appendedMs: this.#clock.monotonicMs() });
    open.dataBytes += frame.data.length;
    this.#bufferedBytes += frame.data.length;
    if (open.builder.sizeBytes >= this.config.uploadBytes) this.#closeWhenSlotFree(open);
    if (this.#open === open && (open.streaming !== null || (open.builder.sizeBytes >= this.config.multipartPartBytes && this.#mayLand(open.sequence)))) this.#stream(open);
    return open.durability.promise;
  }

  /** Closes the open object now and resolves when everything handed over is durable. */
  flush(): Promise<void> {
    if (this.#failure !== null) return Promise.reject(this.#failure);
    if (this.#open !== null) this.#closeOpenObject();
    if (this.#durableSequence === this.#nextSequence - 1) return Promise.resolve();
    return new Promise((resolve, reject) => this.#idleWaiters.push({ resolve, reject }));
  }

  #openObject(): OpenObject {
    const sequence = this.#nextSequence++;
    const { writerId, epoch } = this.config.stream;
    const builder = new WalObjectBuilder({ kind: 'data', writerId, epoch, sequence, createdMs: this.#clock.nowMs() });
    const open: OpenObject = { builder, sequence, durability: durability(), frames: [], chunks: [], streaming: null, dataBytes: 0, timer: null, idleClose: null, closeWanted: false };
    this.#pending.set(sequence, open.durability);
    open.timer = this.#clock.setTimer(this.config.uploadIntervalMs, () => {
      open.timer = null;
      if (this.#open !== open) return;
      // [W8] Idle since its frames came (nothing in flight or queued) and no close armed: it would
      // have gone up at the end of that turn, one interval ago.
      assert(!this.config.uploadWhenIdle || open.idleClose !== null || !this.#idle(), `[W8] WAL object ${open.sequence} waited out the upload interval while its writer was idle`);
      this.#closeWhenSlotFree(open);
    });
    this.#open = open;
    // Armed at the open, before any frame is added: a frame the builder refuses (a caller's bug)
    // must not leave an empty object that then waits out its interval on an idle writer [W8].
    if (!regressed('idle-upload-not-armed')) this.#closeWhenIdle();
    return open;
  }

  /** Nothing uploading or queued: the writer waits for frames, and an open object would wait for its interval. */
  #idle(): boolean {
    return this.#inFlight === 0 && this.#queue.length === 0 && this.#failure === null;
  }

  /**
   * [W8] Arms the close of the open object for the next turn (after pending I/O) if the writer is
   * idle: the frames of one request, and of any others read in the same turn, go up together, one
   * PUT after they came. Armed when an object opens and whenever the pump leaves nothing uploading:
   * the only two moments an open object and an idle writer meet.
   */
  #closeWhenIdle(): void {
    const open = this.#open;
    if (!this.config.uploadWhenIdle || open === null || open.idleClose !== null || !this.#idle()) return;
    open.idleClose = this.#clock.immediate(() => {
      open.idleClose = null;
      if (this.#open === open && this.#idle()) this.#closeOpenObject();
    });
  }

  /** [W3] A large object streams out while it fills: parts go up before it is closed. */
  #stream(open: OpenObject): void {
    if (open.streaming === null) {
      const key = walObjectKey(this.config.prefix, this.config.stream, open.sequence);
      open.streaming = new StreamingUpload(this.#store, key, { ifNoneMatch: '*', partBytes: this.config.multipartPartBytes });
    }
    for (const chunk of open.builder.drain()) {
      open.chunks.push(chunk);
      open.streaming.write(chunk).catch(() => {}); // a failure shows in finish(); then a plain PUT retries
    }
  }

  /**
   * Closes the open object if an upload slot is free to take it. While every slot is busy the
   * object keeps growing instead (up to DEFERRED_GROWTH_FACTOR x uploadBytes), so a writer that falls behind
   * sends fewer, larger objects rather than queueing many small ones (measured: queues of ~200
   * objects and second-long latency at 100 MB/s without this). `#pump` closes it when a slot frees.
   */
  #closeWhenSlotFree(open: OpenObject): void {
    const slotFree = this.#inFlight + this.#queue.length < this.config.maxInFlight;
    const grownEnough = open.builder.sizeBytes >= Math.min(this.config.multipartPartBytes, DEFERRED_GROWTH_FACTOR * this.config.uploadBytes);
    if (slotFree || grownEnough) this.#closeOpenObject();
    else open.closeWanted = true;
  }

  #closeOpenObject(): void {
    stageTimers.time('wal-upload', () => this.#closeOpen());
  }

  #closeOpen(): void {
    const open = this.#open;
    assert(open !== null, 'no open WAL object to close');
    this.#open = null;
    open.timer?.cancel();
    open.idleClose?.cancel();
    const chunks = [...open.chunks, ...open.builder.finish()];
    const sizeBytes = open.builder.sizeBytes;
    let streamed: Promise<unknown> | null = null;
    if (open.streaming !== null) {
      const streaming = open.streaming;
      for (const chunk of chunks.slice(open.chunks.length)) streaming.write(chunk).catch(() => {});
      streamed = streaming.finish();
      streamed.catch(() => {}); // awaited in #upload
    }
    this.#bufferedBytes += sizeBytes - open.dataBytes; // the framed object replaces its frames' views
    this.#queue.push({ sequence: open.sequence, durability: open.durability, sizeBytes, frames: open.frames, chunks, streamed, closedMs: this.#clock.monotonicMs() });
    this.#stats.objectsClosed++;
    this.#observer.objectBytes?.(sizeBytes);
    this.#pump();
  }

  #pump(): void {
    const open = this.#open;
    if (open?.closeWanted && this.#inFlight + this.#queue.length < this.config.maxInFlight) {
      this.#closeOpenObject(); // calls #pump again
      return;
    }
    // A window, not only a count of slots: an upload starts only within maxInFlight of the durable
    // sequence, so a fenced writer lands at most maxInFlight - 1 objects above a seal, however long
    // the object at the seal's slot retried (src/wal/seal.ts looks for a seal that far down).
    while (
      this.#failure === null &&
      this.#inFlight < this.config.maxInFlight &&
      this.#queue.length > 0 &&
      this.#queue[0]!.sequence <= this.#durableSequence + this.config.maxInFlight &&
      this.#mayLand(this.#queue[0]!.sequence)
    ) {
      const object = this.#queue.shift()!;
      this.#inFlight++;
      void this.#upload(object)
        .catch((error: unknown) => this.#fail(new FerryError('Storage', `WAL upload of object ${object.sequence} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error })))
        .finally(() => {
          this.#inFlight--;
          this.#pump();
        });
    }
    this.#closeWhenIdle(); // the last upload landed with frames waiting: they go up now [W8]
  }

  /**
   * [W7] Object 0 of a stream lands before any other starts (a streamed multipart upload lands at
   * its close, so neither streams): a crash then never leaves later objects without object 0, and
   * a stream's lowest object present is its WAL floor (docs/tier-protocol.md), the bottom of what
   * GC left, never a hole that a seal must fill.
   */
  #mayLand(sequence: number): boolean {
    return sequence === 0 || this.#durableSequence >= 0;
  }

  /** [W3-W4] One object, retried through transient faults; fences on a foreign object at its key. */
  async #upload(object: ClosedObject): Promise<void> {
    const key = walObjectKey(this.config.prefix, this.config.stream, object.sequence);
    const started = this.#clock.monotonicMs();
    if (
      object.streamed !== null &&
      (await object.streamed.then(
        () => true,
        () => false,
      ))
    )
      return this.#uploaded(object, started, 0, object.closedMs);
    // A plain PUT: the usual path, and the fallback when a streamed multipart upload failed.
    // The one copy (an HTTP body is one buffer), into a pooled buffer returned once the put is done.
    const body = stageTimers.time('wal-upload', () => this.#bodyOf(object));
    try {
      await this.#putWithRetries(key, object, body, started);
    } finally {
      this.#bodies.release(body);
    }
  }

  #bodyOf(object: ClosedObject): Uint8Array {
    const body = this.#bodies.acquire(object.sizeBytes);
    let at = 0;
    for (const chunk of object.chunks!) {
      body.set(chunk, at);
      at += chunk.length;
    }
    assert(at === body.length, 'a WAL object body is exactly its chunks');
    stageTimers.copied('wal-object-body', at);
    return body;
  }

  async #putWithRetries(key: string, object: ClosedObject, body: Uint8Array, started: number): Promise<void> {
    for (let attempt = 0; this.#failure === null; attempt++) {
      const attemptStartedMs = this.#clock.monotonicMs();
      try {
        this.#stats.putAttempts++;
        // No authorship: after an ambiguous answer equal bytes are ours, since the header names this stream's writer, epoch and sequence (docs/cluster-protocol.md CW2).
        await this.#store.put(key, body, { ifNoneMatch: '*' });
        return this.#uploaded(object, started, attempt, attemptStartedMs);
      } catch (error) {
        if (!isStoreError(error)) throw error;
        if (error.kind === 'PreconditionFailed') {
          if (await this.#isOurs(key, body)) return this.#uploaded(object, started, attempt, started); // landed by an earlier attempt, sent at `started` or later
          return this.#fail(new FerryError('Fenced', `WAL stream ${key} was sealed or taken by another writer; this writer is fenced`));
        }
        this.#observer.uploadFailed?.(attemptStartedMs);
        if (!error.retriable || attempt + 1 >= this.config.retry.attempts) {
          return this.#fail(new FerryError('Storage', `WAL upload of ${key} failed after ${attempt + 1} attempts: ${error.message}`, { cause: error }));
        }
        this.#stats.retries++;
        this.#observer.uploadRetry?.(key, attempt, error);
        await sleep(this.#clock, backoffDelayMs(this.config.retry, attempt, this.#random));
      }
    }
  }

  /**
   * [W4] After PreconditionFailed: did an earlier attempt of ours land (its answer lost)? Retried
   * like the put, so only while the writer stands: once it is fenced or failed nothing it uploads
   * counts [W6], and a read retried without a bound would outlive it (a close, a new epoch).
   * A read that differs from our body is only a foreign object if it verifies as a whole WAL
   * object: a put lands whole, so one that does not verify was damaged on the way (a flipped bit)
   * and is read again, never taken for a fence (which would stop the writer for good).
   */
  async #isOurs(key: string, body: Uint8Array): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      if (this.#failure !== null) throw this.#failure;
      try {
        const existing = await this.#store.get(key);
        if (Buffer.from(existing.body.buffer, existing.body.byteOffset, existing.body.length).equals(body)) return true;
        decodeWalObject(existing.body); // throws CorruptObjectError for a read damaged on the way
        return false;
      } catch (error) {
        const transient = error instanceof CorruptObjectError || (isStoreError(error) && error.retriable);
        if (!transient || attempt + 1 >= this.config.retry.attempts) throw error;
        await sleep(this.#clock, backoffDelayMs(this.config.retry, attempt, this.#random));
      }
    }
  }

  /** `retries`: attempts that met a retriable fault before this one landed; `sentMs`: when the request that landed it was sent, or earlier. */
  #uploaded(object: ClosedObject, startedMs: number, retries: number, sentMs: number): void {
    stageTimers.time('ack', () => this.#landed(object, startedMs, retries, sentMs));
  }

  #landed(object: ClosedObject, startedMs: number, retries: number, sentMs: number): void {
    this.#observer.uploadLatencyMs?.(this.#clock.monotonicMs() - startedMs);
    if (retries > 0) this.#observer.uploadRecovered?.();
    this.#observer.uploadLanded?.(sentMs);
    this.#bufferedBytes -= object.sizeBytes;
    object.chunks = null;
    this.#uploadedObjects.set(object.sequence, object);
    this.#advanceDurable();
    this.#wakeCapacity();
  }

  /** [W5] Durability moves over contiguous uploaded sequences only (invariant I3). */
  #advanceDurable(): void {
    if (this.#failure !== null) return; // what lands after [W6] lies above the seal: it counts for nothing
    const touched = new Set<string>();
    const nowMs = this.#clock.monotonicMs();
    for (;;) {
      const next = this.#uploadedObjects.get(this.#durableSequence + 1);
      if (next === undefined) break;
      this.#uploadedObjects.delete(next.sequence);
      this.#durableSequence = next.sequence;
      this.#stats.objectsDurable++;
      this.#stats.bytesDurable += next.sizeBytes;
      for (const frame of next.frames) {
        this.#durable.set(frame.partitionKey, Math.max(this.#durable.get(frame.partitionKey) ?? -1, frame.endOffset));
        this.#observer.produceToDurableMs?.(nowMs - frame.appendedMs);
        touched.add(frame.partitionKey);
      }
      this.#pending.delete(next.sequence);
      next.durability.resolve();
    }
    for (const key of touched) this.#observer.durable?.(key, this.#durable.get(key)!);
    if (this.#durableSequence === this.#nextSequence - 1) for (const waiter of this.#idleWaiters.splice(0)) waiter.resolve();
  }

  #wakeCapacity(): void {
    while (this.#capacityWaiters.length > 0) {
      const first = this.#capacityWaiters[0]!;
      if (this.#bufferedBytes > 0 && this.#bufferedBytes + first.bytes > this.config.maxBufferedBytes) break;
      this.#capacityWaiters.shift();
      first.resolve();
    }
  }

  /** [W6] Fenced or failed: nothing more is acknowledged or uploaded. */
  #fail(failure: FerryError): void {
    if (this.#failure !== null) return;
    this.#failure = failure;
    this.#announceFailure(failure);
    this.#open?.timer?.cancel();
    this.#open?.idleClose?.cancel();
    void this.#open?.streaming?.abort(); // never closed now: its parts (the file store's temporary file and handle) go
    this.#open = null;
    this.#queue.length = 0;
    for (const pending of this.#pending.values()) pending.reject(failure);
    this.#pending.clear();
    for (const waiter of this.#capacityWaiters.splice(0)) waiter.reject(failure);
    for (const waiter of this.#idleWaiters.splice(0)) waiter.reject(failure);
  }
}
