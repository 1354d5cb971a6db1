import { stageTimers } from '../metrics/stage-timers.ts';
import { type ApiCodec, isFlexible } from './apis/api.ts';
import { type ApiVersion, apiVersionsCodec } from './apis/api-versions.ts';
import { ErrorCode } from '../protocol/error-codes.ts';
import { ProtocolError } from '../protocol/errors.ts';
import { readRequestHeader, type RequestHeader, writeResponseHeader } from '../protocol/header.ts';
import { KafkaReader } from '../protocol/reader.ts';
import { KafkaWriter } from '../protocol/writer.ts';
import type { SaslAuthenticateRequest, SaslAuthenticateResponse } from './apis/sasl-authenticate.ts';
import type { SaslHandshakeRequest, SaslHandshakeResponse } from './apis/sasl-handshake.ts';
import type { Session } from '../security/session.ts';
import type { ResponseBuffers } from './read-buffer-pool.ts';

/** The connection a request arrived on, as the router and the handlers see it. */
export interface ChannelContext {
  /** The client's address, for logs. */
  readonly peer: string;
  /** Who the client is (authenticated, or ANONYMOUS) and through which listener: what ACLs and quotas judge. */
  readonly session: Session;
  /** The connection's SASL exchange: SaslHandshake and SaslAuthenticate go there (src/broker/auth/channel.ts). */
  readonly sasl: SaslRequests;
  /** Reads no further request from this client for `ms` (a quota's throttle time: KIP-219). */
  mute(ms: number): void;
}

/** What a connection answers to the SASL APIs (an ILLEGAL_SASL_STATE where it takes none: a PLAINTEXT listener, an authenticated connection). */
export interface SaslRequests {
  handshake(request: SaslHandshakeRequest, version: number): Promise<SaslHandshakeResponse>;
  authenticate(request: SaslAuthenticateRequest, version: number): Promise<SaslAuthenticateResponse>;
}

export interface RequestContext extends ChannelContext {
  readonly header: RequestHeader;
  /** Memory this request's response may read into, held until the connection wrote the response (RB1); absent outside a connection. */
  readonly responseBuffers?: ResponseBuffers;
}

/** What the broker does for one API: null means "send no response" (Produce with acks=0). */
export interface ApiBinding<Request, Response> {
  readonly codec: ApiCodec<Request, Response>;
  handle(request: Request, context: RequestContext): Promise<Response | null> | Response | null;
  /**
   * The answer to a request in a version below the codec's minimum that old clients still send
   * (Kafka 4 removed Produce 0-2 and Fetch 0-3 with their message formats, KIP-896): an error
   * the client can show, where a closed connection would tell it nothing. Absent: such a
   * version closes the connection, as for any version not advertised.
   */
  readonly refuseVersion?: (request: Request) => Response;
}

// biome-ignore lint: a table of bindings of different request and response types
type AnyBinding = ApiBinding<any, any>;

/**
 * Turns a request frame into response chunks: reads the header, finds the API, checks the
 * version, decodes, calls the handler, encodes. Bad frames throw ProtocolError (the connection
 * closes, as Kafka does); ApiVersions with a version it does not know gets UNSUPPORTED_VERSION
 * in the v0 format, so that clients can fall back (KIP-511).
 */
export class Router {
  readonly #bindings = new Map<number, AnyBinding>();

  constructor(bindings: readonly AnyBinding[]) {
    for (const binding of bindings) this.#bindings.set(binding.codec.key, binding);
  }

  /** The API table that ApiVersions advertises. */
  apiVersions(): ApiVersion[] {
    return [...this.#bindings.values()].map(({ codec }) => ({ apiKey: codec.key, minVersion: codec.minVersion, maxVersion: codec.maxVersion })).sort((a, b) => a.apiKey - b.apiKey);
  }

  /** The API's name for a key (in errors and logs), or `key N` for one not served. */
  apiName(apiKey: number): string {
    return this.#bindings.get(apiKey)?.codec.name ?? `key ${apiKey}`;
  }

  async handle(frame: Uint8Array, channel: ChannelContext, responseBuffers?: ResponseBuffers): Promise<Uint8Array[] | null> {
    const peek = new KafkaReader(frame);
    const apiKey = peek.int16();
    const apiVersion = peek.int16();
    const binding = this.#bindings.get(apiKey);
    if (binding === undefined) throw new ProtocolError(`unknown API key ${apiKey}`, 0);
    const { codec } = binding;
    const refused = apiVersion < codec.minVersion && apiVersion >= 0 && binding.refuseVersion !== undefined;
    if ((apiVersion < codec.minVersion || apiVersion > codec.maxVersion) && !refused) {
      if (apiKey === apiVersionsCodec.key) return this.#unsupportedApiVersions(frame);
      throw new ProtocolError(`${codec.name} v${apiVersion} is not supported (${codec.minVersion}-${codec.maxVersion})`, 2);
    }
    stageTimers.enter('decode');
    let header: ReturnType<typeof readRequestHeader>;
    let request: unknown;
    try {
      const reader = new KafkaReader(frame);
      header = readRequestHeader(reader, isFlexible(codec, apiVersion));
      request = codec.decodeRequest(reader, apiVersion);
    } finally {
      stageTimers.exit();
    }
    // The handler's synchronous part (up to its first await) is its own stage, not the receive it starts in.
    const response = refused
      ? binding.refuseVersion!(request)
      : await stageTimers.time('handle', () =>
          binding.handle(request, {
            header,
            peer: channel.peer,
            session: channel.session,
            sasl: channel.sasl,
            mute: (ms: number) => channel.mute(ms),
            ...(responseBuffers === undefined ? {} : { responseBuffers }),
          }),
        );
    if (response === null) return null;
    return stageTimers.time('encode', () => {
      const writer = new KafkaWriter();
      // ApiVersions answers with response header v0 even in its flexible versions (KIP-511).
      writeResponseHeader(writer, header.correlationId, apiKey !== apiVersionsCodec.key && isFlexible(codec, apiVersion));
      codec.encodeResponse(writer, apiVersion, response);
      return writer.chunks();
    });
  }

  /**
   * A request answered with nothing but an error, as Kafka's request.getErrorResponse answers one
   * it will not handle (an API other than SaslAuthenticate during a SASL exchange): the error at
   * the top level and on each topic and partition the request names (Produce, Fetch, ListOffsets,
   * Metadata and the other topic-shaped APIs), every other field its default. The entries are
   * written under both names the response schemas use (`topics`/`responses`,
   * `partitions`/`partitionResponses`, `partitionIndex`/`index`); the codec writes the ones its
   * schema has. A frame that does not decode throws.
   */
  errorAnswer(frame: Uint8Array, errorCode: number): Uint8Array[] {
    const peek = new KafkaReader(frame);
    const binding = this.#bindings.get(peek.int16());
    const apiVersion = peek.int16();
    if (binding === undefined || apiVersion < binding.codec.minVersion || apiVersion > binding.codec.maxVersion)
      throw new ProtocolError(`an unexpected ${this.apiName(binding?.codec.key ?? -1)} v${apiVersion}`, 0);
    const { codec } = binding;
    const reader = new KafkaReader(frame);
    const header = readRequestHeader(reader, isFlexible(codec, apiVersion));
    const topics = erroredTopics(codec.decodeRequest(reader, apiVersion) as RequestTopics, errorCode);
    const writer = new KafkaWriter();
    writeResponseHeader(writer, header.correlationId, codec.key !== apiVersionsCodec.key && isFlexible(codec, apiVersion));
    codec.encodeResponse(writer, apiVersion, { errorCode, topics, responses: topics });
    return writer.chunks();
  }

  #unsupportedApiVersions(frame: Uint8Array): Uint8Array[] {
    const correlationId = new KafkaReader(frame, 4).int32();
    const writer = new KafkaWriter();
    writeResponseHeader(writer, correlationId, false);
    apiVersionsCodec.encodeResponse(writer, 0, { errorCode: ErrorCode.UNSUPPORTED_VERSION, apiKeys: this.apiVersions(), throttleTimeMs: 0 });
    return writer.chunks();
  }
}

/** The topic-shaped part of a request, under the names request schemas use. */
interface RequestTopics {
  readonly topics?: unknown;
  readonly topicData?: unknown;
  /** DeleteTopics v0-5 names its topics as bare strings. */
  readonly topicNames?: unknown;
}

type RequestEntry = Readonly<Record<string, unknown>>;

/** Each topic and partition a request names, with `errorCode`, under both names response schemas use (Router.errorAnswer). */
function erroredTopics(request: RequestTopics, errorCode: number): Record<string, unknown>[] {
  // A codec decodes a field its version lacks as empty, so the first non-empty list is the one sent.
  const lists = [request.topics, request.topicData, Array.isArray(request.topicNames) ? request.topicNames.map((name) => ({ name })) : undefined];
  const named = lists.find((list) => Array.isArray(list) && list.length > 0) ?? [];
  return (named as RequestEntry[]).map((topic) => {
    const partitions = ((Array.isArray(topic.partitions) ? topic.partitions : Array.isArray(topic.partitionData) ? topic.partitionData : []) as RequestEntry[]).map((partition) => {
      const index = partition.partitionIndex ?? partition.partition ?? partition.index;
      return { partitionIndex: index, index, errorCode };
    });
    const name = topic.name ?? topic.topic ?? null;
    return { name, topic: name, ...(topic.topicId === undefined ? {} : { topicId: topic.topicId }), errorCode, partitions, partitionResponses: partitions };
  });
}
