import { ErrorCode } from '../../protocol/error-codes.ts';
import { type Decoded, decodeMessage, type Draft, encodeMessage, isFlexibleVersion } from '../../protocol/message-codec.ts';
import type { KafkaReader } from '../../protocol/reader.ts';
import type { MessageSchema } from '../../protocol/schema.ts';
import type { KafkaWriter } from '../../protocol/writer.ts';

/**
 * One Kafka API as a client speaks it, at the one version the simulated clients use: the mirror
 * of the broker's ApiCodec (src/broker/apis), over the same request and response types, so a test
 * can hold the two sides against each other.
 */
export interface ClientApi<Request, Response> {
  readonly key: number;
  readonly name: string;
  readonly version: number;
  /** A flexible version (KIP-482): request header v2 and response header v1, each with tagged fields. */
  readonly flexible: boolean;
  encodeRequest(writer: KafkaWriter, request: Request): void;
  decodeResponse(reader: KafkaReader): Response;
}

/** The one API whose responses keep header v0 in flexible versions too (so a client can read it before it knows the versions). */
const API_VERSIONS_KEY = 18;

/**
 * A client API read and written by Kafka's schemas (src/protocol/messages), at one version:
 * a request may leave fields out (their defaults go on the wire), and a response comes back with
 * every field. The response header's correlation id is read before (the connection matches
 * answers by it); a flexible response's header tagged fields are skipped here.
 */
export function schemaClientApi<Request, Response>(name: string, version: number, request: MessageSchema, response: MessageSchema): ClientApi<Draft<Request>, Decoded<Response>> {
  const flexible = isFlexibleVersion(request, version);
  const taggedResponseHeader = flexible && request.apiKey !== API_VERSIONS_KEY;
  return {
    key: request.apiKey,
    name,
    version,
    flexible,
    encodeRequest: (writer, message) => encodeMessage(request, writer, version, message as Record<string, unknown>),
    decodeResponse: (reader) => {
      if (taggedResponseHeader) reader.skipTaggedFields();
      return decodeMessage(response, reader, version) as Decoded<Response>;
    },
  };
}

/** Request header v1 (non-flexible versions): key, version, correlation id, client id; v2 (flexible) adds tagged fields. */
export function writeRequestHeader(writer: KafkaWriter, api: ClientApi<unknown, unknown>, correlationId: number, clientId: string): void {
  writer.int16(api.key).int16(api.version).int32(correlationId).nullableString(clientId);
  if (api.flexible) writer.emptyTaggedFields();
}

const ERROR_NAMES = new Map<number, string>(Object.entries(ErrorCode).map(([name, code]) => [code, name]));

/** Kafka's name for an error code, as the history records it. */
export function errorName(code: number): string {
  return ERROR_NAMES.get(code) ?? `ERROR_${code}`;
}
