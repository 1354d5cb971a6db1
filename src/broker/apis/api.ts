import { decodeMessage, encodeMessage } from '../../protocol/message-codec.ts';
import type { KafkaReader } from '../../protocol/reader.ts';
import type { MessageSchema } from '../../protocol/schema.ts';
import type { KafkaWriter } from '../../protocol/writer.ts';

/**
 * One Kafka API's wire format, every version Ferry supports: `decodeRequest` turns bytes into a
 * plain object, `encodeResponse` the reverse. No behaviour here: handlers (src/broker/handlers)
 * decide what to answer.
 */
export interface ApiCodec<Request, Response> {
  readonly key: number;
  readonly name: string;
  /** Advertised in ApiVersions. */
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

export interface SchemaApiSpec {
  readonly name: string;
  readonly minVersion: number;
  readonly maxVersion: number;
  /** Generated from Kafka's message schemas: src/protocol/messages. */
  readonly request: MessageSchema;
  readonly response: MessageSchema;
}

/** An API whose messages are read and written by their Kafka schemas (message-codec.ts). */
export function schemaApi<Request, Response>(spec: SchemaApiSpec): ApiCodec<Request, Response> {
  const { request, response } = spec;
  const [flexibleFrom, flexibleTo] = request.flexibleVersions;
  if (request.apiKey !== response.apiKey) throw new Error(`${spec.name}: request and response schemas of different APIs`);
  const schemaMax = Math.min(request.validVersions[1], response.validVersions[1]);
  if (spec.minVersion > spec.maxVersion || spec.maxVersion > schemaMax) throw new Error(`${spec.name}: versions ${spec.minVersion}-${spec.maxVersion} go past its schemas' ${schemaMax}`);
  return {
    key: request.apiKey,
    name: spec.name,
    minVersion: spec.minVersion,
    maxVersion: spec.maxVersion,
    flexibleFrom: flexibleFrom <= flexibleTo && flexibleFrom <= spec.maxVersion ? flexibleFrom : null,
    decodeRequest: (reader, version) => decodeMessage(request, reader, version) as Request,
    encodeResponse: (writer, version, message) => encodeMessage(response, writer, version, message as Record<string, unknown>),
  };
}
