import { StoreError, type StoreErrorKind } from './errors.ts';

/**
 * Maps what an S3 request can fail with (an SDK service exception, an S3 XML error answered to
 * Bun's client, a socket error, our own timeout) to a StoreError whose message names the cause:
 * the bucket, the key, the credential, the limit.
 */
export interface RequestContext {
  /** The S3 operation, for messages: `PutObject`, `GetObject`, ... */
  readonly operation: string;
  readonly bucket: string;
  /** The caller's key, when the request is about one (StoreError.key). */
  readonly key?: string;
  /** The key in the bucket, the store's prefix included (for messages). */
  readonly objectKey?: string;
}

/** The parts of a failure the mapping looks at, whichever client produced it. */
export interface S3Failure {
  /** HTTP status, absent when no response arrived. */
  readonly status?: number;
  /** S3's error code (`NoSuchKey`, `SlowDown`, ...) or a socket error code (`ECONNRESET`). */
  readonly code?: string;
  readonly message: string;
  readonly cause: unknown;
}

/** Socket errors raised before a byte of the request left: the request certainly did not take effect. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ConnectionRefused', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
const THROTTLE_CODES = new Set(['SlowDown', 'Throttling', 'ThrottlingException', 'RequestLimitExceeded', 'TooManyRequests', 'TooManyRequestsException', 'ServiceUnavailable']);
const CONFLICT_CODES = new Set(['ConditionalRequestConflict', 'OperationAborted']);
const CREDENTIAL_HINTS: Record<string, string> = {
  InvalidAccessKeyId: 'the access key id is unknown to the server: check AWS_ACCESS_KEY_ID or the credentials profile',
  SignatureDoesNotMatch: 'the secret access key does not match the access key id: check AWS_SECRET_ACCESS_KEY',
  ExpiredToken: 'the session credentials have expired: refresh AWS_SESSION_TOKEN or the profile',
  InvalidToken: 'the session token is malformed: check AWS_SESSION_TOKEN',
  AccessDenied: 'the credentials lack permission for this request: check the IAM or bucket policy',
};

/** Reads status and code off an SDK exception or a socket error. */
export function failureFromSdk(error: unknown): S3Failure {
  const record = (typeof error === 'object' && error !== null ? error : {}) as Record<string, unknown>;
  const metadata = record.$metadata as { httpStatusCode?: number } | undefined;
  const status = metadata?.httpStatusCode;
  const code = typeof record.Code === 'string' ? record.Code : typeof record.code === 'string' ? record.code : (record.name as string | undefined);
  const message = error instanceof Error ? error.message : String(error);
  return { ...(status === undefined ? {} : { status }), ...(code === undefined ? {} : { code }), message, cause: error };
}

export function mapS3Failure(failure: S3Failure, context: RequestContext): StoreError {
  const kind = kindOf(failure);
  return new StoreError(kind, describe(kind, failure, context), { ...(context.key === undefined ? {} : { key: context.key }), cause: failure.cause });
}

export function timeoutError(context: RequestContext, timeoutMs: number, cause: unknown): StoreError {
  return new StoreError('Timeout', `${context.operation} ${where(context)}: no answer within ${timeoutMs} ms`, {
    ...(context.key === undefined ? {} : { key: context.key }),
    cause,
  });
}

/**
 * Whether a failed request may still have taken effect on the server: a timeout, a reset
 * connection, a 5xx other than throttling. A conditional write that failed this way is resolved
 * by reading the object back, never by sending it again blindly.
 */
export function mayHaveTakenEffect(error: StoreError): boolean {
  if (error.kind === 'Timeout') return true;
  if (error.kind !== 'Unavailable') return false;
  const code = failureFromSdk(error.cause).code;
  return code === undefined || !NOT_SENT_CODES.has(code);
}

function kindOf({ status, code }: S3Failure): StoreErrorKind {
  if (code !== undefined && THROTTLE_CODES.has(code)) return 'Throttled';
  if (code !== undefined && CONFLICT_CODES.has(code)) return 'Conflict';
  if (code !== undefined && code in CREDENTIAL_HINTS) return 'AccessDenied';
  if (code === 'RequestTimeout' || code === 'TimeoutError') return 'Timeout';
  if (status === undefined) return 'Unavailable';
  if (status === 404 || code === 'NoSuchKey' || code === 'NoSuchBucket' || code === 'NoSuchUpload') return 'NotFound';
  if (status === 412) return 'PreconditionFailed';
  if (status === 409) return 'Conflict';
  if (status === 403 || status === 401) return 'AccessDenied';
  if (status === 429 || status === 503) return 'Throttled';
  if (status >= 500) return 'Unavailable';
  return 'InvalidArgument';
}

export function where(context: RequestContext): string {
  const objectKey = context.objectKey ?? context.key;
  return objectKey === undefined ? `bucket ${context.bucket}` : `${context.bucket}/${objectKey}`;
}

function describe(kind: StoreErrorKind, failure: S3Failure, context: RequestContext): string {
  const head = `${context.operation} ${where(context)}`;
  const tail = `(${[failure.status, failure.code].filter((part) => part !== undefined).join(' ')}: ${failure.message})`;
  switch (kind) {
    case 'NotFound':
      if (failure.code === 'NoSuchBucket') return `${head}: bucket ${context.bucket} does not exist ${tail}`;
      if (failure.code === 'NoSuchUpload') return `${head}: the multipart upload no longer exists (completed or aborted) ${tail}`;
      return `${head}: no such object ${tail}`;
    case 'AccessDenied':
      return `${head}: access denied: ${CREDENTIAL_HINTS[failure.code ?? ''] ?? CREDENTIAL_HINTS.AccessDenied} ${tail}`;
    case 'Throttled':
      return `${head}: throttled by the server ${tail}`;
    case 'Unavailable':
      return `${head}: the server or the connection failed ${tail}`;
    default:
      return `${head}: ${kind} ${tail}`;
  }
}
