/** The engine's metrics: HDR histograms, counters, gauges, rates, and Prometheus text. */
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
export { type HistogramMetricOptions, type Labels, type MetricOptions, MetricsRegistry } from './registry.ts';
