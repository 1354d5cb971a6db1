import { putConditionally, type CurrentObject } from '../store/conditional-write.ts';
import { StoreError, isStoreError } from '../store/errors.ts';
import type {
  DeleteManyResult,
  GetOptions,
  GetResult,
  ListOptions,
  ListPage,
  MultipartOptions,
  MultipartUpload,
  ObjectInfo,
  ObjectStore,
  PutOptions,
  PutResult,
  SequentialWrite,
  UploadedPart,
} from '../store/object-store.ts';
import type { StoreStats } from '../store/stats.ts';
import type { SeededRandom } from '../util/random.ts';
import type { ProcessGate, SimScheduler } from './scheduler.ts';
import type { WalWrites } from './wal-audit.ts';
import type { LeaseWrites } from './lease-writes.ts';
import { concatBytes, copyBytes } from '../util/bytes.ts';
import { SimSequentialWrite } from './sequential-write.ts';
import type { SequentialWrites } from './sequential-writes.ts';

/** How long a request to a store this process cannot reach hangs before it fails (an SDK's connect timeout). */
export const UNREACHABLE_FAIL_MS_MIN = 50;
export const UNREACHABLE_FAIL_MS_MAX = 2_000;
/**
 * Control records (ControlStore's root): JSON with no checksum of its own, read as the store
 * answered, as the cluster's control store always is here. A single broker keeps its tier records
 * in the WAL store: its corrupted reads stay with the data objects, whose checksums are there to
 * catch them, so one layout is not judged by a fault the other is spared.
 */
const CONTROL_KEY_PREFIX = 'control/';
/** Attempts of a conditional put in all (S3Store's default maxAttempts): resent only when a read-back proved it did not land. */
const CONDITIONAL_ATTEMPTS_MAX = 3;
/** The first wait before a conditional put is sent again; doubled each time (as an SDK's backoff). */
const CONDITIONAL_BACKOFF_MS_BASE = 20;
/** Of the ambiguous answers drawn, the share whose request reached the store (took effect, or failed its condition there) before its answer was lost. */
const AMBIGUOUS_SENT_SHARE = 0.5;
/** How long a lost answer keeps its caller waiting when the request never reached the store (a 500 from the front end, a reset). */
const AMBIGUOUS_UNSENT_MS_MIN = 5;
const AMBIGUOUS_UNSENT_MS_MAX = 200;
/** Failures this view made up that are known never to have been sent (an unreachable store): not ambiguous. */
const NEVER_SENT = new WeakSet<StoreError>();

/** Extra time one write of a control record spends on the path: before it reaches the store, and after, with its answer. */
export interface WriteDelay {
  readonly toStoreMs: number;
  readonly backMs: number;
}

/** Decides the extra time of each control-record write sent at `nowMs` (simulated); null: none. */
export type WriteDelays = (key: string, nowMs: number) => WriteDelay | null;

/**
 * One simulated process's connection to a shared object store (a MemoryStore that all processes
 * see, as they would see one bucket). Every answer reaches the process through its gate: a dead
 * process never hears back, a paused one hears once resumed, though the request took effect when
 * the store did it. Two faults of the path between this process and the store:
 * - `unreachable`: new requests take no effect and fail as Unavailable after a drawn delay (a
 *   network partition from the store; requests already sent still complete);
 * - `corruptReadRate`: a GET of a data object answers it with one byte flipped, at this
 *   probability (a bit flip on the path; a reader must detect it by checksum and read again);
 * - `ambiguousConditionalRate`: a conditional put's answer is lost at this probability, whether
 *   its request reached the store (and took effect or failed its condition there) or not: the
 *   caller gets Unavailable, "may have taken effect";
 * - `controlWriteDelays`: a write of a control record (a lease renewal, a claim) spends extra time
 *   on its way to the store and on its answer's way back (a slow or congested path), as drawn.
 * A view given the run's `sequential` writes offers openSequentialWrite (sequential-write.ts): its
 * appends are requests through the same gate and faults, its finish a put, whose answer is lost
 * at that run's own rate (`SequentialWrites.lostFinishRate`) and judged as a conditional put's.
 * Like S3Store, the view resolves an ambiguous answer to a conditional put (a Timeout or an
 * Unavailable from the store, or one drawn here) by reading the key back, through the same code
 * (src/store/conditional-write.ts, docs/cluster-protocol.md CW1): the judging is the client's.
 */
export class SimStoreView implements ObjectStore {
  readonly kind: string;
  readonly #store: ObjectStore;
  readonly #gate: ProcessGate;
  readonly #scheduler: SimScheduler;
  readonly #random: SeededRandom;
  unreachable = false;
  corruptReadRate = 0;
  ambiguousConditionalRate = 0;
  controlWriteDelays: WriteDelays | null = null;
  /** GET answers corrupted so far (for the run's fault count). */
  corruptedReads = 0;

  readonly #writes: WalWrites | null;
  readonly #sends: LeaseWrites | null;
  /** Absent unless the view was given the run's sequential writes: StreamingUpload then puts objects whole, as before. */
  readonly openSequentialWrite?: (key: string, options?: MultipartOptions) => Promise<SequentialWrite>;

  /**
   * `writes`: where write requests that reach the store are noted (the WAL audit); `sends`: where
   * each write this process sends is noted as it leaves (leader-within-lease); `sequential`: the
   * run's sequential writes, when this view offers them.
   */
  constructor(
    store: ObjectStore,
    gate: ProcessGate,
    scheduler: SimScheduler,
    random: SeededRandom,
    writes: WalWrites | null = null,
    sends: LeaseWrites | null = null,
    sequential: SequentialWrites | null = null,
  ) {
    this.#writes = writes;
    this.#sends = sends;
    this.#store = store;
    this.#gate = gate;
    this.#scheduler = scheduler;
    this.#random = random;
    this.kind = store.kind;
    if (sequential !== null) this.openSequentialWrite = (key, options) => this.#openSequentialWrite(key, options, sequential);
  }

  put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> {
    if (options?.ifNoneMatch === undefined && options?.ifMatch === undefined) return this.#call(key, () => this.#send(key, body, options));
    return this.#putConditionally(key, body, options, this.ambiguousConditionalRate);
  }

  /** A conditional put, each attempt's answer lost at `lostRate`, an ambiguous answer judged by reading back (CW1). */
  #putConditionally(key: string, body: Uint8Array, options: PutOptions, lostRate: number): Promise<PutResult> {
    const write = { key, objectKey: key, body, ifNoneMatch: options.ifNoneMatch, ifMatch: options.ifMatch, authorship: options.authorship, signal: options.signal };
    return putConditionally(write, {
      attempt: () => this.#conditionalAttempt(key, body, options, lostRate),
      readBack: () => this.#readBack(key),
      mayHaveTakenEffect: (error) => (error.kind === 'Timeout' || error.kind === 'Unavailable') && !NEVER_SENT.has(error),
      attemptsMax: CONDITIONAL_ATTEMPTS_MAX,
      backoff: (attempt) => this.#wait(CONDITIONAL_BACKOFF_MS_BASE * 2 ** (attempt - 1) * (0.5 + this.#random.next())),
    });
  }

  async get(key: string, options?: GetOptions): Promise<GetResult> {
    const result = await this.#call(key, () => this.#store.get(key, options));
    if (this.corruptReadRate === 0 || result.body.length === 0 || key.startsWith(CONTROL_KEY_PREFIX) || this.#random.next() >= this.corruptReadRate) return result;
    this.corruptedReads++;
    const body = copyBytes(result.body); // a copy even of a Buffer, whose slice() is a view
    const position = this.#random.nextInt(body.length);
    body[position] = body[position]! ^ (1 << this.#random.nextInt(8));
    return { ...result, body };
  }

  head(key: string): Promise<ObjectInfo | null> {
    return this.#call(key, () => this.#store.head(key));
  }

  list(prefix: string, options?: ListOptions): Promise<ListPage> {
    return this.#call(prefix, () => this.#store.list(prefix, options));
  }

  delete(key: string): Promise<void> {
    return this.#call(key, () => this.#store.delete(key));
  }

  deleteMany(keys: readonly string[]): Promise<DeleteManyResult> {
    return this.#call(keys[0], () => this.#store.deleteMany(keys));
  }

  async createMultipartUpload(key: string, options?: MultipartOptions): Promise<MultipartUpload> {
    const upload = await this.#call(key, () => this.#store.createMultipartUpload(key, options));
    const bodies = new Map<number, Uint8Array>(); // what the object will hold, for the WAL audit
    return {
      key: upload.key,
      uploadId: upload.uploadId,
      uploadPart: (partNumber: number, body: Uint8Array): Promise<UploadedPart> => {
        bodies.set(partNumber, copyBytes(body));
        return this.#call(key, () => upload.uploadPart(partNumber, body));
      },
      complete: (parts: readonly UploadedPart[]): Promise<PutResult> =>
        this.#call(key, () => this.#noteSettled(key, concatBytes(parts.map((part) => bodies.get(part.partNumber) ?? new Uint8Array())), upload.complete(parts))),
      abort: (): Promise<void> => this.#call(key, () => upload.abort()),
    };
  }

  stats(): StoreStats {
    return this.#store.stats();
  }

  /**
   * Opens the store's side of a sequential write (a CreateMultipartUpload: a request, its faults);
   * the write's appends and finish go through this view (sequential-write.ts).
   */
  async #openSequentialWrite(key: string, options: MultipartOptions | undefined, sequential: SequentialWrites): Promise<SequentialWrite> {
    const upload = await this.#call(key, () => this.#store.createMultipartUpload(key));
    sequential.opened();
    const condition: PutOptions = options?.ifNoneMatch === '*' ? { ifNoneMatch: '*' } : {};
    return new SimSequentialWrite(key, upload, {
      call: (request) => this.#call(key, request),
      publish: (body) => (condition.ifNoneMatch === undefined ? this.#call(key, () => this.#send(key, body, condition)) : this.#putConditionally(key, body, condition, sequential.lostFinishRate)),
      counts: sequential,
    });
  }

  /** The shared store outlives every process: closing a view closes nothing. */
  async close(): Promise<void> {}

  /** One put leaving this process now (every attempt is one), through the path's extra time if any. */
  #send(key: string, body: Uint8Array, options: PutOptions | undefined): Promise<PutResult> {
    this.#sends?.sent(this.#gate.name, key, body);
    const delay = key.startsWith(CONTROL_KEY_PREFIX) ? (this.controlWriteDelays?.(key, this.#scheduler.nowMs) ?? null) : null;
    if (delay === null) return this.#noteSettled(key, body, this.#store.put(key, body, options));
    const sentBody = copyBytes(body); // what left the process: the caller's buffer may change before it reaches the store
    return this.#delayed(delay, () => this.#noteSettled(key, sentBody, this.#store.put(key, sentBody, options)));
  }

  /** `request` reaches the store `toStoreMs` from now, and its answer (or failure) comes back `backMs` after the store's. */
  #delayed<T>(delay: WriteDelay, request: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#scheduler.complete(delay.toStoreMs, () => {
        request().then(
          (value) => void this.#scheduler.complete(delay.backMs, () => resolve(value)),
          (error: unknown) => void this.#scheduler.complete(delay.backMs, () => reject(error)),
        );
      });
    });
  }

  /** One attempt of a conditional put, its answer lost at `lostRate` (drawn only when that is above 0). */
  #conditionalAttempt(key: string, body: Uint8Array, options: PutOptions, lostRate: number): Promise<PutResult> {
    if (lostRate === 0 || this.#random.next() >= lostRate) return this.#call(key, () => this.#send(key, body, options));
    const sent = this.#random.next() < AMBIGUOUS_SENT_SHARE;
    const lost = new StoreError('Unavailable', `put ${JSON.stringify(key)}: the answer was lost (simulated: the request ${sent ? 'reached' : 'never reached'} the store)`, { key });
    if (sent)
      return this.#call(key, () =>
        this.#send(key, body, options).then(
          () => Promise.reject(lost),
          () => Promise.reject(lost),
        ),
      );
    const delayMs = AMBIGUOUS_UNSENT_MS_MIN + this.#random.next() * (AMBIGUOUS_UNSENT_MS_MAX - AMBIGUOUS_UNSENT_MS_MIN);
    return this.#call(key, () => new Promise<PutResult>((_, reject) => void this.#scheduler.complete(delayMs, () => reject(lost))));
  }

  /** The whole object under `key` now, or null: how an ambiguous answer is judged (never a corrupted read: the judge is not a data reader). */
  async #readBack(key: string): Promise<CurrentObject | null> {
    try {
      return await this.#call(key, () => this.#store.get(key));
    } catch (error) {
      if (isStoreError(error, 'NotFound')) return null;
      throw error;
    }
  }

  /** A wait on this process's side (a backoff): it ends only while the process lives. */
  #wait(delayMs: number): Promise<void> {
    return this.#gate.settle(new Promise<void>((resolve) => void this.#scheduler.schedule(delayMs, resolve)));
  }

  /** Notes when a write came back from the store, before this process hears of it (it may be paused, or dead). */
  #noteSettled<T>(key: string, body: Uint8Array, write: Promise<T>): Promise<T> {
    if (this.#writes === null) return write;
    const note = () => this.#writes!.settled(key, body, this.#scheduler.nowMs);
    write.then(note, note);
    return write;
  }

  #call<T>(key: string | undefined, request: () => Promise<T>): Promise<T> {
    if (!this.unreachable) return this.#gate.settle(request());
    const delayMs = UNREACHABLE_FAIL_MS_MIN + this.#random.next() * (UNREACHABLE_FAIL_MS_MAX - UNREACHABLE_FAIL_MS_MIN);
    const failure = new Promise<T>((_, reject) => {
      const error = new StoreError('Unavailable', 'the store is unreachable from this broker (simulated partition)', key === undefined ? {} : { key });
      NEVER_SENT.add(error);
      this.#scheduler.complete(delayMs, () => reject(error));
    });
    return this.#gate.settle(failure);
  }
}
