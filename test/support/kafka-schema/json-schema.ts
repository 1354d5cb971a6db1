/**
 * Kafka's message JSON schemas (test/fixtures/kafka-messages, Apache-2.0) as Kafka writes them:
 * the loader and the version-range grammar shared by the generator of
 * src/protocol/messages and by the codec tests' independent reader and writer.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface JsonField {
  readonly name: string;
  readonly type: string;
  readonly versions: string;
  readonly nullableVersions?: string;
  readonly taggedVersions?: string;
  readonly tag?: number;
  readonly default?: string | number | boolean;
  readonly about?: string;
  readonly ignorable?: boolean;
  readonly fields?: readonly JsonField[];
}

export interface JsonStruct {
  readonly name: string;
  readonly versions: string;
  readonly fields: readonly JsonField[];
}

export interface JsonMessage {
  readonly apiKey: number;
  readonly type: 'request' | 'response' | 'header' | 'data';
  readonly name: string;
  readonly validVersions: string;
  readonly flexibleVersions?: string;
  readonly fields: readonly JsonField[];
  readonly commonStructs?: readonly JsonStruct[];
}

export const FIXTURES_DIR = join(import.meta.dir, '..', '..', 'fixtures', 'kafka-messages');

/** Kafka's files hold // comment lines, which JSON does not. */
export function loadJsonMessage(name: string): JsonMessage {
  const text = readFileSync(join(FIXTURES_DIR, `${name}.json`), 'utf8');
  return JSON.parse(
    text
      .split('\n')
      .filter((line) => !line.trim().startsWith('//'))
      .join('\n'),
  );
}

/** The request/response pairs in the fixtures, by API name ("Fetch", "Metadata", ...). */
export function fixtureApis(): string[] {
  const names = readdirSync(FIXTURES_DIR)
    .filter((file) => file.endsWith('Request.json'))
    .map((file) => file.slice(0, -'Request.json'.length));
  return names.filter((name) => name !== '' && readdirSync(FIXTURES_DIR).includes(`${name}Response.json`)).sort();
}

/** Kafka's version ranges: "3+", "0-2", "1", "none"; [from, to] inclusive, to = Infinity for "N+". */
export function parseVersions(text: string): [number, number] {
  if (text === 'none') return [0, -1];
  if (text.endsWith('+')) return [Number(text.slice(0, -1)), Number.POSITIVE_INFINITY];
  const [low, high] = text.split('-').map(Number);
  if (!Number.isInteger(low) || (high !== undefined && !Number.isInteger(high))) throw new Error(`bad version range '${text}'`);
  return [low!, high ?? low!];
}

export function inRange(range: string, version: number): boolean {
  const [from, to] = parseVersions(range);
  return version >= from && version <= to;
}

/** Schema names (PascalCase) as Ferry's codecs name them (camelCase). */
export function camelName(name: string): string {
  return name[0]!.toLowerCase() + name.slice(1);
}

/** A field's element or struct type: "[]Foo" → "Foo". */
export function elementType(type: string): string {
  return type.startsWith('[]') ? type.slice(2) : type;
}

export const PRIMITIVE_TYPES = new Set(['bool', 'int8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'float64', 'uuid', 'string', 'bytes', 'records']);

/** The fields of a struct type: inline, else one of the message's commonStructs. */
export function structFields(message: JsonMessage, field: JsonField): readonly JsonField[] {
  if (field.fields !== undefined) return field.fields;
  const common = message.commonStructs?.find((s) => s.name === elementType(field.type));
  if (common === undefined) throw new Error(`${message.name}: no struct ${field.type} for field ${field.name}`);
  return common.fields;
}
