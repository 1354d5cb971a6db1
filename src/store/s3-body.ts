import { StoreError } from './errors.ts';
import { where, type RequestContext } from './s3-errors.ts';

/**
 * Reads a response body into one buffer of the length the response declared: one allocation and
 * one copy per chunk, instead of collecting chunks and concatenating them (a second copy of
 * every byte). A body that ends short or runs long is a broken response: Unavailable, retriable.
 */
export async function readBody(body: unknown, contentLength: number, context: RequestContext): Promise<Uint8Array> {
  const bytes = new Uint8Array(contentLength);
  let filled = 0;
  for await (const chunk of asChunks(body)) {
    if (filled + chunk.length > contentLength) throw truncated(context, contentLength, filled + chunk.length);
    bytes.set(chunk, filled);
    filled += chunk.length;
  }
  if (filled !== contentLength) throw truncated(context, contentLength, filled);
  return bytes;
}

function asChunks(body: unknown): AsyncIterable<Uint8Array> {
  if (body === undefined || body === null) return (async function* () {})();
  if (typeof body === 'object' && Symbol.asyncIterator in body) return body as AsyncIterable<Uint8Array>;
  if (body instanceof ReadableStream) return body as unknown as AsyncIterable<Uint8Array>;
  if (body instanceof Blob)
    return (async function* () {
      yield new Uint8Array(await body.arrayBuffer());
    })();
  throw new TypeError(`unexpected S3 response body type ${Object.prototype.toString.call(body)}`);
}

function truncated(context: RequestContext, expected: number, actual: number): StoreError {
  return new StoreError('Unavailable', `${context.operation} ${where(context)}: response body has ${actual} bytes where ${expected} were declared`, {
    ...(context.key === undefined ? {} : { key: context.key }),
  });
}
