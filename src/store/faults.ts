import type { Random } from '../util/random.ts';
import { StoreError, type StoreErrorKind } from './errors.ts';
import { REQUEST_CLASSES, type RequestClass } from './stats.ts';

/**
 * The memory store's fault model: what can go wrong with a request, drawn from a seeded random
 * source (docs/design.md contract 8) so a failing simulation replays exactly.
 *
 * - Throttled and Unavailable fail a request before it takes effect (S3's 503 SlowDown, a 500).
 * - Timeout on a request that writes lets the write TAKE EFFECT and then tells the caller it timed
 *   out: the case that makes conditional writes hard (did my put-if-absent win?). On a read it is
 *   a plain failure.
 * - A slow request takes `slowFactor` times its drawn latency and then succeeds.
 */
export interface FaultPlan {
  /** How often a request fails with Throttled (S3's 503 SlowDown) before taking effect. */
  readonly throttledRate?: OperationRates;
  /** How often a request fails with Unavailable (a 500, a broken connection) before taking effect. */
  readonly unavailableRate?: OperationRates;
  /** How often a request times out: a write takes effect first. */
  readonly timeoutRate?: OperationRates;
  /** How long a timed-out request keeps its caller waiting; default its drawn latency. */
  readonly timeoutMs?: number;
  /** Probability that a request is slow. */
  readonly slowRate?: number;
  /** How many times its drawn latency a slow request takes (default 10). */
  readonly slowFactor?: number;
}

/** One probability for every request class, or one per class (absent classes: 0). */
export type OperationRates = number | Partial<Record<RequestClass, number>>;

/** A fault aimed at the next matching request(s), for tests that need one exact failure. */
export interface FaultInjection {
  /** The request class it hits. */
  readonly operation: RequestClass;
  /** The error it fails with. */
  readonly kind: StoreErrorKind;
  /** The request takes effect and then fails (a write that "timed out" but landed). Default false. */
  readonly afterEffect?: boolean;
  /** How many matching requests fail; default 1. */
  readonly count?: number;
  /** Only requests whose key (or list prefix) starts with this. */
  readonly keyPrefix?: string;
}

export interface FaultDecision {
  /** The error the request ends with, or null for none. */
  readonly kind: StoreErrorKind | null;
  readonly afterEffect: boolean;
  /** Multiplies the request's latency (1 unless slow). */
  readonly slowFactor: number;
  /** Replaces the request's latency (a timed-out request waits this long), when set. */
  readonly waitMs: number | undefined;
}

export const SLOW_FACTOR_DEFAULT = 10;

/** Requests that change state, where a timeout lands after the effect. */
export const WRITE_CLASSES: ReadonlySet<RequestClass> = new Set(['put', 'delete', 'uploadPart', 'multipartCreate', 'multipartComplete', 'multipartAbort']);

const NO_FAULT: FaultDecision = { kind: null, afterEffect: false, slowFactor: 1, waitMs: undefined };

function rateOf(rates: OperationRates | undefined, requestClass: RequestClass): number {
  if (rates === undefined) return 0;
  return typeof rates === 'number' ? rates : (rates[requestClass] ?? 0);
}

function checkRate(name: string, rate: number): void {
  if (!(rate >= 0 && rate <= 1)) throw new StoreError('InvalidArgument', `fault plan: ${name} must be a probability in [0, 1], not ${rate}`);
}

function checkPlan(plan: FaultPlan): void {
  for (const requestClass of REQUEST_CLASSES) {
    const rates = [rateOf(plan.throttledRate, requestClass), rateOf(plan.unavailableRate, requestClass), rateOf(plan.timeoutRate, requestClass)];
    rates.forEach((rate) => checkRate(`the error rate of ${requestClass}`, rate));
    checkRate(`the sum of the error rates of ${requestClass}`, rates[0]! + rates[1]! + rates[2]!);
  }
  checkRate('slowRate', plan.slowRate ?? 0);
  if (plan.slowFactor !== undefined && !(plan.slowFactor >= 1)) throw new StoreError('InvalidArgument', `fault plan: slowFactor must be at least 1, not ${plan.slowFactor}`);
  if (plan.timeoutMs !== undefined && !(plan.timeoutMs >= 0)) throw new StoreError('InvalidArgument', `fault plan: timeoutMs must be non-negative, not ${plan.timeoutMs}`);
}

/** Decides, request by request, which faults happen. Draws exactly two numbers per request. */
export class FaultInjector {
  readonly #plan: FaultPlan;
  readonly #random: Random;
  readonly #injected: { injection: FaultInjection; remaining: number }[] = [];

  constructor(plan: FaultPlan | undefined, random: Random) {
    this.#plan = plan ?? {};
    checkPlan(this.#plan);
    this.#random = random;
  }

  inject(injection: FaultInjection): void {
    const remaining = injection.count ?? 1;
    if (!(remaining >= 1)) throw new StoreError('InvalidArgument', `injectFault: count must be at least 1, not ${remaining}`);
    this.#injected.push({ injection, remaining });
  }

  /** The fault for a request of `requestClass` about `keys` (the list prefix for a list). */
  decide(requestClass: RequestClass, keys: readonly string[]): FaultDecision {
    const errorDraw = this.#random.next();
    const slowDraw = this.#random.next();
    const slowFactor = slowDraw < (this.#plan.slowRate ?? 0) ? (this.#plan.slowFactor ?? SLOW_FACTOR_DEFAULT) : 1;
    const injected = this.#takeInjected(requestClass, keys);
    if (injected !== null) return { kind: injected.kind, afterEffect: injected.afterEffect ?? false, slowFactor, waitMs: undefined };
    const kind = this.#planned(requestClass, errorDraw);
    if (kind === null) return slowFactor === 1 ? NO_FAULT : { ...NO_FAULT, slowFactor };
    const timeout = kind === 'Timeout';
    return { kind, afterEffect: timeout && WRITE_CLASSES.has(requestClass), slowFactor, waitMs: timeout ? this.#plan.timeoutMs : undefined };
  }

  #planned(requestClass: RequestClass, draw: number): StoreErrorKind | null {
    let threshold = rateOf(this.#plan.throttledRate, requestClass);
    if (draw < threshold) return 'Throttled';
    threshold += rateOf(this.#plan.unavailableRate, requestClass);
    if (draw < threshold) return 'Unavailable';
    threshold += rateOf(this.#plan.timeoutRate, requestClass);
    if (draw < threshold) return 'Timeout';
    return null;
  }

  #takeInjected(requestClass: RequestClass, keys: readonly string[]): FaultInjection | null {
    const index = this.#injected.findIndex(({ injection }) => {
      if (injection.operation !== requestClass) return false;
      const prefix = injection.keyPrefix;
      return prefix === undefined || keys.some((key) => key.startsWith(prefix));
    });
    if (index < 0) return null;
    const entry = this.#injected[index]!;
    if (--entry.remaining === 0) this.#injected.splice(index, 1);
    return entry.injection;
  }
}

/** The error a faulted request ends with; the message says it was injected, so no one chases a real outage. */
export function faultError(kind: StoreErrorKind, requestClass: RequestClass, key: string | undefined, afterEffect: boolean): StoreError {
  const what = key === undefined ? requestClass : `${requestClass} ${JSON.stringify(key)}`;
  const when = afterEffect ? ' after the request took effect' : '';
  return new StoreError(kind, `${what}: injected ${kind}${when}`, key === undefined ? {} : { key });
}
