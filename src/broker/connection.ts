import type { Socket } from 'bun';
import { assert } from '../util/assert.ts';
import { concatBytes } from '../util/bytes.ts';

/** Kafka's socket.request.max.bytes: a frame declaring more closes the connection. */
export const REQUEST_BYTES_MAX = 100 * 1024 * 1024;
const SIZE_PREFIX_BYTES = 4;

/** What a connection does with each request frame; resolves to the response chunks, or null for none (acks=0). */
export type FrameHandler = (frame: Uint8Array) => Promise<Uint8Array[] | null>;

/**
 * One client connection: splits the byte stream into size-prefixed frames, handles them strictly
 * one after another (Kafka answers in request order, long-poll Fetch included), and writes each
 * response with backpressure. A frame wholly inside one received chunk is handed on as a view of
 * it (Bun gives every data event its own buffer); a frame spanning chunks is assembled by one copy.
 */
export class Connection {
  readonly #socket: Socket<unknown>;
  readonly #handle: FrameHandler;
  readonly #onError: (error: unknown) => void;
  /** Bytes of a frame (or its size prefix) still being assembled across chunks. */
  #partial: Uint8Array[] = [];
  #partialBytes = 0;
  readonly #frames: Uint8Array[] = [];
  #processing = false;
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
    let data = chunk;
    if (this.#partialBytes > 0) {
      this.#partial.push(chunk);
      this.#partialBytes += chunk.length;
      data = concatBytes(this.#partial); // the one copy: a frame that arrived in pieces
      this.#partial = [];
      this.#partialBytes = 0;
    }
    let at = 0;
    while (data.length - at >= SIZE_PREFIX_BYTES) {
      const size = new DataView(data.buffer, data.byteOffset + at, SIZE_PREFIX_BYTES).getInt32(0);
      if (size < 0 || size > REQUEST_BYTES_MAX) {
        this.close(new Error(`request of ${size} bytes is outside [0, ${REQUEST_BYTES_MAX}]`));
        return;
      }
      if (data.length - at - SIZE_PREFIX_BYTES < size) break;
      this.#frames.push(data.subarray(at + SIZE_PREFIX_BYTES, at + SIZE_PREFIX_BYTES + size));
      at += SIZE_PREFIX_BYTES + size;
    }
    if (at < data.length) {
      this.#partial = [data.subarray(at)];
      this.#partialBytes = data.length - at;
    }
    void this.#process();
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

  async #process(): Promise<void> {
    if (this.#processing) return;
    this.#processing = true;
    try {
      while (!this.#closed && this.#frames.length > 0) {
        const frame = this.#frames.shift()!;
        let response: Uint8Array[] | null;
        try {
          response = await this.#handle(frame);
        } catch (error) {
          this.close(error); // a request we cannot answer: Kafka closes the connection too
          return;
        }
        if (response !== null) await this.#write(response);
      }
    } finally {
      this.#processing = false;
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
