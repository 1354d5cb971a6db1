import { type Logger, silentLogger } from '../observability/logger.ts';
import type { Clock } from '../util/clock.ts';
import type { Random } from '../util/random.ts';
import type { BackoffPolicy } from '../util/backoff.ts';
import { StoreError, isStoreError } from './errors.ts';
import type { RequestClass, StatsRecorder } from './stats.ts';
import { failureFromSdk, mapS3Failure, timeoutError, where, type RequestContext } from './s3-errors.ts';
import { AttemptDeadline, backoff, shouldRetry } from './s3-retry.ts';

/**
 * Sends S3 requests with the backend's policy: every attempt counted in the stats (AWS bills
 * failed requests too), a deadline per attempt, failures mapped to StoreErrors, and bounded,
 * jittered retries for idempotent requests. Conditional writes use `attempt` and decide for
 * themselves (s3-conditional.ts).
 */
export interface RequestSpec<T> {
  readonly requestClass: RequestClass;
  readonly context: RequestContext;
  /** Body bytes sent with each attempt. */
  readonly bytesIn?: number;
  /** The caller's signal: aborting it stops the request and any retry. */
  readonly signal?: AbortSignal | undefined;
  /** One attempt; it must finish reading the response body before it resolves (the deadline covers it). */
  readonly send: (signal: AbortSignal) => Promise<T>;
}

export class S3Requests {
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #stats: StatsRecorder;
  readonly #timeoutMs: number;
  readonly #log: Logger;
  readonly policy: BackoffPolicy;
  #closed = false;

  constructor(deps: { clock: Clock; random: Random; stats: StatsRecorder; timeoutMs: number; policy: BackoffPolicy; logger?: Logger | undefined }) {
    this.#log = (deps.logger ?? silentLogger).child({ component: 'store' });
    this.#clock = deps.clock;
    this.#random = deps.random;
    this.#stats = deps.stats;
    this.#timeoutMs = deps.timeoutMs;
    this.policy = deps.policy;
  }

  /** An idempotent request: retried through any retriable failure, up to the policy's attempts. */
  async run<T>(spec: RequestSpec<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(spec);
      } catch (error) {
        if (!isStoreError(error) || !shouldRetry(error, attempt, this.policy, spec.signal)) {
          // The caller hears the error; the operator hears that retrying did not help (an outage, not a blip).
          if (isStoreError(error) && error.retriable && spec.signal?.aborted !== true)
            this.#log.error(
              { operation: spec.context.operation, bucket: spec.context.bucket, key: spec.context.key, attempts: attempt, kind: error.kind, err: error },
              `S3 ${spec.context.operation} failed after ${attempt} attempts: ${error.message}`,
            );
          throw error;
        }
        await this.backoff(attempt, spec.signal);
      }
    }
  }

  /** Exactly one attempt. Throws a StoreError (Timeout, not retried, when the caller's signal aborted it). */
  async attempt<T>(spec: RequestSpec<T>): Promise<T> {
    this.checkOpen(spec.context);
    if (spec.signal?.aborted) throw callerAborted(spec.context, spec.signal);
    this.#stats.request(spec.requestClass, spec.bytesIn ?? 0);
    const deadline = new AttemptDeadline(this.#clock, this.#timeoutMs, spec.signal);
    try {
      return await spec.send(deadline.signal);
    } catch (error) {
      const mapped = this.#map(error, spec, deadline);
      if (isStoreError(mapped)) this.#stats.error(mapped.kind);
      throw mapped;
    } finally {
      deadline.dispose();
    }
  }

  backoff(attempt: number, signal: AbortSignal | undefined): Promise<void> {
    return backoff(this.#clock, this.#random, this.policy, attempt, signal);
  }

  received(bytes: number): void {
    this.#stats.received(bytes);
  }

  checkOpen(context: RequestContext): void {
    if (this.#closed) throw new StoreError('Closed', `${context.operation}: the S3 store for bucket ${context.bucket} is closed`);
  }

  close(): void {
    this.#closed = true;
  }

  #map(error: unknown, spec: RequestSpec<unknown>, deadline: AttemptDeadline): unknown {
    if (deadline.timedOut) return timeoutError(spec.context, this.#timeoutMs, error);
    if (spec.signal?.aborted) return callerAborted(spec.context, spec.signal);
    if (isStoreError(error)) return error;
    return mapS3Failure(failureFromSdk(error), spec.context);
  }
}

/** As the memory and file stores report it: Timeout, with the signal's reason as the cause. */
function callerAborted(context: RequestContext, signal: AbortSignal): StoreError {
  return new StoreError('Timeout', `${context.operation} ${where(context)}: aborted by the caller's signal: ${String(signal.reason)}`, {
    ...(context.key === undefined ? {} : { key: context.key }),
    cause: signal.reason,
  });
}
