/**
 * Per API: requests, the error codes their responses carry, and their latency
 * (ferry_broker_requests_total{api}, ferry_broker_request_errors_total{api,error},
 * ferry_broker_request_latency_seconds{api}). Labels stay bounded: `api` by the binding table,
 * `error` by Kafka's error-code table (any code outside it is counted as OTHER).
 */
import { isFerryError } from '../errors.ts';
import type { Counter, MetricsRegistry } from '../metrics/index.ts';
import type { Clock } from '../util/clock.ts';
import { ErrorCode, errorCodeFor } from '../protocol/error-codes.ts';
import type { ApiBinding } from './router.ts';

// biome-ignore lint: a table of bindings of different request and response types
type AnyBinding = ApiBinding<any, any>;

const MS_PER_SECOND = 1000;
/**
 * How deep the walk looks for `errorCode` fields, each array and each object a level: the deepest
 * are OffsetFetch v8+'s per-partition codes, response.groups[].topics[].partitions[].errorCode,
 * in an object at depth 6 (Fetch's, response.responses[].partitions[], at depth 4).
 */
export const ERROR_CODE_DEPTH_MAX = 6;
const ERROR_FIELD = 'errorCode';
const ERROR_OTHER = 'OTHER';

const ERROR_NAMES: ReadonlyMap<number, string> = new Map(Object.entries(ErrorCode).map(([name, code]) => [code, name]));

function errorName(code: number): string {
  return ERROR_NAMES.get(code) ?? ERROR_OTHER;
}

/**
 * Adds to `counts` every non-zero `errorCode` in `value`, as Kafka's response errorCounts does:
 * the top level's and each topic's and partition's. Byte arrays (records) are not walked.
 */
export function countErrorCodes(value: unknown, counts: Map<number, number>, depth = 0): void {
  if (depth > ERROR_CODE_DEPTH_MAX || typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return;
  if (Array.isArray(value)) {
    for (const element of value) countErrorCodes(element, counts, depth + 1);
    return;
  }
  // for-in, not Object.entries: this walks every response, and entries allocates an array per object.
  for (const key in value) {
    const field = (value as Record<string, unknown>)[key];
    if (key === ERROR_FIELD) {
      if (typeof field === 'number' && field !== ErrorCode.NONE) counts.set(field, (counts.get(field) ?? 0) + 1);
    } else if (typeof field === 'object') {
      countErrorCodes(field, counts, depth + 1);
    }
  }
}

/** Counts requests, their error codes and times their handling per API. */
export function instrument(registry: MetricsRegistry, clock: Clock, table: AnyBinding[]): AnyBinding[] {
  return table.map((binding) => {
    const api = binding.codec.name;
    const labels = { api };
    const requests = registry.counter('ferry_broker_requests_total', 'Kafka requests handled, by API', { labels });
    const latency = registry.histogram('ferry_broker_request_latency_seconds', 'Time from decoding a request to its response, by API (long-poll waits included)', { labels });
    const errors = new Map<number, Counter>();
    const countError = (code: number, amount: number): void => {
      let counter = errors.get(code);
      if (counter === undefined) {
        counter = registry.counter('ferry_broker_request_errors_total', 'Error codes in responses (each topic and partition counted, as Kafka), by API and error', {
          labels: { api, error: errorName(code) },
        });
        errors.set(code, counter);
      }
      counter.add(amount);
    };
    return {
      ...binding,
      async handle(request, context) {
        const started = clock.monotonicMs();
        try {
          const response = await binding.handle(request, context);
          const counts = new Map<number, number>();
          countErrorCodes(response, counts);
          for (const [code, amount] of counts) countError(code, amount);
          return response;
        } catch (error) {
          countError(isFerryError(error) ? errorCodeFor(error.kind) : ErrorCode.UNKNOWN_SERVER_ERROR, 1);
          throw error;
        } finally {
          requests.add();
          latency.observe((clock.monotonicMs() - started) / MS_PER_SECOND);
        }
      },
    };
  });
}
