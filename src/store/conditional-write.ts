import { StoreError, isStoreError } from './errors.ts';
import type { Authorship, PutResult } from './object-store.ts';

/**
 * Conditional puts (`If-None-Match: *`, `If-Match: etag`) whose answer is ambiguous, resolved the
 * same way by every backend that can give such an answer (S3Store; the simulation's SimStoreView).
 *
 * A conditional put that timed out, lost its connection or got a 5xx may have taken effect.
 * Sending it again blindly is wrong both ways: a create-if-absent that did land would now fail with
 * 412 (and the writer would think itself fenced), and a compare-and-swap that did land would fail
 * its If-Match. So the outcome is resolved by reading the object back
 * (docs/cluster-protocol.md, "Conditional writes and ambiguous answers"):
 *   1. the object under the key is this write's  -> it landed: success with the read ETag;
 *   2. absent (If-None-Match), or still the ETag
 *      we expected (If-Match)                    -> it did not land: safe to send it again;
 *   3. anything else                             -> another writer won: PreconditionFailed.
 * [CW1] "This write's" is authorship, never equal bytes: two writers racing on one record often
 * write the same bytes (both read `{next: n}`, both write `{next: n + 1000}`), and the loser would
 * take the winner's record for its own. A write names its authorship (a control record's nonce);
 * [CW2] one without it must be unique by its bytes (a WAL object names its writer, epoch and
 * sequence), and only then are equal bytes its own.
 * A 412 that follows an ambiguous answer is checked the same way, since the earlier attempt may
 * have landed late (after the read-back) and be the object the condition now trips on.
 */
export interface ConditionalWrite {
  /** The caller's key (StoreError.key) and the key as the backend names it (messages). */
  readonly key: string;
  readonly objectKey: string;
  readonly body: Uint8Array;
  readonly ifNoneMatch?: '*' | undefined;
  readonly ifMatch?: string | undefined;
  /** [CW1] Who wrote `body`; absent: [CW2] the bytes name their writer. */
  readonly authorship?: Authorship | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** The whole object under the key as a read-back found it. */
export interface CurrentObject {
  readonly body: Uint8Array;
  readonly etag: string;
}

export type Verdict = { readonly landed: true; readonly etag: string } | { readonly landed: false; readonly retry: boolean };

/** How one backend sends a conditional put and reads its key back. */
export interface ConditionalAttempts {
  /** Sends the put once; fails with the backend's StoreError (a failed condition is PreconditionFailed). */
  attempt(): Promise<PutResult>;
  /** The whole object under the key now, or null if there is none. */
  readBack(): Promise<CurrentObject | null>;
  /** Whether a failed attempt may still have taken effect (the backend knows which failures prove a request unsent). */
  mayHaveTakenEffect(error: StoreError): boolean;
  /** How many attempts in all a retriable failure may take. */
  readonly attemptsMax: number;
  /** Waits before attempt `attempt + 1`. */
  backoff(attempt: number): Promise<void>;
}

/** Steps 1-3 above, as a pure function of what the read-back found. */
export function judge(write: ConditionalWrite, current: CurrentObject | null): Verdict {
  if (current === null) return { landed: false, retry: write.ifMatch === undefined };
  if (wroteCurrent(write, current.body)) return { landed: true, etag: current.etag };
  return { landed: false, retry: write.ifMatch !== undefined && current.etag === write.ifMatch };
}

/** [CW1] The object under the key is this write's: by its authorship when it names one, [CW2] else by its bytes. */
function wroteCurrent(write: ConditionalWrite, body: Uint8Array): boolean {
  if (write.authorship !== undefined) return write.authorship.wrote(body);
  return Buffer.from(body.buffer, body.byteOffset, body.length).equals(write.body);
}

/** Sends `write` until it succeeds, fails for good, or a read-back after an ambiguous answer settles it. */
export async function putConditionally(write: ConditionalWrite, attempts: ConditionalAttempts): Promise<PutResult> {
  let ambiguousBefore = false;
  for (let attempt = 1; ; attempt++) {
    let error: StoreError;
    try {
      return await attempts.attempt();
    } catch (caught) {
      if (!isStoreError(caught)) throw caught;
      error = caught;
    }
    if (write.signal?.aborted) throw error; // the caller gave up: it owns the ambiguous outcome now
    const ambiguous = attempts.mayHaveTakenEffect(error);
    if (ambiguous || (ambiguousBefore && error.kind === 'PreconditionFailed')) {
      const verdict = judge(write, await readBackOrExplain(attempts, write, error));
      if (verdict.landed) return { etag: verdict.etag };
      if (!verdict.retry) throw lostRace(write, error);
      ambiguousBefore ||= ambiguous;
    }
    if (!error.retriable || attempt >= attempts.attemptsMax) throw error;
    await attempts.backoff(attempt);
  }
}

function lostRace(write: ConditionalWrite, error: StoreError): StoreError {
  const condition = write.ifNoneMatch === '*' ? 'If-None-Match: *' : `If-Match: ${write.ifMatch}`;
  return new StoreError('PreconditionFailed', `PutObject ${write.objectKey}: ${condition} failed: another writer's object is under the key (resolved by reading back after: ${error.message})`, {
    key: write.key,
    cause: error,
  });
}

async function readBackOrExplain(attempts: ConditionalAttempts, write: ConditionalWrite, error: StoreError): Promise<CurrentObject | null> {
  try {
    return await attempts.readBack();
  } catch (readError) {
    if (!isStoreError(readError)) throw readError;
    throw new StoreError(readError.kind, `PutObject ${write.objectKey}: outcome unknown (${error.message}), and reading the object back failed: ${readError.message}`, {
      key: write.key,
      cause: readError,
    });
  }
}
