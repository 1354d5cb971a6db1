// Kafka's client quotas on the request path (KafkaApis handleProduceRequest and handleFetchRequest,
// RequestHandlerHelper.sendResponseMaybeThrottle): after a request's handler answers, what it used
// is recorded against its client's quotas, and a client past one is throttled the KIP-219 way: its
// answer carries the throttle time, and its connection reads nothing more for that long.
import type { MetricsRegistry } from '../metrics/index.ts';
import { QUOTA_ENFORCER_CONFIG_DEFAULT, QuotaEnforcer, type QuotaEnforcerConfig, type QuotaType } from '../security/quotas/enforcer.ts';
import type { ClientQuotaLimits } from '../security/quotas/store.ts';
import { type Session, usesSasl } from '../security/session.ts';
import { THROTTLE_TIME_MS_MAX } from '../security/quotas/manager.ts';
import type { Clock } from '../util/clock.ts';
import { fetchCodec, type FetchRequest, type FetchResponse } from './apis/fetch.ts';
import { produceCodec, type ProduceRequest } from './apis/produce.ts';
import { saslAuthenticateCodec } from './apis/sasl-authenticate.ts';
import { saslHandshakeCodec } from './apis/sasl-handshake.ts';
import type { ApiBinding, RequestContext } from './router.ts';

// biome-ignore lint: a table of bindings of different request and response types
type AnyBinding = ApiBinding<any, any>;

/**
 * APIs no quota judges: authentication (Kafka runs it in its network threads, before any quota).
 * Followers' Fetch requests are exempt too (below), as Kafka exempts replication, and so is
 * everything a SASL client sends before it authenticated.
 */
const EXEMPT_API_KEYS: ReadonlySet<number> = new Set([saslHandshakeCodec.key, saslAuthenticateCodec.key]);

/** What 100% of request_percentage is: one thread busy for the whole second (Kafka counts a request thread's time in percent). */
const PERCENT_PER_THREAD_MS = 100 / 1000;
const MS_PER_SECOND = 1000;

export interface QuotaEnforcementOptions {
  /** Where the quotas are read: the quota store. */
  readonly quotas: ClientQuotaLimits;
  /** Rates are measured on its monotonic time, in whole ms. */
  readonly clock: Clock;
  readonly metrics: MetricsRegistry;
  /** quota.window.num, quota.window.size.seconds and the sensor limits; Kafka's defaults when absent. */
  readonly config?: QuotaEnforcerConfig;
  /** The enforcer to record into (tests read its rates); one is made from `quotas` and `config` when absent. */
  readonly enforcer?: QuotaEnforcer;
}

/**
 * Wraps every binding of the table (like `instrument`) so that each request is recorded against
 * its client's quotas once its handler has answered; the client is the session's principal name
 * and the header's client id, as Kafka's quotas name them. What is recorded:
 *
 * - produce (producer_byte_rate): the bytes of the request's record batches. Kafka records the
 *   whole request's size; the batches are nearly all of it.
 * - fetch (consumer_byte_rate): the bytes of records in the answer, for consumers only (a
 *   follower's Fetch is exempt from every quota). As Kafka, a consumer's Fetch asks for no more
 *   than its quota allows in one window span (quota × (quota.window.num - 1) windows), and a
 *   throttled Fetch answers no records (what it read is taken back from the rate), so the
 *   consumer fetches them again once its throttle ends.
 * - request (request_percentage): the handler's thread time as a percentage of one thread.
 *   Ferry handles every request on one thread (the event loop), and a handler gives it up at
 *   each wait (a store write, a WAL upload, a long poll); its thread time is the time it runs
 *   before its first wait, measured on the clock. 100% is that one thread busy for a whole
 *   second: a client at request_percentage=50 may keep it busy half of each second. Work after
 *   a handler's first wait, and the decoding and encoding of frames around it, are not counted.
 *   Produce with acks=0 is not judged by it (as Kafka).
 *
 * A throttled answer carries max(the handler's throttle, the quota's) in throttle_time_ms, and
 * the connection is muted for the quota's throttle (`rc.mute`, KIP-219): the client's next
 * requests wait, whether it honours the field or not (Produce with acks=0, which has no answer,
 * is muted too). Throttles are counted by the quota that set them (the larger; the request
 * quota's on a tie, as Kafka): ferry_broker_throttled_requests_total{quota} and
 * ferry_broker_throttle_time_seconds{quota}.
 */
export function enforceClientQuotas(table: readonly AnyBinding[], options: QuotaEnforcementOptions): AnyBinding[] {
  const enforcer = options.enforcer ?? new QuotaEnforcer(options.quotas, options.config ?? QUOTA_ENFORCER_CONFIG_DEFAULT);
  const throttles = new Map(
    (['produce', 'fetch', 'request'] as const).map((quota) => [
      quota,
      {
        count: options.metrics.counter(
          'ferry_broker_throttled_requests_total',
          'Requests throttled by a client quota (their connection muted for the throttle time, KIP-219), by the quota that set the throttle',
          { labels: { quota } },
        ),
        time: options.metrics.histogram('ferry_broker_throttle_time_seconds', 'Throttle times of requests throttled by a client quota, by the quota that set them', { labels: { quota } }),
      },
    ]),
  );
  const clock = options.clock;
  return table.map((binding) => {
    if (EXEMPT_API_KEYS.has(binding.codec.key)) return binding;
    const kind: QuotaType = binding.codec.key === produceCodec.key ? 'produce' : binding.codec.key === fetchCodec.key ? 'fetch' : 'request';
    return {
      ...binding,
      async handle(request, rc: RequestContext) {
        if (unauthenticated(rc.session) || (kind === 'fetch' && isReplicaFetch(request as FetchRequest))) return binding.handle(request, rc);
        const user = rc.session.principal.name;
        const clientId = rc.header.clientId ?? '';
        const asked = kind === 'fetch' ? withinQuotaWindow(request as FetchRequest, enforcer.maxValueInQuotaWindow('fetch', user, clientId)) : request;
        const startedMs = clock.monotonicMs();
        const pending = binding.handle(asked, rc);
        const threadPercent = (clock.monotonicMs() - startedMs) * PERCENT_PER_THREAD_MS;
        let response = await pending;
        const nowMs = Math.floor(clock.monotonicMs());
        let bandwidthMs = 0;
        let requestMs = 0;
        if (kind === 'produce') {
          bandwidthMs = enforcer.record('produce', user, clientId, producedBytes(request as ProduceRequest), nowMs);
          if ((request as ProduceRequest).acks !== 0) requestMs = enforcer.record('request', user, clientId, threadPercent, nowMs);
        } else if (kind === 'fetch') {
          requestMs = enforcer.record('request', user, clientId, threadPercent, nowMs);
          const bytes = fetchedBytes(response as FetchResponse);
          bandwidthMs = enforcer.record('fetch', user, clientId, bytes, nowMs);
          if (Math.max(bandwidthMs, requestMs) > 0) {
            enforcer.unrecord('fetch', user, clientId, bytes, nowMs);
            response = throttledFetch(response as FetchResponse);
          }
        } else {
          requestMs = enforcer.record('request', user, clientId, threadPercent, nowMs);
        }
        const [quota, throttleMs] = bandwidthMs > requestMs ? [kind, bandwidthMs] : ['request' as const, requestMs];
        if (throttleMs <= 0) return response;
        const throttle = throttles.get(quota)!;
        throttle.count.add();
        throttle.time.observe(throttleMs / MS_PER_SECOND);
        rc.mute(throttleMs);
        return withThrottleTime(response, throttleMs);
      },
    };
  });
}

/** A response's throttle_time_ms raised to `throttleMs`, for responses that have the field. */
function withThrottleTime<T>(response: T, throttleMs: number): T {
  if (response === null || typeof response !== 'object' || !('throttleTimeMs' in response)) return response;
  const handlerMs = typeof response.throttleTimeMs === 'number' ? response.throttleTimeMs : 0;
  return { ...response, throttleTimeMs: Math.min(Math.max(handlerMs, throttleMs), THROTTLE_TIME_MS_MAX) };
}

/**
 * A SASL listener's connection before its exchange completed (ApiVersions is all it may send then):
 * its principal is ANONYMOUS only for want of one, and Kafka answers these requests in its network
 * threads, before any quota. Recorded, they would share User:ANONYMOUS's rate among every
 * unauthenticated client, and one could throttle everyone's login.
 */
function unauthenticated(session: Session): boolean {
  return usesSasl(session.securityProtocol) && session.saslMechanism === null;
}

/** Kafka's replica id of a consumer; from v15 a follower names itself in replica_state (KIP-903). */
const CONSUMER_REPLICA_ID = -1;

function isReplicaFetch(request: FetchRequest): boolean {
  const replicaId = request.replicaState.replicaId !== CONSUMER_REPLICA_ID ? request.replicaState.replicaId : request.replicaId;
  return replicaId >= 0;
}

/** max_bytes is an INT32. */
const INT32_MAX = 0x7fff_ffff;

/** Kafka's handleFetchRequest: max_bytes at most what the quota allows in one window span, min_bytes at most that. */
function withinQuotaWindow(request: FetchRequest, maxValue: number): FetchRequest {
  if (!Number.isFinite(maxValue)) return request;
  const limit = Math.max(1, Math.min(Math.floor(maxValue), INT32_MAX));
  const maxBytes = request.maxBytes > 0 ? Math.min(request.maxBytes, limit) : limit;
  return { ...request, maxBytes, minBytes: Math.min(request.minBytes, maxBytes) };
}

/** Kafka's FetchContext.getThrottledResponse for a sessionless fetch: no partitions at all. */
function throttledFetch(response: FetchResponse): FetchResponse {
  return { ...response, responses: [] };
}

function producedBytes(request: ProduceRequest): number {
  let bytes = 0;
  for (const topic of request.topicData) for (const partition of topic.partitionData) bytes += partition.records?.length ?? 0;
  return bytes;
}

function fetchedBytes(response: FetchResponse): number {
  let bytes = 0;
  for (const topic of response.responses) {
    for (const { records } of topic.partitions) {
      if (records === null || records === undefined) continue;
      if (records instanceof Uint8Array) bytes += records.length;
      else for (const batch of records) bytes += batch.length;
    }
  }
  return bytes;
}
