import { ErrorCode } from '../../broker/protocol/error-codes.ts';
import { type Decoded, decodeMessage, type Draft, encodeMessage, isFlexibleVersion } from '../../broker/protocol/message-codec.ts';
import type { KafkaReader } from '../../broker/protocol/reader.ts';
import type { MessageSchema } from '../../broker/protocol/schema.ts';
import type { KafkaWriter } from '../../broker/protocol/writer.ts';

/**
 * One Kafka API as a client speaks it, at the one (non-flexible) version the simulated clients
 * use: the mirror of the broker's ApiCodec (src/broker/apis), over the same request and response
 * types, so a test can hold the two sides against each other.
 */
export interface ClientApi<Request, Response> {
  readonly key: number;
  readonly name: string;
  readonly version: number;
  encodeRequest(writer: KafkaWriter, request: Request): void;
  decodeResponse(reader: KafkaReader): Response;
}

/**
 * A client API read and written by Kafka's schemas (src/broker/protocol/messages), at one
 * non-flexible version: a request may leave fields out (their defaults go on the wire), and a
 * response comes back with every field.
 */
export function schemaClientApi<Request, Response>(name: string, version: number, request: MessageSchema, response: MessageSchema): ClientApi<Draft<Request>, Decoded<Response>> {
  if (isFlexibleVersion(request, version)) throw new Error(`${name} v${version} is flexible: the simulated clients write request header v1 only`);
  return {
    key: request.apiKey,
    name,
    version,
    encodeRequest: (writer, message) => encodeMessage(request, writer, version, message as Record<string, unknown>),
    decodeResponse: (reader) => decodeMessage(response, reader, version) as Decoded<Response>,
  };
}

/** Request header v1 (every non-flexible version): key, version, correlation id, client id. */
export function writeRequestHeader(writer: KafkaWriter, api: ClientApi<unknown, unknown>, correlationId: number, clientId: string): void {
  writer.int16(api.key).int16(api.version).int32(correlationId).nullableString(clientId);
}

const ERROR_NAMES = new Map<number, string>(Object.entries(ErrorCode).map(([name, code]) => [code, name]));

/** Kafka's name for an error code, as the history records it. */
export function errorName(code: number): string {
  return ERROR_NAMES.get(code) ?? `ERROR_${code}`;
}
