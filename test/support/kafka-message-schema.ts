/**
 * Kafka's message schemas (test/fixtures/kafka-messages, Apache-2.0) as an independent encoder,
 * decoder and random-message source: the codec tests check Ferry's codecs (generated into
 * src/protocol/messages and read by message-codec.ts) against Kafka's own grammar, read
 * here straight from the JSON by code that shares nothing with them but the primitive writer
 * and reader (checked on their own).
 */
import { KafkaReader } from '../../src/protocol/reader.ts';
import { KafkaWriter } from '../../src/protocol/writer.ts';
import type { SeededRandom } from '../../src/util/random.ts';
import { uuidFromBytes, uuidToBytes } from '../../src/util/uuid.ts';
import { camelName, elementType, inRange, type JsonField, type JsonMessage, loadJsonMessage, PRIMITIVE_TYPES, structFields } from './kafka-schema/json-schema.ts';

export type { JsonMessage as MessageSchema } from './kafka-schema/json-schema.ts';

// biome-ignore lint: messages of any shape
type Value = any;
export type Message = Record<string, Value>;

export function loadMessageSchema(name: string): JsonMessage {
  return loadJsonMessage(name);
}

const isFlexible = (schema: JsonMessage, version: number) => schema.flexibleVersions !== undefined && schema.flexibleVersions !== 'none' && inRange(schema.flexibleVersions, version);
const nullableAt = (field: JsonField, version: number) => field.nullableVersions !== undefined && inRange(field.nullableVersions, version);
const taggedAt = (field: JsonField, version: number, flexible: boolean) => flexible && field.tag !== undefined && inRange(field.taggedVersions ?? field.versions, version);

// ---- defaults ----

/** Kafka's default of a field: its schema's, else zero, false, "", the zero UUID, empty bytes, [], a struct of defaults. */
export function defaultOf(schema: JsonMessage, field: JsonField, version: number): Value {
  if (field.default !== undefined) {
    const text = String(field.default);
    if (text === 'null') return null;
    if (field.type === 'bool') return text === 'true';
    if (field.type === 'string') return text;
    return Number(text);
  }
  if (field.type.startsWith('[]')) return [];
  const type = field.type;
  if (!PRIMITIVE_TYPES.has(type)) return structDefaults(schema, structFields(schema, field), version);
  if (type === 'bool') return false;
  if (type === 'string') return '';
  if (type === 'uuid') return uuidFromBytes(new Uint8Array(16));
  if (type === 'bytes') return [];
  if (type === 'records') return null;
  return 0;
}

function structDefaults(schema: JsonMessage, fields: readonly JsonField[], version: number): Message {
  return Object.fromEntries(fields.map((field) => [camelName(field.name), defaultOf(schema, field, version)]));
}

function isDefault(schema: JsonMessage, field: JsonField, version: number, value: Value): boolean {
  return JSON.stringify(normalize(value)) === JSON.stringify(normalize(defaultOf(schema, field, version)));
}

/** Bytes as plain number arrays, so that views, Buffers and lists of chunks compare equal. */
export function normalize(value: Value): Value {
  if (value instanceof Uint8Array) return Array.from(value);
  if (Array.isArray(value) && value.length > 0 && value.every((v) => v instanceof Uint8Array)) return value.flatMap((v: Uint8Array) => Array.from(v));
  if (Array.isArray(value)) return value.map(normalize);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, normalize(v)]),
    );
  return value;
}

// ---- writing ----

/** The bytes of `message` at `version`, field by field as the schema orders them. */
export function encodeBySchema(schema: JsonMessage, version: number, message: Message): Uint8Array {
  const writer = new KafkaWriter();
  writeStruct(schema, schema.fields, version, isFlexible(schema, version), message, writer);
  return Buffer.concat(writer.chunks());
}

function writeStruct(schema: JsonMessage, fields: readonly JsonField[], version: number, flexible: boolean, value: Message, writer: KafkaWriter): void {
  const tagged: JsonField[] = [];
  for (const field of fields) {
    if (!inRange(field.versions, version)) continue;
    if (taggedAt(field, version, flexible)) {
      if (!isDefault(schema, field, version, value[camelName(field.name)])) tagged.push(field);
      continue;
    }
    writeField(schema, field, version, flexible, value[camelName(field.name)], writer);
  }
  if (!flexible) return;
  tagged.sort((a, b) => a.tag! - b.tag!);
  writer.uvarint(tagged.length);
  for (const field of tagged) {
    const body = new KafkaWriter();
    writeField(schema, field, version, flexible, value[camelName(field.name)], body);
    const bytes = Buffer.concat(body.chunks());
    writer.uvarint(field.tag!).uvarint(bytes.length).raw(bytes);
  }
}

function writeLength(writer: KafkaWriter, flexible: boolean, length: number, wide: boolean): void {
  if (flexible) writer.uvarint(length + 1);
  else if (wide) writer.int32(length);
  else writer.int16(length);
}

function writeField(schema: JsonMessage, field: JsonField, version: number, flexible: boolean, value: Value, writer: KafkaWriter): void {
  if (field.type.startsWith('[]')) {
    if (value === null) return writeLength(writer, flexible, -1, true);
    writeLength(writer, flexible, value.length, true);
    const element = elementType(field.type);
    for (const item of value) {
      if (PRIMITIVE_TYPES.has(element)) writePrimitive(element, flexible, item, writer);
      else writeStruct(schema, structFields(schema, field), version, flexible, item, writer);
    }
    return;
  }
  if (!PRIMITIVE_TYPES.has(field.type)) {
    if (nullableAt(field, version)) writer.int8(value === null ? -1 : 1);
    if (value !== null) writeStruct(schema, structFields(schema, field), version, flexible, value, writer);
    return;
  }
  writePrimitive(field.type, flexible, value, writer);
}

function writePrimitive(type: string, flexible: boolean, value: Value, writer: KafkaWriter): void {
  switch (type) {
    case 'bool':
      return void writer.int8(value ? 1 : 0);
    case 'int8':
      return void writer.int8(value);
    case 'int16':
      return void writer.int16(value);
    case 'uint16':
      return void writer.uint16(value);
    case 'int32':
      return void writer.int32(value);
    case 'uint32':
      return void writer.uint32(value);
    case 'int64':
      return void writer.int64(value);
    case 'float64':
      return void writer.float64(value);
    case 'uuid':
      return void writer.raw(uuidToBytes(value));
    case 'string': {
      if (value === null) return writeLength(writer, flexible, -1, false);
      const bytes = new TextEncoder().encode(value);
      writeLength(writer, flexible, bytes.length, false);
      return void writer.raw(bytes);
    }
    default: {
      // bytes, records
      if (value === null) return writeLength(writer, flexible, -1, true);
      const bytes = Uint8Array.from(normalize(value));
      writeLength(writer, flexible, bytes.length, true);
      return void writer.raw(bytes);
    }
  }
}

// ---- reading ----

/** `bytes` read back by the schema at `version`; a field the version lacks takes its default. */
export function decodeBySchema(schema: JsonMessage, version: number, bytes: Uint8Array): Message {
  const reader = new KafkaReader(bytes);
  const message = readStruct(schema, schema.fields, version, isFlexible(schema, version), reader);
  if (reader.remaining !== 0) throw new Error(`${reader.remaining} bytes left after the message`);
  return message;
}

function readStruct(schema: JsonMessage, fields: readonly JsonField[], version: number, flexible: boolean, reader: KafkaReader): Message {
  const message: Message = {};
  for (const field of fields) {
    const key = camelName(field.name);
    if (!inRange(field.versions, version) || taggedAt(field, version, flexible)) message[key] = normalize(defaultOf(schema, field, version));
    else message[key] = readField(schema, field, version, flexible, reader);
  }
  if (!flexible) return message;
  const count = reader.uvarint();
  for (let i = 0; i < count; i++) {
    const tag = reader.uvarint();
    const size = reader.uvarint();
    const end = reader.position + size;
    const field = fields.find((f) => inRange(f.versions, version) && taggedAt(f, version, flexible) && f.tag === tag);
    if (field !== undefined) message[camelName(field.name)] = readField(schema, field, version, flexible, reader);
    if (reader.position !== (field === undefined ? reader.position : end)) throw new Error(`tagged field ${tag} is not ${size} bytes`);
    reader.position = end;
  }
  return message;
}

function readLength(reader: KafkaReader, flexible: boolean, wide: boolean): number {
  if (flexible) return reader.uvarint() - 1;
  return wide ? reader.int32() : reader.int16();
}

function readField(schema: JsonMessage, field: JsonField, version: number, flexible: boolean, reader: KafkaReader): Value {
  if (field.type.startsWith('[]')) {
    const count = readLength(reader, flexible, true);
    if (count < 0) return null;
    const element = elementType(field.type);
    return Array.from({ length: count }, () => (PRIMITIVE_TYPES.has(element) ? readPrimitive(element, flexible, reader) : readStruct(schema, structFields(schema, field), version, flexible, reader)));
  }
  if (!PRIMITIVE_TYPES.has(field.type)) {
    if (nullableAt(field, version) && reader.int8() < 0) return null;
    return readStruct(schema, structFields(schema, field), version, flexible, reader);
  }
  return readPrimitive(field.type, flexible, reader);
}

function readPrimitive(type: string, flexible: boolean, reader: KafkaReader): Value {
  switch (type) {
    case 'bool':
      return reader.int8() !== 0;
    case 'int8':
      return reader.int8();
    case 'int16':
      return reader.int16();
    case 'uint16':
      return reader.uint16();
    case 'int32':
      return reader.int32();
    case 'uint32':
      return reader.uint32();
    case 'int64':
      return reader.int64();
    case 'float64':
      return reader.float64();
    case 'uuid':
      return uuidFromBytes(Uint8Array.from(reader.uuid()));
    case 'string': {
      const length = readLength(reader, flexible, false);
      return length < 0 ? null : new TextDecoder('utf-8', { fatal: true }).decode(takeBytes(reader, length));
    }
    default: {
      const length = readLength(reader, flexible, true);
      return length < 0 ? null : Array.from(takeBytes(reader, length));
    }
  }
}

/** `length` bytes, read one at a time (nothing of the codec's own byte handling is shared). */
function takeBytes(reader: KafkaReader, length: number): Uint8Array {
  if (length > reader.remaining) throw new Error(`${length} bytes declared, ${reader.remaining} remain`);
  return Uint8Array.from({ length }, () => reader.int8() & 0xff);
}

// ---- random messages ----

const INT_RANGES: Record<string, [number, number]> = {
  int8: [-128, 127],
  int16: [-32768, 32767],
  uint16: [0, 65535],
  int32: [-(2 ** 31), 2 ** 31 - 1],
  uint32: [0, 2 ** 32 - 1],
  int64: [-(2 ** 53) + 1, 2 ** 53 - 1],
};

/**
 * A random message of `schema` at `version`: every field the version has, each nullable one null
 * now and then, each tagged one often left at its default. Fields the version lacks are absent.
 */
export function randomMessage(schema: JsonMessage, version: number, random: SeededRandom): Message {
  return randomStruct(schema, schema.fields, version, isFlexible(schema, version), random, 0);
}

/** The most elements of a random array: enough for every shape, few enough to stay quick. */
const RANDOM_ARRAY_LENGTH_MAX = 3;
const RANDOM_DEPTH_MAX = 6;

function randomStruct(schema: JsonMessage, fields: readonly JsonField[], version: number, flexible: boolean, random: SeededRandom, depth: number): Message {
  const message: Message = {};
  for (const field of fields) {
    if (!inRange(field.versions, version)) continue;
    const key = camelName(field.name);
    if (taggedAt(field, version, flexible) && random.next() < 0.5) message[key] = defaultOf(schema, field, version);
    else if (nullableAt(field, version) && random.next() < 0.2) message[key] = null;
    else message[key] = randomField(schema, field, version, flexible, random, depth);
  }
  return message;
}

function randomField(schema: JsonMessage, field: JsonField, version: number, flexible: boolean, random: SeededRandom, depth: number): Value {
  const element = elementType(field.type);
  if (field.type.startsWith('[]')) {
    const length = depth >= RANDOM_DEPTH_MAX ? 0 : random.nextInt(RANDOM_ARRAY_LENGTH_MAX + 1);
    return Array.from({ length }, () => (PRIMITIVE_TYPES.has(element) ? randomPrimitive(element, random) : randomStruct(schema, structFields(schema, field), version, flexible, random, depth + 1)));
  }
  if (!PRIMITIVE_TYPES.has(element)) return randomStruct(schema, structFields(schema, field), version, flexible, random, depth + 1);
  return randomPrimitive(element, random);
}

function randomPrimitive(type: string, random: SeededRandom): Value {
  const range = INT_RANGES[type];
  if (range !== undefined) {
    if (random.next() < 0.3) return [range[0], range[1], 0, -1].filter((v) => v >= range[0])[random.nextInt(4)] ?? 0;
    return range[0] + Math.floor(random.next() * (range[1] - range[0] + 1));
  }
  switch (type) {
    case 'bool':
      return random.next() < 0.5;
    case 'float64':
      return random.next() * 1000;
    case 'uuid':
      return uuidFromBytes(Uint8Array.from({ length: 16 }, () => random.nextInt(256)));
    case 'string':
      return ['', 'a', 'topic-é', 'x'.repeat(random.nextInt(40))][random.nextInt(4)];
    default:
      return Uint8Array.from({ length: random.nextInt(20) }, () => random.nextInt(256));
  }
}

/** `message` as a round trip at `version` leaves it: fields the version lacks at their defaults, bytes as number arrays. */
export function expectedAt(schema: JsonMessage, version: number, message: Message): Message {
  return normalize(fillStruct(schema, schema.fields, version, message));
}

function fillStruct(schema: JsonMessage, fields: readonly JsonField[], version: number, message: Message): Message {
  const out: Message = {};
  for (const field of fields) {
    const key = camelName(field.name);
    const value = inRange(field.versions, version) ? message[key] : defaultOf(schema, field, version);
    out[key] = fillValue(schema, field, version, value);
  }
  return out;
}

function fillValue(schema: JsonMessage, field: JsonField, version: number, value: Value): Value {
  if (value === null) return null;
  if (value === undefined) return defaultOf(schema, field, version);
  const element = elementType(field.type);
  if (PRIMITIVE_TYPES.has(element)) return value;
  const fields = structFields(schema, field);
  return field.type.startsWith('[]') ? value.map((item: Message) => fillStruct(schema, fields, version, item)) : fillStruct(schema, fields, version, value);
}
