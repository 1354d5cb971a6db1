import type { S3Client } from '@aws-sdk/client-s3';
import type { ByteRange, GetResult, PutResult } from './object-store.ts';
import type { S3StoreConfig } from './s3-config.ts';
import type { RequestContext } from './s3-errors.ts';
import { fitToRange, rangeHeader, sizeFromContentRange } from './s3-range.ts';

/**
 * Unconditional GETs and PUTs through Bun's native S3 signer (`Bun.S3Client.presign`) and Bun's
 * native fetch, bypassing the SDK's middleware stack and node:http emulation. bench/store.bench.ts
 * measures it against the SDK on the same endpoint in the same run; it is the default because it
 * is faster there (the numbers are in docs/object-store-s3.md). Turn it off with `bunS3=false`.
 *
 * Why presign + fetch rather than `Bun.S3Client.write` / `file().arrayBuffer()`: those return
 * neither the ETag nor Content-Range, which ObjectStore's results carry, and fetching them would
 * cost a second request. A presigned URL signs the key exactly as S3 expects (any UTF-8 key) and
 * leaves the response's headers to us.
 *
 * Never used for conditional writes (Bun's client has no If-None-Match/If-Match), nor on S3
 * Express directory buckets (it has no CreateSession auth): s3.ts sends those through the SDK.
 * Credentials come from the SDK client's provider chain, which caches and refreshes them, so both
 * paths always sign with the same identity.
 */

/**
 * Whether Bun's signer and fetch carry `objectKey` to S3 unchanged. Bun's presign drops a leading
 * or trailing '/', and URL parsing resolves '.' and '..' segments; such keys (valid in S3, never
 * made by Ferry) go through the SDK instead.
 */
export function bunCarriesKey(objectKey: string): boolean {
  if (objectKey.startsWith('/') || objectKey.endsWith('/')) return false;
  return objectKey.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

/** A presigned URL is used at once; a short life limits the harm if one ever leaks into a log. */
const PRESIGN_EXPIRES_SECONDS = 60;

/** An S3 error answered to fetch, shaped like the SDK's exceptions so one mapping serves both. */
export class BunS3ResponseError extends Error {
  readonly Code: string;
  readonly $metadata: { readonly httpStatusCode: number };

  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = code;
    this.Code = code;
    this.$metadata = { httpStatusCode: status };
  }
}

export class BunS3 {
  readonly #sdk: S3Client;
  readonly #signer: Bun.S3Client;

  constructor(config: S3StoreConfig, sdk: S3Client) {
    this.#sdk = sdk;
    this.#signer = new Bun.S3Client({
      bucket: config.bucket,
      region: config.region,
      ...(config.endpoint === undefined ? {} : { endpoint: config.endpoint }),
      virtualHostedStyle: !config.forcePathStyle,
    });
  }

  async put(objectKey: string, body: Uint8Array, signal: AbortSignal): Promise<PutResult> {
    const response = await fetch(await this.#presign(objectKey, 'PUT'), { method: 'PUT', body, signal });
    if (!response.ok) throw await responseError(response);
    await response.arrayBuffer();
    return { etag: response.headers.get('etag') ?? '' };
  }

  async get(context: RequestContext, range: ByteRange | undefined, signal: AbortSignal): Promise<GetResult> {
    const header = rangeHeader(range);
    const headers = header === undefined ? undefined : { range: header };
    const response = await fetch(await this.#presign(context.objectKey!, 'GET'), { headers, signal });
    if (!response.ok) throw await responseError(response);
    const body = new Uint8Array(await response.arrayBuffer());
    const declared = Number(response.headers.get('content-length') ?? body.byteLength);
    if (declared !== body.byteLength) throw new BunS3ResponseError(502, 'IncompleteBody', `response body has ${body.byteLength} bytes where ${declared} were declared`);
    const contentRange = response.headers.get('content-range');
    return { body: fitToRange(body, range, contentRange), etag: response.headers.get('etag') ?? '', size: sizeFromContentRange(contentRange) ?? body.byteLength };
  }

  async #presign(objectKey: string, method: 'GET' | 'PUT'): Promise<string> {
    const credentials = await this.#sdk.config.credentials();
    return this.#signer.presign(objectKey, {
      method,
      expiresIn: PRESIGN_EXPIRES_SECONDS,
      accessKeyId: credentials.accessKeyId,
      secretAccessKey: credentials.secretAccessKey,
      ...(credentials.sessionToken === undefined ? {} : { sessionToken: credentials.sessionToken }),
    });
  }
}

/** Reads S3's XML error (`<Code>`, `<Message>`); HEAD-like answers without a body keep the status text. */
async function responseError(response: Response): Promise<BunS3ResponseError> {
  const text = await response.text().catch(() => '');
  const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1] ?? (response.statusText || `Http${response.status}`);
  const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1] ?? (response.statusText || `HTTP ${response.status}`);
  return new BunS3ResponseError(response.status, code, message);
}
