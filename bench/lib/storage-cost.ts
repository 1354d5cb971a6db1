/**
 * What keeping a GB of Kafka history costs per month, three ways, and what an idle cluster's
 * control-store requests cost per month. Prices from src/store/pricing.ts (docs/design.md, "Prices")
 * except gp3, which docs/design.md does not list: GP3_USD_PER_GB_MONTH is AWS's us-east-1 list price
 * for provisioned gp3 storage (baseline IOPS and throughput included). GB = 2^30 bytes.
 */
import { BILLING_CLASS, BYTES_PER_GB, S3_EXPRESS_ONE_ZONE_PRICES, S3_STANDARD_PRICES, type PriceTable } from '../../src/store/pricing.ts';
import { REQUEST_CLASSES, type RequestClass, type StoreStats } from '../../src/store/stats.ts';
import { SECONDS_PER_MONTH } from './s3-prices.ts';

import { GP3_USD_PER_GB_MONTH } from '../../src/cost/prices.ts';

/** gp3 EBS storage, us-east-1, per GB-month: the cost model's price (docs/cost-model.md has its source). */
export { GP3_USD_PER_GB_MONTH };
/** Classic Kafka keeps every byte on each of its replicas' disks (replication.factor 3). */
export const KAFKA_REPLICATION_FACTOR = 3;

export interface StorageBill {
  readonly name: string;
  /** Where the bytes are and at what price, said in a few words. */
  readonly how: string;
  readonly usdPerGbMonth: number;
}

/** The history a cluster keeps: `retainedBytes`, of which `hotBytes` are also on broker disks (KIP-405). */
export interface RetainedHistory {
  readonly retainedBytes: number;
  /** KIP-405's local.retention: the newest bytes every replica also keeps on its disk. */
  readonly kip405HotBytes: number;
  /** Ferry: what its WAL store holds in steady state (S3 Express One Zone). */
  readonly ferryWalBytes: number;
  /** Ferry: what the broker's local disk holds (one replica, RF 1; its local retention decides). */
  readonly ferryLocalBytes: number;
}

const perRetainedGb = (usdPerMonth: number, retainedBytes: number): number => usdPerMonth / (retainedBytes / BYTES_PER_GB);
const monthlyUsd = (bytes: number, usdPerGbMonth: number): number => (bytes / BYTES_PER_GB) * usdPerGbMonth;

/** $/GB-month of retained history for Ferry (without and with its local disk), classic Kafka and KIP-405. */
export function storageBills(history: RetainedHistory): StorageBill[] {
  const { retainedBytes, kip405HotBytes, ferryWalBytes, ferryLocalBytes } = history;
  if (!(retainedBytes > 0)) throw new Error('storage bills need a retained history');
  if (kip405HotBytes > retainedBytes) throw new Error('the KIP-405 hot set cannot exceed the retained history');
  const tier = monthlyUsd(retainedBytes, S3_STANDARD_PRICES.storageUsdPerGbMonth);
  const wal = monthlyUsd(ferryWalBytes, S3_EXPRESS_ONE_ZONE_PRICES.storageUsdPerGbMonth);
  const ferryDisk = monthlyUsd(Math.min(ferryLocalBytes, retainedBytes), GP3_USD_PER_GB_MONTH);
  const kafkaDisks = monthlyUsd(retainedBytes, GP3_USD_PER_GB_MONTH) * KAFKA_REPLICATION_FACTOR;
  const hotDisks = monthlyUsd(kip405HotBytes, GP3_USD_PER_GB_MONTH) * KAFKA_REPLICATION_FACTOR;
  return [
    { name: 'Ferry', how: 'history in the tier (S3 Standard) + steady WAL bytes (S3 Express)', usdPerGbMonth: perRetainedGb(tier + wal, retainedBytes) },
    { name: 'Ferry + local disk', how: 'the same + the local bytes of its one replica (gp3)', usdPerGbMonth: perRetainedGb(tier + wal + ferryDisk, retainedBytes) },
    { name: 'classic Kafka', how: `${KAFKA_REPLICATION_FACTOR} replicas of everything on gp3`, usdPerGbMonth: perRetainedGb(kafkaDisks, retainedBytes) },
    { name: 'KIP-405', how: `history in S3 Standard + hot set on ${KAFKA_REPLICATION_FACTOR} gp3 replicas`, usdPerGbMonth: perRetainedGb(tier + hotDisks, retainedBytes) },
  ];
}

/** Requests of each billing class per second of a store, between two of its stats snapshots. */
export interface RequestRates {
  readonly putClassPerSecond: number;
  readonly getClassPerSecond: number;
}

export function statsDifference(before: StoreStats, after: StoreStats): StoreStats {
  const requests = Object.fromEntries(REQUEST_CLASSES.map((requestClass) => [requestClass, after.requests[requestClass] - before.requests[requestClass]])) as Record<RequestClass, number>;
  return { requests, bytesIn: after.bytesIn - before.bytesIn, bytesOut: after.bytesOut - before.bytesOut, errors: {} };
}

export function statsSum(a: StoreStats, b: StoreStats): StoreStats {
  const requests = Object.fromEntries(REQUEST_CLASSES.map((requestClass) => [requestClass, a.requests[requestClass] + b.requests[requestClass]])) as Record<RequestClass, number>;
  return { requests, bytesIn: a.bytesIn + b.bytesIn, bytesOut: a.bytesOut + b.bytesOut, errors: {} };
}

/** Requests in a window (a statsDifference) by billing class: PUT class (LIST included) and GET class. */
export function requestCounts(difference: StoreStats): { putClass: number; getClass: number } {
  let putClass = 0;
  let getClass = 0;
  for (const requestClass of REQUEST_CLASSES) {
    const count = difference.requests[requestClass];
    if (count < 0) throw new Error(`${requestClass} requests went down: the store was reopened inside the window`);
    if (BILLING_CLASS[requestClass] === 'put') putClass += count;
    else if (BILLING_CLASS[requestClass] === 'get') getClass += count;
  }
  return { putClass, getClass };
}

export function requestRates(difference: StoreStats, elapsedMs: number): RequestRates {
  if (!(elapsedMs > 0)) throw new Error('request rates need a positive window');
  const { putClass, getClass } = requestCounts(difference);
  const seconds = elapsedMs / 1000;
  return { putClassPerSecond: putClass / seconds, getClassPerSecond: getClass / seconds };
}

/** The request bill of a steady request rate for a 30-day month. */
export function requestUsdPerMonthAt(rates: RequestRates, prices: PriceTable = S3_EXPRESS_ONE_ZONE_PRICES): number {
  return ((rates.putClassPerSecond * prices.putClassUsdPer1000 + rates.getClassPerSecond * prices.getClassUsdPer1000) * SECONDS_PER_MONTH) / 1000;
}

/** A tier's upload bill per GB tiered: PUT-class requests (puts, multipart create/parts/complete) at S3 Standard prices. */
export interface TierUploadBill {
  readonly putsPerGb: number;
  readonly usdPerGb: number;
}

export function tierUploadBill(tierStats: StoreStats, tieredBytes: number): TierUploadBill {
  if (!(tieredBytes > 0)) throw new Error('a tier upload bill needs tiered bytes');
  let puts = 0;
  for (const requestClass of REQUEST_CLASSES) if (BILLING_CLASS[requestClass] === 'put') puts += tierStats.requests[requestClass];
  const gb = tieredBytes / BYTES_PER_GB;
  const usd = (puts * S3_STANDARD_PRICES.putClassUsdPer1000) / 1000 + gb * S3_STANDARD_PRICES.uploadUsdPerGb;
  return { putsPerGb: puts / gb, usdPerGb: usd / gb };
}
