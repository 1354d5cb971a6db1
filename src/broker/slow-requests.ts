/**
 * Slow requests: a request whose handling (decode to response) takes longer than
 * SLOW_REQUEST_MS, beyond the wait the client asked for, logs one warning line with the API,
 * the client and how long it took. A request that waits by design (a Fetch long poll up to its
 * max.wait.ms, a JoinGroup up to its rebalance timeout, a SyncGroup until the leader assigns)
 * is slow only past that wait.
 */
import type { Logger } from '../observability/logger.ts';
import type { Clock } from '../util/clock.ts';
import { logText } from '../util/log-text.ts';
import type { ApiBinding } from './router.ts';

/**
 * Past this a request is slow: an acks=all Produce waits one S3 Express PUT (single-digit ms) and
 * a cluster's followers; a second is a hundred times that, so a line means a store or a disk in
 * trouble, not ordinary tail latency. One clock read per request is the cost.
 */
export const SLOW_REQUEST_MS = 1000;

/** The request fields that name a wait the client asked for (ms). */
const ASKED_WAIT_FIELDS = ['maxWaitMs', 'rebalanceTimeoutMs'] as const;
/** APIs that wait on other clients for as long as a rebalance takes: no bound a request names. */
const WAITS_ON_OTHER_CLIENTS = new Set(['SyncGroup']);

// biome-ignore lint/suspicious/noExplicitAny: bindings of every API in one table, as the router's
type AnyBinding = ApiBinding<any, any>;

/** `table` with each handler timed: a slow one logs a warning (component broker). */
export function logSlowRequests(logger: Logger, clock: Clock, table: readonly AnyBinding[], thresholdMs = SLOW_REQUEST_MS): AnyBinding[] {
  return table.map((binding) => {
    const api = binding.codec.name;
    if (WAITS_ON_OTHER_CLIENTS.has(api)) return binding;
    return {
      ...binding,
      async handle(request, context) {
        const startedMs = clock.monotonicMs();
        try {
          return await binding.handle(request, context);
        } finally {
          const durationMs = clock.monotonicMs() - startedMs;
          if (durationMs > thresholdMs + askedWaitMs(request)) {
            const { header, peer, session } = context;
            const clientId = header.clientId === null ? null : logText(header.clientId);
            logger.warn(
              { api, apiVersion: header.apiVersion, clientId, peer, principal: `${session.principal.type}:${logText(session.principal.name)}`, durationMs: Math.round(durationMs) },
              `slow request: ${api} v${header.apiVersion} from ${clientId ?? peer} took ${Math.round(durationMs)} ms`,
            );
          }
        }
      },
    };
  });
}

/** The longest wait the request itself asks for (0: none). */
function askedWaitMs(request: unknown): number {
  if (typeof request !== 'object' || request === null) return 0;
  let waitMs = 0;
  for (const field of ASKED_WAIT_FIELDS) {
    const value = (request as Record<string, unknown>)[field];
    if (typeof value === 'number' && value > waitMs) waitMs = value;
  }
  return waitMs;
}
