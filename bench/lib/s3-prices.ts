/**
 * The WAL's write bill per GB of records produced, at S3 Express One Zone prices from
 * src/store/pricing.ts (us-east-1 after the April 2025 cut; GB = 2^30 bytes; the upload fee on
 * every byte sent). Storage (objects live seconds to minutes before GC), follower GETs and
 * retrieval, and deletes are not part of it.
 */
import { BILLING_CLASS, BYTES_PER_GB, costOf, CROSS_AZ_USD_PER_GB_EACH_WAY, S3_EXPRESS_ONE_ZONE_PRICES } from '../../src/store/pricing.ts';
import type { RequestClass, StoreStats } from '../../src/store/stats.ts';
import { SECONDS_PER_MONTH } from '../../src/cost/prices.ts';

export const PRICES = S3_EXPRESS_ONE_ZONE_PRICES;
export { BYTES_PER_GB, CROSS_AZ_USD_PER_GB_EACH_WAY };
/** Seconds in a 30-day month, for a request bill per month at a steady rate (the cost model's). */
export { SECONDS_PER_MONTH };

export interface WalBill {
  /** PUT-class requests (PutObject, and multipart create/part/complete) per GB produced. */
  readonly putsPerGb: number;
  /** Request fees per GB produced. */
  readonly requestUsdPerGb: number;
  /** Upload fee per GB produced (WAL object bytes, framing included, over produced bytes). */
  readonly uploadUsdPerGb: number;
  readonly totalUsdPerGb: number;
}

export function putClassRequests(stats: StoreStats): number {
  let count = 0;
  for (const [requestClass, requests] of Object.entries(stats.requests) as [RequestClass, number][]) {
    if (BILLING_CLASS[requestClass] === 'put') count += requests;
  }
  return count;
}

/** What a store did, billed per GB of records produced. */
export function walBill(stats: StoreStats, producedBytes: number): WalBill {
  const producedGb = producedBytes / BYTES_PER_GB;
  const cost = costOf(stats, PRICES);
  return {
    putsPerGb: putClassRequests(stats) / producedGb,
    requestUsdPerGb: cost.requestsUsd / producedGb,
    uploadUsdPerGb: cost.transferUsd / producedGb,
    totalUsdPerGb: cost.totalUsd / producedGb,
  };
}

/** The PUT request bill of one writer per month at `putsPerSecond`. */
export function requestUsdPerMonth(putsPerSecond: number): number {
  return (putsPerSecond * SECONDS_PER_MONTH * PRICES.putClassUsdPer1000) / 1000;
}
