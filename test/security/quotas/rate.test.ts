// Kafka's Rate and throttle time, against values worked out by hand from Kafka's Rate.java,
// SampledStat.java and QuotaUtils.throttleTime (11 samples of 1 s unless a test says otherwise).
import { describe, expect, test } from 'bun:test';
import { ClientQuotaManager, QUOTA_SENSOR_EXPIRY_SCAN_INTERVAL_MS, THROTTLE_TIME_MS_MAX } from '../../../src/security/quotas/manager.ts';
import type { AppliedQuota } from '../../../src/security/quotas/precedence.ts';
import { SampledRate } from '../../../src/security/quotas/rate.ts';
import { ManualClock } from '../../../src/util/clock.ts';

const WINDOWS = { samples: 11, windowMs: 1000 };
const T0 = 1_700_000_000_000;

function quota(bound: number, sensorUser = 'alice', sensorClientId = ''): AppliedQuota {
  return { bound, level: 3, sensorUser, sensorClientId };
}

function manager(overrides: Partial<ConstructorParameters<typeof ClientQuotaManager>[0]> = {}): ClientQuotaManager {
  return new ClientQuotaManager({ ...WINDOWS, sensorsMax: 100, inactiveMs: 3_600_000, throttleTimeMsMax: THROTTLE_TIME_MS_MAX, ...overrides });
}

describe('SampledRate (Kafka Rate over SampledTotal)', () => {
  test('a first burst divides by (samples - 1) whole windows, not by the time elapsed', () => {
    const rate = new SampledRate(WINDOWS);
    rate.record(20_000, T0);
    expect(rate.windowMs(T0)).toBe(10_000);
    expect(rate.measure(T0)).toBe(2_000);
    // 300 ms later: still 10 windows (0 whole ones elapsed, 10 added) plus the 300 ms.
    expect(rate.windowMs(T0 + 300)).toBe(10_300);
    expect(rate.measure(T0 + 300)).toBeCloseTo(20_000 / 10.3, 9);
  });

  test('past (samples - 1) whole windows the rate divides by the time since the oldest sample began', () => {
    const rate = new SampledRate(WINDOWS);
    for (let second = 0; second <= 10; second++) rate.record(100, T0 + second * 1000);
    // Samples begin at T0 .. T0+10000 (11 of them): 10 whole windows and 500 ms elapsed.
    expect(rate.windowMs(T0 + 10_500)).toBe(10_500);
    expect(rate.measure(T0 + 10_500)).toBeCloseTo(1_100 / 10.5, 9);
    // At T0+11000 the first sample (T0) is 11 windows old: it counts nothing and starts afresh.
    expect(rate.measure(T0 + 11_000)).toBeCloseTo(1_000 / 10, 9);
  });

  test("a new sample starts on the grid of the previous window's end, not at the recording", () => {
    const rate = new SampledRate(WINDOWS);
    rate.record(1_000, T0);
    rate.record(1_000, T0 + 2_500); // the window [T0+2000, T0+3000)
    // The second sample began at T0+2000, so it expires at T0+13000 (it would last to T0+13500 had it begun at the recording).
    expect(rate.measure(T0 + 12_999)).toBeCloseTo(1_000 / 10.999, 9);
    expect(rate.measure(T0 + 13_000)).toBe(0);
  });

  test('a ring of samples: the twelfth window reuses the oldest sample', () => {
    const rate = new SampledRate(WINDOWS);
    for (let second = 0; second < 12; second++) rate.record(10, T0 + second * 1000 + 100);
    // The first sample began at the first recording (T0+100), the next ones on its grid: T0+1100 ..
    // T0+10100; the twelfth recording reuses the first for T0+11100. 11 × 10 over 10 whole windows.
    expect(rate.windowMs(T0 + 11_100)).toBe(10_000);
    expect(rate.measure(T0 + 11_100)).toBe(11);
  });
});

describe('ClientQuotaManager throttle time (Kafka QuotaUtils.throttleTime)', () => {
  test('within the quota: no throttle; past it: round((rate - quota) / quota × window)', () => {
    const quotas = manager();
    expect(quotas.record(quota(1_000), 10_000, T0)).toBe(0); // 1000/s: at the quota
    // 20000 bytes over 10 s = 2000/s, twice the quota: (2000 - 1000) / 1000 × 10000 ms.
    expect(quotas.record(quota(1_000), 10_000, T0)).toBe(10_000);
  });

  test('ten windows at 400 of a 500 quota, then a burst: 300 ms', () => {
    const quotas = manager();
    for (let second = 0; second < 10; second++) expect(quotas.record(quota(500), 400, T0 + second * 1000)).toBe(0);
    // 5400 bytes over 10.5 s = 514.29/s; (514.29 - 500) / 500 × 10500 = 300.
    expect(quotas.record(quota(500), 1_400, T0 + 9_500)).toBe(300);
  });

  test('while fewer than ten windows have passed, the window stays ten long: a silence of the throttle time is not yet enough', () => {
    const quotas = manager();
    expect(quotas.record(quota(1_000), 15_000, T0)).toBe(5_000); // 1500/s over 10 s
    // Kafka's formula assumes the window grows by the silence; the first ten windows are padded to
    // ten, so 5 s later the rate still reads 15000 / 10 s, and again 5000 ms.
    expect(quotas.record(quota(1_000), 0, T0 + 5_000)).toBe(5_000);
    // Once the burst's sample is eleven windows old it counts nothing.
    expect(quotas.record(quota(1_000), 0, T0 + 11_000)).toBe(0);
  });

  test('a throttle is capped (the request quota at one window, as ClientRequestQuotaManager)', () => {
    const quotas = manager({ throttleTimeMsMax: 1_000 });
    // 50 percent-seconds in a fresh rate: 5%/s against 1%: (5 - 1) / 1 × 10000 = 40000 ms, capped.
    expect(quotas.record(quota(1), 50, T0)).toBe(1_000);
  });

  test('unrecord takes a value back (a throttled fetch answers no records)', () => {
    const quotas = manager();
    expect(quotas.record(quota(1_000), 20_000, T0)).toBe(10_000);
    quotas.unrecord(quota(1_000), 20_000, T0);
    expect(quotas.record(quota(1_000), 10_000, T0)).toBe(0);
  });

  test('maxValueInQuotaWindow: quota × (samples - 1) windows', () => {
    expect(manager().maxValueInQuotaWindow(quota(1_000))).toBe(10_000);
    expect(manager({ samples: 5, windowMs: 2_000 }).maxValueInQuotaWindow(quota(1_000))).toBe(8_000);
  });

  test('clients of one sensor share a rate; others have their own', () => {
    const quotas = manager();
    expect(quotas.record(quota(1_000, 'alice', ''), 6_000, T0)).toBe(0);
    expect(quotas.record(quota(1_000, 'alice', ''), 6_000, T0)).toBe(2_000); // 1200/s
    expect(quotas.record(quota(1_000, 'alice', 'app'), 6_000, T0)).toBe(0);
    expect(quotas.sensorCount).toBe(2);
  });

  test('a sensor without a recording for inactiveMs is dropped at the next scan', () => {
    const clock = new ManualClock(T0);
    const quotas = manager({ inactiveMs: 3_600_000 });
    quotas.record(quota(1_000, 'alice'), 1, clock.monotonicMs());
    clock.advance(1_800_000);
    quotas.record(quota(1_000, 'bob'), 1, clock.monotonicMs());
    clock.advance(1_800_000 + QUOTA_SENSOR_EXPIRY_SCAN_INTERVAL_MS);
    quotas.record(quota(1_000, 'carol'), 1, clock.monotonicMs());
    expect(quotas.sensorCount).toBe(2); // alice's went: an hour and more without a recording
  });

  test('past sensorsMax the sensor least recently recorded is dropped', () => {
    const quotas = manager({ sensorsMax: 2 });
    quotas.record(quota(1_000, 'a'), 9_000, T0);
    quotas.record(quota(1_000, 'b'), 9_000, T0);
    quotas.record(quota(1_000, 'a'), 0, T0); // a is now the most recent
    quotas.record(quota(1_000, 'c'), 9_000, T0); // b goes
    expect(quotas.sensorCount).toBe(2);
    expect(quotas.record(quota(1_000, 'a'), 2_000, T0)).toBe(1_000); // a kept its 9000: 11000 / 10 s
    expect(quotas.record(quota(1_000, 'b'), 2_000, T0)).toBe(0); // b starts afresh
  });
});
