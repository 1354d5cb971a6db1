// The cost arithmetic the wal-bytes and failover benches print: storage per GB-month for Ferry,
// classic Kafka and KIP-405, request rates from store stats, and their monthly bill.
import { describe, expect, test } from 'bun:test';
import { GP3_USD_PER_GB_MONTH, requestRates, requestUsdPerMonthAt, statsDifference, statsSum, storageBills, tierUploadBill } from '../../bench/lib/storage-cost.ts';
import { BYTES_PER_GB, S3_EXPRESS_ONE_ZONE_PRICES, S3_STANDARD_PRICES } from '../../src/store/pricing.ts';
import { REQUEST_CLASSES, type RequestClass, type StoreStats } from '../../src/store/stats.ts';

const GB = BYTES_PER_GB;

function stats(requests: Partial<Record<RequestClass, number>>, bytesIn = 0, bytesOut = 0): StoreStats {
  return { requests: Object.fromEntries(REQUEST_CLASSES.map((c) => [c, requests[c] ?? 0])) as Record<RequestClass, number>, bytesIn, bytesOut, errors: {} };
}

const billOf = (bills: ReturnType<typeof storageBills>, name: string): number => bills.find((bill) => bill.name === name)!.usdPerGbMonth;

describe('storageBills', () => {
  const history = { retainedBytes: 1000 * GB, kip405HotBytes: 100 * GB, ferryWalBytes: 10 * GB, ferryLocalBytes: 0 };

  test('classic Kafka pays gp3 for each of its 3 replicas', () => {
    expect(billOf(storageBills(history), 'classic Kafka')).toBeCloseTo(3 * GP3_USD_PER_GB_MONTH, 10);
  });

  test('KIP-405: the whole history in S3 Standard plus its hot share on 3 gp3 replicas', () => {
    expect(billOf(storageBills(history), 'KIP-405')).toBeCloseTo(S3_STANDARD_PRICES.storageUsdPerGbMonth + 0.1 * 3 * GP3_USD_PER_GB_MONTH, 10);
  });

  test("Ferry: the tier at S3 Standard plus its WAL's share at S3 Express; its local disk only in the second row", () => {
    const bills = storageBills({ ...history, ferryLocalBytes: 500 * GB });
    const ferry = S3_STANDARD_PRICES.storageUsdPerGbMonth + 0.01 * S3_EXPRESS_ONE_ZONE_PRICES.storageUsdPerGbMonth;
    expect(billOf(bills, 'Ferry')).toBeCloseTo(ferry, 10);
    expect(billOf(bills, 'Ferry + local disk')).toBeCloseTo(ferry + 0.5 * GP3_USD_PER_GB_MONTH, 10);
  });

  test('a hot set larger than the history is refused', () => {
    expect(() => storageBills({ ...history, kip405HotBytes: 2000 * GB })).toThrow();
  });
});

describe('request rates and their monthly bill', () => {
  test('LIST bills as PUT class, HEAD as GET class, DELETE free', () => {
    const difference = statsDifference(stats({ list: 10, get: 5 }), stats({ list: 70, get: 35, head: 30, delete: 100, put: 60 }));
    const rates = requestRates(difference, 60_000);
    expect(rates.putClassPerSecond).toBe(2); // 60 LIST + 60 PUT in 60 s
    expect(rates.getClassPerSecond).toBe(1); // 30 GET + 30 HEAD
  });

  test('one PUT-class request per second for a 30-day month at S3 Express prices', () => {
    expect(requestUsdPerMonthAt({ putClassPerSecond: 1, getClassPerSecond: 0 })).toBeCloseTo((30 * 24 * 3600 * S3_EXPRESS_ONE_ZONE_PRICES.putClassUsdPer1000) / 1000, 10);
  });

  test('a tally that went down (the store was reopened) is refused', () => {
    expect(() => requestRates(statsDifference(stats({ get: 5 }), stats({ get: 1 })), 1000)).toThrow();
  });

  test('statsSum adds two tallies', () => {
    expect(statsSum(stats({ get: 1, list: 2 }, 3), stats({ get: 4 }, 5)).requests.get).toBe(5);
  });
});

test('tier upload bill: PUT-class requests per GB tiered at S3 Standard prices, with no upload fee', () => {
  const bill = tierUploadBill(stats({ put: 100, multipartCreate: 10, uploadPart: 80, multipartComplete: 10, get: 1000 }, 2 * GB), 2 * GB);
  expect(bill.putsPerGb).toBe(100);
  expect(bill.usdPerGb).toBeCloseTo((100 * S3_STANDARD_PRICES.putClassUsdPer1000) / 1000, 12);
});
