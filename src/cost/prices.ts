/**
 * The price table of the monthly bill (docs/cost-model.md lists each price with its source page
 * and date). Object storage prices are src/store/pricing.ts's (docs/design.md, "Prices": us-east-1
 * after the April 2025 S3 Express One Zone cut); the rest are named here. GB = 2^30 bytes, as AWS
 * bills; a month is 30 days.
 */
export { BYTES_PER_GB, CROSS_AZ_USD_PER_GB_EACH_WAY, S3_EXPRESS_ONE_ZONE_PRICES, S3_STANDARD_PRICES, type PriceTable } from '../store/pricing.ts';

/**
 * EBS gp3 storage per provisioned GB-month, us-east-1 (Amazon EBS pricing page). The baseline
 * 3,000 IOPS and 125 MB/s per volume are included; IOPS or throughput bought above them are not
 * modelled.
 */
export const GP3_USD_PER_GB_MONTH = 0.08;

/** A 30-day month, as AWS's pricing examples count one (2,592,000 s). */
export const SECONDS_PER_MONTH = 30 * 24 * 3600;
export const HOURS_PER_MONTH = 30 * 24;

/** The throughput flag's unit: MB = 10^6 bytes, as the benches count. */
export const BYTES_PER_MB = 1_000_000;
