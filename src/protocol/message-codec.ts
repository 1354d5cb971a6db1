import { assert } from '../util/assert.ts';
import { uuidFromBytes, uuidToBytes, ZERO_UUID } from '../util/uuid.ts';
import { ProtocolError } from './errors.ts';
import { KafkaReader, STRING_BYTES_MAX } from './reader.ts';
import { type FieldSchema, type FieldType, inVersions, isArrayType, isStructType, type MessageSchema, type PrimitiveType, type StructType } from './schema.ts';
import { KafkaWriter } from './writer.ts';

/**
 * Reads and writes any Kafka message by its schema (schema.ts), at one version: regular fields
 * in order, compact types and a tagged-field section per struct in flexible versions (KIP-482).
 * A field the version lacks reads as its default and is not written. Each struct's layout is
 * worked out once per version and kept, with a reader and a writer generated for it (one object
 * literal per struct, one property access per field): the hot path pays only for the fields.
 * bench/codec.bench.ts times it against the hand-written codecs it replaced.
 *
 * Records stay zero-copy both ways: a request's records field is a view of the frame, and a
 * response's may be a list of views, each sent as its own chunk.
 */

// biome-ignore lint: decoded messages are plain objects of any shape; their types come from ./messages
type Value = any;
type Message = Record<string, Value>;

interface Layout {
  /** Fields on the wire in this version, in order. */
  readonly regular: readonly FieldCodec[];
  /** Tagged fields of this version, by ascending tag (the order they must be written in). */
  readonly tagged: readonly FieldCodec[];
  /** Fields this version lacks: decoded as their defaults. */
  readonly absent: readonly FieldCodec[];
  /** Regular then tagged: the fields a struct of this version carries (its defaults compare these). */
  readonly carried: readonly FieldCodec[];
  /** Regular, tagged, absent: every field, in the order a struct of defaults is built. */
  readonly all: readonly FieldCodec[];
  /** Tagged fields by tag: reading one is a lookup, not a search. */
  readonly taggedByTag: ReadonlyMap<number, FieldCodec>;
  /** The fewest bytes a struct of this layout takes: bounds array counts before allocating. */
  readonly bytesMin: number;
  readonly flexible: boolean;
  /** Reads the regular fields into a new message that also holds the absent and tagged fields' defaults. */
  readonly readFields: (reader: KafkaReader) => Message;
  /** Writes the regular fields of `message`, a missing one as its default. */
  readonly writeFields: (writer: KafkaWriter, message: Message) => void;
  /** How many tagged fields `message` sets to something other than their defaults (those are written). */
  readonly countTagged: (message: Message) => number;
}

interface FieldCodec {
  readonly name: string;
  readonly tag: number;
  read(reader: KafkaReader): Value;
  write(writer: KafkaWriter, value: Value): void;
  defaultValue(): Value;
  isDefault(value: Value): boolean;
  readonly bytesMin: number;
}

/** Messages nest structs a few levels deep; deeper is a schema loop, never a real message. */
const STRUCT_DEPTH_MAX = 16;

const layouts = new WeakMap<readonly FieldSchema[], Map<number, Layout>>();

export function decodeMessage(schema: MessageSchema, reader: KafkaReader, version: number): Message {
  return readStruct(reader, layoutOf(schema.fields, version, isFlexibleVersion(schema, version), 0));
}

export function encodeMessage(schema: MessageSchema, writer: KafkaWriter, version: number, message: Message): void {
  writeStruct(writer, layoutOf(schema.fields, version, isFlexibleVersion(schema, version), 0), message);
}

export function isFlexibleVersion(schema: MessageSchema, version: number): boolean {
  return inVersions(schema.flexibleVersions, version);
}

function layoutOf(fields: readonly FieldSchema[], version: number, flexible: boolean, depth: number): Layout {
  assert(depth <= STRUCT_DEPTH_MAX, `structs nest more than ${STRUCT_DEPTH_MAX} deep`);
  let byVersion = layouts.get(fields);
  if (byVersion === undefined) layouts.set(fields, (byVersion = new Map()));
  let layout = byVersion.get(version);
  if (layout === undefined) byVersion.set(version, (layout = buildLayout(fields, version, flexible, depth)));
  return layout;
}

function buildLayout(fields: readonly FieldSchema[], version: number, flexible: boolean, depth: number): Layout {
  const regular: FieldCodec[] = [];
  const tagged: FieldCodec[] = [];
  const absent: FieldCodec[] = [];
  for (const field of fields) {
    const codec = fieldCodec(field, version, flexible, depth);
    if (!inVersions(field.versions, version)) absent.push(codec);
    else if (flexible && field.tag !== undefined && field.taggedVersions !== undefined && inVersions(field.taggedVersions, version)) tagged.push(codec);
    else regular.push(codec);
  }
  tagged.sort((a, b) => a.tag - b.tag);
  const bytesMin = regular.reduce((sum, codec) => sum + codec.bytesMin, flexible ? 1 : 0);
  const carried = [...regular, ...tagged];
  const taggedByTag = new Map(tagged.map((codec) => [codec.tag, codec]));
  const readFields = compileFieldsReader(regular, [...absent, ...tagged]);
  const writeFields = compileFieldsWriter(regular);
  const countTagged = compileTaggedCounter(tagged);
  return { regular, tagged, absent, carried, all: [...carried, ...absent], taggedByTag, bytesMin, flexible, readFields, writeFields, countTagged };
}

/**
 * Per layout, a function that reads a struct as one object literal: a loop storing fields by
 * computed name makes every message take the same megamorphic path, while a literal gives each
 * struct type one fixed shape and each field its own property store (the hand-written codecs'
 * speed). Generated from the schema only, never from input: names are checked to be plain
 * identifiers, and values are read by the field codecs, passed in, never spelt into the source.
 * Reads happen in field order (a literal evaluates left to right); defaults come after.
 */
function compileFieldsReader(read: readonly FieldCodec[], defaulted: readonly FieldCodec[]): (reader: KafkaReader) => Message {
  const properties = [...read.map((field, i) => `${propertyName(field)}: read[${i}](reader)`), ...defaulted.map((field, i) => `${propertyName(field)}: defaulted[${i}]()`)];
  const source = `return function readFields(reader) { return { ${properties.join(', ')} }; };`;
  return new Function('read', 'defaulted', source)(
    read.map((field) => field.read),
    defaulted.map((field) => field.defaultValue),
  );
}

/** Per layout, the regular fields' writes in order, each reading its own property (see compileFieldsReader). */
function compileFieldsWriter(fields: readonly FieldCodec[]): (writer: KafkaWriter, message: Message) => void {
  const statements = fields.map((field, i) => `value = message.${propertyName(field)}; write[${i}](writer, value === undefined ? defaults[${i}]() : value);`);
  const source = `return function writeFields(writer, message) { let value; ${statements.join(' ')} };`;
  return new Function('write', 'defaults', source)(
    fields.map((field) => field.write),
    fields.map((field) => field.defaultValue),
  );
}

/** Per layout, the count of tagged fields to write (see isTaggedPresent), each field read by its own property access. */
function compileTaggedCounter(tagged: readonly FieldCodec[]): (message: Message) => number {
  const terms = tagged.map((field, i) => `(message.${propertyName(field)} !== undefined && !isDefault[${i}](message.${propertyName(field)}) ? 1 : 0)`);
  const source = `return function countTagged(message) { return ${terms.length === 0 ? '0' : terms.join(' + ')}; };`;
  return new Function('isDefault', source)(tagged.map((field) => field.isDefault));
}

/** Kafka's field names, camelCased: plain identifiers (anything else would change the generated code). */
const PROPERTY_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function propertyName(field: FieldCodec): string {
  assert(PROPERTY_NAME.test(field.name) && field.name !== '__proto__', `field name ${JSON.stringify(field.name)} is not a plain identifier`);
  return field.name;
}

function readStruct(reader: KafkaReader, layout: Layout): Message {
  const message = layout.readFields(reader);
  if (layout.flexible) readTaggedFields(reader, layout, message);
  return message;
}

/** The tagged-field section; the tagged fields already hold their defaults (readFields). */
function readTaggedFields(reader: KafkaReader, layout: Layout, message: Message): void {
  const count = readUvarint(reader);
  if (count === 0) return; // nearly every struct: no tagged field sent
  // each tagged field takes at least its tag and its size
  if (count * 2 > reader.remaining) throw new ProtocolError(`${count} tagged fields cannot fit in ${reader.remaining} bytes`, reader.position);
  for (let i = 0; i < count; i++) {
    const tag = reader.uvarint();
    const size = reader.uvarint();
    const start = reader.position;
    if (size > reader.remaining) throw new ProtocolError(`tagged field ${tag} of ${size} bytes exceeds the ${reader.remaining} left`, start);
    const field = layout.taggedByTag.get(tag);
    if (field !== undefined) message[field.name] = field.read(reader);
    if (reader.position - start > size) throw new ProtocolError(`tagged field ${tag} reads past its ${size} bytes`, start);
    reader.position = start + size; // an unknown tag is skipped, as Kafka does
  }
}

function writeStruct(writer: KafkaWriter, layout: Layout, message: Message): void {
  layout.writeFields(writer, message);
  if (layout.flexible) writeTaggedFields(writer, layout, message);
}

/** An unsigned varint; the one-byte form (every tagged-field count in practice) without the general loop. */
function readUvarint(reader: KafkaReader): number {
  const first = reader.int8();
  if (first >= 0) return first; // high bit clear: the varint ends here
  reader.position--;
  return reader.uvarint();
}

/** A tagged field is written only when set to something other than its default. */
function isTaggedPresent(field: FieldCodec, message: Message): boolean {
  const value = message[field.name];
  return value !== undefined && !field.isDefault(value);
}

/** Counts first, so that the common case (none present) allocates nothing. */
function writeTaggedFields(writer: KafkaWriter, layout: Layout, message: Message): void {
  const { tagged } = layout;
  const count = layout.countTagged(message);
  writer.uvarint(count);
  if (count === 0) return;
  for (let i = 0; i < tagged.length; i++) {
    const field = tagged[i]!;
    if (!isTaggedPresent(field, message)) continue;
    const body = new KafkaWriter();
    field.write(body, message[field.name]);
    writer.uvarint(field.tag).uvarint(body.length);
    for (const chunk of body.chunks()) writer.raw(chunk);
  }
}

function fieldCodec(field: FieldSchema, version: number, flexible: boolean, depth: number): FieldCodec {
  const nullable = field.nullableVersions !== undefined && inVersions(field.nullableVersions, version);
  const where = `field ${field.name}`;
  const type = isErrorMessage(field) ? errorMessageCodec(nullable, flexible, where) : typeCodec(field.type, nullable, flexible, version, depth, where);
  return {
    name: field.name,
    tag: field.tag ?? -1,
    read: type.read,
    write: type.write,
    defaultValue: defaultMaker(field.type, field.default, version, flexible, depth),
    isDefault: defaultTest(field.type, field.default, version, flexible, depth),
    bytesMin: type.bytesMin,
  };
}

/** Kafka's human-readable error messages (error_message, batch_index_error_message). */
function isErrorMessage(field: FieldSchema): boolean {
  return field.type === 'string' && /(^e|E)rrorMessage$/.test(field.name);
}

/**
 * An error message is for people and may echo what a request sent (a config value, a group id, up
 * to a string's limit): one past the limit is cut to it (at a character boundary), where any
 * other string that long is a bug (the writer asserts).
 */
function errorMessageCodec(nullable: boolean, flexible: boolean, where: string): TypeCodec {
  const plain = primitiveCodec('string', nullable, flexible, where);
  return { ...plain, write: (writer, value: string | null) => plain.write(writer, value === null ? null : cutToStringLimit(value)) };
}

const messageEncoder = new TextEncoder();
const ELLIPSIS = '…';

function cutToStringLimit(text: string): string {
  const bytes = messageEncoder.encode(text);
  if (bytes.length <= STRING_BYTES_MAX) return text;
  let end = STRING_BYTES_MAX - messageEncoder.encode(ELLIPSIS).length;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // not inside a character
  return `${new TextDecoder().decode(bytes.subarray(0, end))}${ELLIPSIS}`;
}

interface TypeCodec {
  read(reader: KafkaReader): Value;
  write(writer: KafkaWriter, value: Value): void;
  readonly bytesMin: number;
}

function typeCodec(type: FieldType, nullable: boolean, flexible: boolean, version: number, depth: number, where: string): TypeCodec {
  if (isArrayType(type)) return arrayCodec(type.array, nullable, flexible, version, depth, where);
  if (isStructType(type)) return structCodec(type, nullable, flexible, version, depth, where);
  return primitiveCodec(type, nullable, flexible, where);
}

function arrayCodec(element: PrimitiveType | StructType, nullable: boolean, flexible: boolean, version: number, depth: number, where: string): TypeCodec {
  const item = isStructType(element) ? structCodec(element, false, flexible, version, depth, where) : primitiveCodec(element, false, flexible, where);
  const itemBytesMin = item.bytesMin;
  const readItem = item.read;
  const writeItem = item.write;
  return {
    bytesMin: flexible ? 1 : 4,
    read(reader) {
      const position = reader.position;
      const count = flexible ? reader.compactArrayLength(itemBytesMin) : reader.arrayLength(itemBytesMin);
      if (count < 0) {
        if (!nullable) throw new ProtocolError(`null array in non-nullable ${where}`, position);
        return null;
      }
      const items = new Array(count);
      for (let i = 0; i < count; i++) items[i] = readItem(reader);
      return items;
    },
    write(writer, value: readonly Value[] | null) {
      if (value === null) {
        assert(nullable, `${where} is not nullable in this version`);
        if (flexible) writer.uvarint(0);
        else writer.int32(-1);
        return;
      }
      if (flexible) writer.uvarint(value.length + 1);
      else writer.int32(value.length);
      for (let i = 0; i < value.length; i++) writeItem(writer, value[i]);
    },
  };
}

function structCodec(type: StructType, nullable: boolean, flexible: boolean, version: number, depth: number, where: string): TypeCodec {
  // resolved on first use (a struct's layout is built after its parent's), then kept: no lookup per read
  let resolved: Layout | undefined;
  const layout = () => (resolved ??= layoutOf(type.fields, version, flexible, depth + 1));
  return {
    // a nullable struct leads with an int8 marker (-1: null); Kafka's schemas never nest a struct in itself
    bytesMin: nullable ? 1 : layout().bytesMin,
    read(reader) {
      if (nullable && reader.int8() < 0) return null;
      return readStruct(reader, layout());
    },
    write(writer, value: Message | null) {
      if (nullable) writer.int8(value === null ? -1 : 1);
      else assert(value !== null, `${where} is not nullable in this version`);
      if (value !== null) writeStruct(writer, layout(), value);
    },
  };
}

const FIXED_BYTES: Partial<Record<PrimitiveType, number>> = { bool: 1, int8: 1, int16: 2, uint16: 2, int32: 4, uint32: 4, int64: 8, float64: 8, uuid: 16 };

function primitiveCodec(type: PrimitiveType, nullable: boolean, flexible: boolean, where: string): TypeCodec {
  const fixed = FIXED_BYTES[type];
  if (fixed !== undefined) return { bytesMin: fixed, ...fixedReadWrite(type) };
  const bytesMin = flexible ? 1 : type === 'string' ? 2 : 4;
  const nonNull = (value: Value, position: number) => {
    if (value === null && !nullable) throw new ProtocolError(`null in non-nullable ${where}`, position);
    return value;
  };
  if (type === 'string') {
    return {
      bytesMin,
      read: (reader) => nonNull(flexible ? reader.compactNullableString() : reader.nullableString(), reader.position),
      write(writer, value: string | null) {
        assert(value !== null || nullable, `${where} is not nullable in this version`);
        if (flexible) writer.compactNullableString(value);
        else writer.nullableString(value);
      },
    };
  }
  return {
    bytesMin,
    read: (reader) => nonNull(flexible ? reader.compactNullableBytes() : reader.nullableBytes(), reader.position),
    write(writer, value: Uint8Array | readonly Uint8Array[] | null) {
      assert(value !== null || nullable, `${where} is not nullable in this version`);
      writeBytes(writer, value, flexible, type === 'records');
    },
  };
}

/** BYTES and RECORDS; records given as a list of views go out as chunks of their own (no copy). */
function writeBytes(writer: KafkaWriter, value: Uint8Array | readonly Uint8Array[] | null, flexible: boolean, chunked: boolean): void {
  if (value === null) {
    if (flexible) writer.uvarint(0);
    else writer.int32(-1);
    return;
  }
  const single = value instanceof Uint8Array;
  let length = 0;
  if (single) length = value.length;
  else for (let i = 0; i < value.length; i++) length += value[i]!.length;
  assert(length <= RECORDS_BYTES_MAX, `${length} bytes exceed a bytes field's ${RECORDS_BYTES_MAX}`);
  if (flexible) writer.uvarint(length + 1);
  else writer.int32(length);
  if (single) writeChunk(writer, value, chunked);
  else for (let i = 0; i < value.length; i++) writeChunk(writer, value[i]!, chunked);
}

function writeChunk(writer: KafkaWriter, chunk: Uint8Array, chunked: boolean): void {
  if (chunked) writer.view(chunk);
  else writer.raw(chunk);
}

/** A BYTES or RECORDS length is an int32 (its compact form a varint of it, plus one). */
const RECORDS_BYTES_MAX = 0x7fff_fffe;

function fixedReadWrite(type: PrimitiveType): Pick<TypeCodec, 'read' | 'write'> {
  switch (type) {
    case 'bool':
      return { read: (r) => r.boolean(), write: (w, v: boolean) => w.boolean(v) };
    case 'int8':
      return { read: (r) => r.int8(), write: (w, v: number) => w.int8(v) };
    case 'int16':
      return { read: (r) => r.int16(), write: (w, v: number) => w.int16(v) };
    case 'uint16':
      return { read: (r) => r.uint16(), write: (w, v: number) => w.uint16(v) };
    case 'int32':
      return { read: (r) => r.int32(), write: (w, v: number) => w.int32(v) };
    case 'uint32':
      return { read: (r) => r.uint32(), write: (w, v: number) => w.uint32(v) };
    case 'int64':
      return { read: (r) => r.int64(), write: (w, v: number) => w.int64(v) };
    case 'float64':
      return { read: (r) => r.float64(), write: (w, v: number) => w.float64(v) };
    case 'uuid':
      return { read: (r) => uuidFromBytes(r.uuid()), write: (w, v: string) => w.uuid(uuidBytesOf(v)) };
    default:
      throw new Error(`${type} is not a fixed-size type`);
  }
}

/**
 * Topic ids are few and written again in every Fetch (v13+) and Metadata (v10+) response: their
 * bytes are kept rather than parsed from base64 each time. The writer copies them, so sharing is
 * safe; the cache is emptied when full, which bounds it whatever ids pass through.
 */
const UUID_CACHE_ENTRIES_MAX = 4096;
const uuidBytesCache = new Map<string, Uint8Array>();

function uuidBytesOf(uuid: string): Uint8Array {
  let bytes = uuidBytesCache.get(uuid);
  if (bytes === undefined) {
    bytes = uuidToBytes(uuid); // asserts the form: a bad id is never cached
    if (uuidBytesCache.size >= UUID_CACHE_ENTRIES_MAX) uuidBytesCache.clear();
    uuidBytesCache.set(uuid, bytes);
  }
  return bytes;
}

/** Kafka's defaults: the schema's, else zero, false, "", the zero UUID, empty bytes, an empty array, a struct of defaults. */
function defaultOf(type: FieldType, given: FieldSchema['default'], version: number, flexible: boolean, depth: number): Value {
  if (given === null) return null;
  if (given !== undefined) return given;
  if (isArrayType(type)) return [];
  if (isStructType(type)) return readStructDefaults(type, version, flexible, depth);
  switch (type) {
    case 'bool':
      return false;
    case 'string':
      return '';
    case 'uuid':
      return ZERO_UUID;
    case 'bytes':
      return new Uint8Array(0);
    case 'records':
      return null;
    default:
      return 0;
  }
}

/**
 * A field's default, made per call only when it is an object (an array, bytes, a struct: each
 * message gets its own); a primitive default is worked out once.
 */
function defaultMaker(type: FieldType, given: FieldSchema['default'], version: number, flexible: boolean, depth: number): () => Value {
  const fresh = given === undefined && (isArrayType(type) || isStructType(type) || type === 'bytes');
  if (fresh) return () => defaultOf(type, given, version, flexible, depth);
  const constant = defaultOf(type, given, version, flexible, depth);
  return () => constant;
}

function readStructDefaults(type: StructType, version: number, flexible: boolean, depth: number): Message {
  const layout = layoutOf(type.fields, version, flexible, depth + 1);
  const message: Message = {};
  for (const field of layout.all) message[field.name] = field.defaultValue();
  return message;
}

/** Whether a value is its field's default (a tagged field at its default is left out), decided by kind once per field. */
function defaultTest(type: FieldType, given: FieldSchema['default'], version: number, flexible: boolean, depth: number): (value: Value) => boolean {
  if (given === null) return (value) => value === null;
  if (isArrayType(type)) return (value) => value !== null && value.length === 0;
  if (isStructType(type)) {
    let resolved: Layout | undefined;
    return (value) => {
      if (value === null) return false;
      const layout = (resolved ??= layoutOf(type.fields, version, flexible, depth + 1));
      return layout.carried.every((field) => value[field.name] === undefined || field.isDefault(value[field.name]));
    };
  }
  if (type === 'bytes' || type === 'records') return (value) => value !== null && value.length === 0;
  const constant = defaultOf(type, given, version, flexible, depth);
  return (value) => value === constant;
}

/** A message as decoding gives it: every field present (a version without it gives its default). */
export type Decoded<T> = T extends Uint8Array ? T : T extends readonly (infer E)[] ? readonly Decoded<E>[] : T extends object ? { readonly [K in keyof T]-?: Decoded<Exclude<T[K], undefined>> } : T;

/** A message to encode: any field may be left out, and is written as its default. */
export type Draft<T> = T extends Uint8Array ? T : T extends readonly (infer E)[] ? readonly Draft<E>[] : T extends object ? { readonly [K in keyof T]?: Draft<T[K]> } : T;

/**
 * `draft` with every field the schema has at `version` (default: its newest), as a peer's
 * encoding of it would decode here: for building requests in tests and clients.
 */
export function completeMessage<T>(schema: MessageSchema, draft: Draft<T>, version: number = schema.validVersions[1]): T {
  const writer = new KafkaWriter();
  encodeMessage(schema, writer, version, draft as Message);
  return decodeMessage(schema, new KafkaReader(Buffer.concat(writer.chunks())), version) as T;
}
