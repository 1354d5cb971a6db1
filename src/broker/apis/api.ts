import type { KafkaReader } from '../protocol/reader.ts';
import type { KafkaWriter } from '../protocol/writer.ts';

/**
 * One Kafka API's wire format, every version Ferry supports, in one file per API (STYLE.md 1):
 * `decodeRequest` turns bytes into a plain object, `encodeResponse` the reverse. No behaviour
 * here: handlers (src/broker/handlers) decide what to answer.
 */
export interface ApiCodec<Request, Response> {
  readonly key: number;
  readonly name: string;
  /** Advertised in ApiVersions. Every API starts at 0 (librdkafka turns features off otherwise). */
  readonly minVersion: number;
  readonly maxVersion: number;
  /** The first flexible version (tagged fields, compact types), or null if none is supported. */
  readonly flexibleFrom: number | null;
  decodeRequest(reader: KafkaReader, version: number): Request;
  encodeResponse(writer: KafkaWriter, version: number, response: Response): void;
}

export function isFlexible(codec: ApiCodec<unknown, unknown>, version: number): boolean {
  return codec.flexibleFrom !== null && version >= codec.flexibleFrom;
}
