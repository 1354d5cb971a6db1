import { StoreError, isStoreError } from './errors.ts';
import type { PutResult } from './object-store.ts';
import { failureFromSdk, mayHaveTakenEffect } from './s3-errors.ts';
import type { RequestSpec, S3Requests } from './s3-requests.ts';

/**
 * Conditional PUTs (`If-None-Match: *`, `If-Match: etag`) whose outcome may be unknown.
 *
 * A conditional PUT that timed out, lost its connection or got a 5xx may have taken effect. Sending
 * it again blindly is wrong both ways: a create-if-absent that did land would now fail with 412
 * (and the writer would think itself fenced), and a compare-and-swap that did land would fail its
 * If-Match. So the outcome is resolved by reading the object back:
 *   1. the bytes under the key are ours          -> the write landed: success with the read ETag;
 *   2. absent (If-None-Match), or still the ETag
 *      we expected (If-Match)                     -> it did not land: safe to send it again;
 *   3. anything else                              -> another writer won: PreconditionFailed.
 * A 412 that follows an unknown outcome is checked the same way, since the earlier attempt may
 * have landed late (after the read-back) and be the object the condition now trips on.
 */
export interface ConditionalWrite {
  /** The caller's key (StoreError.key) and the key in the bucket (messages). */
  readonly key: string;
  readonly objectKey: string;
  readonly body: Uint8Array;
  readonly ifNoneMatch?: '*' | undefined;
  readonly ifMatch?: string | undefined;
  readonly signal?: AbortSignal | undefined;
}

export interface CurrentObject {
  readonly body: Uint8Array;
  readonly etag: string;
}

export type Verdict = { readonly landed: true; readonly etag: string } | { readonly landed: false; readonly retry: boolean };

/** Steps 1-3 above, as a pure function of what the read-back found. */
export function judge(write: ConditionalWrite, current: CurrentObject | null): Verdict {
  if (current === null) return { landed: false, retry: write.ifMatch === undefined };
  if (Buffer.from(current.body.buffer, current.body.byteOffset, current.body.length).equals(write.body)) return { landed: true, etag: current.etag };
  return { landed: false, retry: write.ifMatch !== undefined && current.etag === write.ifMatch };
}

export async function putConditionally(requests: S3Requests, write: ConditionalWrite, spec: RequestSpec<PutResult>, readBack: () => Promise<CurrentObject | null>): Promise<PutResult> {
  let unknownBefore = false;
  for (let attempt = 1; ; attempt++) {
    let error: StoreError;
    try {
      return await requests.attempt(spec);
    } catch (caught) {
      if (!isStoreError(caught)) throw caught;
      error = asPreconditionFailure(caught, write);
    }
    if (write.signal?.aborted) throw error; // the caller gave up: it owns the unknown outcome now
    const unknown = mayHaveTakenEffect(error);
    if (unknown || (unknownBefore && error.kind === 'PreconditionFailed')) {
      const verdict = judge(write, await readBackOrExplain(readBack, write, error));
      if (verdict.landed) return { etag: verdict.etag };
      if (!verdict.retry) throw lostRace(write, error);
      unknownBefore ||= unknown;
    }
    if (!error.retriable || attempt >= requests.policy.attempts) throw error;
    await requests.backoff(attempt, write.signal);
  }
}

/** S3 answers If-Match on an absent key with 404 NoSuchKey; the contract (and every other backend) says 412. */
function asPreconditionFailure(error: StoreError, write: ConditionalWrite): StoreError {
  if (write.ifMatch === undefined || error.kind !== 'NotFound' || failureFromSdk(error.cause).code === 'NoSuchBucket') return error;
  return new StoreError('PreconditionFailed', `PutObject ${write.objectKey}: If-Match ${write.ifMatch} failed: no object under the key`, { key: write.key, cause: error });
}

function lostRace(write: ConditionalWrite, error: StoreError): StoreError {
  const condition = write.ifNoneMatch === '*' ? 'If-None-Match: *' : `If-Match: ${write.ifMatch}`;
  return new StoreError('PreconditionFailed', `PutObject ${write.objectKey}: ${condition} failed: another writer's object is under the key (resolved by reading back after: ${error.message})`, {
    key: write.key,
    cause: error,
  });
}

async function readBackOrExplain(readBack: () => Promise<CurrentObject | null>, write: ConditionalWrite, error: StoreError): Promise<CurrentObject | null> {
  try {
    return await readBack();
  } catch (readError) {
    if (!isStoreError(readError)) throw readError;
    throw new StoreError(readError.kind, `PutObject ${write.objectKey}: outcome unknown (${error.message}), and reading the object back failed: ${readError.message}`, {
      key: write.key,
      cause: readError,
    });
  }
}
