// What the authentication tests share: a raw client over TCP or TLS that keeps every frame the
// broker sends (with when it came) and notices the close, request frames written by Ferry's codecs
// with the request header of their version, and the answers read back.
import type { TLSOptions } from 'bun';
import { decodeMessage, encodeMessage, isFlexibleVersion } from '../../../src/protocol/message-codec.ts';
import { apiVersionsRequestSchema, apiVersionsResponseSchema } from '../../../src/protocol/messages/api-versions.ts';
import { metadataRequestSchema, metadataResponseSchema } from '../../../src/protocol/messages/metadata.ts';
import { produceRequestSchema, produceResponseSchema } from '../../../src/protocol/messages/produce.ts';
import { type SaslAuthenticateResponse, saslAuthenticateRequestSchema, saslAuthenticateResponseSchema } from '../../../src/protocol/messages/sasl-authenticate.ts';
import { type SaslHandshakeResponse, saslHandshakeRequestSchema, saslHandshakeResponseSchema } from '../../../src/protocol/messages/sasl-handshake.ts';
import { KafkaReader } from '../../../src/protocol/reader.ts';
import type { MessageSchema } from '../../../src/protocol/schema.ts';
import { KafkaWriter } from '../../../src/protocol/writer.ts';
import type { SaslClient } from '../../../src/security/sasl/mechanism.ts';
import { concatBytes } from '../../../src/util/bytes.ts';

const SIZE_PREFIX_BYTES = 4;
/** How long a test waits for an answer or a close before saying it did not come. */
export const WAIT_MS = 10_000;
const POLL_MS = 2;
const CLIENT_ID = 'auth-test';

export interface ReceivedFrame {
  readonly bytes: Uint8Array;
  /** performance.now() when its last byte arrived. */
  readonly atMs: number;
}

/** A connection to a broker listener that reads whole size-prefixed frames. */
export interface WireClient {
  /** Sends `body` with its size prefix. */
  send(body: Uint8Array): void;
  /** Sends bytes as they are (a hand-made prefix, a truncated frame). */
  sendRaw(bytes: Uint8Array): void;
  readonly frames: readonly ReceivedFrame[];
  readonly closed: boolean;
  /** performance.now() when the broker closed the connection, or null. */
  readonly closedAtMs: number | null;
  /** TLS: whether the handshake completed (null without TLS or before it ends). */
  readonly handshaken: boolean | null;
  /** The frame at `index` once it arrived; null if the connection closed (or WAIT_MS passed) first. */
  frame(index: number, timeoutMs?: number): Promise<ReceivedFrame | null>;
  /** Resolves true once the broker closed the connection, false after `timeoutMs`. */
  waitClosed(timeoutMs?: number): Promise<boolean>;
  end(): void;
}

/** `host`: the listener's address (127.0.0.1 by default; `::1` for an IPv6 listener). */
export async function wireClient(port: number, tls?: TLSOptions, host = '127.0.0.1'): Promise<WireClient> {
  const received: ReceivedFrame[] = [];
  let buffer: Uint8Array = new Uint8Array(0);
  let closedAtMs: number | null = null;
  let handshaken: boolean | null = null;
  // Bytes not yet taken by the socket (Bun's write takes what fits, or nothing before the TLS handshake): written on drain.
  const pending: Uint8Array[] = [];
  const flush = (): void => {
    while (pending.length > 0 && handshaken !== false && closedAtMs === null) {
      if (tls !== undefined && handshaken !== true) return;
      const chunk = pending[0]!;
      const written = socket.write(chunk);
      if (written >= chunk.length) pending.shift();
      else {
        pending[0] = chunk.subarray(Math.max(0, written));
        return;
      }
    }
  };
  const socket = await Bun.connect({
    hostname: host,
    port,
    ...(tls === undefined ? {} : { tls }),
    socket: {
      data(_socket, chunk) {
        buffer = buffer.length === 0 ? new Uint8Array(chunk) : concatBytes([buffer, chunk]);
        while (buffer.length >= SIZE_PREFIX_BYTES) {
          const size = new DataView(buffer.buffer, buffer.byteOffset).getInt32(0);
          if (buffer.length < SIZE_PREFIX_BYTES + size) break;
          received.push({ bytes: buffer.slice(SIZE_PREFIX_BYTES, SIZE_PREFIX_BYTES + size), atMs: performance.now() });
          buffer = buffer.subarray(SIZE_PREFIX_BYTES + size);
        }
      },
      handshake(_socket, success) {
        handshaken = success;
        flush();
      },
      drain() {
        flush();
      },
      close() {
        closedAtMs ??= performance.now();
      },
      error() {
        closedAtMs ??= performance.now();
      },
    },
  });
  const waitFor = async (condition: () => boolean, timeoutMs: number): Promise<boolean> => {
    const deadline = performance.now() + timeoutMs;
    while (!condition() && performance.now() < deadline) await Bun.sleep(POLL_MS);
    return condition();
  };
  return {
    send(body) {
      pending.push(sized(body));
      flush();
    },
    sendRaw(bytes) {
      pending.push(bytes);
      flush();
    },
    frames: received,
    get closed() {
      return closedAtMs !== null;
    },
    get closedAtMs() {
      return closedAtMs;
    },
    get handshaken() {
      return handshaken;
    },
    async frame(index, timeoutMs = WAIT_MS) {
      await waitFor(() => received.length > index || closedAtMs !== null, timeoutMs);
      // a frame that arrived just before the close is still there
      return received[index] ?? null;
    },
    waitClosed: (timeoutMs = WAIT_MS) => waitFor(() => closedAtMs !== null, timeoutMs),
    end: () => void socket.end(),
  };
}

export function sized(body: Uint8Array): Uint8Array {
  const frame = new Uint8Array(SIZE_PREFIX_BYTES + body.length);
  new DataView(frame.buffer).setInt32(0, body.length);
  frame.set(body, SIZE_PREFIX_BYTES);
  return frame;
}

/** A request's bytes: header v1 (v2 in the flexible versions of the schema), then the body by Ferry's codec. */
export function requestBytes(schema: MessageSchema, version: number, correlationId: number, message: Record<string, unknown>): Uint8Array {
  const writer = new KafkaWriter().int16(schema.apiKey).int16(version).int32(correlationId).nullableString(CLIENT_ID);
  if (isFlexibleVersion(schema, version)) writer.emptyTaggedFields();
  encodeMessage(schema, writer, version, message);
  return concatBytes(writer.chunks());
}

/**
 * An answer read back: its correlation id and body (response header v1 in the flexible versions,
 * except ApiVersions, always v0).
 */
// biome-ignore lint: decoded messages of any API
export function readAnswer(schema: MessageSchema, version: number, bytes: Uint8Array): { correlationId: number; body: any } {
  const reader = new KafkaReader(bytes);
  const correlationId = reader.int32();
  if (isFlexibleVersion(schema, version) && schema.apiKey !== apiVersionsResponseSchema.apiKey) reader.skipTaggedFields();
  return { correlationId, body: decodeMessage(schema, reader, version) };
}

export const frames = {
  apiVersions: (correlationId: number, version = 3) => requestBytes(apiVersionsRequestSchema, version, correlationId, { clientSoftwareName: 'auth-test', clientSoftwareVersion: '1.0' }),
  handshake: (correlationId: number, mechanism: string, version = 1) => requestBytes(saslHandshakeRequestSchema, version, correlationId, { mechanism }),
  authenticate: (correlationId: number, authBytes: Uint8Array, version = 2) => requestBytes(saslAuthenticateRequestSchema, version, correlationId, { authBytes }),
  metadata: (correlationId: number, topics: string[] | null = null, version = 9) =>
    requestBytes(metadataRequestSchema, version, correlationId, {
      topics: topics === null ? null : topics.map((name) => ({ name, topicId: new Uint8Array(16) })),
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    }),
  produce: (correlationId: number, topic: string, records: Uint8Array, version = 9) =>
    requestBytes(produceRequestSchema, version, correlationId, { transactionalId: null, acks: -1, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] }),
};

export const answers = {
  handshake: (bytes: Uint8Array, version = 1) => readAnswer(saslHandshakeResponseSchema, version, bytes) as { correlationId: number; body: SaslHandshakeResponse },
  authenticate: (bytes: Uint8Array, version = 2) => readAnswer(saslAuthenticateResponseSchema, version, bytes) as { correlationId: number; body: SaslAuthenticateResponse },
  apiVersions: (bytes: Uint8Array, version = 3) => readAnswer(apiVersionsResponseSchema, version, bytes),
  metadata: (bytes: Uint8Array, version = 9) => readAnswer(metadataResponseSchema, version, bytes),
  produce: (bytes: Uint8Array, version = 9) => readAnswer(produceResponseSchema, version, bytes),
};

/** Sends `body` and waits for the next frame; null when the broker closed instead. */
export async function call(client: WireClient, body: Uint8Array): Promise<Uint8Array | null> {
  const index = client.frames.length;
  client.send(body);
  return (await client.frame(index))?.bytes ?? null;
}

let correlationIds = 1000;
/** A correlation id not used before in this process. */
export const nextId = (): number => ++correlationIds;

/**
 * SaslHandshake v1 and SaslAuthenticate (at `version`) until the client's exchange completes.
 * Returns the last SaslAuthenticate answer; throws if a step is refused or the connection closes.
 */
export async function authenticateFramed(client: WireClient, sasl: SaslClient, version = 2): Promise<SaslAuthenticateResponse> {
  const handshake = await call(client, frames.handshake(nextId(), sasl.mechanism));
  if (handshake === null) throw new Error('closed after SaslHandshake');
  const handshaken = answers.handshake(handshake).body;
  if (handshaken.errorCode !== 0) throw new Error(`SaslHandshake answered ${handshaken.errorCode}`);
  let token: Uint8Array | null = sasl.start();
  for (let round = 0; round < 4; round++) {
    const answer = await call(client, frames.authenticate(nextId(), token!, version));
    if (answer === null) throw new Error('closed during SaslAuthenticate');
    const body = answers.authenticate(answer, version).body;
    if (body.errorCode !== 0) throw new Error(`SaslAuthenticate answered ${body.errorCode}: ${body.errorMessage}`);
    token = sasl.evaluate(body.authBytes);
    if (token === null) return body;
  }
  throw new Error('the exchange did not complete in four rounds');
}

/** SaslHandshake v0, then the client's tokens as bare frames until it completes; throws on a close. */
export async function authenticateBare(client: WireClient, sasl: SaslClient): Promise<void> {
  const handshake = await call(client, frames.handshake(nextId(), sasl.mechanism, 0));
  if (handshake === null) throw new Error('closed after SaslHandshake v0');
  if (answers.handshake(handshake, 0).body.errorCode !== 0) throw new Error('SaslHandshake v0 refused');
  let token: Uint8Array | null = sasl.start();
  for (let round = 0; round < 4 && token !== null; round++) {
    const answer = await call(client, token);
    if (answer === null) throw new Error('closed during the bare-token exchange');
    token = sasl.evaluate(answer);
  }
  if (token !== null) throw new Error('the exchange did not complete in four rounds');
}

export const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
export const utf8 = (value: string): Uint8Array => new TextEncoder().encode(value);
