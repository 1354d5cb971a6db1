/**
 * Where components register their metrics by name, help text and labels, and where the
 * `/metrics` endpoint reads them all as Prometheus text (format 0.0.4). Registration is
 * idempotent per name and label set, so a component that restarts gets its series back;
 * anything that would make two families collide in the output is refused when registered.
 * One registry per broker or engine, never a global one: tests and the simulation run several
 * brokers in one process, and each must expose only its own series.
 */
import { FerryError } from '../errors.ts';
import { BucketHistogram, LATENCY_SECONDS_BUCKETS } from './buckets.ts';
import { Counter, Gauge } from './counter.ts';
import { formatSampleValue, headerLines, isValidLabelName, isValidMetricName, type LabelPairs, sampleLine } from './prometheus.ts';

export type Labels = Readonly<Record<string, string>>;

export interface MetricOptions {
  readonly labels?: Labels;
}

export interface HistogramMetricOptions extends MetricOptions {
  /** Upper bounds in the family's base unit; latencies in seconds (LATENCY_SECONDS_BUCKETS) by default. */
  readonly buckets?: readonly number[];
}

/**
 * Histograms are Prometheus histograms with fixed buckets, not summaries: buckets aggregate
 * across brokers and time windows (`histogram_quantile` over `rate`), quantiles do not.
 */
type MetricType = 'counter' | 'gauge' | 'histogram';
type Metric = Counter | Gauge | BucketHistogram;

/**
 * Series a family may hold. Labels carrying client-chosen values (topic names) stay bounded by
 * it: past it, new series are counted in ferry_metrics_series_dropped_total and not exposed.
 * 2000 series of 21 histogram lines is ~2 MB of text a scrape.
 */
export const SERIES_PER_FAMILY_MAX = 2000;
const DROPPED_FAMILY = 'ferry_metrics_series_dropped_total';

interface Series {
  readonly labels: LabelPairs;
  readonly metric: Metric;
}

interface Family {
  readonly type: MetricType;
  /** The name on the HELP, TYPE and sample lines (`_total` added for counters). */
  readonly exposedName: string;
  readonly help: string;
  readonly buckets: readonly number[] | null;
  readonly series: Map<string, Series>;
}

const COUNTER_SUFFIX = '_total';
const SUM_SUFFIX = '_sum';
const COUNT_SUFFIX = '_count';
const BUCKET_SUFFIX = '_bucket';
const BOUND_LABEL = 'le';

function invalid(message: string): FerryError {
  return new FerryError('InvalidArgument', message);
}

/** Counters are registered with or without `_total`; either way the family is the bare name. */
function baseName(type: MetricType, name: string): string {
  return type === 'counter' && name.endsWith(COUNTER_SUFFIX) ? name.slice(0, -COUNTER_SUFFIX.length) : name;
}

/** Every name a family's lines may carry: no other family may use any of them. */
function claimedNames(type: MetricType, base: string): string[] {
  if (type === 'counter') return [base, base + COUNTER_SUFFIX];
  if (type === 'histogram') return [base, base + SUM_SUFFIX, base + COUNT_SUFFIX, base + BUCKET_SUFFIX];
  return [base];
}

function labelPairs(type: MetricType, labels: Labels): LabelPairs {
  const pairs = Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [name] of pairs) {
    if (!isValidLabelName(name)) throw invalid(`label name ${JSON.stringify(name)} is not a valid Prometheus label name`);
    if (type === 'histogram' && name === BOUND_LABEL) throw invalid(`label "${BOUND_LABEL}" is reserved for histogram buckets`);
  }
  return pairs;
}

function sameBuckets(a: readonly number[] | null, b: readonly number[] | null): boolean {
  if (a === null || b === null) return a === b;
  return a.length === b.length && a.every((bound, index) => bound === b[index]);
}

export class MetricsRegistry {
  /** Families by base name, in registration order (the order they render in). */
  readonly #families = new Map<string, Family>();
  /** Every claimed name → the base name of the family that claimed it. */
  readonly #claims = new Map<string, string>();
  readonly #collectors = new Set<() => void>();
  #dropped: Counter | null = null;

  counter(name: string, help: string, options: MetricOptions = {}): Counter {
    return this.#register('counter', name, help, options.labels ?? {}, null, () => new Counter()) as Counter;
  }

  gauge(name: string, help: string, options: MetricOptions = {}): Gauge {
    return this.#register('gauge', name, help, options.labels ?? {}, null, () => new Gauge()) as Gauge;
  }

  histogram(name: string, help: string, options: HistogramMetricOptions = {}): BucketHistogram {
    const buckets = options.buckets ?? LATENCY_SECONDS_BUCKETS;
    return this.#register('histogram', name, help, options.labels ?? {}, buckets, () => new BucketHistogram(buckets)) as BucketHistogram;
  }

  /**
   * Runs `collect` before every render: for levels read off their source at scrape time
   * (partition counts, disk free, process memory) instead of being kept up to date on every change.
   * It must be cheap and must not throw (a failing source sets its gauge to NaN or leaves it).
   * Returns what removes it again (a closed engine's source must not be read any more).
   */
  onCollect(collect: () => void): () => void {
    this.#collectors.add(collect);
    return () => this.#collectors.delete(collect);
  }

  // The casts above are safe: a family holds metrics of its own type only, checked in #family.
  #register(type: MetricType, name: string, help: string, labels: Labels, buckets: readonly number[] | null, create: () => Metric): Metric {
    const family = this.#family(type, name, help, buckets);
    const pairs = labelPairs(type, labels);
    const key = JSON.stringify(pairs);
    const existing = family.series.get(key);
    if (existing !== undefined) return existing.metric;
    const metric = create();
    if (family.series.size >= SERIES_PER_FAMILY_MAX) {
      this.#dropped ??= this.counter(DROPPED_FAMILY, `Label sets not exposed because their family already had ${SERIES_PER_FAMILY_MAX} series`);
      this.#dropped.add();
      return metric;
    }
    family.series.set(key, { labels: pairs, metric });
    return metric;
  }

  /** The family for `name`, made on first use; refuses a clash of type, help, layout or names. */
  #family(type: MetricType, name: string, help: string, buckets: readonly number[] | null): Family {
    const base = baseName(type, name);
    if (!isValidMetricName(name) || !isValidMetricName(base)) {
      throw invalid(`metric name ${JSON.stringify(name)} is not a valid Prometheus metric name`);
    }
    const existing = this.#families.get(base);
    if (existing !== undefined) {
      if (existing.type !== type) throw invalid(`metric ${base} is already registered as a ${existing.type}, not a ${type}`);
      if (existing.help !== help) throw invalid(`metric ${base} is already registered with other help text`);
      if (!sameBuckets(existing.buckets, buckets)) throw invalid(`histogram ${base} is already registered with other buckets`);
      return existing;
    }
    const claims = claimedNames(type, base);
    const taken = claims.find((claim) => this.#claims.has(claim));
    if (taken !== undefined) throw invalid(`metric ${name} would clash with ${taken}, used by metric ${this.#claims.get(taken)}`);
    for (const claim of claims) this.#claims.set(claim, base);
    const exposedName = type === 'counter' ? base + COUNTER_SUFFIX : base;
    const family: Family = { type, exposedName, help, buckets, series: new Map() };
    this.#families.set(base, family);
    return family;
  }

  /** Every metric as Prometheus text (content type `text/plain; version=0.0.4`). */
  renderPrometheus(): string {
    for (const collect of this.#collectors) collect();
    const lines: string[] = [];
    for (const family of this.#families.values()) {
      lines.push(...headerLines(family.exposedName, family.help, family.type));
      for (const series of family.series.values()) lines.push(...renderSeries(family, series));
    }
    return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
  }
}

function renderSeries(family: Family, { labels, metric }: Series): string[] {
  if (metric instanceof BucketHistogram) return renderHistogram(family.exposedName, labels, metric);
  return [sampleLine(family.exposedName, labels, metric.value)];
}

/** Cumulative `_bucket` lines, `le` last and +Inf included, then `_sum` and `_count`. */
function renderHistogram(name: string, labels: LabelPairs, histogram: BucketHistogram): string[] {
  const cumulative = histogram.cumulativeCounts();
  const lines = cumulative.map((count, index) => {
    const bound = index < histogram.bounds.length ? formatSampleValue(histogram.bounds[index]!) : '+Inf';
    return sampleLine(name + BUCKET_SUFFIX, [...labels, [BOUND_LABEL, bound]], count);
  });
  lines.push(sampleLine(name + SUM_SUFFIX, labels, histogram.sum));
  lines.push(sampleLine(name + COUNT_SUFFIX, labels, histogram.count));
  return lines;
}
