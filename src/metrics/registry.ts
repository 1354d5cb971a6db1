/**
 * Where components register their metrics by name, help text and labels, and where the
 * `/metrics` endpoint reads them all as Prometheus text (format 0.0.4). Registration is
 * idempotent per name and label set, so a component that restarts gets its series back;
 * anything that would make two families collide in the output is refused when registered.
 */
import { FerryError } from '../errors.ts';
import { Counter, Gauge } from './counter.ts';
import { type HistogramLayout, LATENCY_MS_LAYOUT, ValueHistogram } from './histogram.ts';
import { headerLines, isValidLabelName, isValidMetricName, type LabelPairs, sampleLine } from './prometheus.ts';

export type Labels = Readonly<Record<string, string>>;

export interface MetricOptions {
  readonly labels?: Labels;
}

export interface HistogramMetricOptions extends MetricOptions {
  /** How values are kept; latencies in ms by default. */
  readonly layout?: HistogramLayout;
}

/**
 * Histograms are exposed as Prometheus summaries: HDR's quantiles are finer than any fixed
 * buckets. Their quantiles cover everything since the histogram was made or reset.
 */
type MetricType = 'counter' | 'gauge' | 'summary';
type Metric = Counter | Gauge | ValueHistogram;

interface Series {
  readonly labels: LabelPairs;
  readonly metric: Metric;
}

interface Family {
  readonly type: MetricType;
  /** The name on the HELP, TYPE and sample lines (`_total` added for counters). */
  readonly exposedName: string;
  readonly help: string;
  readonly layout: HistogramLayout | null;
  readonly series: Map<string, Series>;
}

const COUNTER_SUFFIX = '_total';
const SUMMARY_SUM_SUFFIX = '_sum';
const SUMMARY_COUNT_SUFFIX = '_count';
const QUANTILE_LABEL = 'quantile';
/** The quantiles every summary exposes, and the snapshot field holding each. */
const SUMMARY_QUANTILES = [
  [0.5, 'p50'],
  [0.9, 'p90'],
  [0.99, 'p99'],
  [0.999, 'p999'],
] as const;

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
  if (type === 'summary') return [base, base + SUMMARY_SUM_SUFFIX, base + SUMMARY_COUNT_SUFFIX];
  return [base];
}

function labelPairs(type: MetricType, labels: Labels): LabelPairs {
  const pairs = Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [name] of pairs) {
    if (!isValidLabelName(name)) throw invalid(`label name ${JSON.stringify(name)} is not a valid Prometheus label name`);
    if (type === 'summary' && name === QUANTILE_LABEL) throw invalid(`label "${QUANTILE_LABEL}" is reserved for summary quantiles`);
  }
  return pairs;
}

function sameLayout(a: HistogramLayout | null, b: HistogramLayout | null): boolean {
  if (a === null || b === null) return a === b;
  return a.stepsPerUnit === b.stepsPerUnit && a.valueMax === b.valueMax && a.significantDigits === b.significantDigits;
}

export class MetricsRegistry {
  /** Families by base name, in registration order (the order they render in). */
  readonly #families = new Map<string, Family>();
  /** Every claimed name → the base name of the family that claimed it. */
  readonly #claims = new Map<string, string>();

  counter(name: string, help: string, options: MetricOptions = {}): Counter {
    return this.#register('counter', name, help, options.labels ?? {}, null, () => new Counter()) as Counter;
  }

  gauge(name: string, help: string, options: MetricOptions = {}): Gauge {
    return this.#register('gauge', name, help, options.labels ?? {}, null, () => new Gauge()) as Gauge;
  }

  histogram(name: string, help: string, options: HistogramMetricOptions = {}): ValueHistogram {
    const layout = options.layout ?? LATENCY_MS_LAYOUT;
    return this.#register('summary', name, help, options.labels ?? {}, layout, () => new ValueHistogram(layout)) as ValueHistogram;
  }

  // The casts above are safe: a family holds metrics of its own type only, checked in #family.
  #register(
    type: MetricType,
    name: string,
    help: string,
    labels: Labels,
    layout: HistogramLayout | null,
    create: () => Metric,
  ): Metric {
    const family = this.#family(type, name, help, layout);
    const pairs = labelPairs(type, labels);
    const key = JSON.stringify(pairs);
    const existing = family.series.get(key);
    if (existing !== undefined) return existing.metric;
    const metric = create();
    family.series.set(key, { labels: pairs, metric });
    return metric;
  }

  /** The family for `name`, made on first use; refuses a clash of type, help, layout or names. */
  #family(type: MetricType, name: string, help: string, layout: HistogramLayout | null): Family {
    const base = baseName(type, name);
    if (!isValidMetricName(name) || !isValidMetricName(base)) {
      throw invalid(`metric name ${JSON.stringify(name)} is not a valid Prometheus metric name`);
    }
    const existing = this.#families.get(base);
    if (existing !== undefined) {
      if (existing.type !== type) throw invalid(`metric ${base} is already registered as a ${existing.type}, not a ${type}`);
      if (existing.help !== help) throw invalid(`metric ${base} is already registered with other help text`);
      if (!sameLayout(existing.layout, layout)) throw invalid(`histogram ${base} is already registered with another layout`);
      return existing;
    }
    const claims = claimedNames(type, base);
    const taken = claims.find((claim) => this.#claims.has(claim));
    if (taken !== undefined) throw invalid(`metric ${name} would clash with ${taken}, used by metric ${this.#claims.get(taken)}`);
    for (const claim of claims) this.#claims.set(claim, base);
    const exposedName = type === 'counter' ? base + COUNTER_SUFFIX : base;
    const family: Family = { type, exposedName, help, layout, series: new Map() };
    this.#families.set(base, family);
    return family;
  }

  /** Every metric as Prometheus text (content type `text/plain; version=0.0.4`). */
  renderPrometheus(): string {
    const lines: string[] = [];
    for (const family of this.#families.values()) {
      lines.push(...headerLines(family.exposedName, family.help, family.type));
      for (const series of family.series.values()) lines.push(...renderSeries(family, series));
    }
    return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
  }
}

function renderSeries(family: Family, { labels, metric }: Series): string[] {
  if (metric instanceof ValueHistogram) return renderSummary(family.exposedName, labels, metric);
  return [sampleLine(family.exposedName, labels, metric.value)];
}

/** Quantiles of an empty summary are NaN, as Prometheus's own clients write them. */
function renderSummary(name: string, labels: LabelPairs, histogram: ValueHistogram): string[] {
  const snapshot = histogram.snapshot();
  const lines = SUMMARY_QUANTILES.map(([quantile, field]) =>
    sampleLine(name, [...labels, [QUANTILE_LABEL, String(quantile)]], snapshot.count === 0 ? Number.NaN : snapshot[field]),
  );
  lines.push(sampleLine(name + SUMMARY_SUM_SUFFIX, labels, histogram.sum));
  lines.push(sampleLine(name + SUMMARY_COUNT_SUFFIX, labels, snapshot.count));
  return lines;
}
