// Kafka's ClientQuotaManager (server/.../quota/ClientQuotaManager.java): one per quota type
// (produce bytes, fetch bytes, request time), a rate per client as precedence.ts groups them,
// and the throttle time of a client past its quota.
import { assert } from '../../util/assert.ts';
import type { AppliedQuota } from './precedence.ts';
import { type RateWindows, SampledRate } from './rate.ts';

/** Kafka's quota.window.num: 10 whole windows and the current one. */
export const QUOTA_WINDOW_NUM_DEFAULT = 11;
/** Kafka's quota.window.size.seconds, in ms. */
export const QUOTA_WINDOW_SIZE_MS_DEFAULT = 1_000;
/** Kafka's InactiveSensorExpirationTimeSeconds: a client's rate is forgotten after an hour without a request. */
export const QUOTA_SENSOR_INACTIVE_MS = 3_600_000;
/** How often expired rates are looked for (Kafka's Metrics expiry task runs every 30 s). */
export const QUOTA_SENSOR_EXPIRY_SCAN_INTERVAL_MS = 30_000;
/**
 * Client rates kept per quota type at once. Each costs a few hundred bytes (two arrays of
 * quota.window.num numbers, its key); past the limit the rate least recently recorded is dropped,
 * and that client starts afresh if it comes back (harmless once it has been quiet for
 * quota.window.num windows, when its rate has decayed to nothing anyway).
 */
export const QUOTA_SENSORS_MAX = 10_000;
/** A throttle time travels as an INT32 (throttle_time_ms). */
export const THROTTLE_TIME_MS_MAX = 0x7fff_ffff;

export interface QuotaManagerConfig extends RateWindows {
  /** Sensors kept at most (QUOTA_SENSORS_MAX). */
  readonly sensorsMax: number;
  readonly inactiveMs: number;
  /**
   * The longest throttle this quota type answers. Kafka caps the request quota's at one window
   * (ClientRequestQuotaManager.maxThrottleTimeMs); byte rates only by the INT32 field.
   */
  readonly throttleTimeMsMax: number;
}

interface Sensor {
  readonly rate: SampledRate;
  lastRecordMs: number;
}

/**
 * The rates of one quota type's clients, each measured as Kafka's Rate (rate.ts) and checked
 * after every recording: past the quota, the throttle time is how long the client must stay
 * silent for its rate to fall back to the quota (Kafka's QuotaUtils.throttleTime):
 *
 *   throttle = round((rate - quota) / quota * window)
 *
 * with the window the rate divides by. Rates live in memory only, bounded (sensorsMax), and are
 * dropped after `inactiveMs` without a recording.
 */
export class ClientQuotaManager {
  readonly #config: QuotaManagerConfig;
  /** By sensor key, least recently recorded first (a Map keeps insertion order; a recording moves its sensor last). */
  readonly #sensors = new Map<string, Sensor>();
  #nextExpiryScanMs = Number.NEGATIVE_INFINITY;

  constructor(config: QuotaManagerConfig) {
    assert(config.sensorsMax >= 1 && config.throttleTimeMsMax >= 0 && config.throttleTimeMsMax <= THROTTLE_TIME_MS_MAX, 'quota manager limits within range');
    this.#config = config;
  }

  /** Clients with a rate kept. */
  get sensorCount(): number {
    return this.#sensors.size;
  }

  /**
   * Records `value` against the client's rate at `nowMs` and returns the throttle time in ms (0
   * while the rate stays at or under the quota). Kafka's recordAndGetThrottleTimeMs.
   */
  record(quota: AppliedQuota, value: number, nowMs: number): number {
    const sensor = this.#sensor(quota, nowMs);
    sensor.rate.record(value, nowMs);
    const rate = sensor.rate.measure(nowMs);
    if (rate <= quota.bound) return 0;
    return Math.min(Math.round(((rate - quota.bound) / quota.bound) * sensor.rate.windowMs(nowMs)), this.#config.throttleTimeMsMax);
  }

  /** Takes back a recorded value (Kafka's unrecordQuotaSensor: a throttled fetch sends no records). */
  unrecord(quota: AppliedQuota, value: number, nowMs: number): void {
    this.#sensor(quota, nowMs).rate.record(-value, nowMs);
  }

  /**
   * The most one request may record without being throttled for certain (Kafka's
   * maxValueInQuotaWindow): quota × (samples - 1) windows. A fetch asks for no more bytes than this.
   */
  maxValueInQuotaWindow(quota: AppliedQuota): number {
    return quota.bound * (this.#config.samples - 1) * (this.#config.windowMs / 1000);
  }

  #sensor(quota: AppliedQuota, nowMs: number): Sensor {
    this.#expire(nowMs);
    const key = JSON.stringify([quota.sensorUser, quota.sensorClientId]);
    let sensor = this.#sensors.get(key);
    if (sensor === undefined) {
      sensor = { rate: new SampledRate(this.#config), lastRecordMs: nowMs };
      if (this.#sensors.size >= this.#config.sensorsMax) this.#sensors.delete(this.#sensors.keys().next().value!);
    } else {
      this.#sensors.delete(key);
    }
    sensor.lastRecordMs = nowMs;
    this.#sensors.set(key, sensor);
    return sensor;
  }

  /** Drops sensors without a recording for inactiveMs, at most once per scan interval. */
  #expire(nowMs: number): void {
    if (nowMs < this.#nextExpiryScanMs) return;
    this.#nextExpiryScanMs = nowMs + QUOTA_SENSOR_EXPIRY_SCAN_INTERVAL_MS;
    // Least recently recorded first: stop at the first one still active.
    for (const [key, sensor] of this.#sensors) {
      if (nowMs - sensor.lastRecordMs < this.#config.inactiveMs) break;
      this.#sensors.delete(key);
    }
  }
}
