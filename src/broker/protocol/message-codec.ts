import { assert } from '../../util/assert.ts';
import { uuidFromBytes, uuidToBytes, ZERO_UUID } from '../../util/uuid.ts';
import { ProtocolError } from './errors.ts';
import { KafkaReader } from './reader.ts';
import { type FieldSchema, type FieldType, inVersions, isArrayType, isStructType, type MessageSchema, type PrimitiveType, type StructType } from './schema.ts';
import { KafkaWriter } from './writer.ts';

/**
 * Reads and writes any Kafka message by its schema (schema.ts), at one version: regular fields
 * in order, compact types and a tagged-field section per struct in flexible versions (KIP-482).
 * A field the version lacks reads as its default and is not written. Each struct's layout is
 * worked out once per version and kept (the hot path pays only for the fields).
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
  /** The fewest bytes a struct of this layout takes: bounds array counts before allocating. */
  readonly bytesMin: number;
  readonly flexible: boolean;
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
  return { regular, tagged, absent, bytesMin, flexible };
}

function readStruct(reader: KafkaReader, layout: Layout): Message {
  const message: Message = {};
  for (const field of layout.regular) message[field.name] = field.read(reader);
  for (const field of layout.absent) message[field.name] = field.defaultValue();
  if (layout.flexible) readTaggedFields(reader, layout, message);
  return message;
}

function readTaggedFields(reader: KafkaReader, layout: Layout, message: Message): void {
  for (const field of layout.tagged) message[field.name] = field.defaultValue();
  const count = reader.uvarint();
  // each tagged field takes at least its tag and its size
  if (count * 2 > reader.remaining) throw new ProtocolError(`${count} tagged fields cannot fit in ${reader.remaining} bytes`, reader.position);
  for (let i = 0; i < count; i++) {
    const tag = reader.uvarint();
    const size = reader.uvarint();
    const start = reader.position;
    if (size > reader.remaining) throw new ProtocolError(`tagged field ${tag} of ${size} bytes exceeds the ${reader.remaining} left`, start);
    const field = layout.tagged.find((f) => f.tag === tag);
    if (field !== undefined) message[field.name] = field.read(reader);
    if (reader.position - start > size) throw new ProtocolError(`tagged field ${tag} reads past its ${size} bytes`, start);
    reader.position = start + size; // an unknown tag is skipped, as Kafka does
  }
}

function writeStruct(writer: KafkaWriter, layout: Layout, message: Message): void {
  for (const field of layout.regular) {
    const value = message[field.name];
    field.write(writer, value === undefined ? field.defaultValue() : value);
  }
  if (layout.flexible) writeTaggedFields(writer, layout, message);
}

function writeTaggedFields(writer: KafkaWriter, layout: Layout, message: Message): void {
  const present = layout.tagged.filter((field) => message[field.name] !== undefined && !field.isDefault(message[field.name]));
  writer.uvarint(present.length);
  for (const field of present) {
    const body = new KafkaWriter();
    field.write(body, message[field.name]);
    writer.uvarint(field.tag).uvarint(body.length);
    for (const chunk of body.chunks()) writer.raw(chunk);
  }
}

function fieldCodec(field: FieldSchema, version: number, flexible: boolean, depth: number): FieldCodec {
  const nullable = field.nullableVersions !== undefined && inVersions(field.nullableVersions, version);
  const where = `field ${field.name}`;
  const type = typeCodec(field.type, nullable, flexible, version, depth, where);
  const fallback = field.default;
  const defaultValue = () => defaultOf(field.type, fallback, version, flexible, depth);
  return {
    name: field.name,
    tag: field.tag ?? -1,
    read: type.read,
    write: type.write,
    defaultValue,
    isDefault: (value: Value) => isDefaultOf(field.type, value, fallback, version, flexible, depth),
    bytesMin: type.bytesMin,
  };
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
  return {
    bytesMin: flexible ? 1 : 4,
    read(reader) {
      const position = reader.position;
      const count = flexible ? reader.compactArrayLength(item.bytesMin) : reader.arrayLength(item.bytesMin);
      if (count < 0) {
        if (!nullable) throw new ProtocolError(`null array in non-nullable ${where}`, position);
        return null;
      }
      const items = new Array(count);
      for (let i = 0; i < count; i++) items[i] = item.read(reader);
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
      for (const element of value) item.write(writer, element);
    },
  };
}

function structCodec(type: StructType, nullable: boolean, flexible: boolean, version: number, depth: number, where: string): TypeCodec {
  const layout = () => layoutOf(type.fields, version, flexible, depth + 1);
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
  const chunks = value instanceof Uint8Array ? [value] : value;
  let length = 0;
  for (const chunk of chunks) length += chunk.length;
  assert(length <= RECORDS_BYTES_MAX, `${length} bytes exceed a bytes field's ${RECORDS_BYTES_MAX}`);
  if (flexible) writer.uvarint(length + 1);
  else writer.int32(length);
  for (const chunk of chunks) {
    if (chunked) writer.view(chunk);
    else writer.raw(chunk);
  }
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
      return { read: (r) => uuidFromBytes(r.uuid()), write: (w, v: string) => w.uuid(uuidToBytes(v)) };
    default:
      throw new Error(`${type} is not a fixed-size type`);
  }
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

function readStructDefaults(type: StructType, version: number, flexible: boolean, depth: number): Message {
  const layout = layoutOf(type.fields, version, flexible, depth + 1);
  const message: Message = {};
  for (const field of [...layout.regular, ...layout.tagged, ...layout.absent]) message[field.name] = field.defaultValue();
  return message;
}

function isDefaultOf(type: FieldType, value: Value, given: FieldSchema['default'], version: number, flexible: boolean, depth: number): boolean {
  if (value === null || given === null) return value === given;
  if (isArrayType(type)) return value.length === 0;
  if (isStructType(type)) {
    const layout = layoutOf(type.fields, version, flexible, depth + 1);
    return [...layout.regular, ...layout.tagged].every((field) => value[field.name] === undefined || field.isDefault(value[field.name]));
  }
  if (type === 'bytes' || type === 'records') return value.length === 0;
  return value === defaultOf(type, given, version, flexible, depth);
}

/** A message as decoding gives it: every field present (a version without it gives its default). */
export type Decoded<T> = T extends Uint8Array
  ? T
  : T extends readonly (infer E)[]
    ? readonly Decoded<E>[]
    : T extends object
      ? { readonly [K in keyof T]-?: Decoded<Exclude<T[K], undefined>> }
      : T;

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
