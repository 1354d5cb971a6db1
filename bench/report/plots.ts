/**
 * The report's plots as Vega-Lite specs, one function per plot, each from the results of one bench.
 * Every axis title names its unit; log scales say so. Data are inlined, so a spec is the plot.
 */
import type { TopLevelSpec } from 'vega-lite';
import type { Comparison } from '../../src/cost/index.ts';
import { PEER_LATENCIES } from './peers.ts';
import type { BrokerResults, ConsumeResults, FollowerResults, SoakResults, TargetResult, WalRateResult, WalResults } from './results.ts';

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';
const WIDTH = 560;
const HEIGHT = 320;
/** Long series and category names are kept whole (Vega-Lite cuts labels at 180 px by default). */
const CONFIG = { legend: { labelLimit: 0 }, axis: { labelLimit: 0 } };
/** The CDF plot's curves: the default knobs at each rate over this many partitions (the most loaded). */
export const CDF_PARTITIONS = 64;

export const AXIS = {
  latencyMs: 'produce-to-durable latency (ms, log scale)',
  percentile: 'fraction of batches at or below (%)',
  usdPerMonth: 'WAL bill at that rate: PUTs + upload fee ($ per month, log scale)',
  p99Ms: 'produce-to-durable p99 (ms, log scale)',
  target: 'broker',
  throughputMbPerSecond: 'kcat -P throughput, acks=all (MB/s, 10^6 B)',
  reader: 'reader',
  catchUpMbPerSecond: 'catch-up throughput (MB/s of WAL objects, 10^6 B)',
  consumeMbPerSecond: 'kcat -C from the start (MB/s of message values, 10^6 B)',
  deployment: 'deployment',
  billUsdPerMonth: 'bill ($ per month)',
  targetScore: 'measured against goal (1 = met; log scale)',
  targetName: 'target',
  soakMinutes: 'time since the producer started (minutes)',
  soakMib: 'broker memory (MiB)',
} as const;

function cdfRates(wal: WalResults): WalRateResult[] {
  const loaded = wal.rates.filter((rate) => rate.partitions === CDF_PARTITIONS);
  return loaded.length > 0 ? loaded : [...wal.rates];
}

export function latencyCdfSpec(wal: WalResults): TopLevelSpec {
  const rows = cdfRates(wal).flatMap((rate) => {
    const series = `${rate.rateMbPerSecond} MB/s x ${rate.partitions}${rate.saturated ? ' (CPU-bound)' : ''}`;
    return [
      ...rate.cdf.map((point) => ({ series, curve: 'Ferry', ms: point.ms, percentile: point.percentile })),
      ...rate.floorCdf.map((point) => ({ series, curve: 'floor (batching wait + one PUT)', ms: point.ms, percentile: point.percentile })),
    ];
  });
  return {
    $schema: SCHEMA,
    config: CONFIG,
    title: `Produce-to-durable latency CDF per rate, ${wal.profile} store model, beside the floor`,
    width: WIDTH,
    height: HEIGHT,
    layer: [
      {
        data: { values: rows },
        mark: { type: 'line', interpolate: 'monotone' },
        encoding: {
          x: { field: 'ms', type: 'quantitative', scale: { type: 'log' }, title: AXIS.latencyMs },
          y: { field: 'percentile', type: 'quantitative', scale: { domain: [0, 100] }, title: AXIS.percentile },
          color: { field: 'series', type: 'nominal', title: 'rate x partitions' },
          strokeDash: { field: 'curve', type: 'nominal', title: 'curve' },
          order: { field: 'percentile', type: 'quantitative' },
        },
      },
      {
        data: { values: [{ ms: wal.storePutP50Ms, label: `store PUT p50 ${wal.storePutP50Ms} ms` }] },
        layer: [
          { mark: { type: 'rule', color: 'gray', strokeDash: [2, 2] }, encoding: { x: { field: 'ms', type: 'quantitative' } } },
          { mark: { type: 'text', align: 'left', dx: 4, dy: -6, color: 'gray' }, encoding: { x: { field: 'ms', type: 'quantitative' }, y: { datum: 96 }, text: { field: 'label' } } },
        ],
      },
    ],
  } as TopLevelSpec;
}

export function latencyCostSpec(wal: WalResults): TopLevelSpec {
  const points = wal.sweep.map((run) => ({
    rate: `${run.rateMbPerSecond} MB/s`,
    usdPerMonth: run.usdPerMonth,
    p99Ms: run.p99Ms,
    knobs: `${Math.round(run.uploadBytes / 1024)} KiB / ${run.uploadIntervalMs} ms${run.isDefault ? ' (default)' : ''}`,
    measured: run.saturated ? 'CPU-bound here' : 'kept the rate',
  }));
  const usd = points.map((point) => point.usdPerMonth).filter((value) => value > 0);
  const peers = PEER_LATENCIES.map((peer, index) => ({
    p99Ms: peer.p99Ms,
    label: `${peer.name} p99 ${peer.bound === '<' ? '< ' : ''}${peer.p99Ms >= 1000 ? `${peer.p99Ms / 1000} s` : `${peer.p99Ms} ms`}`,
    usdPerMonth: usd.length === 0 ? 1 : Math.min(...usd),
    dy: index % 2 === 0 ? -6 : 12,
  }));
  return {
    $schema: SCHEMA,
    config: CONFIG,
    title: "Latency vs cost: the WAL's upload size x interval sweep, beside peers' published p99",
    width: WIDTH,
    height: HEIGHT,
    layer: [
      {
        data: { values: points },
        mark: { type: 'line', point: { filled: true, size: 60 } },
        encoding: {
          x: { field: 'usdPerMonth', type: 'quantitative', scale: { type: 'log' }, title: AXIS.usdPerMonth },
          y: { field: 'p99Ms', type: 'quantitative', scale: { type: 'log' }, title: AXIS.p99Ms },
          color: { field: 'rate', type: 'nominal', title: 'rate (64 partitions)' },
          order: { field: 'usdPerMonth', type: 'quantitative' },
          shape: { field: 'measured', type: 'nominal', title: 'run' },
          tooltip: [{ field: 'knobs' }, { field: 'p99Ms' }, { field: 'usdPerMonth' }],
        },
      },
      {
        data: { values: points },
        mark: { type: 'text', align: 'left', dx: 6, dy: -4, fontSize: 9 },
        encoding: { x: { field: 'usdPerMonth', type: 'quantitative' }, y: { field: 'p99Ms', type: 'quantitative' }, text: { field: 'knobs' } },
      },
      {
        data: { values: peers },
        layer: [
          { mark: { type: 'rule', color: 'firebrick', strokeDash: [6, 3] }, encoding: { y: { field: 'p99Ms', type: 'quantitative' } } },
          // Labels of equal latencies (50 ms twice) alternate above and below their line.
          ...[-6, 12].map((dy) => ({
            transform: [{ filter: `datum.dy === ${dy}` }],
            mark: { type: 'text', align: 'left', dy, color: 'firebrick', fontSize: 10 },
            encoding: { x: { field: 'usdPerMonth', type: 'quantitative' }, y: { field: 'p99Ms', type: 'quantitative' }, text: { field: 'label' } },
          })),
        ],
      },
    ],
  } as TopLevelSpec;
}

/** Median bars with each round's min-max as an error bar. */
function barsWithRange(title: string, values: readonly object[], xTitle: string, yTitle: string): TopLevelSpec {
  return {
    $schema: SCHEMA,
    config: CONFIG,
    title,
    width: WIDTH,
    height: HEIGHT,
    data: { values: [...values] },
    layer: [
      {
        mark: 'bar',
        encoding: {
          x: { field: 'name', type: 'nominal', sort: null, title: xTitle, axis: { labelAngle: -20 } },
          y: { field: 'mbPerSecond', type: 'quantitative', title: yTitle },
          color: { field: 'group', type: 'nominal', title: null },
        },
      },
      { mark: { type: 'errorbar', ticks: true }, encoding: { x: { field: 'name', type: 'nominal', sort: null }, y: { field: 'min', type: 'quantitative', title: yTitle }, y2: { field: 'max' } } },
    ],
  } as TopLevelSpec;
}

export function throughputSpec(broker: BrokerResults): TopLevelSpec {
  const values = broker.throughput.map((row) => ({ name: row.target, group: row.isPeer ? 'reference peer' : 'Ferry', mbPerSecond: row.mbPerSecond, min: row.minMbPerSecond, max: row.maxMbPerSecond }));
  return barsWithRange(`Producer throughput, ${broker.messageBytes} B messages: Ferry beside librdkafka's mock cluster (median, min-max over rounds)`, values, AXIS.target, AXIS.throughputMbPerSecond);
}

export function catchUpSpec(follower: FollowerResults): TopLevelSpec {
  // The I/O ceilings (report.md's table) are 10-100x the bars here: drawn, they would flatten them.
  const values = follower.catchUp.map((row) => ({
    name: row.reader,
    group: row.isRawGet ? 'raw GET (baseline)' : 'Ferry',
    mbPerSecond: row.mbPerSecond,
    min: row.minMbPerSecond,
    max: row.maxMbPerSecond,
  }));
  return barsWithRange('Follower catch-up beside raw GETs of the same WAL objects (median, min-max over rounds)', values, AXIS.reader, AXIS.catchUpMbPerSecond);
}

export function consumeSpec(consume: ConsumeResults): TopLevelSpec {
  const group = { ferry: 'Ferry', 'raw read': 'raw read of the segment (baseline)', peer: 'reference peer' } as const;
  const values = consume.throughput.map((row) => ({ name: row.target, group: group[row.kind], mbPerSecond: row.mbPerSecond, min: row.minMbPerSecond, max: row.maxMbPerSecond }));
  return barsWithRange(
    `Consumer throughput, ${consume.messageBytes} B messages: kcat -C on Ferry beside a raw read of its segment files and librdkafka's mock cluster (median, min-max over rounds)`,
    values,
    AXIS.target,
    AXIS.consumeMbPerSecond,
  );
}

export function costSpec(comparisons: readonly { name: string; comparison: Comparison }[]): TopLevelSpec {
  const values = comparisons.flatMap(({ name, comparison }) => [
    { deployment: name, system: 'Ferry', usd: comparison.ferry.totalUsdPerMonth },
    { deployment: name, system: 'classic Kafka', usd: comparison.kafka.totalUsdPerMonth },
  ]);
  return {
    $schema: SCHEMA,
    config: CONFIG,
    title: "A month's bill: Ferry beside classic Kafka (src/cost, docs/cost-model.md)",
    data: { values },
    // One row per deployment, each with its own dollar scale: bills span three orders of magnitude.
    facet: { row: { field: 'deployment', type: 'nominal', sort: null, title: AXIS.deployment, header: { labelAngle: 0, labelAlign: 'left', labelLimit: 0 } } },
    spec: {
      width: WIDTH,
      height: 50,
      mark: 'bar',
      encoding: {
        y: { field: 'system', type: 'nominal', title: null },
        x: { field: 'usd', type: 'quantitative', title: AXIS.billUsdPerMonth },
        color: { field: 'system', type: 'nominal', title: null },
      },
    },
    resolve: { scale: { x: 'independent' } },
  } as TopLevelSpec;
}

/** Each target as its score (1 or more is met: measured/goal, or goal/measured for an upper bound), a rule at 1. */
export function targetsSpec(targets: readonly TargetResult[]): TopLevelSpec {
  const values = targets.map((target) => ({ name: `${target.bench}: ${target.name}`, score: target.score, met: target.met ? 'met' : 'not met', label: `${target.measured} (goal ${target.goal})` }));
  return {
    $schema: SCHEMA,
    config: CONFIG,
    title: "Issue 27's targets: each measured value against its goal, this run",
    width: WIDTH,
    layer: [
      {
        data: { values },
        mark: 'bar',
        encoding: {
          y: { field: 'name', type: 'nominal', sort: null, title: AXIS.targetName },
          x: { field: 'score', type: 'quantitative', scale: { type: 'log' }, title: AXIS.targetScore },
          color: { field: 'met', type: 'nominal', title: null, scale: { domain: ['met', 'not met'], range: ['#4c78a8', '#e45756'] } },
          tooltip: { field: 'label', type: 'nominal' },
        },
      },
      { data: { values: [{ one: 1 }] }, mark: { type: 'rule', strokeDash: [4, 4] }, encoding: { x: { field: 'one', type: 'quantitative' } } },
    ],
  } as TopLevelSpec;
}

/**
 * The soak's broker RSS over time (every sample), the floor the trend is taken through (each
 * window's minimum: RSS after a collection) with its least-squares line (dashed), and the JS heap
 * in use at each minute's end. The bound is in the text: drawn, it would flatten the lines.
 */
export function soakRssSpec(soak: SoakResults): TopLevelSpec {
  const series = [
    ...soak.rss.map((sample) => ({ minutes: sample.atS / 60, mib: sample.mib, series: 'RSS (every sample)' })),
    ...soak.floor.map((point) => ({ minutes: point.atS / 60, mib: point.mib, series: 'RSS floor (minimum of each window)' })),
    ...soak.perMinute.flatMap((row) => (row.heapUsedMib === null ? [] : [{ minutes: row.minute + 1, mib: row.heapUsedMib, series: "JS heap in use (broker's metric, minute's end)" }])),
  ];
  const fit = soak.floorSlopeMibPerMinute === null ? [] : trendLine(soak.floor, soak.floorSlopeMibPerMinute);
  const slope = soak.floorSlopeMibPerMinute === null ? '-' : soak.floorSlopeMibPerMinute.toFixed(2);
  return {
    $schema: SCHEMA,
    config: CONFIG,
    title: `Broker memory under ${soak.rateMbPerSecond} MB/s for ${soak.minutes} min (file store, bounded retention): RSS floor slope ${slope} MiB/min after ${soak.trendFromS} s`,
    width: WIDTH,
    height: HEIGHT,
    layer: [
      {
        data: { values: series },
        mark: { type: 'line', point: false },
        encoding: {
          x: { field: 'minutes', type: 'quantitative', title: AXIS.soakMinutes },
          y: { field: 'mib', type: 'quantitative', title: AXIS.soakMib },
          color: { field: 'series', type: 'nominal', title: null },
        },
      },
      {
        data: { values: fit },
        mark: { type: 'line', strokeDash: [6, 3], color: 'black' },
        encoding: { x: { field: 'minutes', type: 'quantitative' }, y: { field: 'mib', type: 'quantitative' } },
      },
    ],
  } as TopLevelSpec;
}

/** The least-squares line's two ends over `points`, through their mean, with the given slope. */
function trendLine(points: readonly { atS: number; mib: number }[], slopeMibPerMinute: number): { minutes: number; mib: number }[] {
  if (points.length < 2) return [];
  const meanMinutes = points.reduce((sum, point) => sum + point.atS / 60, 0) / points.length;
  const meanMib = points.reduce((sum, point) => sum + point.mib, 0) / points.length;
  return [points[0]!, points.at(-1)!].map((point) => ({ minutes: point.atS / 60, mib: meanMib + slopeMibPerMinute * (point.atS / 60 - meanMinutes) }));
}
