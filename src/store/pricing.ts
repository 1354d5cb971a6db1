import type { RequestClass, StoreStats } from './stats.ts';

/**
 * What object storage costs, so benchmarks can turn a store's request and byte counts into
 * dollars. Prices: us-east-1 after the April 2025 S3 Express One Zone price cut, from the AWS S3
 * pricing page and the S3 FAQ's worked examples (which bill upload/retrieval on every byte, with
 * GB = 2^30 bytes), as recorded in the design (docs/design.md, "Prices"). Re-check before quoting.
 */
export interface PriceTable {
  /** The storage class, for tables. */
  readonly name: string;
  /** PUT, COPY, POST and LIST requests (multipart create, parts and complete are POST/PUT). */
  readonly putClassUsdPer1000: number;
  /** GET, HEAD and SELECT requests. */
  readonly getClassUsdPer1000: number;
  /** Per GB sent to the store (S3 Express bills uploads; S3 Standard does not, within a region). */
  readonly uploadUsdPerGb: number;
  /** Per GB read from the store. */
  readonly retrievalUsdPerGb: number;
  /** Per GB stored for a month. */
  readonly storageUsdPerGbMonth: number;
}

/** AWS bills in binary gigabytes. */
export const BYTES_PER_GB = 1024 ** 3;

/** S3 Express One Zone in us-east-1, after the April 2025 cut. */
export const S3_EXPRESS_ONE_ZONE_PRICES: PriceTable = {
  name: 'S3 Express One Zone',
  putClassUsdPer1000: 0.00113,
  getClassUsdPer1000: 0.00003,
  uploadUsdPerGb: 0.0032,
  retrievalUsdPerGb: 0.0006,
  storageUsdPerGbMonth: 0.11,
};

/** S3 Standard in us-east-1. */
export const S3_STANDARD_PRICES: PriceTable = {
  name: 'S3 Standard',
  putClassUsdPer1000: 0.005,
  getClassUsdPer1000: 0.0004,
  uploadUsdPerGb: 0,
  retrievalUsdPerGb: 0,
  storageUsdPerGbMonth: 0.023,
};

/** Data crossing availability zones inside a region: billed on each side, out and in. */
export const CROSS_AZ_USD_PER_GB_EACH_WAY = 0.01;

/**
 * How AWS bills each request class. DELETE and abort (a DELETE of the upload) are free; a
 * DeleteObjects batch is counted as 'delete' and billed as such (free), as the S3 FAQ's examples
 * bill deletions at $0.
 */
export const BILLING_CLASS: Readonly<Record<RequestClass, 'put' | 'get' | 'free'>> = {
  put: 'put',
  uploadPart: 'put',
  multipartCreate: 'put',
  multipartComplete: 'put',
  list: 'put',
  get: 'get',
  head: 'get',
  delete: 'free',
  multipartAbort: 'free',
};

/** What a store's requests and transfers cost, in US dollars. */
export interface Cost {
  /** PUT-class and GET-class requests. */
  readonly requestsUsd: number;
  /** Bytes uploaded and retrieved (S3 Express bills both). */
  readonly transferUsd: number;
  /** The two together. */
  readonly totalUsd: number;
}

/** The request and transfer cost of what a store did (storage, which depends on time held, is apart). */
export function costOf(stats: StoreStats, prices: PriceTable): Cost {
  let putClass = 0;
  let getClass = 0;
  for (const [requestClass, count] of Object.entries(stats.requests) as [RequestClass, number][]) {
    if (BILLING_CLASS[requestClass] === 'put') putClass += count;
    else if (BILLING_CLASS[requestClass] === 'get') getClass += count;
  }
  const requestsUsd = (putClass * prices.putClassUsdPer1000 + getClass * prices.getClassUsdPer1000) / 1000;
  const transferUsd = (stats.bytesIn * prices.uploadUsdPerGb + stats.bytesOut * prices.retrievalUsdPerGb) / BYTES_PER_GB;
  return { requestsUsd, transferUsd, totalUsd: requestsUsd + transferUsd };
}

/** What sending `bytes` from one zone to another costs: both sides pay. */
export function crossAzTransferUsd(bytes: number): number {
  return (bytes / BYTES_PER_GB) * CROSS_AZ_USD_PER_GB_EACH_WAY * 2;
}

/** Keeping `bytes` for a month. */
export function storageUsdPerMonth(bytes: number, prices: PriceTable): number {
  return (bytes / BYTES_PER_GB) * prices.storageUsdPerGbMonth;
}
