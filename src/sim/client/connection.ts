/**
 * One client connection to a broker over the injected Network: size-prefixed frames, correlation
 * ids, many requests in flight at once (Kafka answers a connection's requests in order; answers
 * are still matched by id), a request timeout on the injected clock, and connection loss failing
 * every request in flight. Never throws at a caller: every request ends as a Reply.
 */
import { KafkaReader } from '../../broker/protocol/reader.ts';
import { KafkaWriter } from '../../broker/protocol/writer.ts';
import type { Clock, Timer } from '../../util/clock.ts';
import type { NetSocket, Network } from '../../util/network.ts';
import { type ClientApi, writeRequestHeader } from './api.ts';

/** A request's end: the broker's answer, or none (the timeout passed, or the connection died). */
/** Unanswered: 'not-sent' when the request never left (no connection), so it surely took no effect. */
export type Reply<Response> = { readonly answered: true; readonly response: Response } | { readonly answered: false; readonly error: UnansweredError };
export type UnansweredError = 'timeout' | 'disconnected' | 'not-sent';

export interface ConnectionOptions {
  readonly network: Network;
  readonly clock: Clock;
  readonly host: string;
  readonly port: number;
  readonly clientId: string;
  readonly requestTimeoutMs: number;
}

const SIZE_PREFIX_BYTES = 4;
const CORRELATION_ID_BYTES = 4;
/** Correlation ids wrap within int32. */
const CORRELATION_ID_MAX = 0x7fff_ffff;
/** A response frame larger than this is a broken stream, not a response (Fetch answers stay far below). */
const RESPONSE_BYTES_MAX = 256 * 1024 * 1024;

interface Pending {
  readonly decode: (reader: KafkaReader) => unknown;
  readonly resolve: (reply: Reply<unknown>) => void;
  readonly timer: Timer;
}

export class ClientConnection {
  readonly host: string;
  readonly port: number;
  readonly #options: ConnectionOptions;
  #socket: NetSocket | null = null;
  #closed = false;
  #nextCorrelationId = 0;
  readonly #pending = new Map<number, Pending>();
  /** Bytes written but not yet taken by the socket (backpressure). */
  readonly #unsent: Uint8Array[] = [];
  /** A write fell short: nothing more goes out until the socket drains. */
  #waitingForDrain = false;
  /** Bytes received and not yet a whole frame. */
  #received: Uint8Array = new Uint8Array(0);

  private constructor(options: ConnectionOptions) {
    this.#options = options;
    this.host = options.host;
    this.port = options.port;
  }

  /** A connected connection, or null when the broker cannot be reached within the request timeout. */
  static async open(options: ConnectionOptions): Promise<ClientConnection | null> {
    const connection = new ClientConnection(options);
    const connecting = options.network.connect(options.host, options.port, {
      data: (_socket, chunk) => connection.#onData(chunk),
      drain: () => {
        connection.#waitingForDrain = false;
        connection.#flush();
      },
      close: () => connection.#fail(),
      error: () => connection.#fail(),
    });
    // A connect that hangs (a partitioned peer) gives up on the clock; a socket that opens after that is closed.
    let timer: Timer | null = null;
    const timedOut = new Promise<null>((resolve) => void (timer = options.clock.setTimer(options.requestTimeoutMs, () => resolve(null))));
    const socket = await Promise.race([connecting.catch(() => null), timedOut]);
    timer!.cancel();
    if (socket === null) {
      connection.#fail();
      void connecting.then((late) => late.terminate(), () => {});
      return null;
    }
    connection.#socket = socket;
    if (connection.#closed) return null; // closed between connect and here
    connection.#flush();
    return connection;
  }

  get closed(): boolean {
    return this.#closed;
  }

  get inFlight(): number {
    return this.#pending.size;
  }

  /** Sends `request` and waits for its answer, at most `timeoutMs` (the connection's request timeout by default). */
  send<Request, Response>(api: ClientApi<Request, Response>, request: Request, timeoutMs = this.#options.requestTimeoutMs): Promise<Reply<Response>> {
    if (this.#closed) return Promise.resolve({ answered: false, error: 'not-sent' });
    const correlationId = this.#write(api, request);
    return new Promise((resolve) => {
      // Kafka's clients close a connection whose request timed out: its answer would still come
      // first on this connection, and every request behind it waits for it.
      const timer = this.#options.clock.setTimer(timeoutMs, () => {
        this.#settle(correlationId, { answered: false, error: 'timeout' });
        this.close();
      });
      this.#pending.set(correlationId, { decode: (reader) => api.decodeResponse(reader), resolve: resolve as (reply: Reply<unknown>) => void, timer });
    });
  }

  /** Sends a request the broker does not answer (Produce with acks 0); false when the connection is gone. */
  sendWithoutAnswer<Request>(api: ClientApi<Request, unknown>, request: Request): boolean {
    if (this.#closed) return false;
    this.#write(api, request);
    return true;
  }

  /** Closes at once; every request in flight ends unanswered. */
  close(): void {
    this.#socket?.terminate();
    this.#fail();
  }

  #write<Request>(api: ClientApi<Request, unknown>, request: Request): number {
    const correlationId = this.#nextCorrelationId;
    this.#nextCorrelationId = correlationId === CORRELATION_ID_MAX ? 0 : correlationId + 1;
    const body = new KafkaWriter();
    writeRequestHeader(body, api, correlationId, this.#options.clientId);
    api.encodeRequest(body, request);
    // One write per request: a simulated network delivers each write as one event.
    const frame = new Uint8Array(SIZE_PREFIX_BYTES + body.length);
    new DataView(frame.buffer).setInt32(0, body.length);
    let position = SIZE_PREFIX_BYTES;
    for (const chunk of body.chunks()) {
      frame.set(chunk, position);
      position += chunk.length;
    }
    this.#unsent.push(frame);
    this.#flush();
    return correlationId;
  }

  #flush(): void {
    const socket = this.#socket;
    if (socket === null || this.#closed || this.#waitingForDrain) return;
    while (this.#unsent.length > 0) {
      const chunk = this.#unsent[0]!;
      const written = socket.write(chunk);
      if (written < chunk.length) {
        this.#unsent[0] = chunk.subarray(written); // the rest goes on drain
        this.#waitingForDrain = true;
        return;
      }
      this.#unsent.shift();
    }
  }

  #onData(chunk: Uint8Array): void {
    this.#received = this.#received.length === 0 ? chunk.slice() : concat(this.#received, chunk);
    while (!this.#closed && this.#received.length >= SIZE_PREFIX_BYTES) {
      const view = new DataView(this.#received.buffer, this.#received.byteOffset, this.#received.length);
      const size = view.getInt32(0);
      if (size < CORRELATION_ID_BYTES || size > RESPONSE_BYTES_MAX) return this.close();
      if (this.#received.length < SIZE_PREFIX_BYTES + size) return;
      const frame = this.#received.subarray(SIZE_PREFIX_BYTES, SIZE_PREFIX_BYTES + size);
      this.#received = this.#received.subarray(SIZE_PREFIX_BYTES + size);
      this.#onFrame(frame);
    }
  }

  #onFrame(frame: Uint8Array): void {
    const reader = new KafkaReader(frame);
    const correlationId = reader.int32();
    const pending = this.#pending.get(correlationId);
    if (pending === undefined) return this.close(); // an answer to nothing: the stream is broken
    let response: unknown;
    try {
      response = pending.decode(reader);
    } catch {
      return this.close(); // a response this client cannot read: the stream is broken
    }
    this.#settle(correlationId, { answered: true, response });
  }

  #settle(correlationId: number, reply: Reply<unknown>): void {
    const pending = this.#pending.get(correlationId);
    if (pending === undefined) return;
    this.#pending.delete(correlationId);
    pending.timer.cancel();
    pending.resolve(reply);
  }

  #fail(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#unsent.length = 0;
    for (const correlationId of [...this.#pending.keys()]) this.#settle(correlationId, { answered: false, error: 'disconnected' });
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}
