import { assert } from '../util/assert.ts';
import { urlWithoutSecrets } from '../util/url-secrets.ts';
import { StoreError } from './errors.ts';

/**
 * Configuration of the S3 backend, and its parsing from a URL such as
 * `s3://bucket/optional/prefix?region=us-east-1&endpoint=http://127.0.0.1:9000&forcePathStyle=true`.
 * Credentials never come from the URL: the SDK's default chain (or AWS_* variables) supplies them.
 */
export interface S3StoreOptions {
  readonly bucket: string;
  /** Prepended to every key; normalised to end in '/'. */
  readonly prefix?: string;
  readonly region: string;
  /** An S3-compatible server or a VPC endpoint; absent means AWS's own endpoint for the region. */
  readonly endpoint?: string;
  /** Path-style addressing (`endpoint/bucket/key`), which S3-compatible servers need. */
  readonly forcePathStyle?: boolean;
  /** One attempt's deadline, body transfer included. */
  readonly requestTimeoutMs?: number;
  /** Attempts per request, the first included (1 = no retry). */
  readonly maxAttempts?: number;
  /** Requests in flight at once; sizes the keep-alive connection pool. */
  readonly concurrency?: number;
  /** Send unconditional GETs and PUTs through Bun's native S3 signer (bun-s3.ts); never on directory buckets. */
  readonly bunS3?: boolean;
  /** Static credentials; absent means the SDK's default provider chain. */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string };
}

/** Options with every default applied and every value checked. */
export type S3StoreConfig = Required<Omit<S3StoreOptions, 'endpoint' | 'credentials'>> & Pick<S3StoreOptions, 'endpoint' | 'credentials'>;

/**
 * 2 s is ~200x an S3 Express PUT's p99 and ~25x S3 Standard's: long enough that a slow but healthy
 * request finishes, short enough that a stuck connection costs one retry, not the caller's deadline.
 */
export const REQUEST_TIMEOUT_MS_DEFAULT = 2_000;
export const REQUEST_TIMEOUT_MS_MAX = 600_000;
/** 4 attempts ride out ~1.5 s of throttling (see s3-retry.ts) before the caller hears of it. */
export const MAX_ATTEMPTS_DEFAULT = 4;
/** More attempts only hide an outage from the caller, who has its own retry policy. */
export const MAX_ATTEMPTS_MAX = 10;
/** Sockets in the keep-alive pool: each costs a file descriptor and ~64 KiB of kernel buffers. */
export const CONCURRENCY_DEFAULT = 64;
export const CONCURRENCY_MAX = 1024;

assert(REQUEST_TIMEOUT_MS_DEFAULT <= REQUEST_TIMEOUT_MS_MAX && MAX_ATTEMPTS_DEFAULT <= MAX_ATTEMPTS_MAX && CONCURRENCY_DEFAULT <= CONCURRENCY_MAX, 'S3 defaults within their limits');

/** `name--azid--x-s3`: an S3 Express One Zone directory bucket. */
const DIRECTORY_BUCKET_PATTERN = /^[a-z0-9][a-z0-9-]{1,}--[a-z0-9-]+--x-s3$/;
/** General purpose bucket names: 3-63 of [a-z0-9.-], starting and ending with a letter or digit. */
const BUCKET_PATTERN = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const PARAMETERS = new Set(['region', 'endpoint', 'forcePathStyle', 'requestTimeoutMs', 'maxAttempts', 'concurrency', 'bunS3']);

/** Unconditional GETs and PUTs go through Bun's S3 signer unless turned off (see bun-s3.ts for the measurement). */
export const BUN_S3_DEFAULT = true;

export function isDirectoryBucket(bucket: string): boolean {
  return bucket.endsWith('--x-s3');
}

function invalid(source: string, problem: string): StoreError {
  return new StoreError('InvalidArgument', `${source}: ${problem}`);
}

/** Applies defaults and checks every value; `source` names where the options came from, for messages. */
export function resolveS3Config(options: S3StoreOptions, source = 'S3 store options'): S3StoreConfig {
  const bucket = checkBucket(options.bucket, source);
  if (options.region === '') throw invalid(source, 'no region: add ?region=... or set AWS_REGION');
  const forcePathStyle = options.forcePathStyle ?? false;
  if (forcePathStyle && isDirectoryBucket(bucket)) {
    throw invalid(source, `directory bucket ${bucket} is reachable only virtual-hosted style; drop forcePathStyle`);
  }
  return {
    bucket,
    prefix: normalisePrefix(options.prefix ?? '', source),
    region: options.region,
    ...(options.endpoint === undefined ? {} : { endpoint: checkEndpoint(options.endpoint, source) }),
    forcePathStyle,
    requestTimeoutMs: checkInteger(source, 'requestTimeoutMs', options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS_DEFAULT, 1, REQUEST_TIMEOUT_MS_MAX),
    maxAttempts: checkInteger(source, 'maxAttempts', options.maxAttempts ?? MAX_ATTEMPTS_DEFAULT, 1, MAX_ATTEMPTS_MAX),
    concurrency: checkInteger(source, 'concurrency', options.concurrency ?? CONCURRENCY_DEFAULT, 1, CONCURRENCY_MAX),
    bunS3: (options.bunS3 ?? BUN_S3_DEFAULT) && !isDirectoryBucket(bucket),
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
  };
}

/** Parses and checks an `s3://` URL; every problem is an InvalidArgument that quotes the URL. */
export function parseS3Url(url: URL, env: Record<string, string | undefined> = process.env): S3StoreConfig {
  const source = `S3 URL ${JSON.stringify(urlWithoutSecrets(`${url.protocol}//${url.host}${url.pathname}${url.search}`))}`;
  if (url.protocol !== 's3:') throw invalid(source, `scheme must be s3:, not ${url.protocol}`);
  if (url.username !== '' || url.password !== '') {
    throw invalid('S3 URL', 'credentials do not belong in the URL; use AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or a profile');
  }
  if (url.hash !== '') throw invalid(source, 'a fragment (#...) means nothing here');
  if (url.port !== '') throw invalid(source, 'the host is the bucket name and takes no port; put the server in endpoint=');
  if (url.hostname === '') throw invalid(source, 'no bucket name: expected s3://bucket/optional/prefix');
  const params = readParameters(url, source);
  const endpoint = params.get('endpoint') ?? env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL;
  const credentials = credentialsFromEnv(env);
  return resolveS3Config(
    {
      bucket: url.hostname,
      prefix: decodePath(url.pathname, source),
      region: params.get('region') ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? '',
      ...(endpoint === undefined || endpoint === '' ? {} : { endpoint }),
      ...(credentials === undefined ? {} : { credentials }),
      ...readBoolean(params, 'forcePathStyle', source),
      ...readBoolean(params, 'bunS3', source),
      ...readInteger(params, 'requestTimeoutMs', source),
      ...readInteger(params, 'maxAttempts', source),
      ...readInteger(params, 'concurrency', source),
    },
    source,
  );
}

function checkBucket(bucket: string, source: string): string {
  if (bucket === '') throw invalid(source, 'no bucket name');
  if (isDirectoryBucket(bucket)) {
    if (!DIRECTORY_BUCKET_PATTERN.test(bucket)) throw invalid(source, `directory bucket ${JSON.stringify(bucket)} must look like name--azid--x-s3`);
  } else if (!BUCKET_PATTERN.test(bucket) || bucket.includes('..')) {
    throw invalid(source, `bucket name ${JSON.stringify(bucket)} is not valid: 3-63 characters of a-z, 0-9, '.', '-', starting and ending with a letter or digit`);
  }
  return bucket;
}

function readParameters(url: URL, source: string): Map<string, string> {
  const params = new Map<string, string>();
  for (const [name, value] of url.searchParams) {
    if (!PARAMETERS.has(name)) throw invalid(source, `unknown parameter ${JSON.stringify(name)}; known: ${[...PARAMETERS].join(', ')}`);
    if (params.has(name)) throw invalid(source, `parameter ${name} given twice`);
    params.set(name, value);
  }
  return params;
}

function decodePath(pathname: string, source: string): string {
  try {
    return decodeURIComponent(pathname);
  } catch {
    throw invalid(source, 'the prefix is not valid percent-encoding');
  }
}

function normalisePrefix(prefix: string, source: string): string {
  const path = prefix.replace(/^\/+/, '');
  if (path === '') return '';
  if (path.split('/').some((segment, index, all) => segment === '' && index < all.length - 1)) {
    throw invalid(source, `prefix ${JSON.stringify(path)} has an empty path segment`);
  }
  return path.endsWith('/') ? path : `${path}/`;
}

function checkEndpoint(endpoint: string, source: string): string {
  let parsed: URL;
  try {
    parsed = new URL(endpoint);
  } catch {
    throw invalid(source, `endpoint ${JSON.stringify(urlWithoutSecrets(endpoint))} is not a URL`);
  }
  if (parsed.username !== '' || parsed.password !== '') throw invalid(source, 'credentials do not belong in the endpoint; use AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or a profile');
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw invalid(source, `endpoint ${endpoint} must be http: or https:`);
  if (parsed.search !== '' || parsed.hash !== '') throw invalid(source, `endpoint ${endpoint} must not carry a query or fragment`);
  return endpoint.replace(/\/+$/, '');
}

function readBoolean(params: Map<string, string>, name: 'forcePathStyle' | 'bunS3', source: string): Partial<S3StoreOptions> {
  const value = params.get(name);
  if (value === undefined) return {};
  if (value !== 'true' && value !== 'false') throw invalid(source, `${name} must be true or false, not ${JSON.stringify(value)}`);
  return { [name]: value === 'true' };
}

function readInteger(params: Map<string, string>, name: 'requestTimeoutMs' | 'maxAttempts' | 'concurrency', source: string): Partial<S3StoreOptions> {
  const value = params.get(name);
  if (value === undefined) return {};
  if (!/^\d{1,9}$/.test(value)) throw invalid(source, `${name} must be a whole number, not ${JSON.stringify(value)}`);
  return { [name]: Number(value) };
}

function checkInteger(source: string, name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) throw invalid(source, `${name} must be an integer in [${min}, ${max}], not ${value}`);
  return value;
}

/** AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY from `env` when both are set; otherwise the SDK's chain decides. */
function credentialsFromEnv(env: Record<string, string | undefined>): S3StoreOptions['credentials'] {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (accessKeyId === undefined || accessKeyId === '' || secretAccessKey === undefined || secretAccessKey === '') return undefined;
  const sessionToken = env.AWS_SESSION_TOKEN;
  return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
}
