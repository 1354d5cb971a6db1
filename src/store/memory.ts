import { SortedKeys } from './sorted-keys.ts';
import { concatBytes, copyBytes, uninitializedBytes } from '../util/bytes.ts';
import { systemClock, type Clock } from '../util/clock.ts';
import { SeededRandom } from '../util/random.ts';
import { isStoreError, StoreError, type StoreErrorKind } from './errors.ts';
import { contentEtag, multipartEtag } from './etag.ts';
import { faultError, FaultInjector, type FaultInjection, type FaultPlan } from './faults.ts';
import { LATENCY_PROFILES, LatencyModel, type LatencyProfile, type LatencyProfileName } from './latency.ts';
import { decodeListToken, pageOf } from './list-token.ts';
import {
  DELETE_BATCH_KEYS_MAX,
  MULTIPART_PART_BYTES_MIN,
  type DeleteManyResult,
  type GetOptions,
  type GetResult,
  type ListOptions,
  type ListPage,
  type MultipartOptions,
  type MultipartUpload,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  type PutResult,
  type UploadedPart,
} from './object-store.ts';
import { StatsRecorder, type RequestClass, type StoreStats } from './stats.ts';
import {
  checkKey,
  checkKeys,
  checkListOptions,
  checkPartBody,
  checkPartList,
  checkPartNumber,
  checkPartSizes,
  checkPutOptions,
  checkRangeShape,
  invalidArgument,
  resolveRange,
  showKey,
} from './validate.ts';

/** How a MemoryStore behaves: its latency profile, faults, seed and clock. */
export interface MemoryStoreOptions {
  /** A named profile or a custom one; default 'zero'. */
  readonly latency?: LatencyProfileName | LatencyProfile;
  /** Seeds latencies, faults and list order: the same seed and calls replay the same run. */
  readonly seed?: number;
  /** Latencies wait on this clock's timers, so a ManualClock drives a simulation. */
  readonly clock?: Clock;
  /** Random failures of requests (none by default); `inject` adds exact ones. */
  readonly faults?: FaultPlan;
  /** The smallest non-last multipart part; default S3's 5 MiB (tests of small uploads lower it). */
  readonly multipartPartBytesMin?: number;
  /** Shuffle each list page (default true), so code that assumes key order fails here, not on S3 Express. */
  readonly shuffleList?: boolean;
  /** Record each request's latency and fault, for `trace()`. */
  readonly trace?: boolean;
  /**
   * Told of every single-part put at the moment it takes effect, in the store's own order (a put
   * that then fails as a timeout after its effect included): a simulation audits what was written
   * from this, which no client's view of its answers can tell. Multipart completions are not told.
   */
  readonly onPut?: (key: string, body: Uint8Array) => void;
  /**
   * Told of every delete of an object that existed, at the moment it takes effect (the object is
   * gone when told), with the bytes it held: a simulation judges each delete against the store as
   * it was then (peek), which no client's view can tell.
   */
  readonly onDelete?: (key: string, body: Uint8Array) => void;
}

/** One request as `trace()` recorded it. */
export interface TraceEvent {
  /** What kind of request it was. */
  readonly requestClass: RequestClass;
  /** Its key (a list: the prefix; a deleteMany: the first key). */
  readonly key: string | undefined;
  /** How long it took, as drawn from the latency model. */
  readonly latencyMs: number;
  /** The fault it ended with, or null. */
  readonly fault: StoreErrorKind | null;
  /** Whether it took effect before failing (a write that timed out but landed). */
  readonly afterEffect: boolean;
}

export const SEED_DEFAULT = 0x5eed;
/** The trace keeps the most recent events only: at ~100 bytes each, 100k events is ~10 MB. */
export const TRACE_EVENTS_MAX = 100_000;
/** Derives the fault and list-order streams from the seed, so adding faults does not shift latencies. */
const FAULT_SEED_SALT = 0x6a09e667;
const ORDER_SEED_SALT = 0xbb67ae85;

/**
 * An object as the store keeps it: the bytes of each put or part, in order, never joined. S3
 * assembles a multipart object on its side; joining the parts here would charge that copy to the
 * process using the store (a broker benchmarked on this model, say).
 */
interface StoredObject {
  readonly chunks: readonly Uint8Array[];
  readonly size: number;
  readonly etag: string;
}

interface UploadedBody {
  readonly body: Uint8Array;
  readonly etag: string;
}

interface PendingUpload {
  readonly key: string;
  readonly ifNoneMatch: boolean;
  readonly parts: Map<number, UploadedBody>;
}

interface Request {
  readonly requestClass: RequestClass;
  readonly key?: string;
  /** The keys a fault injection may match (deleteMany's batch); default [key]. */
  readonly keys?: readonly string[];
  readonly bytesIn: number;
  /** Bytes that cross the wire, for the transfer time. */
  readonly transferBytes: number;
  readonly signal?: AbortSignal | undefined;
}

/**
 * An object store in memory, with S3's semantics (enforced limits, conditional writes, unordered
 * listing), S3's latency shape and S3's faults, all drawn from one seed. Tests, the simulation
 * and the benchmarks use it. A request's random draws happen synchronously when it is called, so
 * the same calls in the same order replay the same latencies and faults.
 */
export class MemoryStore implements ObjectStore {
  readonly kind = 'memory';
  readonly #objects = new Map<string, StoredObject>();
  /** The keys of #objects, sorted: what a LIST walks. */
  readonly #sortedKeys = new SortedKeys();
  readonly #uploads = new Map<string, PendingUpload>();
  readonly #stats = new StatsRecorder();
  readonly #clock: Clock;
  readonly #latency: LatencyModel;
  readonly #faults: FaultInjector;
  readonly #order: SeededRandom;
  readonly #partBytesMin: number;
  readonly #shuffleList: boolean;
  readonly #trace: TraceEvent[] | null;
  readonly #onPut: ((key: string, body: Uint8Array) => void) | null;
  readonly #onDelete: ((key: string, body: Uint8Array) => void) | null;
  #uploadSequence = 0;
  #closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    const seed = options.seed ?? SEED_DEFAULT;
    const profile = typeof options.latency === 'object' ? options.latency : LATENCY_PROFILES[options.latency ?? 'zero'];
    if (profile === undefined) throw invalidArgument(undefined, `unknown latency profile ${JSON.stringify(options.latency)}; known: ${Object.keys(LATENCY_PROFILES).join(', ')}`);
    this.#clock = options.clock ?? systemClock;
    this.#latency = new LatencyModel(profile, new SeededRandom(seed));
    this.#faults = new FaultInjector(options.faults, new SeededRandom(seed ^ FAULT_SEED_SALT));
    this.#order = new SeededRandom(seed ^ ORDER_SEED_SALT);
    this.#partBytesMin = options.multipartPartBytesMin ?? MULTIPART_PART_BYTES_MIN;
    if (!(this.#partBytesMin >= 1)) throw invalidArgument(undefined, `multipartPartBytesMin must be at least 1, not ${this.#partBytesMin}`);
    this.#shuffleList = options.shuffleList ?? true;
    this.#trace = options.trace === true ? [] : null;
    this.#onPut = options.onPut ?? null;
    this.#onDelete = options.onDelete ?? null;
  }

  /**
   * What the store holds under `key` right now, without a request (no latency, fault or count):
   * for a harness judging an event at the moment it takes effect (onPut, onDelete). Not a client API.
   */
  peek(key: string): Uint8Array | null {
    const object = this.#objects.get(key);
    return object === undefined ? null : wholeBody(object);
  }

  /** The keys under `prefix` right now, sorted, without a request (see peek). */
  peekKeys(prefix: string): string[] {
    return this.#sortedKeys.withPrefix(prefix);
  }

  /** Makes the next matching request(s) fail with `kind` (see FaultInjection). */
  injectFault(injection: FaultInjection): void {
    this.#faults.inject(injection);
  }

  /** The requests seen so far with their drawn latency and fault (needs `trace: true`). */
  trace(): readonly TraceEvent[] {
    return this.#trace ?? [];
  }

  /** Multipart uploads created and neither completed nor aborted. */
  pendingUploadCount(): number {
    return this.#uploads.size;
  }

  async put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> {
    checkKey(key);
    checkPutOptions(key, options);
    // The one copy of a put: the caller may reuse its buffer once the put resolves, and S3 keeps
    // what was sent, not a reference to the sender's memory.
    const copy = copyBytes(body);
    const etag = contentEtag(copy);
    return this.#request({ requestClass: 'put', key, bytesIn: copy.length, transferBytes: copy.length, signal: options?.signal }, () => {
      const current = this.#objects.get(key);
      if (options?.ifNoneMatch === '*' && current !== undefined) throw preconditionFailed(key, 'an object already exists under it (ifNoneMatch: *)');
      if (options?.ifMatch !== undefined && current?.etag !== options.ifMatch) {
        throw preconditionFailed(key, current === undefined ? 'no object exists under it (ifMatch)' : `its ETag is ${current.etag}, not ${options.ifMatch} (ifMatch)`);
      }
      this.#store(key, { chunks: [copy], size: copy.length, etag });
      this.#onPut?.(key, copy);
      return { etag };
    });
  }

  async get(key: string, options?: GetOptions): Promise<GetResult> {
    checkKey(key);
    if (options?.range !== undefined) checkRangeShape(key, options.range);
    const transferBytes = this.#transferBytes(key, options);
    return this.#request({ requestClass: 'get', key, bytesIn: 0, transferBytes, signal: options?.signal }, () => {
      const object = this.#objects.get(key);
      if (object === undefined) throw notFound(key);
      const { start, end } = resolveRange(key, options?.range, object.size);
      // A copy per response, as a network read gives: a caller that writes into what it got
      // (a follower rewriting a batch header, say) must not change the stored object.
      const body = copyRange(object.chunks, start, end);
      this.#stats.received(body.length);
      return { body, etag: object.etag, size: object.size };
    });
  }

  async head(key: string): Promise<ObjectInfo | null> {
    checkKey(key);
    return this.#request({ requestClass: 'head', key, bytesIn: 0, transferBytes: 0 }, () => {
      const object = this.#objects.get(key);
      return object === undefined ? null : { key, size: object.size, etag: object.etag };
    });
  }

  async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    const maxKeys = checkListOptions(options);
    const afterKey = options?.token === undefined ? undefined : decodeListToken(prefix, options.token);
    return this.#request({ requestClass: 'list', key: prefix, bytesIn: 0, transferBytes: 0 }, () => {
      const keys = this.#sortedKeys.withPrefix(prefix);
      const page = pageOf(prefix, keys, afterKey, maxKeys);
      const objects = page.keys.map((key) => ({ key, size: this.#objects.get(key)!.size, etag: this.#objects.get(key)!.etag }));
      if (this.#shuffleList) shuffle(objects, this.#order);
      return page.nextToken === undefined ? { objects } : { objects, nextToken: page.nextToken };
    });
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    await this.#request({ requestClass: 'delete', key, bytesIn: 0, transferBytes: 0 }, () => this.#remove(key));
  }

  /** Removes `key` if present (a delete of nothing is no error, as S3's) and tells onDelete. */
  #remove(key: string): void {
    const object = this.#objects.get(key);
    if (object === undefined) return;
    this.#objects.delete(key);
    this.#sortedKeys.remove(key);
    this.#onDelete?.(key, wholeBody(object));
  }

  #store(key: string, object: StoredObject): void {
    this.#objects.set(key, object);
    this.#sortedKeys.add(key);
  }

  /** One 'delete' request per 1000 keys, as S3's DeleteObjects; a failed batch lists its keys under `failed`. */
  async deleteMany(keys: readonly string[]): Promise<DeleteManyResult> {
    this.#checkOpen();
    checkKeys(keys);
    const batches: string[][] = [];
    for (let i = 0; i < keys.length; i += DELETE_BATCH_KEYS_MAX) batches.push(keys.slice(i, i + DELETE_BATCH_KEYS_MAX));
    const outcomes = await Promise.all(
      batches.map((batch) =>
        this.#request({ requestClass: 'delete', keys: batch, bytesIn: 0, transferBytes: 0 }, () => batch.forEach((key) => this.#remove(key))).then(
          () => ({ deleted: batch, failed: [] }),
          (error: unknown) => {
            if (!isStoreError(error) || error.kind === 'Closed') throw error;
            return { deleted: [], failed: batch.map((key) => ({ key, error })) };
          },
        ),
      ),
    );
    return { deleted: outcomes.flatMap((o) => o.deleted), failed: outcomes.flatMap((o) => o.failed) };
  }

  async createMultipartUpload(key: string, options?: MultipartOptions): Promise<MultipartUpload> {
    checkKey(key);
    if (options?.ifNoneMatch !== undefined && options.ifNoneMatch !== '*') throw invalidArgument(key, `ifNoneMatch must be '*', not ${JSON.stringify(options.ifNoneMatch)}`);
    return this.#request({ requestClass: 'multipartCreate', key, bytesIn: 0, transferBytes: 0 }, () => {
      const uploadId = `upload-${++this.#uploadSequence}`;
      this.#uploads.set(uploadId, { key, ifNoneMatch: options?.ifNoneMatch === '*', parts: new Map() });
      return this.#uploadHandle(key, uploadId);
    });
  }

  stats(): StoreStats {
    return this.#stats.snapshot();
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  #uploadHandle(key: string, uploadId: string): MultipartUpload {
    return {
      key,
      uploadId,
      uploadPart: async (partNumber, body) => this.#uploadPart(key, uploadId, partNumber, body),
      complete: async (parts) => this.#complete(key, uploadId, parts),
      abort: async () => this.#abort(key, uploadId),
    };
  }

  #uploadPart(key: string, uploadId: string, partNumber: number, body: Uint8Array): Promise<UploadedPart> {
    this.#checkOpen();
    checkPartNumber(key, partNumber);
    checkPartBody(key, partNumber, body);
    const copy = copyBytes(body); // the caller may reuse its buffer, as with put
    const etag = contentEtag(copy);
    return this.#request({ requestClass: 'uploadPart', key, bytesIn: copy.length, transferBytes: copy.length }, () => {
      this.#upload(key, uploadId).parts.set(partNumber, { body: copy, etag });
      return { partNumber, etag, size: copy.length };
    });
  }

  #complete(key: string, uploadId: string, parts: readonly UploadedPart[]): Promise<PutResult> {
    this.#checkOpen();
    checkPartList(key, parts);
    return this.#request({ requestClass: 'multipartComplete', key, bytesIn: 0, transferBytes: 0 }, () => {
      const upload = this.#upload(key, uploadId);
      const stored = parts.map((part) => {
        const found = upload.parts.get(part.partNumber);
        if (found === undefined || found.etag !== part.etag) throw invalidArgument(key, `multipart upload of ${showKey(key)}: part ${part.partNumber} with ETag ${part.etag} was not uploaded`);
        return found;
      });
      checkPartSizes(
        key,
        parts.map((part, i) => ({ partNumber: part.partNumber, size: stored[i]!.body.length })),
        this.#partBytesMin,
      );
      if (upload.ifNoneMatch && this.#objects.has(key)) throw preconditionFailed(key, 'an object already exists under it (multipart ifNoneMatch: *)');
      const etag = multipartEtag(stored.map((part) => part.etag));
      const chunks = stored.map((part) => part.body);
      this.#store(key, { chunks, size: chunks.reduce((sum, chunk) => sum + chunk.length, 0), etag });
      this.#uploads.delete(uploadId);
      return { etag };
    });
  }

  /** Idempotent: aborting an upload that is already gone succeeds. */
  #abort(key: string, uploadId: string): Promise<void> {
    this.#checkOpen();
    return this.#request({ requestClass: 'multipartAbort', key, bytesIn: 0, transferBytes: 0 }, () => void this.#uploads.delete(uploadId));
  }

  #upload(key: string, uploadId: string): PendingUpload {
    const upload = this.#uploads.get(uploadId);
    if (upload === undefined) throw new StoreError('NotFound', `multipart upload ${uploadId} of ${showKey(key)} no longer exists (completed or aborted)`, { key });
    return upload;
  }

  /** Bytes a get will move, known at its start so the latency can be drawn synchronously. */
  #transferBytes(key: string, options: GetOptions | undefined): number {
    const size = this.#objects.get(key)?.size ?? 0;
    const range = options?.range;
    if (range === undefined) return size;
    return Math.max(0, Math.min(range.end ?? size, size) - range.start);
  }

  /**
   * One request: counted, its latency and fault drawn now (synchronously, so draws follow call
   * order), then after the latency its effect runs, unless a fault stops it first.
   */
  #request<T>(request: Request, effect: () => T): Promise<T> {
    this.#checkOpen();
    this.#stats.request(request.requestClass, request.bytesIn);
    const keys = request.keys ?? (request.key === undefined ? [] : [request.key]);
    const fault = this.#faults.decide(request.requestClass, keys);
    const latencyMs = fault.waitMs ?? this.#latency.requestMs(request.requestClass, request.transferBytes) * fault.slowFactor;
    this.#record({ requestClass: request.requestClass, key: request.key ?? keys[0], latencyMs, fault: fault.kind, afterEffect: fault.afterEffect });
    const run = (): T => {
      if (fault.kind !== null && !fault.afterEffect) throw faultError(fault.kind, request.requestClass, request.key ?? keys[0], false);
      const result = effect();
      if (fault.kind !== null) throw faultError(fault.kind, request.requestClass, request.key ?? keys[0], true);
      return result;
    };
    const counted = (error: unknown): never => {
      if (isStoreError(error)) this.#stats.error(error.kind);
      throw error;
    };
    return waitFor(this.#clock, latencyMs, request.signal).then(run).catch(counted);
  }

  #record(event: TraceEvent): void {
    if (this.#trace === null) return;
    if (this.#trace.length >= TRACE_EVENTS_MAX) this.#trace.splice(0, TRACE_EVENTS_MAX / 2);
    this.#trace.push(event);
  }

  #checkOpen(): void {
    if (this.#closed) throw new StoreError('Closed', 'the memory store is closed');
  }
}

/** Resolves after `delayMs` on `clock`; at once, without a timer, for no delay. */
function waitFor(clock: Clock, delayMs: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(aborted(signal));
  if (delayMs <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      timer.cancel();
      reject(aborted(signal!));
    };
    const timer = clock.setTimer(delayMs, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** An aborted request may or may not have taken effect on a real store: a Timeout, as S3 clients report it. */
function aborted(signal: AbortSignal): StoreError {
  return new StoreError('Timeout', `request aborted by its signal: ${String(signal.reason)}`, { cause: signal.reason });
}

function notFound(key: string): StoreError {
  return new StoreError('NotFound', `no object under key ${showKey(key)}`, { key });
}

function preconditionFailed(key: string, why: string): StoreError {
  return new StoreError('PreconditionFailed', `conditional write of ${showKey(key)} failed: ${why}`, { key });
}

/** Fisher-Yates with the store's seeded order stream. */
function shuffle<T>(items: T[], random: SeededRandom): void {
  for (let i = items.length - 1; i > 0; i--) {
    const j = random.nextInt(i + 1);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
}

/** The object's bytes in one buffer: its only chunk itself, or the chunks joined (a harness's peek). */
function wholeBody(object: StoredObject): Uint8Array {
  return object.chunks.length === 1 ? object.chunks[0]! : concatBytes(object.chunks);
}

/** A new buffer with bytes [start, end) of the chunks laid end to end; the range lies within them (resolveRange). */
function copyRange(chunks: readonly Uint8Array[], start: number, end: number): Uint8Array {
  if (chunks.length === 1) return copyBytes(chunks[0]!, start, end);
  const out = uninitializedBytes(end - start); // every byte is set below
  let chunkStart = 0;
  for (const chunk of chunks) {
    if (chunkStart >= end) break;
    const chunkEnd = chunkStart + chunk.length;
    const from = Math.max(start, chunkStart);
    const to = Math.min(end, chunkEnd);
    if (from < to) out.set(chunk.subarray(from - chunkStart, to - chunkStart), from - start);
    chunkStart = chunkEnd;
  }
  return out;
}
