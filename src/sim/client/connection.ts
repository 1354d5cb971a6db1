/**
 * One client connection to a broker over the injected Network: size-prefixed frames, correlation
 * ids, many requests in flight at once (Kafka answers a connection's requests in order; answers
 * are still matched by id), a request timeout on the injected clock, and connection loss failing
 * every request in flight. Never throws at a caller: every request ends as a Reply.
 *
 * On a SASL listener (issue 13) the connection authenticates before it is handed out (sasl.ts),
 * and, when the broker answers a session lifetime (KIP-368), re-authenticates late in it: new
 * requests are held (not written) from the SaslHandshake until the exchange completes, since the
 * broker closes a connection that sends anything else meanwhile.
 *
 * An answer with throttle_time_ms (a client quota, issue 25) holds the next requests for that
 * long, as Kafka's clients do since KIP-219 (NetworkClient leaves a throttled node alone): the
 * broker has muted the connection meanwhile anyway. A held request's timeout starts when it goes
 * out. A re-authentication's exchange goes past the hold (quotas exempt it).
 */
import { KafkaReader } from '../../protocol/reader.ts';
import { KafkaWriter } from '../../protocol/writer.ts';
import type { Clock, Timer } from '../../util/clock.ts';
import type { NetSocket, Network } from '../../util/network.ts';
import { type ClientApi, writeRequestHeader } from './api.ts';
import { authenticate, type ClientSasl, reauthenticateAfterMs, type SaslChannel, type SaslResult } from './sasl.ts';
import type { AnswerOrigin } from '../history.ts';

/**
 * A request's end: the broker's answer (with who wrote it and when, where the network tells), or
 * none (the timeout passed, or the connection died). Unanswered: 'not-sent' when the request never
 * left (no connection), so it surely took no effect.
 */
export type Reply<Response> = { readonly answered: true; readonly response: Response; readonly origin?: AnswerOrigin } | { readonly answered: false; readonly error: UnansweredError };
export type UnansweredError = 'timeout' | 'disconnected' | 'not-sent';

export interface ConnectionOptions {
  readonly network: Network;
  readonly clock: Clock;
  readonly host: string;
  readonly port: number;
  readonly clientId: string;
  readonly requestTimeoutMs: number;
  /** Authenticate with this before the connection is handed out; null or absent: none (a PLAINTEXT listener). */
  readonly sasl?: ClientSasl | null;
  /** Told how each exchange ended (the first, and every re-authentication), with when it started. */
  readonly onAuthentication?: (result: SaslResult, reauthentication: boolean, startMs: number) => void;
  /** The time onAuthentication's startMs is on (the history's); the clock's by default. */
  readonly now?: () => number;
  /** Who wrote a chunk this connection received, and when (the simulated network knows); absent or null: unknown. */
  readonly origin?: (chunk: Uint8Array) => AnswerOrigin | null;
  /**
   * Told of each answer that carried a throttle time, once the throttle ended or the connection
   * closed: the API, when it was answered (on `now`'s time), for how long, and when the next
   * request went out on this connection after it (null: none did by then).
   */
  readonly onThrottle?: (throttle: Throttle) => void;
}

/** An answer's throttle and what the client did in it (KIP-219: nothing). */
export interface Throttle {
  readonly api: string;
  readonly answeredMs: number;
  readonly throttleMs: number;
  readonly nextSentMs: number | null;
}

const SIZE_PREFIX_BYTES = 4;
const CORRELATION_ID_BYTES = 4;
/** Correlation ids wrap within int32. */
const CORRELATION_ID_MAX = 0x7fff_ffff;
/** A response frame larger than this is a broken stream, not a response (Fetch answers stay far below). */
const RESPONSE_BYTES_MAX = 256 * 1024 * 1024;

interface Pending {
  /** Kafka's name of the API asked. */
  readonly api: string;
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
  /** Request frames held while a re-authentication runs (null: none runs). */
  #held: Uint8Array[] | null = null;
  /** After SaslHandshake v0: the next frame is a bare token answer, for this waiter. */
  #bareWaiter: ((frame: Uint8Array | null) => void) | null = null;
  #reauthTimer: Timer | null = null;
  /** While a throttle runs (KIP-219): the request frames held, until when, and the throttles answered (told of at its end); null: none runs. */
  #throttled: { frames: Uint8Array[]; untilMs: number; timer: Timer; throttles: { -readonly [K in keyof Throttle]: Throttle[K] }[] } | null = null;
  /** Throttles answered whose next request has not gone out yet: the next one that does is noted in each. */
  #awaitingSend: { nextSentMs: number | null }[] = [];

  private constructor(options: ConnectionOptions) {
    this.#options = options;
    this.host = options.host;
    this.port = options.port;
  }

  /** A connected (and, with `sasl`, authenticated) connection, or null when the broker cannot be reached within the request timeout or refused it. */
  static async open(options: ConnectionOptions): Promise<ClientConnection | null> {
    const connection = await ClientConnection.connect(options);
    if (connection === null || options.sasl == null) return connection;
    return (await connection.#authenticate(options.sasl, false)) ? connection : null;
  }

  /** Connected only: no authentication, whatever `sasl` says (an intruder drives its own exchange). */
  static async connect(options: ConnectionOptions): Promise<ClientConnection | null> {
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
      void connecting.then(
        (late) => late.terminate(),
        () => {},
      );
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
    return this.#send(api, request, timeoutMs, false);
  }

  #send<Request, Response>(api: ClientApi<Request, Response>, request: Request, timeoutMs: number, past: boolean): Promise<Reply<Response>> {
    if (this.#closed) return Promise.resolve({ answered: false, error: 'not-sent' });
    const heldMs = past || this.#throttled === null ? 0 : Math.max(0, this.#throttled.untilMs - this.#options.clock.nowMs());
    const correlationId = this.#write(api, request, past);
    return new Promise((resolve) => {
      // Kafka's clients close a connection whose request timed out: its answer would still come
      // first on this connection, and every request behind it waits for it.
      const timer = this.#options.clock.setTimer(heldMs + timeoutMs, () => {
        this.#settle(correlationId, { answered: false, error: 'timeout' });
        this.close();
      });
      this.#pending.set(correlationId, { api: api.name, decode: (reader) => api.decodeResponse(reader), resolve: resolve as (reply: Reply<unknown>) => void, timer });
    });
  }

  /** Sends a request the broker does not answer (Produce with acks 0); false when the connection is gone. */
  sendWithoutAnswer<Request>(api: ClientApi<Request, unknown>, request: Request): boolean {
    if (this.#closed) return false;
    this.#write(api, request);
    return true;
  }

  /**
   * Writes `token` as a bare frame (after SaslHandshake v0, [A4]) and waits for the next frame,
   * taken bare; null when the connection closes (a refused token) or nothing comes in time.
   */
  exchangeBareToken(token: Uint8Array): Promise<Uint8Array | null> {
    if (this.#closed) return Promise.resolve(null);
    return new Promise((resolve) => {
      const timer = this.#options.clock.setTimer(this.#options.requestTimeoutMs, () => {
        this.#bareWaiter = null;
        resolve(null);
        this.close();
      });
      this.#bareWaiter = (frame) => {
        timer.cancel();
        this.#bareWaiter = null;
        resolve(frame);
      };
      this.#unsent.push(sized([token]));
      this.#flush();
    });
  }

  /** Runs one exchange; true when it succeeded (else the connection is closed). Re-authenticates late in a session that has a lifetime. */
  async #authenticate(sasl: ClientSasl, reauthentication: boolean): Promise<boolean> {
    const startMs = (this.#options.now ?? (() => this.#options.clock.nowMs()))();
    // The exchange's own requests go out past any held ones.
    const channel: SaslChannel = { send: (api, request) => this.#send(api, request, this.#options.requestTimeoutMs, true), exchangeBareToken: (token) => this.exchangeBareToken(token) };
    const result = await authenticate(channel, sasl);
    this.#options.onAuthentication?.(result, reauthentication, startMs);
    if (!result.outcome.ok) {
      this.close();
      return false;
    }
    if (result.sessionLifetimeMs > 0 && !this.#closed) {
      this.#reauthTimer = this.#options.clock.setTimer(reauthenticateAfterMs(sasl, result.sessionLifetimeMs), () => void this.#reauthenticate(sasl));
    }
    return !this.#closed;
  }

  /** KIP-368: new requests wait while the exchange runs on this connection, then go out in order. */
  async #reauthenticate(sasl: ClientSasl): Promise<void> {
    this.#reauthTimer = null;
    if (this.#closed) return;
    this.#held = [];
    const ok = await this.#authenticate(sasl, true);
    const held = this.#held ?? [];
    this.#held = null;
    if (!ok) return;
    if (this.#throttled !== null) this.#throttled.frames.push(...held);
    else this.#release(held);
    this.#flush();
  }

  /** Closes at once; every request in flight ends unanswered. */
  close(): void {
    this.#socket?.terminate();
    this.#fail();
  }

  /** `past`: written even while requests are held (a re-authentication's own). */
  #write<Request>(api: ClientApi<Request, unknown>, request: Request, past = false): number {
    const correlationId = this.#nextCorrelationId;
    this.#nextCorrelationId = correlationId === CORRELATION_ID_MAX ? 0 : correlationId + 1;
    const body = new KafkaWriter();
    writeRequestHeader(body, api, correlationId, this.#options.clientId);
    api.encodeRequest(body, request);
    // One write per request: a simulated network delivers each write as one event.
    const frame = sized(body.chunks());
    if (past) this.#unsent.push(frame);
    else if (this.#throttled !== null) this.#throttled.frames.push(frame);
    else if (this.#held !== null) this.#held.push(frame);
    else this.#release([frame]);
    this.#flush();
    return correlationId;
  }

  /** Request frames go out (a re-authentication's own go straight to #unsent): each throttle awaiting its next request notes when. */
  #release(frames: readonly Uint8Array[]): void {
    if (frames.length === 0) return;
    this.#unsent.push(...frames);
    const nowMs = this.#historyNow();
    for (const throttle of this.#awaitingSend) throttle.nextSentMs = nowMs;
    this.#awaitingSend = [];
  }

  #historyNow(): number {
    return (this.#options.now ?? (() => this.#options.clock.nowMs()))();
  }

  /** KIP-219: an answer with a throttle time holds the next requests for that long (a longer throttle answered meanwhile extends it). */
  #throttle(api: string, throttleMs: number): void {
    const clock = this.#options.clock;
    const untilMs = clock.nowMs() + throttleMs;
    const throttle = { api, answeredMs: this.#historyNow(), throttleMs, nextSentMs: null };
    this.#awaitingSend.push(throttle);
    if (this.#throttled !== null && this.#throttled.untilMs >= untilMs) return void this.#throttled.throttles.push(throttle);
    this.#throttled?.timer.cancel();
    const frames = this.#throttled?.frames ?? [];
    const throttles = [...(this.#throttled?.throttles ?? []), throttle];
    this.#throttled = { frames, untilMs, throttles, timer: clock.setTimer(throttleMs, () => this.#endThrottle()) };
  }

  /** The throttle ended: the held requests go out (behind a re-authentication, if one runs), and each throttle is told of. */
  #endThrottle(): void {
    const throttled = this.#throttled;
    if (throttled === null) return;
    this.#throttled = null;
    if (this.#held !== null) this.#held.push(...throttled.frames);
    else this.#release(throttled.frames);
    this.#flush();
    for (const throttle of throttled.throttles) this.#options.onThrottle?.({ ...throttle });
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
    // A frame this chunk completes was written, whole, by then: its last bytes are this chunk's.
    const origin = this.#options.origin?.(chunk) ?? null;
    this.#received = this.#received.length === 0 ? chunk.slice() : concat(this.#received, chunk);
    while (!this.#closed && this.#received.length >= SIZE_PREFIX_BYTES) {
      const view = new DataView(this.#received.buffer, this.#received.byteOffset, this.#received.length);
      const size = view.getInt32(0);
      // A bare token answer ([A4]) may be empty (PLAIN's); every other frame starts with a correlation id.
      if (size < (this.#bareWaiter === null ? CORRELATION_ID_BYTES : 0) || size > RESPONSE_BYTES_MAX) return this.close();
      if (this.#received.length < SIZE_PREFIX_BYTES + size) return;
      const frame = this.#received.subarray(SIZE_PREFIX_BYTES, SIZE_PREFIX_BYTES + size);
      this.#received = this.#received.subarray(SIZE_PREFIX_BYTES + size);
      this.#onFrame(frame, origin);
    }
  }

  #onFrame(frame: Uint8Array, origin: AnswerOrigin | null): void {
    if (this.#bareWaiter !== null) return this.#bareWaiter(frame.slice());
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
    const throttleMs = throttleTimeOf(response);
    if (throttleMs > 0) this.#throttle(pending.api, throttleMs);
    this.#settle(correlationId, origin === null ? { answered: true, response } : { answered: true, response, origin });
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
    this.#held = null;
    const throttled = this.#throttled;
    this.#throttled = null;
    throttled?.timer.cancel();
    for (const throttle of throttled?.throttles ?? []) this.#options.onThrottle?.({ ...throttle });
    this.#reauthTimer?.cancel();
    this.#bareWaiter?.(null);
    for (const correlationId of [...this.#pending.keys()]) this.#settle(correlationId, { answered: false, error: 'disconnected' });
  }
}

/** An answer's throttle_time_ms (0 when it has none). */
function throttleTimeOf(response: unknown): number {
  if (response === null || typeof response !== 'object' || !('throttleTimeMs' in response)) return 0;
  const throttleMs = (response as { throttleTimeMs: unknown }).throttleTimeMs;
  return typeof throttleMs === 'number' && throttleMs > 0 ? throttleMs : 0;
}

/** One size-prefixed frame of `chunks`. */
function sized(chunks: Iterable<Uint8Array>): Uint8Array {
  const parts = [...chunks];
  const length = parts.reduce((sum, chunk) => sum + chunk.length, 0);
  const frameBuffer = new ArrayBuffer(SIZE_PREFIX_BYTES + length); // not a Uint8Array's .buffer: JavaScriptCore would move it out of its inline storage
  new DataView(frameBuffer).setInt32(0, length);
  const frame = new Uint8Array(frameBuffer);
  let position = SIZE_PREFIX_BYTES;
  for (const chunk of parts) {
    frame.set(chunk, position);
    position += chunk.length;
  }
  return frame;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}
