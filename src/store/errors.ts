/**
 * What can go wrong talking to an object store, as kinds every backend maps its failures to.
 * `retriable` says whether the same request may succeed later; callers decide whether to retry
 * (a conditional write whose outcome is unknown is never blindly retried: see s3.ts).
 */
export type StoreErrorKind =
  | 'NotFound' // no object (or no bucket) under that name
  | 'PreconditionFailed' // If-None-Match or If-Match did not hold
  | 'Conflict' // a concurrent conditional request on the same key won (S3's 409)
  | 'Throttled' // 503 SlowDown and friends
  | 'Timeout' // no answer in time; the request may or may not have taken effect
  | 'Unavailable' // 5xx or a broken connection
  | 'AccessDenied' // wrong credentials or no permission
  | 'InvalidArgument' // a malformed request: bad key, part too small, bad URL
  | 'Closed'; // the store was closed

const RETRIABLE: ReadonlySet<StoreErrorKind> = new Set(['Throttled', 'Timeout', 'Unavailable', 'Conflict']);

/** A failed object-store request, of a kind every backend maps its own failures to. */
export class StoreError extends Error {
  /** What went wrong (see StoreErrorKind). */
  readonly kind: StoreErrorKind;
  /** The key the request was about, when there is one. */
  readonly key: string | undefined;

  constructor(kind: StoreErrorKind, message: string, options?: { key?: string; cause?: unknown }) {
    super(message, { cause: options?.cause });
    this.kind = kind;
    this.key = options?.key;
    this.name = `StoreError(${kind})`;
  }

  /** Whether the same request may succeed later (Throttled, Timeout, Unavailable, Conflict). */
  get retriable(): boolean {
    return RETRIABLE.has(this.kind);
  }
}

/** Whether `error` is a StoreError, of `kind` when given. */
export function isStoreError(error: unknown, kind?: StoreErrorKind): error is StoreError {
  return error instanceof StoreError && (kind === undefined || error.kind === kind);
}
