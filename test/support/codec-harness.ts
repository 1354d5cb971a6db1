/**
 * Shared setup for the API codec tests (test/broker/apis): kafkajs 2.2.4 as the real client (the
 * bytes it sends, the way it reads ours), and truncation and byte damage as the hostile one.
 */
import { expect } from 'bun:test';
import type { ApiCodec } from '../../src/broker/apis/api.ts';
import { ProtocolError } from '../../src/protocol/errors.ts';
import { KafkaReader } from '../../src/protocol/reader.ts';
import { KafkaWriter } from '../../src/protocol/writer.ts';
import type { SeededRandom } from '../../src/util/random.ts';
import { decodeBySchema, encodeBySchema, expectedAt, loadMessageSchema, type Message } from './kafka-message-schema.ts';

/** Rounds of `expectMutationsTotal`: mutated copies of one request, each decoded once. */
export const MUTATION_ROUNDS = 300;
/** The most bytes `expectMutationsTotal` overwrites in one round (at least one). */
export const MUTATIONS_PER_ROUND_MAX = 3;
/** Byte values that sit on a sign or length boundary: half of the mutations write one of these. */
export const INTERESTING_BYTES = [0x00, 0x7f, 0x80, 0xff];
/** Rounds of `expectCorruptionsTotal`: copies of one request with one random byte replaced. */
export const CORRUPTION_ROUNDS = 50;

// ---- bytes ----

/** The bytes a writer holds, as one Buffer. */
export function bytesOf(writer: KafkaWriter): Buffer {
  return Buffer.concat(writer.chunks());
}

/** Bytes written out by hand from Kafka's grammar (hex pairs, `#` comments): a fixture independent of the codec. */
export function hex(text: string): number[] {
  return (text.replace(/#.*$/gm, '').match(/[0-9a-f]{2}/g) ?? []).map((pair) => Number.parseInt(pair, 16));
}

/**
 * The bytes of `codec`'s request at `version` as Kafka's own grammar writes them (read straight
 * from its JSON schema, test/support/kafka-message-schema.ts): every field `draft` leaves out
 * takes its default. A plain Uint8Array, so decoded views of it compare equal to plain arrays.
 */
export function grammarRequestBytes(codec: ApiCodec<unknown, unknown>, version: number, draft: Message): Uint8Array {
  const schema = loadMessageSchema(`${codec.name}Request`);
  const bytes = encodeBySchema(schema, version, expectedAt(schema, version, draft));
  return Uint8Array.from(bytes);
}

/** `bytes` of `codec`'s response at `version` read back by Kafka's own grammar. */
export function grammarResponse(codec: ApiCodec<unknown, unknown>, version: number, bytes: Uint8Array): Message {
  return decodeBySchema(loadMessageSchema(`${codec.name}Response`), version, bytes);
}

// ---- the codec under test ----

/** The codec helpers every API test uses, bound to one codec. */
export interface CodecHarness<Request, Response> {
  /** Decodes a request and expects every byte of it consumed. */
  decodeRequest(bytes: Uint8Array, version: number): Request;
  /** The bytes the codec writes for `response`. */
  encodeResponse(version: number, response: Response): Buffer;
  /** Expects decoding `bytes` to throw ProtocolError. */
  expectRejected(bytes: Uint8Array, version: number): void;
  /** Expects every strict prefix of `bytes` (lengths 0 to length - 1) to throw ProtocolError. */
  expectEveryTruncationRejected(bytes: Uint8Array, version: number): void;
  /** Expects decoding `bytes` to succeed or throw ProtocolError, nothing else. */
  expectDecodesOrRejects(bytes: Uint8Array, version: number): void;
  /** MUTATION_ROUNDS seeded (xorshift32) mutations of `bytes`: each decodes or throws ProtocolError. */
  expectMutationsTotal(bytes: Uint8Array, version: number, seed: number): void;
  /** CORRUPTION_ROUNDS single-byte corruptions of `bytes`, drawn from `random`: each decodes or throws ProtocolError. */
  expectCorruptionsTotal(bytes: Uint8Array, version: number, random: SeededRandom): void;
}

/** The harness for `codec`. */
export function codecHarness<Request, Response>(codec: ApiCodec<Request, Response>): CodecHarness<Request, Response> {
  const decodeRequest = (bytes: Uint8Array, version: number): Request => {
    const reader = new KafkaReader(bytes);
    const request = codec.decodeRequest(reader, version);
    expect(reader.remaining).toBe(0);
    return request;
  };

  const encodeResponse = (version: number, response: Response): Buffer => {
    const writer = new KafkaWriter();
    codec.encodeResponse(writer, version, response);
    return bytesOf(writer);
  };

  const expectRejected = (bytes: Uint8Array, version: number): void => {
    expect(() => codec.decodeRequest(new KafkaReader(bytes), version)).toThrow(ProtocolError);
  };

  const expectEveryTruncationRejected = (bytes: Uint8Array, version: number): void => {
    for (let end = 0; end < bytes.length; end++) expectRejected(bytes.subarray(0, end), version);
  };

  const expectDecodesOrRejects = (bytes: Uint8Array, version: number): void => {
    try {
      codec.decodeRequest(new KafkaReader(bytes), version);
    } catch (error) {
      expect(error).toBeInstanceOf(ProtocolError);
    }
  };

  const expectMutationsTotal = (bytes: Uint8Array, version: number, seed: number): void => {
    let state = seed;
    const next = () => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return state >>> 0;
    };
    for (let round = 0; round < MUTATION_ROUNDS; round++) {
      const mutated = Uint8Array.from(bytes);
      for (let i = 0, n = 1 + (next() % MUTATIONS_PER_ROUND_MAX); i < n; i++) {
        mutated[next() % mutated.length] = next() % 2 === 0 ? (INTERESTING_BYTES[next() % INTERESTING_BYTES.length] ?? 0) : next() & 0xff;
      }
      expectDecodesOrRejects(mutated, version);
    }
  };

  const expectCorruptionsTotal = (bytes: Uint8Array, version: number, random: SeededRandom): void => {
    for (let round = 0; round < CORRUPTION_ROUNDS; round++) {
      const corrupted = Uint8Array.from(bytes);
      corrupted[random.nextInt(corrupted.length)] = random.nextInt(256);
      expectDecodesOrRejects(corrupted, version);
    }
  };

  return {
    decodeRequest,
    encodeResponse,
    expectRejected,
    expectEveryTruncationRejected,
    expectDecodesOrRejects,
    expectMutationsTotal,
    expectCorruptionsTotal,
  };
}

// ---- kafkajs 2.2.4 (CommonJS, no types for its internals) ----

/** A request kafkajs has built: what it would send. */
export interface KafkajsRequest {
  apiKey: number;
  apiVersion: number;
  encode(): Promise<{ buffer: Buffer }>;
}

/** One version of a kafkajs response decoder; what it returns is untyped, as require() gives it. */
export interface KafkajsResponse {
  // biome-ignore lint/suspicious/noExplicitAny: kafkajs decoders are untyped JavaScript
  decode(bytes: Uint8Array): Promise<any>;
  parse(decoded: unknown): Promise<unknown>;
}

function kafkajsModule(path: string) {
  return require(`kafkajs/src/protocol/requests/${path}`);
}

/** What kafkajs's `api` builds at `version` for `args` (through its index, with its defaults). */
export function kafkajsProtocol(api: string, version: number, args: object): { request: KafkajsRequest; response: KafkajsResponse } {
  return kafkajsModule(api).protocol({ version })(args);
}

/** kafkajs's `api` request at `version` for `args`, from that version's encoder alone (no index defaults). */
export function kafkajsVersionRequest(api: string, version: number, args: object): KafkajsRequest {
  return kafkajsModule(`${api}/v${version}/request.js`)(args);
}

/** kafkajs's `api` response decoder at `version`. */
export function kafkajsResponse(api: string, version: number): KafkajsResponse {
  return kafkajsModule(`${api}/v${version}/response.js`);
}

/** The bytes `request` encodes to: a view of kafkajs's own buffer, not a copy. */
export async function kafkajsBytes(request: KafkajsRequest): Promise<Uint8Array> {
  const buffer = (await request.encode()).buffer;
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.length);
}

/** The bytes kafkajs's `api` sends at `version` for `args`. */
export function kafkajsEncode(api: string, version: number, args: object): Promise<Uint8Array> {
  return kafkajsBytes(kafkajsProtocol(api, version, args).request);
}
