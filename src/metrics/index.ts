/** The engine's metrics: Prometheus counters, gauges and bucket histograms in a registry; HDR histograms and rates for benches and live figures. */
export { assertBuckets, BUCKETS_MAX, BucketHistogram, LATENCY_SECONDS_BUCKETS, SIZE_BYTES_BUCKETS } from './buckets.ts';
export { Counter, Gauge, RATE_BUCKET_MS, RATE_WINDOW_MS, RateMeter, type RateMeterOptions } from './counter.ts';
export {
  type HistogramLayout,
  type HistogramSnapshot,
  LATENCY_MS_LAYOUT,
  LATENCY_MS_MAX,
  LatencyHistogram,
  MICROSECONDS_PER_MS,
  type SignificantDigits,
  SIZE_BYTES_LAYOUT,
  SIZE_BYTES_MAX,
  ValueHistogram,
} from './histogram.ts';
export { escapeLabelValue, isValidLabelName, isValidMetricName } from './prometheus.ts';
export { type HistogramMetricOptions, type Labels, type MetricOptions, MetricsRegistry, SERIES_PER_FAMILY_MAX } from './registry.ts';
