/**
 * Turns the benches' structured results (results.ts) into DIR/report.md and one SVG per plot.
 * A bench that did not run leaves its section saying so; the cost section needs no bench.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TopLevelSpec } from 'vega-lite';
import { compare, NOT_MODELLED, STANDARD_DEPLOYMENTS } from '../../src/cost/index.ts';
import { PEER_LATENCIES } from './peers.ts';
import { catchUpSpec, CDF_PARTITIONS, consumeSpec, costSpec, latencyCdfSpec, latencyCostSpec, soakRssSpec, targetsSpec, throughputSpec } from './plots.ts';
import { type BenchResults, REPORTED_BENCHES, type TargetResult, type WithTargets } from './results.ts';
import { renderSvg } from './svg.ts';

export const REPORT_FILE = 'report.md';
/** Each plot's file, named in report.md. */
export const PLOT_FILES = {
  latencyCdf: 'latency-cdf.svg',
  latencyCost: 'latency-cost.svg',
  throughput: 'throughput.svg',
  catchUp: 'catch-up.svg',
  consume: 'consume.svg',
  cost: 'monthly-bill.svg',
  targets: 'targets.svg',
  soakRss: 'soak-rss.svg',
} as const;

const num = (value: number, digits = 1): string => value.toLocaleString('en-US', { maximumFractionDigits: digits });
const usd = (value: number): string => `$${value.toLocaleString('en-US', { maximumFractionDigits: 0 })}`;
const table = (header: readonly string[], rows: readonly (readonly string[])[]): string =>
  [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');
const missing = (bench: string): string => `_Not in this run: ${bench}.bench.ts did not run or wrote no results (\`npm run bench -- --report DIR ${bench}\`)._`;

interface Section {
  readonly markdown: string;
  /** Plot file -> its spec, rendered beside report.md. */
  readonly plots: ReadonlyMap<string, TopLevelSpec>;
}

function walSection(results: BenchResults): Section {
  const wal = results.wal;
  if (wal === undefined) return { markdown: `## Produce-to-durable latency\n\n${missing('wal')}\n\n## Latency vs cost\n\n${missing('wal')}`, plots: new Map() };
  const rateRows = wal.rates.map((rate) => [
    `${rate.rateMbPerSecond}`,
    `${rate.partitions}`,
    num(rate.p50Ms, 2),
    num(rate.p99Ms, 2),
    num(rate.p999Ms, 2),
    num(rate.floorP50Ms, 2),
    num(rate.floorP99Ms, 2),
    rate.saturated ? 'yes' : 'no',
  ]);
  const sweepRows = wal.sweep.map((run) => [
    `${run.rateMbPerSecond}`,
    `${num(run.uploadBytes / 1024, 0)} KiB / ${run.uploadIntervalMs} ms${run.isDefault ? ' (default)' : ''}${run.isChosen ? ' <- chosen' : ''}`,
    num(run.p99Ms, 2),
    num(run.modelP99Ms, 2),
    num(run.putsPerGb, 0),
    `$${run.totalUsdPerGb.toFixed(4)}`,
    usd(run.usdPerMonth),
    run.saturated ? 'yes' : 'no',
  ]);
  const markdown = [
    '## Produce-to-durable latency',
    '',
    `![Produce-to-durable latency CDF per rate beside the floor](${PLOT_FILES.latencyCdf})`,
    '',
    `${PLOT_FILES.latencyCdf}: the CDF per rate (${CDF_PARTITIONS} partitions, default writer knobs) on the ${wal.profile} store model, solid, beside its floor measured in the same run, dashed (per batch: its ideal batching wait plus one PUT of the mean object). The vertical line is the store model's PUT p50 (${wal.storePutP50Ms} ms; p99 ${wal.storePutP99Ms} ms): no acknowledgement that waits for a PUT can beat it. "CPU-bound" rates could not keep their schedule on this machine: their latency is queueing.`,
    '',
    table(['MB/s', 'partitions', 'p50 ms', 'p99 ms', 'p999 ms', 'floor p50', 'floor p99', 'CPU-bound'], rateRows),
    '',
    '## Latency vs cost',
    '',
    `![p99 latency vs monthly WAL bill for the upload size x interval sweep](${PLOT_FILES.latencyCost})`,
    '',
    `${PLOT_FILES.latencyCost}: each point is one uploadBytes x uploadIntervalMs case of the sweep at its rate: its measured p99 against what its WAL writes cost for a 30-day month at that rate (PUT requests and the $0.0032/GB upload fee, S3 Express One Zone prices). Dashed red lines: peers' published p99 (${PEER_LATENCIES.map((peer) => `${peer.what}: ${peer.bound === '<' ? '< ' : ''}${peer.p99Ms} ms`).join('; ')}); they publish no bill on this axis, so they are lines, not points.`,
    '',
    table(['MB/s', 'uploadBytes / interval', 'p99 ms', 'model p99', 'PUTs/GB', '$/GB', '$/month', 'CPU-bound'], sweepRows),
  ].join('\n');
  return {
    markdown,
    plots: new Map([
      [PLOT_FILES.latencyCdf, latencyCdfSpec(wal)],
      [PLOT_FILES.latencyCost, latencyCostSpec(wal)],
    ]),
  };
}

function brokerSection(results: BenchResults): Section {
  const broker = results.broker;
  if (broker === undefined) return { markdown: `## Throughput beside librdkafka's mock cluster\n\n${missing('broker')}`, plots: new Map() };
  const peer = broker.throughput.find((row) => row.isPeer);
  const rows = broker.throughput.map((row) => [
    row.target,
    num(row.mbPerSecond),
    `${num(row.minMbPerSecond)}-${num(row.maxMbPerSecond)}`,
    peer === undefined || row.isPeer ? '-' : num(row.mbPerSecond / peer.mbPerSecond, 2),
  ]);
  const markdown = [
    "## Throughput beside librdkafka's mock cluster",
    '',
    `![kcat throughput, Ferry beside librdkafka's mock cluster](${PLOT_FILES.throughput})`,
    '',
    `${PLOT_FILES.throughput}: \`kcat -P\` of ${broker.messageBytes} B messages with acks=all, medians over rounds (bars: min-max). The mock cluster (rdkafka_mock.h, in memory, acks on append) is the fastest a broker can be on this machine with this client.${broker.peerUnavailable === null ? '' : ` Peer unavailable in this run: ${broker.peerUnavailable}.`}`,
    '',
    table(['broker', 'MB/s', 'range', 'x mock'], rows),
  ].join('\n');
  return { markdown, plots: new Map([[PLOT_FILES.throughput, throughputSpec(broker)]]) };
}

function followerSection(results: BenchResults): Section {
  const follower = results.follower;
  if (follower === undefined) return { markdown: `## Follower catch-up beside raw GET\n\n${missing('follower')}`, plots: new Map() };
  const rows = follower.catchUp.map((row) => [row.reader, num(row.mbPerSecond), `${num(row.minMbPerSecond)}-${num(row.maxMbPerSecond)}`, num(row.ioCeilingMbPerSecond, 0)]);
  const markdown = [
    '## Follower catch-up beside raw GET',
    '',
    `![Follower catch-up beside raw GET](${PLOT_FILES.catchUp})`,
    '',
    `${PLOT_FILES.catchUp}: a fresh follower ${num(follower.catchUpBytes / 2 ** 20, 0)} MiB behind applies every WAL object; beside it a bare WalReader and raw whole-object GETs of the same objects from the same store, rounds alternating. I/O ceiling: what the store's latency model allows with free CPU (not drawn: it would flatten the bars).`,
    '',
    table(['reader', 'MB/s', 'range', 'I/O ceiling MB/s'], rows),
  ].join('\n');
  return { markdown, plots: new Map([[PLOT_FILES.catchUp, catchUpSpec(follower)]]) };
}

function consumeSection(results: BenchResults): Section {
  const consume = results.consume;
  if (consume === undefined) return { markdown: `## Consumer fetch beside a raw read of the segment\n\n${missing('consume')}`, plots: new Map() };
  const rows = consume.throughput.map((row) => [
    row.target,
    num(row.mbPerSecond),
    `${num(row.minMbPerSecond)}-${num(row.maxMbPerSecond)}`,
    row.ferryOverThis === null ? '-' : num(row.ferryOverThis, 3),
  ]);
  const markdown = [
    '## Consumer fetch beside a raw read of the segment',
    '',
    `![kcat -C on Ferry beside a raw read of its segments and librdkafka's mock cluster](${PLOT_FILES.consume})`,
    '',
    `${PLOT_FILES.consume}: \`kcat -C\` reading a partition of ${consume.messageBytes} B messages from its start, medians over rounds (bars: min-max), beside a raw read of the same segment files (${num(consume.segmentBytes / 1e6)} MB, readSync in 1 MiB reads into one reused buffer, page cache warm for both) and beside librdkafka's mock cluster (in memory; it keeps 5 MiB per partition, so the same messages over many partitions).${consume.peerUnavailable === null ? '' : ` Peer unavailable in this run: ${consume.peerUnavailable}.`} bench/README.md says where the fetch path copies and why.`,
    '',
    table(['target', 'MB/s', 'range', 'Ferry / this'], rows),
  ].join('\n');
  return { markdown, plots: new Map([[PLOT_FILES.consume, consumeSpec(consume)]]) };
}

function soakSection(results: BenchResults): Section {
  const soak = results.soak;
  // The soak is not in the default set: a run without it says how to get it, without the usual "did not run" note.
  if (soak === undefined)
    return { markdown: '## Memory under a steady load\n\n_Not in this run: soak.bench.ts runs only when named or with `--long` (`npm run bench -- --long --report DIR soak`)._', plots: new Map() };
  const slope = (value: number | null): string => (value === null ? '-' : num(value, 2));
  const rows = soak.perMinute.map((row) => [
    `${row.minute + 1}`,
    num(row.rssMinMib, 0),
    num(row.rssMedianMib, 0),
    num(row.rssMaxMib, 0),
    row.heapUsedMib === null ? '-' : num(row.heapUsedMib, 0),
    num(row.offeredMbPerSecond),
    num(row.appendedMbPerSecond),
    num(row.diskMib, 0),
  ]);
  const markdown = [
    '## Memory under a steady load',
    '',
    `![Broker RSS over a soak run](${PLOT_FILES.soakRss})`,
    '',
    `${PLOT_FILES.soakRss}: one \`ferry broker\` (WAL and tier on the file store, segments rolling, tiered and retained) under a steady ${soak.rateMbPerSecond} MB/s of 1 KiB messages with acks=all for ${soak.minutes} min, its RSS sampled every second, its JS heap in use (its own metric) each minute, and, after ${soak.trendFromS} s, the floor (each window's minimum: RSS after a collection, what a leak raises) with its least-squares line (dashed): ${slope(soak.floorSlopeMibPerMinute)} MiB/min (standard error ${slope(soak.floorSlopeStandardErrorMibPerMinute)}) against a goal of at most ${soak.slopeGoalMibPerMinute} (each window's median: ${slope(soak.medianSlopeMibPerMinute)}; every sample: ${slope(soak.sampleSlopeMibPerMinute)}). RSS at start ${num(soak.startRssMib, 0)} MiB, peak ${num(soak.peakRssMib, 0)} MiB, bound from the engine's limits ${num(soak.boundRssMib, 0)} MiB (bench/lib/rss-bounds.ts).`,
    '',
    table(['minute', 'RSS min MiB', 'median', 'max', 'JS heap MiB', 'offered MB/s', 'appended MB/s', 'disk MiB'], rows),
  ].join('\n');
  return { markdown, plots: new Map([[PLOT_FILES.soakRss, soakRssSpec(soak)]]) };
}

function costSection(): Section {
  const comparisons = STANDARD_DEPLOYMENTS.map(({ name, deployment }) => ({ name, comparison: compare(deployment) }));
  const rows = comparisons.map(({ name, comparison }) => {
    const biggest = [...comparison.ferry.lines]
      .sort((a, b) => b.usdPerMonth - a.usdPerMonth)
      .slice(0, 2)
      .map((line) => `${line.item} ${usd(line.usdPerMonth)}`);
    return [
      name,
      `${comparison.deployment.retentionHours / 24} d`,
      `${comparison.deployment.readFanout}`,
      usd(comparison.ferry.totalUsdPerMonth),
      usd(comparison.kafka.totalUsdPerMonth),
      `${num(comparison.kafkaOverFerry, 2)}x`,
      biggest.join('; '),
    ];
  });
  const markdown = [
    "## A month's bill",
    '',
    `![Monthly bill, Ferry beside classic Kafka](${PLOT_FILES.cost})`,
    '',
    `${PLOT_FILES.cost}: the cost model of \`ferry cost\` (src/cost; every price with its source and every assumption in docs/cost-model.md) for a few standard deployments: replication 3 over 3 zones for both, Ferry's code defaults (1 MiB / 5 ms WAL uploads, 1 GiB segments) and 1 h of local retention. \`ferry cost --help\` bills any other.`,
    '',
    table(['deployment', 'retention', 'consumer groups', 'Ferry $/month', 'classic Kafka $/month', 'Kafka / Ferry', "Ferry's two largest lines"], rows),
    '',
    `Not modelled: ${NOT_MODELLED.join('; ')}.`,
  ].join('\n');
  return { markdown, plots: new Map([[PLOT_FILES.cost, costSpec(comparisons)]]) };
}

function targetsSection(results: BenchResults): Section {
  const targets = results.targets;
  if (targets.length === 0) return { markdown: '## Targets\n\n_No bench of this run judged a target._', plots: new Map() };
  const markdown = [
    '## Targets',
    '',
    `![Targets: measured against goal](${PLOT_FILES.targets})`,
    '',
    `${PLOT_FILES.targets}: issue 27's goals, each beside what this run measured (bench/lib/targets.ts). A bar at or past the dashed line is met.`,
    '',
    table(
      ['bench', 'target', 'goal', 'measured', 'met'],
      targets.map((target) => [target.bench, target.name, target.goal, target.measured, target.met ? 'yes' : '**no**']),
    ),
  ].join('\n');
  return { markdown, plots: new Map([[PLOT_FILES.targets, targetsSpec(targets)]]) };
}

/** Writes report.md and every plot into `directory`; returns the files written. */
export async function writeReport(directory: string, results: BenchResults): Promise<string[]> {
  mkdirSync(directory, { recursive: true });
  const sections = [targetsSection(results), walSection(results), brokerSection(results), followerSection(results), consumeSection(results), soakSection(results), costSection()];
  const written: string[] = [];
  for (const section of sections) {
    for (const [file, spec] of section.plots) {
      writeFileSync(join(directory, file), await renderSvg(spec));
      written.push(file);
    }
  }
  const header = [
    '# Ferry benchmark report',
    '',
    `Run ${results.startedAt} with Bun ${results.bunVersion}${results.quick ? ', `--quick` (less data, fewer rounds: a smoke run; compare ratios, not absolute numbers)' : ''}. Every number beside its baseline from the same run; bench/README.md says how each is measured. The raw results are in \`results/\`; each bench's full printed tables in \`<bench>.txt\` when run through bench/run.ts.`,
  ].join('\n');
  writeFileSync(join(directory, REPORT_FILE), `${[header, ...sections.map((section) => section.markdown)].join('\n\n')}\n`);
  written.push(REPORT_FILE);
  return written;
}

/** The results the benches wrote into `resultsDirectory` (one JSON file per bench), whatever ran. */
export function readResults(resultsDirectory: string, quick: boolean, startedAt: string): BenchResults {
  const results: Record<string, unknown> = { quick, bunVersion: Bun.version, startedAt, targets: targetsIn(resultsDirectory) };
  for (const bench of REPORTED_BENCHES) {
    const file = join(resultsDirectory, `${bench}.json`);
    if (existsSync(file)) results[bench] = JSON.parse(readFileSync(file, 'utf8'));
  }
  return results as unknown as BenchResults;
}

/** The targets in every bench's results JSON in `resultsDirectory`, in file order. */
export function targetsIn(resultsDirectory: string): TargetResult[] {
  return readdirSync(resultsDirectory)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .flatMap((name) => (JSON.parse(readFileSync(join(resultsDirectory, name), 'utf8')) as WithTargets).targets ?? []);
}
