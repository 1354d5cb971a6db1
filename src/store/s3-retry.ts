import { assert } from '../util/assert.ts';
import type { Clock } from '../util/clock.ts';
import type { Random } from '../util/random.ts';
import { backoffDelayMs, type BackoffPolicy } from '../util/backoff.ts';
import type { StoreError } from './errors.ts';

/**
 * The S3 backend's retry policy: bounded attempts, "full jitter" exponential backoff, and a
 * deadline per attempt. Only failures that say "try again" are retried (StoreError.retriable:
 * throttling, timeouts, 5xx, broken connections, 409 conflicts); a conditional write whose outcome
 * is unknown is first resolved by reading back (see s3.ts), never resent blindly.
 */

/**
 * First backoff window: 25 ms is a few S3 Express round trips, so a single 503 costs little;
 * the window doubles per attempt.
 */
export const RETRY_BACKOFF_BASE_MS = 25;
/**
 * Largest backoff window: 1 s. AWS asks clients to back off on SlowDown; beyond a second the
 * caller (WAL writer, tierer) is better placed to decide.
 */
export const RETRY_BACKOFF_CAP_MS = 1_000;

assert(RETRY_BACKOFF_BASE_MS > 0 && RETRY_BACKOFF_BASE_MS < RETRY_BACKOFF_CAP_MS, 'backoff base must be positive and below the cap');

export function retryPolicy(attempts: number): BackoffPolicy {
  return { attempts, baseMs: RETRY_BACKOFF_BASE_MS, capMs: RETRY_BACKOFF_CAP_MS };
}

/** Whether attempt number `attempt` (1-based) that failed with `error` should be followed by another. */
export function shouldRetry(error: StoreError, attempt: number, policy: BackoffPolicy, signal: AbortSignal | undefined): boolean {
  return error.retriable && attempt < policy.attempts && signal?.aborted !== true;
}

/** Waits out the backoff after failed attempt `attempt` (1-based); resolves early (and the caller stops) on abort. */
export function backoff(clock: Clock, random: Random, policy: BackoffPolicy, attempt: number, signal: AbortSignal | undefined): Promise<void> {
  const delayMs = backoffDelayMs(policy, attempt - 1, random);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      timer.cancel();
      resolve();
    };
    const timer = clock.setTimer(delayMs, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * One attempt's deadline: an AbortSignal that fires after `timeoutMs` on `clock`, or when the
 * caller's signal does. `timedOut` tells the two apart afterwards.
 */
export class AttemptDeadline {
  readonly signal: AbortSignal;
  #timedOut = false;
  readonly #controller = new AbortController();
  readonly #timer;
  readonly #caller: AbortSignal | undefined;
  readonly #onCallerAbort = (): void => this.#controller.abort(this.#caller?.reason);

  constructor(clock: Clock, timeoutMs: number, caller: AbortSignal | undefined) {
    this.signal = this.#controller.signal;
    this.#caller = caller;
    this.#timer = clock.setTimer(timeoutMs, () => {
      this.#timedOut = true;
      this.#controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError'));
    });
    if (caller?.aborted) this.#onCallerAbort();
    else caller?.addEventListener('abort', this.#onCallerAbort, { once: true });
  }

  get timedOut(): boolean {
    return this.#timedOut;
  }

  /** Stops the timer; call when the attempt is over (body read included). */
  dispose(): void {
    this.#timer.cancel();
    this.#caller?.removeEventListener('abort', this.#onCallerAbort);
  }
}
