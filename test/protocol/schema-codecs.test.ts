import { describe, expect, test } from 'bun:test';
import type { ApiCodec } from '../../src/broker/apis/api.ts';
import { API_CODECS } from '../../src/broker/apis/index.ts';
import { ProtocolError } from '../../src/protocol/errors.ts';
import { KafkaReader } from '../../src/protocol/reader.ts';
import { KafkaWriter } from '../../src/protocol/writer.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { generateAll, MESSAGES_DIR } from '../support/kafka-schema/generate.ts';
import { decodeBySchema, encodeBySchema, expectedAt, loadMessageSchema, type Message, normalize, randomMessage } from '../support/kafka-message-schema.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Every API Ferry serves, at every version it advertises, against Kafka's own message schemas
 * (test/fixtures/kafka-messages) read by an independent reader and writer: a request Kafka's
 * grammar writes decodes to the same fields, a response Ferry writes reads back the same by
 * Kafka's grammar, and a damaged or cut request is a ProtocolError, never another exception.
 */

const RANDOM_MESSAGES = 20;
const MUTATION_ROUNDS = 60;

// biome-ignore lint: the table holds every API's types
type AnyCodec = ApiCodec<any, any>;

function roundTripRequest(codec: AnyCodec, version: number, random: SeededRandom): Uint8Array {
  const schema = loadMessageSchema(`${codec.name}Request`);
  const message = randomMessage(schema, version, random);
  const bytes = encodeBySchema(schema, version, message);
  const reader = new KafkaReader(bytes);
  const decoded = codec.decodeRequest(reader, version);
  expect(reader.remaining).toBe(0);
  expect(normalize(decoded)).toEqual(expectedAt(schema, version, message));
  return bytes;
}

function roundTripResponse(codec: AnyCodec, version: number, random: SeededRandom): void {
  const schema = loadMessageSchema(`${codec.name}Response`);
  const message = randomMessage(schema, version, random);
  const writer = new KafkaWriter();
  codec.encodeResponse(writer, version, message);
  const read: Message = decodeBySchema(schema, version, Buffer.concat(writer.chunks()));
  expect(read).toEqual(expectedAt(schema, version, message));
}

function expectDecodesOrRejects(codec: AnyCodec, bytes: Uint8Array, version: number): void {
  try {
    codec.decodeRequest(new KafkaReader(bytes), version);
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
  }
}

function expectDamageRejected(codec: AnyCodec, bytes: Uint8Array, version: number, random: SeededRandom): void {
  for (let end = 0; end < bytes.length; end++) {
    expect(() => codec.decodeRequest(new KafkaReader(bytes.subarray(0, end)), version)).toThrow(ProtocolError);
  }
  for (let round = 0; round < MUTATION_ROUNDS && bytes.length > 0; round++) {
    const mutated = Uint8Array.from(bytes);
    for (let n = 1 + random.nextInt(3); n > 0; n--) mutated[random.nextInt(mutated.length)] = [0x00, 0x7f, 0x80, 0xff, random.nextInt(256)][random.nextInt(5)]!;
    expectDecodesOrRejects(codec, mutated, version);
  }
}

describe('schema codecs', () => {
  test('the generated message files are what the schemas give (npm run generate:messages)', () => {
    for (const [file, text] of generateAll()) expect(readFileSync(join(MESSAGES_DIR, file), 'utf8')).toBe(text);
  });

  for (const codec of API_CODECS as readonly AnyCodec[]) {
    describe(codec.name, () => {
      for (let version = codec.minVersion; version <= codec.maxVersion; version++) {
        test(`v${version}: requests by Kafka's grammar decode whole; responses read back by it; damage is a ProtocolError`, () => {
          const random = new SeededRandom(codec.key * 1000 + version);
          let largest: Uint8Array = new Uint8Array();
          for (let i = 0; i < RANDOM_MESSAGES; i++) {
            const bytes = roundTripRequest(codec, version, random);
            if (bytes.length > largest.length && bytes.length < 400) largest = bytes;
            roundTripResponse(codec, version, random);
          }
          expectDamageRejected(codec, largest, version, random);
        });
      }
    });
  }
});
