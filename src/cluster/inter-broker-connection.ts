import type { TLSOptions } from 'bun';
import { decodeMessage, encodeMessage } from '../protocol/message-codec.ts';
import type { MessageSchema } from '../protocol/schema.ts';
import { type SaslAuthenticateResponse, saslAuthenticateRequestSchema, saslAuthenticateResponseSchema } from '../protocol/messages/sasl-authenticate.ts';
import { type SaslHandshakeResponse, saslHandshakeRequestSchema, saslHandshakeResponseSchema } from '../protocol/messages/sasl-handshake.ts';
import { KafkaReader } from '../protocol/reader.ts';
import { KafkaWriter } from '../protocol/writer.ts';
import { FerryError } from '../errors.ts';
import type { SaslClient } from '../security/sasl/mechanism.ts';
import { concatBytes } from '../util/bytes.ts';
import type { NetSocket, Network, SocketHandlers } from '../util/network.ts';
import { endpointFor, type EndpointHolder } from './endpoints.ts';

/** SaslHandshake v1: the tokens follow in SaslAuthenticate (v1 carries the session lifetime). */
const HANDSHAKE_VERSION = 1;
const AUTHENTICATE_VERSION = 1;
const CLIENT_ID = 'ferry-broker';
const SIZE_PREFIX_BYTES = 4;
/** A SASL answer larger than this is not one (SCRAM's are under a kilobyte): the connection is dropped. */
const AUTHENTICATION_ANSWER_BYTES_MAX = 64 * 1024;
/** Round trips of one exchange, at most (SCRAM takes two after the handshake): more means a broken peer. */
const AUTHENTICATION_ROUND_TRIPS_MAX = 8;

/**
 * How a broker reaches another broker's inter-broker listener (inter.broker.listener.name): with
 * TLS if that listener speaks it, then SASL as this broker's own principal if it asks for it, so
 * that the leader counts its progress reports ([R2], docs/security.md [A7]).
 */
export interface InterBrokerConnector {
  /** The listener name whose endpoint is dialled; null: the broker's host and port (no listeners named). */
  readonly listener: string | null;
  readonly tls: TLSOptions | null;
  /** A new client exchange per connection; null: no SASL. */
  readonly sasl: (() => SaslClient) | null;
}

/** A connector for brokers without security: plain TCP to the broker's host and port. */
export const PLAINTEXT_CONNECTOR: InterBrokerConnector = { listener: null, tls: null, sasl: null };

/**
 * Connects to `broker`'s inter-broker endpoint and authenticates; resolves with a socket whose
 * later bytes go to `handlers.data` (the bytes of the exchange never do). Rejects if the broker
 * has no such listener, the TLS handshake fails, or the exchange is refused (the error says why,
 * never the password).
 */
export async function connectToBroker(network: Network, connector: InterBrokerConnector, broker: EndpointHolder, handlers: SocketHandlers): Promise<NetSocket> {
  const endpoint = connector.listener === null ? broker : endpointFor(broker, connector.listener);
  if (endpoint === null) throw new FerryError('InvalidArgument', `the broker at ${broker.host}:${broker.port} has no ${connector.listener} listener`);
  const exchange = connector.sasl === null ? null : new AnswerReader();
  const socket = await network.connect(
    endpoint.host,
    endpoint.port,
    {
      ...handlers,
      // The leader sends nothing unasked, so once the exchange is over every byte is an answer to a report.
      data: (s, chunk) => (exchange?.active ? exchange.received(chunk) : handlers.data(s, chunk)),
      close: (s) => {
        exchange?.fail(new FerryError('InvalidArgument', `the broker at ${endpoint.host}:${endpoint.port} closed the connection during SASL authentication`));
        handlers.close?.(s);
      },
    },
    connector.tls === null ? {} : { tls: connector.tls },
  );
  if (exchange === null) return socket;
  try {
    await authenticate(socket, exchange, connector.sasl!());
    return socket;
  } catch (error) {
    socket.terminate();
    throw error;
  }
}

/** SaslHandshake v1, then SaslAuthenticate until the client's exchange completes (and, SCRAM, the server proved itself). */
async function authenticate(socket: NetSocket, answers: AnswerReader, client: SaslClient): Promise<void> {
  let correlationId = 0;
  const call = async (request: MessageSchema, response: MessageSchema, version: number, message: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const sent = correlationId++;
    const writer = new KafkaWriter().int16(request.apiKey).int16(version).int32(sent).nullableString(CLIENT_ID);
    encodeMessage(request, writer, version, message);
    socket.write(sized(writer.chunks()));
    const reader = new KafkaReader(await answers.next());
    const answered = reader.int32();
    if (answered !== sent) throw new FerryError('InvalidArgument', `a SASL answer to request ${answered}, expected ${sent}`);
    return decodeMessage(response, reader, version) as Record<string, unknown>;
  };
  const handshake = (await call(saslHandshakeRequestSchema, saslHandshakeResponseSchema, HANDSHAKE_VERSION, { mechanism: client.mechanism })) as unknown as SaslHandshakeResponse;
  if (handshake.errorCode !== 0)
    throw new FerryError('InvalidArgument', `the broker refused SASL mechanism ${client.mechanism} (error ${handshake.errorCode}; it enables ${handshake.mechanisms.join(', ')})`);
  let token: Uint8Array | null = client.start();
  for (let round = 0; token !== null; round++) {
    if (round >= AUTHENTICATION_ROUND_TRIPS_MAX) throw new FerryError('InvalidArgument', `SASL ${client.mechanism} did not complete in ${AUTHENTICATION_ROUND_TRIPS_MAX} round trips`);
    const answer = (await call(saslAuthenticateRequestSchema, saslAuthenticateResponseSchema, AUTHENTICATE_VERSION, { authBytes: token })) as unknown as SaslAuthenticateResponse;
    if (answer.errorCode !== 0) throw new FerryError('InvalidArgument', `SASL ${client.mechanism} authentication refused: ${answer.errorMessage ?? `error ${answer.errorCode}`}`);
    token = client.evaluate(answer.authBytes);
  }
  answers.finish();
}

function sized(chunks: Uint8Array[]): Uint8Array {
  const body = concatBytes(chunks);
  const frame = new Uint8Array(SIZE_PREFIX_BYTES + body.length);
  new DataView(frame.buffer).setInt32(0, body.length);
  frame.set(body, SIZE_PREFIX_BYTES);
  return frame;
}

/** The size-prefixed answers of the exchange, one at a time. */
class AnswerReader {
  #buffer: Uint8Array = new Uint8Array(0);
  #waiting: { resolve: (frame: Uint8Array) => void; reject: (error: Error) => void } | null = null;
  #failed: Error | null = null;
  active = true;

  received(chunk: Uint8Array): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : concatBytes([this.#buffer, chunk]);
    this.#deliver();
  }

  next(): Promise<Uint8Array> {
    if (this.#failed !== null) return Promise.reject(this.#failed);
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
      this.#deliver();
    });
  }

  fail(error: Error): void {
    if (!this.active || this.#failed !== null) return;
    this.#failed = error;
    this.#waiting?.reject(error);
    this.#waiting = null;
  }

  finish(): void {
    this.active = false;
  }

  #deliver(): void {
    if (this.#waiting === null || this.#buffer.length < SIZE_PREFIX_BYTES) return;
    const size = new DataView(this.#buffer.buffer, this.#buffer.byteOffset).getInt32(0);
    if (size < 0 || size > AUTHENTICATION_ANSWER_BYTES_MAX) return this.fail(new FerryError('InvalidArgument', `a SASL answer of ${size} bytes`));
    if (this.#buffer.length < SIZE_PREFIX_BYTES + size) return;
    const frame = this.#buffer.subarray(SIZE_PREFIX_BYTES, SIZE_PREFIX_BYTES + size);
    this.#buffer = this.#buffer.subarray(SIZE_PREFIX_BYTES + size);
    const waiting = this.#waiting;
    this.#waiting = null;
    waiting.resolve(frame);
  }
}
