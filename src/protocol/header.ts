import type { KafkaReader } from './reader.ts';
import type { KafkaWriter } from './writer.ts';

/** Request header v1 (v2 in flexible versions adds tagged fields). */
export interface RequestHeader {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly clientId: string | null;
}

/** The key, version and correlation id come first in every header version: read them alone first. */
export function readRequestHeader(reader: KafkaReader, flexible: boolean): RequestHeader {
  const apiKey = reader.int16();
  const apiVersion = reader.int16();
  const correlationId = reader.int32();
  const clientId = reader.nullableString(); // stays a plain string even in header v2
  if (flexible) reader.skipTaggedFields();
  return { apiKey, apiVersion, correlationId, clientId };
}

/** Response header v0 (v1 in flexible versions adds tagged fields; ApiVersions always uses v0). */
export function writeResponseHeader(writer: KafkaWriter, correlationId: number, flexible: boolean): void {
  writer.int32(correlationId);
  if (flexible) writer.emptyTaggedFields();
}
