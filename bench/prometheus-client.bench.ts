/**
 * Ferry's metrics registry beside prom-client 15, the same work on both, in one run: what a
 * counter increment and a labelled histogram observation cost on the request path, and what one
 * exposition of ~200 series (a scrape) costs. Chose the registry Ferry keeps (src/metrics):
 * the hot path is per request (produce, fetch), the scrape every 15 s or so.
 *
 * prom-client is timed both ways its API allows: labels passed on every call (its common use)
 * and a child from `labels()` kept by the caller, which is how Ferry holds its series.
 */
import { bench, do_not_optimize, run } from 'mitata';
import { Counter as PromCounter, Histogram as PromHistogram, Registry as PromRegistry } from 'prom-client';
import { LATENCY_SECONDS_BUCKETS, MetricsRegistry } from '../src/metrics/index.ts';
import { SeededRandom } from '../src/util/random.ts';
import { parseBenchArgs } from './lib/args.ts';
import { printTable } from './lib/table.ts';

const USAGE = `
bun bench/prometheus-client.bench.ts [--quick]

Times counter increments, labelled histogram observations and a ~200-series exposition in
Ferry's MetricsRegistry and in prom-client, with mitata (~20 s), and prints ns per operation.`;

/** Operations per mitata call: enough to drown the call overhead. */
const OPERATIONS_PER_CALL = 1024;
const SEED = 1176;
/** Request latencies log-uniform over 100 µs .. 100 ms, in seconds. */
const LATENCY_SECONDS_MIN = 0.0001;
const LATENCY_SPAN = 1000;
/** The exposition: histogram series (an API each) and counter series in 3 families. */
const HISTOGRAM_SERIES = 20;
const COUNTER_FAMILIES = 3;
const COUNTER_SERIES_PER_FAMILY = 60;
const API = 'Produce';

interface Case {
  readonly label: string;
  /** Operations one call performs: the table divides by it. */
  readonly operations: number;
  readonly call: () => unknown;
  /** prom-client's exposition is async: timed with an await, the others without. */
  readonly async?: boolean;
}

function latencies(): Float64Array {
  const random = new SeededRandom(SEED);
  const values = new Float64Array(OPERATIONS_PER_CALL);
  for (let i = 0; i < values.length; i++) values[i] = LATENCY_SECONDS_MIN * LATENCY_SPAN ** random.next();
  return values;
}

function repeat(label: string, operation: (index: number) => void): Case {
  return {
    label,
    operations: OPERATIONS_PER_CALL,
    call: () => {
      for (let i = 0; i < OPERATIONS_PER_CALL; i++) operation(i);
      return OPERATIONS_PER_CALL;
    },
  };
}

function hotPathCases(values: Float64Array): Case[] {
  const ferry = new MetricsRegistry();
  const ferryCounter = ferry.counter('ferry_requests_total', 'h', { labels: { api: API } });
  const ferryHistogram = ferry.histogram('ferry_latency_seconds', 'h', { labels: { api: API } });
  const prom = new PromRegistry();
  const promCounter = new PromCounter({ name: 'prom_requests_total', help: 'h', labelNames: ['api'], registers: [prom] });
  const promHistogram = new PromHistogram({ name: 'prom_latency_seconds', help: 'h', labelNames: ['api'], buckets: [...LATENCY_SECONDS_BUCKETS], registers: [prom] });
  const promCounterChild = promCounter.labels(API);
  const promHistogramChild = promHistogram.labels(API);
  return [
    repeat('counter inc: Ferry (series kept)', () => ferryCounter.add()),
    repeat('counter inc: prom-client, labels each call', () => promCounter.inc({ api: API })),
    repeat('counter inc: prom-client, child kept', () => promCounterChild.inc()),
    repeat('histogram observe: Ferry (series kept)', (i) => ferryHistogram.observe(values[i]!)),
    repeat('histogram observe: prom-client, labels each call', (i) => promHistogram.observe({ api: API }, values[i]!)),
    repeat('histogram observe: prom-client, child kept', (i) => promHistogramChild.observe(values[i]!)),
  ];
}

/** The same ~200 series, with the same values, in both registries. */
function expositionRegistries(values: Float64Array): { ferry: MetricsRegistry; prom: PromRegistry } {
  const ferry = new MetricsRegistry();
  const prom = new PromRegistry();
  const promHistogram = new PromHistogram({ name: 'x_latency_seconds', help: 'h', labelNames: ['api'], buckets: [...LATENCY_SECONDS_BUCKETS], registers: [prom] });
  for (let series = 0; series < HISTOGRAM_SERIES; series++) {
    const api = `api${series}`;
    const histogram = ferry.histogram('x_latency_seconds', 'h', { labels: { api } });
    for (const value of values) {
      histogram.observe(value);
      promHistogram.observe({ api }, value);
    }
  }
  for (let family = 0; family < COUNTER_FAMILIES; family++) {
    const promCounter = new PromCounter({ name: `x_family${family}_total`, help: 'h', labelNames: ['topic', 'partition'], registers: [prom] });
    for (let series = 0; series < COUNTER_SERIES_PER_FAMILY; series++) {
      const labels = { topic: `topic-${series % 7}`, partition: String(series) };
      ferry.counter(`x_family${family}_total`, 'h', { labels }).add(series);
      promCounter.inc(labels, series);
    }
  }
  return { ferry, prom };
}

function expositionCases(values: Float64Array): Case[] {
  const { ferry, prom } = expositionRegistries(values);
  const ferryBytes = ferry.renderPrometheus().length;
  return [
    { label: `exposition: Ferry renderPrometheus (${ferryBytes} chars)`, operations: 1, call: () => ferry.renderPrometheus() },
    { label: 'exposition: prom-client registry.metrics()', operations: 1, call: () => prom.metrics(), async: true },
  ];
}

const { quick } = parseBenchArgs(process.argv.slice(2), USAGE);
const values = latencies();
const chosen = [...hotPathCases(values), ...expositionCases(values)];
for (const entry of chosen) {
  if (entry.async === true) bench(entry.label, async () => do_not_optimize(await entry.call()));
  else bench(entry.label, () => do_not_optimize(entry.call()));
}
if (quick) console.log('(--quick changes nothing here: the whole bench takes ~20 s)');
const { benchmarks } = await run();
const medianNs = new Map<string, number>();
for (const trial of benchmarks) {
  const stats = trial.runs[0]?.stats;
  if (stats !== undefined) medianNs.set(trial.alias, stats.p50);
}
printTable(
  'Metrics registries, ns per operation (mitata median per call / operations per call)',
  [{ title: 'operation', align: 'left' }, { title: 'ns/op' }],
  chosen.map((entry) => {
    const ns = medianNs.get(entry.label);
    return [entry.label, ns === undefined ? '-' : (ns / entry.operations).toFixed(1)];
  }),
);
