/**
 * A Kafka message's grammar as data: the shape of Kafka's message JSON schemas
 * (clients/src/main/resources/common/message/ in apache/kafka), which the files in
 * ./messages are generated from. One schema describes every version of a message; a field
 * carries the versions it exists in (Kafka's "versions"), those in which it may be null
 * ("nullableVersions") and, for a tagged field of a flexible version, its tag.
 * message-codec.ts reads and writes a message by its schema.
 */

/** Inclusive; `to` is Infinity for Kafka's "N+". An empty range (Kafka's "none") is [0, -1]. */
export type VersionRange = readonly [from: number, to: number];

export type PrimitiveType = 'bool' | 'int8' | 'int16' | 'uint16' | 'int32' | 'uint32' | 'int64' | 'float64' | 'uuid' | 'string' | 'bytes' | 'records';

export interface StructType {
  readonly struct: string;
  readonly fields: readonly FieldSchema[];
}

export interface ArrayType {
  readonly array: PrimitiveType | StructType;
}

export type FieldType = PrimitiveType | StructType | ArrayType;

/** A default as Kafka's schema states it, already parsed: null for a nullable field's "null". */
export type DefaultValue = number | boolean | string | null;

export interface FieldSchema {
  /** Kafka's PascalCase name in camelCase: the key of the field in a decoded message. */
  readonly name: string;
  readonly type: FieldType;
  readonly versions: VersionRange;
  readonly nullableVersions?: VersionRange;
  /** A tagged field: written in the tagged-field section of these (flexible) versions. */
  readonly tag?: number;
  readonly taggedVersions?: VersionRange;
  /** The value a version without the field reads as, and the one a tagged field is left out at. */
  readonly default?: DefaultValue;
}

export interface MessageSchema {
  readonly name: string;
  readonly apiKey: number;
  readonly validVersions: VersionRange;
  readonly flexibleVersions: VersionRange;
  readonly fields: readonly FieldSchema[];
}

export const NO_VERSIONS: VersionRange = [0, -1];

export function inVersions(range: VersionRange, version: number): boolean {
  return version >= range[0] && version <= range[1];
}

export function isArrayType(type: FieldType): type is ArrayType {
  return typeof type === 'object' && 'array' in type;
}

export function isStructType(type: FieldType | PrimitiveType | StructType): type is StructType {
  return typeof type === 'object' && 'struct' in type;
}
