import { describe, expect, test } from 'bun:test';
import { BYTES_PER_GB, costOf, crossAzTransferUsd, S3_EXPRESS_ONE_ZONE_PRICES, S3_STANDARD_PRICES, storageUsdPerMonth } from '../../src/store/pricing.ts';
import { REQUEST_CLASSES, type RequestClass, type StoreStats } from '../../src/store/stats.ts';

function statsOf(requests: Partial<Record<RequestClass, number>>, bytesIn: number, bytesOut: number): StoreStats {
  return { requests: Object.fromEntries(REQUEST_CLASSES.map((c) => [c, requests[c] ?? 0])) as Record<RequestClass, number>, bytesIn, bytesOut, errors: {} };
}

describe('pricing', () => {
  // PUT class: 1000 puts + 500 parts + 10 creates + 10 completes + 480 lists = 2000.
  // GET class: 9000 gets + 1000 heads = 10,000. Deletes and aborts are free.
  const mixed = statsOf(
    { put: 1000, uploadPart: 500, multipartCreate: 10, multipartComplete: 10, list: 480, get: 9000, head: 1000, delete: 5000, multipartAbort: 7 },
    2 * BYTES_PER_GB,
    10 * BYTES_PER_GB,
  );

  test('S3 Express One Zone: requests by billing class plus upload and retrieval per GB', () => {
    const cost = costOf(mixed, S3_EXPRESS_ONE_ZONE_PRICES);
    // 2000 × $0.00113/1000 + 10,000 × $0.00003/1000 = $0.00226 + $0.0003
    expect(cost.requestsUsd).toBeCloseTo(0.00256, 12);
    // 2 GB × $0.0032 + 10 GB × $0.0006 = $0.0064 + $0.006
    expect(cost.transferUsd).toBeCloseTo(0.0124, 12);
    expect(cost.totalUsd).toBeCloseTo(0.01496, 12);
  });

  test('S3 Standard: no per-GB fee inside the region', () => {
    const cost = costOf(mixed, S3_STANDARD_PRICES);
    // 2000 × $0.005/1000 + 10,000 × $0.0004/1000 = $0.01 + $0.004
    expect(cost).toEqual({ requestsUsd: expect.closeTo(0.014, 12), transferUsd: 0, totalUsd: expect.closeTo(0.014, 12) });
  });

  test("the S3 FAQ's first S3 Express example: 1M PUTs and 9M GETs of 10 KB", () => {
    const cost = costOf(statsOf({ put: 1_000_000, get: 9_000_000, delete: 1_000_000 }, 1_000_000 * 10_240, 9_000_000 * 10_240), S3_EXPRESS_ONE_ZONE_PRICES);
    expect(cost.requestsUsd).toBeCloseTo(1.13 + 0.27, 9);
    expect(cost.transferUsd).toBeCloseTo(0.030517578125 + 0.0514984130859375, 9); // 9.54 GB × $0.0032 + 85.83 GB × $0.0006; the FAQ rounds to $0.03 and $0.05
    expect(storageUsdPerMonth(10 * BYTES_PER_GB, S3_EXPRESS_ONE_ZONE_PRICES)).toBeCloseTo(1.1, 12);
  });

  test("cross-AZ replication at 1 GiB/s with RF=3 costs docs/design.md's ~$100k a month", () => {
    expect(crossAzTransferUsd(BYTES_PER_GB)).toBeCloseTo(0.02, 12);
    const secondsPerMonth = 30 * 24 * 3600;
    expect(crossAzTransferUsd(2 * BYTES_PER_GB * secondsPerMonth)).toBeCloseTo(103_680, 6);
  });
});
