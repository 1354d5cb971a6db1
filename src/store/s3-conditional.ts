import { StoreError, isStoreError } from './errors.ts';
import type { PutResult } from './object-store.ts';
import { putConditionally, type ConditionalWrite, type CurrentObject } from './conditional-write.ts';
import { failureFromSdk, mayHaveTakenEffect } from './s3-errors.ts';
import type { RequestSpec, S3Requests } from './s3-requests.ts';

/**
 * Conditional PUTs on S3: sent through the backend's requests (stats, deadlines, backoff) and, when
 * the answer is ambiguous, judged by the shared read-back (conditional-write.ts [CW1]).
 */
export function putConditionallyOnS3(requests: S3Requests, write: ConditionalWrite, spec: RequestSpec<PutResult>, readBack: () => Promise<CurrentObject | null>): Promise<PutResult> {
  return putConditionally(write, {
    attempt: () => requests.attempt(spec).catch((error: unknown) => Promise.reject(isStoreError(error) ? asPreconditionFailure(error, write) : error)),
    readBack,
    mayHaveTakenEffect,
    attemptsMax: requests.policy.attempts,
    backoff: (attempt) => requests.backoff(attempt, write.signal),
  });
}

/** S3 answers If-Match on an absent key with 404 NoSuchKey; the contract (and every other backend) says 412. */
function asPreconditionFailure(error: StoreError, write: ConditionalWrite): StoreError {
  if (write.ifMatch === undefined || error.kind !== 'NotFound' || failureFromSdk(error.cause).code === 'NoSuchBucket') return error;
  return new StoreError('PreconditionFailed', `PutObject ${write.objectKey}: If-Match ${write.ifMatch} failed: no object under the key`, { key: write.key, cause: error });
}
