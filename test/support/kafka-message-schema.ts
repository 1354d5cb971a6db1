/**
 * Kafka's message schemas (test/fixtures/kafka-messages, Apache-2.0) as an independent encoder
 * and decoder: a codec test checks Ferry's hand-written codec against Kafka's own grammar for
 * APIs that kafkajs does not speak. Only what those schemas use: int16/int32/int64, string,
 * arrays of structs, version ranges, flexible versions (compact types, empty tag buffers).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KafkaReader } from '../../src/broker/protocol/reader.ts';
import { KafkaWriter } from '../../src/broker/protocol/writer.ts';

interface SchemaField {
  readonly name: string;
  readonly type: string;
  readonly versions: string;
  readonly default?: number | string;
  readonly fields?: readonly SchemaField[];
}

export interface MessageSchema {
  readonly apiKey: number;
  readonly flexibleVersions: string;
  readonly fields: readonly SchemaField[];
}

type Value = number | string | Message[];
export type Message = { [name: string]: Value };

const FIXTURES = join(import.meta.dir, '..', 'fixtures', 'kafka-messages');

/** Reads `<name>.json` from the fixtures (Kafka's files hold // comments, which JSON does not). */
export function loadMessageSchema(name: string): MessageSchema {
  const text = readFileSync(join(FIXTURES, `${name}.json`), 'utf8');
  return JSON.parse(text.split('\n').filter((line) => !line.trim().startsWith('//')).join('\n'));
}

/** Kafka's version ranges: "3+", "0-2", "1". */
function inRange(range: string, version: number): boolean {
  if (range.endsWith('+')) return version >= Number(range.slice(0, -1));
  const [low, high] = range.split('-').map(Number);
  return version >= low! && version <= (high ?? low!);
}

/** Schema names (PascalCase) as Ferry's codecs name them (camelCase). */
function key(field: SchemaField): string {
  return field.name[0]!.toLowerCase() + field.name.slice(1);
}

/** The bytes of `message` at `version`, field by field as the schema orders them. */
export function encodeBySchema(schema: MessageSchema, version: number, message: Message): Uint8Array {
  const flexible = inRange(schema.flexibleVersions, version);
  const writer = new KafkaWriter();
  const writeStruct = (fields: readonly SchemaField[], value: Message) => {
    for (const field of fields) {
      if (!inRange(field.versions, version)) continue;
      const item = value[key(field)];
      if (field.type === 'int16') writer.int16(item as number);
      else if (field.type === 'int32') writer.int32(item as number);
      else if (field.type === 'int64') writer.int64(item as number);
      else if (field.type === 'string') flexible ? writer.compactString(item as string) : writer.string(item as string);
      else if (field.type.startsWith('[]')) {
        const items = item as Message[];
        if (flexible) writer.uvarint(items.length + 1);
        else writer.int32(items.length);
        for (const element of items) writeStruct(field.fields!, element);
      } else throw new Error(`schema type ${field.type} is not handled here`);
    }
    if (flexible) writer.emptyTaggedFields();
  };
  writeStruct(schema.fields, message);
  return Buffer.concat(writer.chunks());
}

/** `bytes` read back by the schema at `version`; a field the version lacks takes the schema's default (else 0). */
export function decodeBySchema(schema: MessageSchema, version: number, bytes: Uint8Array): Message {
  const flexible = inRange(schema.flexibleVersions, version);
  const reader = new KafkaReader(bytes);
  const readStruct = (fields: readonly SchemaField[]): Message => {
    const message: Message = {};
    for (const field of fields) {
      if (!inRange(field.versions, version)) {
        message[key(field)] = field.type.startsWith('[]') ? [] : Number(field.default ?? 0);
        continue;
      }
      if (field.type === 'int16') message[key(field)] = reader.int16();
      else if (field.type === 'int32') message[key(field)] = reader.int32();
      else if (field.type === 'int64') message[key(field)] = reader.int64();
      else if (field.type === 'string') message[key(field)] = flexible ? reader.compactString() : reader.string();
      else if (field.type.startsWith('[]')) {
        const count = flexible ? reader.compactArrayLength() : reader.arrayLength();
        message[key(field)] = Array.from({ length: count }, () => readStruct(field.fields!));
      } else throw new Error(`schema type ${field.type} is not handled here`);
    }
    if (flexible) reader.skipTaggedFields();
    return message;
  };
  const message = readStruct(schema.fields);
  if (reader.remaining !== 0) throw new Error(`${reader.remaining} bytes left after the message`);
  return message;
}
