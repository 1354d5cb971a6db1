/**
 * The object stores (`import { FileStore, openStore } from 'ferry/store'`): one interface,
 * ObjectStore, and its backends: FileStore (a directory, the embedded default), MemoryStore (with
 * S3 latency and fault models, for tests and benchmarks) and S3 through `openStore('s3://...')`.
 *
 * @module ferry/store
 */
export * from './object-store.ts';
export { StoreError, isStoreError, type StoreErrorKind } from './errors.ts';
export { StatsRecorder, REQUEST_CLASSES, type RequestClass, type StoreStats } from './stats.ts';
export { MemoryStore, type MemoryStoreOptions, type TraceEvent } from './memory.ts';
export { FileStore, type FileStoreOptions } from './file.ts';
export { PrefixedStore } from './prefixed.ts';
export { StreamingUpload, STREAMING_CONCURRENCY_DEFAULT, STREAMING_PART_BYTES_DEFAULT, type StreamingUploadOptions } from './streaming-upload.ts';
export { openStore, type OpenStoreOptions } from './url.ts';
export { LATENCY_PROFILES, LatencyModel, S3_EXPRESS_LATENCY, S3_STANDARD_LATENCY, ZERO_LATENCY, type LatencyProfile, type LatencyProfileName, type Percentiles } from './latency.ts';
export type { FaultInjection, FaultPlan, OperationRates } from './faults.ts';
export { costOf, crossAzTransferUsd, storageUsdPerMonth, S3_EXPRESS_ONE_ZONE_PRICES, S3_STANDARD_PRICES, CROSS_AZ_USD_PER_GB_EACH_WAY, type Cost, type PriceTable } from './pricing.ts';
