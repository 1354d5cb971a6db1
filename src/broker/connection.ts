import { stageTimers } from '../metrics/stage-timers.ts';
import { assert } from '../util/assert.ts';
import { concatBytes } from '../util/bytes.ts';
import { type Clock, type Timer, systemClock } from '../util/clock.ts';
import type { NetSocket } from '../util/network.ts';
import { ReadBufferPool, type ResponseBuffers } from './read-buffer-pool.ts';
import { RequestMemory } from './request-memory.ts';
import { responseParts } from './response-frame.ts';

/** Kafka's socket.request.max.bytes: a frame declaring more closes the connection. */
export const REQUEST_BYTES_MAX = 100 * 1024 * 1024;
/**
 * Kafka's queued.max.request.bytes, which Ferry bounds by default: bytes of requests received but
 * not yet handled, across all connections. It is the memory clients can make the broker hold in
 * request buffers (plus, for a moment, one copy of a frame that arrived in pieces); past it,
 * connections stop being read until requests finish. Too small a budget serialises large produce
 * requests from different clients.
 */
export const QUEUED_REQUEST_BYTES_MAX_DEFAULT = 256 * 1024 * 1024;
/**
 * One connection's share of that: a request that would take the connection past this waits for
 * the connection's earlier requests to finish (a connection with none in hand always proceeds,
 * so a request up to REQUEST_BYTES_MAX gets through). 32 MiB keeps 32 one-MiB produce requests
 * in flight on one connection, and stops one client from taking the whole budget with pipelining.
 */
export const CONNECTION_REQUEST_BYTES_MAX = 32 * 1024 * 1024;
/**
 * Kafka's connections.max.idle.ms: a connection that makes no progress for this long is closed:
 * nothing received, nothing written, no request being handled (a frame left half-sent included,
 * and a client that stops reading its responses while its queued requests hold their
 * reservations). Each open connection costs a file descriptor and its buffers; a short value
 * makes idle clients reconnect more often.
 */
export const CONNECTIONS_MAX_IDLE_MS_DEFAULT = 600_000;
/**
 * Requests of one connection being handled at once. Their effects start in arrival order and
 * their responses go out in that order; while one waits for its WAL object, the next ones append
 * (measured: one request per WAL object, 33 MB/s, when handled strictly one at a time). Each
 * holds its frame, so memory per connection stays below this many requests.
 */
export const PIPELINED_REQUESTS_MAX = 64;
const SIZE_PREFIX_BYTES = 4;
/** Produce (key 0) is the one API whose requests overlap: each appends at once and waits for its WAL object. */
const PRODUCE_API_KEY = 0;

assert(REQUEST_BYTES_MAX <= QUEUED_REQUEST_BYTES_MAX_DEFAULT, 'the broker-wide request budget holds the largest request');
assert(CONNECTION_REQUEST_BYTES_MAX <= QUEUED_REQUEST_BYTES_MAX_DEFAULT, "a connection's share fits the broker-wide request budget");

/**
 * What a connection does with each request frame; resolves to the response chunks, or null for
 * none (acks=0). `responseBuffers` is memory the response may hold views of (a Fetch's segment
 * reads): the connection releases it once the handler settled and the response is written or dropped (RB1).
 */
export type FrameHandler = (frame: Uint8Array, responseBuffers: ResponseBuffers) => Promise<Uint8Array[] | null>;

export interface ConnectionOptions {
  /** The request budget shared by the broker's connections; a budget of its own by default. */
  readonly memory?: RequestMemory;
  readonly clock?: Clock;
  /** Closed after this long without progress: nothing received or written, no request being handled (connections.max.idle.ms). */
  readonly idleMs?: number;
  /**
   * The largest frame taken now (at most REQUEST_BYTES_MAX): smaller before a SASL client
   * authenticated (sasl.server.max.receive.size), when it also bounds what the connection holds.
   */
  readonly frameBytesMax?: () => number;
  /**
   * Whether the frame about to start counts against the broker's request budget: not while a SASL
   * client has not authenticated, as Kafka reads authentication outside its memory pool. Such a
   * frame is bounded by frameBytesMax alone, one at a time, and holds only the bytes that arrived:
   * unauthenticated clients that declare frames they never send cannot take the budget that
   * authenticated clients' requests need. By default every frame counts.
   */
  readonly pooled?: () => boolean;
  /** The broker's reused memory for Fetch reads (read-buffer-pool.ts); none kept by default. */
  readonly readBuffers?: ReadBufferPool;
}

/** A frame whose size is known: the bytes received so far (views of the received chunks, not copies). */
interface Assembling {
  readonly size: number;
  /** Whether its size is reserved in the broker's budget (ConnectionOptions.pooled). */
  readonly pooled: boolean;
  readonly parts: Uint8Array[];
  filled: number;
}

/**
 * One client connection: splits the byte stream into size-prefixed frames, starts handling them
 * in arrival order (up to PIPELINED_REQUESTS_MAX at once) and writes the responses in that same
 * order with backpressure.
 *
 * Memory a client controls is bounded: before a frame's body is read its declared size is reserved
 * in the broker's RequestMemory (and within CONNECTION_REQUEST_BYTES_MAX); while the reservation
 * waits the socket is paused, so the client meets TCP backpressure. A frame's bytes are kept as
 * they arrive (views of the chunks the socket hands over, each its own buffer), never preallocated from
 * the declared size: a frame wholly inside one chunk is handed on as a view, a frame spanning
 * chunks is copied once, when complete. The reservation is released once the request is handled.
 */
export class Connection {
  readonly #socket: NetSocket;
  readonly #handle: FrameHandler;
  readonly #onError: (error: unknown) => void;
  readonly #memory: RequestMemory;
  readonly #clock: Clock;
  readonly #idleMs: number;
  readonly #frameBytesMax: () => number;
  readonly #pooled: () => boolean;
  /** Received chunks not yet parsed (kept while the connection waits for a reservation). */
  readonly #unparsed: Uint8Array[] = [];
  /** The size prefix being read. */
  readonly #prefix = new Uint8Array(SIZE_PREFIX_BYTES);
  #prefixFilled = 0;
  #assembling: Assembling | null = null;
  /** A frame size waiting for room: in this connection's share, or in the broker's budget. */
  #stalled: { readonly size: number; readonly on: 'connection' | 'memory' } | null = null;
  /** Bytes reserved for this connection's frames: assembling, queued and being handled. */
  #reservedBytes = 0;
  readonly #frames: { readonly bytes: Uint8Array; readonly size: number; readonly pooled: boolean }[] = [];
  /** Responses in request order, each still being produced, with the memory each may hold views of. */
  readonly #responses: { readonly answer: Promise<Uint8Array[] | null>; readonly buffers: ResponseBuffers }[] = [];
  readonly #readBuffers: ReadBufferPool;
  /** Whether every request being handled is a Produce (so another Produce may start). */
  #onlyProduceInFlight = true;
  /** Requests whose handler has not finished yet (a long-poll Fetch, an acks=all Produce). */
  #handling = 0;
  #writing = false;
  #closed = false;
  /** No request is started any more: the connection ends once the responses in hand are written (a failed authentication). */
  #ending = false;
  /** Reading is held until this timer fires (a quota's throttle, KIP-219), at #mutedUntilMs. */
  #muteTimer: Timer | null = null;
  #mutedUntilMs = 0;
  /** The response being written: the parts the socket has not taken yet, the first maybe in part. */
  #pending: Uint8Array[] = [];
  #drained: (() => void) | null = null;
  #lastActiveMs: number;
  #idleTimer: Timer;

  constructor(socket: NetSocket, handle: FrameHandler, onError: (error: unknown) => void, options: ConnectionOptions = {}) {
    this.#socket = socket;
    this.#handle = handle;
    this.#onError = onError;
    this.#memory = options.memory ?? new RequestMemory(QUEUED_REQUEST_BYTES_MAX_DEFAULT);
    this.#clock = options.clock ?? systemClock;
    this.#idleMs = options.idleMs ?? CONNECTIONS_MAX_IDLE_MS_DEFAULT;
    this.#frameBytesMax = options.frameBytesMax ?? (() => REQUEST_BYTES_MAX);
    this.#pooled = options.pooled ?? (() => true);
    this.#readBuffers = options.readBuffers ?? new ReadBufferPool(0);
    assert(this.#idleMs > 0, 'a connection idle timeout is positive');
    this.#lastActiveMs = this.#clock.monotonicMs();
    this.#idleTimer = this.#clock.setTimer(this.#idleMs, () => this.#checkIdle(), true);
  }

  received(chunk: Uint8Array): void {
    if (this.#closed || this.#ending) return;
    this.#lastActiveMs = this.#clock.monotonicMs();
    this.#unparsed.push(chunk);
    stageTimers.enter('receive');
    try {
      this.#parseUnparsed();
    } finally {
      stageTimers.exit();
    }
  }

  /** The peer or the broker is done: stop reading, drop what is queued, give back its reservations. */
  close(reason?: unknown): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#idleTimer.cancel();
    this.#muteTimer?.cancel();
    if (reason !== undefined) this.#onError(reason);
    if (this.#stalled?.on === 'memory') this.#memory.cancel(this.#granted);
    this.#stalled = null;
    const unhandled = [...this.#frames, ...(this.#assembling === null ? [] : [this.#assembling])];
    this.#frames.length = 0;
    this.#unparsed.length = 0;
    this.#assembling = null;
    for (const frame of unhandled) this.#release(frame.size, frame.pooled); // frames being handled give theirs back as they finish
    // RB1: nothing more is written; each queued response's memory goes back once its handler settled.
    this.#pending = [];
    for (const { answer, buffers } of this.#responses) answer.then(buffers.release, buffers.release);
    this.#drained?.();
    this.#socket.end();
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Starts no further request and ends the connection once every response already being produced
   * is written: how a refused authentication sends its answer and then hangs up, as Kafka does.
   */
  endAfterResponses(): void {
    if (this.#closed || this.#ending) return;
    this.#ending = true;
    this.#unparsed.length = 0;
    // A handler may call this while it is being started, before its own response is queued (a
    // refused SaslHandshake does, synchronously): look at the queue once that is done, or the
    // connection would close with that response unwritten.
    queueMicrotask(() => void this.#writeResponses());
  }

  /** Bytes of request data this connection holds: received and not yet handled. */
  get bufferedBytes(): number {
    let bytes = this.#assembling?.filled ?? 0;
    for (const frame of this.#frames) bytes += frame.bytes.length;
    for (const chunk of this.#unparsed) bytes += chunk.length;
    return bytes;
  }

  /** Whether the connection has stopped reading until room is released. */
  get paused(): boolean {
    return this.#stalled !== null;
  }

  /** The socket's drain event: the kernel took what was buffered; write more. */
  drain(): void {
    this.#flushPending();
  }

  /**
   * Reads nothing more from the client for `ms` (a quota's throttle time, KIP-219): its next
   * requests wait in the kernel's buffers, and TCP holds the client back. Requests already read go
   * on. A longer mute already running is kept.
   */
  muteFor(ms: number): void {
    const untilMs = this.#clock.monotonicMs() + ms;
    if (this.#closed || ms <= 0 || (this.#muteTimer !== null && untilMs <= this.#mutedUntilMs)) return;
    this.#muteTimer?.cancel();
    this.#mutedUntilMs = untilMs;
    this.#socket.pause();
    this.#muteTimer = this.#clock.setTimer(
      ms,
      () => {
        this.#muteTimer = null;
        if (this.#stalled === null) this.#resume();
      },
      true,
    );
  }

  /** Parses received chunks into frames until they run out or a frame must wait for room (or the connection is muted). */
  #parseUnparsed(): void {
    while (!this.#closed && this.#stalled === null && this.#muteTimer === null && this.#unparsed.length > 0) {
      const chunk = this.#unparsed[0]!;
      const used = this.#assembling === null ? this.#takePrefix(chunk) : this.#takeBody(chunk);
      if (used >= chunk.length) this.#unparsed.shift();
      else this.#unparsed[0] = chunk.subarray(used);
    }
    this.#startHandling();
  }

  /** Reads size-prefix bytes; once all four are in, reserves room for the frame. Returns the bytes used. */
  #takePrefix(chunk: Uint8Array): number {
    const take = Math.min(SIZE_PREFIX_BYTES - this.#prefixFilled, chunk.length);
    this.#prefix.set(chunk.subarray(0, take), this.#prefixFilled);
    this.#prefixFilled += take;
    if (this.#prefixFilled < SIZE_PREFIX_BYTES) return take;
    this.#prefixFilled = 0;
    const size = new DataView(this.#prefix.buffer).getInt32(0);
    const sizeMax = Math.min(this.#frameBytesMax(), REQUEST_BYTES_MAX);
    if (size < 0 || size > sizeMax) {
      this.close(new Error(`request of ${size} bytes is outside [0, ${sizeMax}]`));
      return chunk.length;
    }
    this.#admit(size);
    return take;
  }

  /**
   * Starts a frame of `size` bytes if this connection's share and the broker's budget have room;
   * else pauses reading. The share is CONNECTION_REQUEST_BYTES_MAX, or the frame limit when that is
   * smaller: a SASL client that has not authenticated holds at most sasl.server.max.receive.size,
   * however many frames it pipelines (Kafka's SaslServerAuthenticator reads one at a time).
   */
  #admit(size: number): void {
    const shareBytesMax = Math.min(CONNECTION_REQUEST_BYTES_MAX, this.#frameBytesMax());
    if (this.#reservedBytes > 0 && this.#reservedBytes + size > shareBytesMax) return this.#stall(size, 'connection');
    const pooled = this.#pooled();
    if (pooled && !this.#memory.reserve(size, this.#granted)) return this.#stall(size, 'memory');
    this.#reservedBytes += size;
    this.#assembling = { size, pooled, parts: [], filled: 0 };
    if (size === 0) this.#takeBody(new Uint8Array(0));
  }

  #stall(size: number, on: 'connection' | 'memory'): void {
    this.#stalled = { size, on };
    this.#socket.pause();
  }

  /** The broker's budget made room for the stalled frame. */
  readonly #granted = (): void => {
    const stalled = this.#stalled;
    assert(stalled?.on === 'memory', 'a granted reservation belongs to a frame waiting for memory');
    this.#stalled = null;
    this.#reservedBytes += stalled.size;
    this.#assembling = { size: stalled.size, pooled: true, parts: [], filled: 0 };
    this.#resume();
  };

  #resume(): void {
    if (this.#closed || this.#muteTimer !== null) return;
    this.#socket.resume();
    this.#parseUnparsed();
  }

  /** Keeps the next bytes of the frame in progress (a view, no copy); returns the bytes used. */
  #takeBody(chunk: Uint8Array): number {
    const assembling = this.#assembling!;
    const take = Math.min(assembling.size - assembling.filled, chunk.length);
    if (take > 0) assembling.parts.push(chunk.subarray(0, take));
    assembling.filled += take;
    if (assembling.filled === assembling.size) {
      // the one copy of a frame that arrived in pieces, made once all of it is here
      const bytes = assembling.parts.length === 1 ? assembling.parts[0]! : this.#assembled(assembling.parts, assembling.size);
      this.#frames.push({ bytes, size: assembling.size, pooled: assembling.pooled });
      this.#assembling = null;
    }
    return take;
  }

  #assembled(parts: readonly Uint8Array[], size: number): Uint8Array {
    stageTimers.copied('frame-assembly', size);
    return concatBytes(parts);
  }

  /** Gives back a frame's reserved bytes (to the broker's budget if it was `pooled`); a frame waiting for this connection's share may then start. */
  #release(bytes: number, pooled: boolean): void {
    if (bytes === 0) return;
    this.#reservedBytes -= bytes;
    if (pooled) this.#memory.release(bytes);
    const stalled = this.#stalled;
    if (stalled?.on !== 'connection') return;
    this.#stalled = null;
    this.#admit(stalled.size);
    if (this.#stalled === null) this.#resume();
  }

  /**
   * Closes the connection once it has made no progress for idleMs. It is busy while a handler
   * runs, or while it waits for the broker's budget holding nothing of it; a connection whose
   * requests are all handled but whose answers the client does not read is not busy, or a few
   * such clients would keep the budget their queued requests hold for as long as they liked.
   */
  #checkIdle(): void {
    if (this.#closed) return;
    const idleForMs = this.#clock.monotonicMs() - this.#lastActiveMs;
    const busy = this.#handling > 0 || (this.#stalled?.on === 'memory' && this.#reservedBytes === 0);
    if (!busy && idleForMs >= this.#idleMs) return this.close();
    this.#idleTimer = this.#clock.setTimer(busy ? this.#idleMs : this.#idleMs - idleForMs, () => this.#checkIdle(), true);
  }

  /**
   * Starts handling queued frames in order, within the pipelining bound. Only Produce requests
   * overlap one another (their appends still happen in arrival order); any other request starts
   * once everything before it has finished, so a Fetch after a Produce sees what it wrote.
   */
  #startHandling(): void {
    while (!this.#closed && !this.#ending && this.#frames.length > 0 && this.#responses.length < PIPELINED_REQUESTS_MAX) {
      const produce = isProduce(this.#frames[0]!.bytes);
      if (this.#responses.length > 0 && !(produce && this.#onlyProduceInFlight)) break;
      this.#onlyProduceInFlight = this.#responses.length === 0 ? produce : this.#onlyProduceInFlight && produce;
      const frame = this.#frames.shift()!;
      this.#handling++;
      const buffers = this.#readBuffers.forResponse();
      const response = this.#handle(frame.bytes, buffers);
      const handled = (): void => {
        this.#handling--;
        this.#lastActiveMs = this.#clock.monotonicMs();
        this.#release(frame.size, frame.pooled);
      };
      response.then(handled, handled); // failures are observed in #writeResponses, in order
      this.#responses.push({ answer: response, buffers });
    }
    void this.#writeResponses();
  }

  /** Writes responses strictly in request order; a request that fails closes the connection, as Kafka does. */
  async #writeResponses(): Promise<void> {
    if (this.#writing) return;
    this.#writing = true;
    try {
      while (!this.#closed && this.#responses.length > 0) {
        const { answer, buffers } = this.#responses[0]!;
        let response: Uint8Array[] | null;
        try {
          response = await answer;
        } catch (error) {
          this.close(error); // which releases its buffers, as every queued response's
          return;
        }
        this.#responses.shift();
        try {
          if (response !== null) await this.#write(response);
        } finally {
          buffers.release(); // RB1: the handler settled and the socket took every byte (or the connection closed)
        }
        this.#lastActiveMs = this.#clock.monotonicMs();
        this.#startHandling();
      }
      if (this.#ending && !this.#closed && this.#responses.length === 0) this.close();
    } finally {
      this.#writing = false;
    }
  }

  /**
   * Writes one response (size prefix and chunks), waiting for drain when the kernel buffer is full.
   * Record batches go to the socket as the views they are (response-frame.ts): the one copy on
   * the way out is the kernel's, into its socket buffer.
   */
  async #write(chunks: Uint8Array[]): Promise<void> {
    if (this.#closed) return;
    assert(this.#pending.length === 0, 'one response is written at a time');
    this.#pending = responseParts(chunks);
    this.#flushPending();
    while (this.#pending.length > 0 && !this.#closed) await new Promise<void>((resolve) => (this.#drained = resolve));
  }

  /** Writes the pending parts in order until the socket takes less than a whole part (then drain brings us back). */
  #flushPending(): void {
    const pending = this.#pending;
    while (pending.length > 0 && !this.#closed) {
      const part = pending[0]!;
      const written = stageTimers.time('write', () => this.#socket.write(part));
      if (written > 0) this.#lastActiveMs = this.#clock.monotonicMs(); // the client reads: progress
      if (written < part.length) {
        pending[0] = part.subarray(Math.max(0, written));
        return;
      }
      pending.shift();
    }
    if (pending.length > 0) return;
    const drained = this.#drained;
    this.#drained = null;
    drained?.();
  }
}

function isProduce(frame: Uint8Array): boolean {
  return frame.length >= 2 && ((frame[0]! << 8) | frame[1]!) === PRODUCE_API_KEY;
}
