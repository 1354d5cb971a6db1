import { encodeMessage } from '../../src/protocol/message-codec.ts';
import { KafkaReader } from '../../src/protocol/reader.ts';
import type { MessageSchema } from '../../src/protocol/schema.ts';
import { KafkaWriter } from '../../src/protocol/writer.ts';

/** A raw Kafka client for protocol tests: sends frames, collects size-prefixed responses, notices the close. */
export interface RawClient {
  send(frame: Uint8Array): void;
  sendRaw(bytes: Uint8Array): void;
  readonly responses: Uint8Array[];
  readonly closed: boolean;
  end(): void;
}

export async function rawClient(port: number): Promise<RawClient> {
  const responses: Uint8Array[] = [];
  let buffer = new Uint8Array(0);
  let closed = false;
  const socket = await Bun.connect({
    hostname: '127.0.0.1',
    port,
    socket: {
      data(_socket, chunk) {
        const joined = new Uint8Array(buffer.length + chunk.length);
        joined.set(buffer);
        joined.set(chunk, buffer.length);
        buffer = joined;
        while (buffer.length >= 4) {
          const size = new DataView(buffer.buffer, buffer.byteOffset).getInt32(0);
          if (buffer.length < 4 + size) break;
          responses.push(buffer.slice(4, 4 + size));
          buffer = buffer.slice(4 + size);
        }
      },
      close() {
        closed = true;
      },
    },
  });
  return {
    send(frame: Uint8Array) {
      const prefix = new Uint8Array(4);
      new DataView(prefix.buffer).setInt32(0, frame.length);
      socket.write(prefix);
      socket.write(frame);
    },
    sendRaw(bytes: Uint8Array) {
      socket.write(bytes);
    },
    responses,
    get closed() {
      return closed;
    },
    end: () => socket.end(),
  };
}

/** How long `request` waits for its answer. */
const ANSWER_WAIT_MS = 10_000;
let correlationIds = 0;

/**
 * Sends one request of `schema` at `version` (request header v1, v2 when `flexible`), written by
 * Ferry's codec, and returns its answer's body, after the response header; null when the broker
 * closed the connection or did not answer in time.
 */
export async function request(client: RawClient, schema: MessageSchema, version: number, message: Record<string, unknown>, flexible: boolean): Promise<Uint8Array | null> {
  const id = ++correlationIds;
  const writer = new KafkaWriter().int16(schema.apiKey).int16(version).int32(id).nullableString('raw-client');
  if (flexible) writer.emptyTaggedFields();
  encodeMessage(schema, writer, version, message);
  const count = client.responses.length + 1;
  client.send(Buffer.concat(writer.chunks()));
  const deadline = Date.now() + ANSWER_WAIT_MS;
  while (client.responses.length < count && !client.closed && Date.now() < deadline) await Bun.sleep(2);
  const bytes = client.responses[count - 1];
  if (bytes === undefined) return null;
  const reader = new KafkaReader(bytes);
  if (reader.int32() !== id) throw new Error(`answer to correlation id ${id} expected`);
  if (flexible) reader.skipTaggedFields();
  return bytes.subarray(reader.position);
}
