// The three client quotas of Kafka's QuotaFactory (produce, fetch, request), each a
// ClientQuotaManager judged against the quotas the store holds.
import { ClientQuotaManager, QUOTA_SENSOR_INACTIVE_MS, QUOTA_SENSORS_MAX, QUOTA_WINDOW_NUM_DEFAULT, QUOTA_WINDOW_SIZE_MS_DEFAULT, THROTTLE_TIME_MS_MAX } from './manager.ts';
import { CONSUMER_BYTE_RATE, PRODUCER_BYTE_RATE, type QuotaKey, REQUEST_PERCENTAGE } from './model.ts';
import type { ClientQuotaLimits } from './store.ts';

/** Kafka's quota types: the quota managers of QuotaFactory and the key each enforces. */
export type QuotaType = 'produce' | 'fetch' | 'request';

export const QUOTA_KEY_OF: Readonly<Record<QuotaType, QuotaKey>> = { produce: PRODUCER_BYTE_RATE, fetch: CONSUMER_BYTE_RATE, request: REQUEST_PERCENTAGE };

export interface QuotaEnforcerConfig {
  /** quota.window.num (11). */
  readonly windowNum: number;
  /** quota.window.size.seconds, in ms (1000). */
  readonly windowSizeMs: number;
  /** Client rates kept per quota type (QUOTA_SENSORS_MAX). */
  readonly sensorsMax: number;
  /** A client rate without a recording this long is dropped (an hour, as Kafka). */
  readonly inactiveMs: number;
}

export const QUOTA_ENFORCER_CONFIG_DEFAULT: QuotaEnforcerConfig = {
  windowNum: QUOTA_WINDOW_NUM_DEFAULT,
  windowSizeMs: QUOTA_WINDOW_SIZE_MS_DEFAULT,
  sensorsMax: QUOTA_SENSORS_MAX,
  inactiveMs: QUOTA_SENSOR_INACTIVE_MS,
};

/**
 * What a request used, recorded against its client's quotas: `user` is the principal's name (as
 * Kafka's quotas name users), `clientId` the request header's ('' when it sent none). Each method
 * returns the throttle time in ms that quota asks for (0: within it, or no quota applies).
 */
export class QuotaEnforcer {
  readonly #limits: ClientQuotaLimits;
  readonly #managers: Readonly<Record<QuotaType, ClientQuotaManager>>;

  constructor(limits: ClientQuotaLimits, config: QuotaEnforcerConfig = QUOTA_ENFORCER_CONFIG_DEFAULT) {
    this.#limits = limits;
    const shared = { samples: config.windowNum, windowMs: config.windowSizeMs, sensorsMax: config.sensorsMax, inactiveMs: config.inactiveMs };
    this.#managers = {
      produce: new ClientQuotaManager({ ...shared, throttleTimeMsMax: THROTTLE_TIME_MS_MAX }),
      fetch: new ClientQuotaManager({ ...shared, throttleTimeMsMax: THROTTLE_TIME_MS_MAX }),
      // ClientRequestQuotaManager: a request quota's throttle is at most one window.
      request: new ClientQuotaManager({ ...shared, throttleTimeMsMax: config.windowSizeMs }),
    };
  }

  /** Records `value` (bytes, or percent-seconds of a thread for `request`) and returns the throttle time. */
  record(type: QuotaType, user: string, clientId: string, value: number, nowMs: number): number {
    const quota = this.#limits.appliedQuota(QUOTA_KEY_OF[type], user, clientId);
    return quota === null ? 0 : this.#managers[type].record(quota, value, nowMs);
  }

  /** Takes back a recorded value (a throttled fetch answers no records). */
  unrecord(type: QuotaType, user: string, clientId: string, value: number, nowMs: number): void {
    const quota = this.#limits.appliedQuota(QUOTA_KEY_OF[type], user, clientId);
    if (quota !== null) this.#managers[type].unrecord(quota, value, nowMs);
  }

  /** The most a single request may record of `type` without a certain throttle; Infinity without a quota. */
  maxValueInQuotaWindow(type: QuotaType, user: string, clientId: string): number {
    const quota = this.#limits.appliedQuota(QUOTA_KEY_OF[type], user, clientId);
    return quota === null ? Number.POSITIVE_INFINITY : this.#managers[type].maxValueInQuotaWindow(quota);
  }

  /** Client rates kept, by quota type. */
  sensorCount(type: QuotaType): number {
    return this.#managers[type].sensorCount;
  }
}
