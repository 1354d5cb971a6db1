// Kafka's client quotas: the entities and keys, their control records and the store that keeps them,
// the precedence that picks a client's quota, and the rates that throttle it.
export * from './model.ts';
export { QUOTA_RECORD_NAME_KEY_CHARS_MAX, QUOTA_RECORD_VERSION, QUOTA_RECORDS_PREFIX, decodeQuotaRecord, encodeQuotaRecord, entityOfRecordKey, quotaRecordKey, type QuotaRecord } from './record.ts';
export {
  checkAlteration,
  checkFilter,
  filterMatches,
  MatchType,
  QuotaErrorCode,
  type QuotaAlterationRequest,
  type QuotaChange,
  type QuotaError,
  type QuotaFilter,
  type QuotaFilterComponent,
} from './validate.ts';
export { appliedQuota, type AppliedQuota } from './precedence.ts';
export { SampledRate, type RateWindows } from './rate.ts';
export {
  ClientQuotaManager,
  QUOTA_SENSOR_EXPIRY_SCAN_INTERVAL_MS,
  QUOTA_SENSOR_INACTIVE_MS,
  QUOTA_SENSORS_MAX,
  QUOTA_WINDOW_NUM_DEFAULT,
  QUOTA_WINDOW_SIZE_MS_DEFAULT,
  THROTTLE_TIME_MS_MAX,
  type QuotaManagerConfig,
} from './manager.ts';
export { QUOTA_ENFORCER_CONFIG_DEFAULT, QUOTA_KEY_OF, QuotaEnforcer, type QuotaEnforcerConfig, type QuotaType } from './enforcer.ts';
export {
  ClientQuotaStore,
  QUOTA_CAS_ATTEMPTS_MAX,
  QUOTA_WRITES_CONCURRENCY_MAX,
  type AlterClientQuotasResult,
  type ClientQuotaLimits,
  type ClientQuotaService,
  type ClientQuotaStoreOptions,
  type DescribeClientQuotasResult,
} from './store.ts';
