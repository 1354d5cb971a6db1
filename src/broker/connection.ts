import type { Socket } from 'bun';
import { assert } from '../util/assert.ts';
import { concatBytes } from '../util/bytes.ts';

/** Kafka's socket.request.max.bytes: a frame declaring more closes the connection. */
export const REQUEST_BYTES_MAX = 100 * 1024 * 1024;
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

/** What a connection does with each request frame; resolves to the response chunks, or null for none (acks=0). */
export type FrameHandler = (frame: Uint8Array) => Promise<Uint8Array[] | null>;

/**
 * One client connection: splits the byte stream into size-prefixed frames, starts handling them
 * in arrival order (up to PIPELINED_REQUESTS_MAX at once) and writes the responses in that same
 * order with backpressure. A frame wholly inside one received chunk is handed on as a view of it
 * (Bun gives every data event its own buffer); a frame spanning chunks is copied, once, into a
 * buffer sized from its length prefix.
 */
export class Connection {
  readonly #socket: Socket<unknown>;
  readonly #handle: FrameHandler;
  readonly #onError: (error: unknown) => void;
  /** A size prefix split across chunks. */
  #prefix: Uint8Array | null = null;
  /** A frame arriving in pieces: its buffer and how much of it is filled. */
  #assembling: { frame: Uint8Array; filled: number } | null = null;
  readonly #frames: Uint8Array[] = [];
  /** Responses in request order, each still being produced. */
  readonly #responses: Promise<Uint8Array[] | null>[] = [];
  /** Whether every request being handled is a Produce (so another Produce may start). */
  #onlyProduceInFlight = true;
  #writing = false;
  #closed = false;
  #pendingWrite: Uint8Array | null = null;
  #drained: (() => void) | null = null;

  constructor(socket: Socket<unknown>, handle: FrameHandler, onError: (error: unknown) => void) {
    this.#socket = socket;
    this.#handle = handle;
    this.#onError = onError;
  }

  received(chunk: Uint8Array): void {
    if (this.#closed) return;
    let at = this.#continueFrame(chunk);
    while (at < chunk.length && !this.#closed) {
      if (this.#prefix !== null || chunk.length - at < SIZE_PREFIX_BYTES) {
        at = this.#takePrefix(chunk, at);
        continue;
      }
      const size = new DataView(chunk.buffer, chunk.byteOffset + at, SIZE_PREFIX_BYTES).getInt32(0);
      at = this.#startFrame(chunk, at + SIZE_PREFIX_BYTES, size);
    }
    this.#startHandling();
  }

  /** The peer or the broker is done: stop reading, drop what is queued. */
  close(reason?: unknown): void {
    if (this.#closed) return;
    this.#closed = true;
    if (reason !== undefined) this.#onError(reason);
    this.#frames.length = 0;
    this.#drained?.();
    this.#socket.end();
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Bun's drain event: the kernel took what was buffered; write more. */
  drain(): void {
    this.#flushPending();
  }

  /** Copies the next bytes of a frame in progress; returns where the chunk's unread bytes start. */
  #continueFrame(chunk: Uint8Array): number {
    const assembling = this.#assembling;
    if (assembling === null) return 0;
    const take = Math.min(assembling.frame.length - assembling.filled, chunk.length);
    assembling.frame.set(chunk.subarray(0, take), assembling.filled);
    assembling.filled += take;
    if (assembling.filled === assembling.frame.length) {
      this.#frames.push(assembling.frame);
      this.#assembling = null;
    }
    return take;
  }

  /** Gathers a size prefix that straddles chunks; starts its frame once all four bytes are in. */
  #takePrefix(chunk: Uint8Array, at: number): number {
    const have = this.#prefix ?? new Uint8Array(0);
    const take = Math.min(SIZE_PREFIX_BYTES - have.length, chunk.length - at);
    const prefix = concatBytes([have, chunk.subarray(at, at + take)]);
    if (prefix.length < SIZE_PREFIX_BYTES) {
      this.#prefix = prefix;
      return at + take;
    }
    this.#prefix = null;
    return this.#startFrame(chunk, at + take, new DataView(prefix.buffer).getInt32(0));
  }

  /** A frame of `size` bytes begins at `at`: a view if the chunk holds it all, else a buffer to fill. */
  #startFrame(chunk: Uint8Array, at: number, size: number): number {
    if (size < 0 || size > REQUEST_BYTES_MAX) {
      this.close(new Error(`request of ${size} bytes is outside [0, ${REQUEST_BYTES_MAX}]`));
      return chunk.length;
    }
    if (chunk.length - at >= size) {
      this.#frames.push(chunk.subarray(at, at + size));
      return at + size;
    }
    const frame = new Uint8Array(size); // the one copy of a frame that arrives in pieces
    frame.set(chunk.subarray(at));
    this.#assembling = { frame, filled: chunk.length - at };
    return chunk.length;
  }

  /**
   * Starts handling queued frames in order, within the pipelining bound. Only Produce requests
   * overlap one another (their appends still happen in arrival order); any other request starts
   * once everything before it has finished, so a Fetch after a Produce sees what it wrote.
   */
  #startHandling(): void {
    while (!this.#closed && this.#frames.length > 0 && this.#responses.length < PIPELINED_REQUESTS_MAX) {
      const produce = isProduce(this.#frames[0]!);
      if (this.#responses.length > 0 && !(produce && this.#onlyProduceInFlight)) break;
      this.#onlyProduceInFlight = this.#responses.length === 0 ? produce : this.#onlyProduceInFlight && produce;
      const response = this.#handle(this.#frames.shift()!);
      response.catch(() => {}); // observed in #writeResponses, in order
      this.#responses.push(response);
    }
    void this.#writeResponses();
  }

  /** Writes responses strictly in request order; a request that fails closes the connection, as Kafka does. */
  async #writeResponses(): Promise<void> {
    if (this.#writing) return;
    this.#writing = true;
    try {
      while (!this.#closed && this.#responses.length > 0) {
        let response: Uint8Array[] | null;
        try {
          response = await this.#responses[0]!;
        } catch (error) {
          this.close(error);
          return;
        }
        this.#responses.shift();
        if (response !== null) await this.#write(response);
        this.#startHandling();
      }
    } finally {
      this.#writing = false;
    }
  }

  /** Writes one response (size prefix and chunks), waiting for drain when the kernel buffer is full. */
  async #write(chunks: Uint8Array[]): Promise<void> {
    const size = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
    const prefix = new Uint8Array(SIZE_PREFIX_BYTES);
    new DataView(prefix.buffer).setInt32(0, size);
    // One contiguous write per response: the copy of record batches happens here, once, into
    // the socket's buffer (Bun has no writev for sockets).
    const body = chunks.length === 0 ? prefix : concatBytes([prefix, ...chunks]);
    assert(this.#pendingWrite === null, 'one response is written at a time');
    this.#pendingWrite = body;
    this.#flushPending();
    while (this.#pendingWrite !== null && !this.#closed) await new Promise<void>((resolve) => (this.#drained = resolve));
  }

  #flushPending(): void {
    const pending = this.#pendingWrite;
    if (pending === null || this.#closed) return;
    const written = this.#socket.write(pending);
    this.#pendingWrite = written >= pending.length ? null : pending.subarray(Math.max(0, written));
    if (this.#pendingWrite === null) {
      const drained = this.#drained;
      this.#drained = null;
      drained?.();
    }
  }
}

function isProduce(frame: Uint8Array): boolean {
  return frame.length >= 2 && ((frame[0]! << 8) | frame[1]!) === PRODUCE_API_KEY;
}
