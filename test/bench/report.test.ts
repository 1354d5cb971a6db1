// The bench report writer on a small synthetic results object (no bench runs here): report.md names
// every plot, every plot is a well-formed SVG with its axis titles and units, and a bench that did
// not run leaves its section saying so instead of a plot.
import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AXIS } from '../../bench/report/plots.ts';
import type { BenchResults, CdfPoint } from '../../bench/report/results.ts';
import { PLOT_FILES, REPORT_FILE, writeReport } from '../../bench/report/write-report.ts';

const directory = mkdtempSync(join(tmpdir(), 'ferry-report-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const cdf = (scaleMs: number): CdfPoint[] => [0, 50, 90, 99, 99.9, 100].map((percentile, index) => ({ percentile, ms: scaleMs * (1 + index) }));

const RESULTS: BenchResults = {
  quick: true,
  bunVersion: '1.4.5',
  startedAt: '2026-01-01T00:00:00.000Z',
  targets: [
    { bench: 'broker', name: 'kcat acks=all vs mock, file store', goal: '>= 0.8x', measured: '0.62x', score: 0.62 / 0.8, met: false },
    { bench: 'broker', name: 'ack p99 vs floor p99', goal: '<= 1.2x', measured: '1.1x', score: 1.2 / 1.1, met: true },
  ],
  wal: {
    profile: 's3-express',
    storePutP50Ms: 4,
    storePutP99Ms: 10,
    rates: [1, 10].map((rateMbPerSecond) => ({
      rateMbPerSecond,
      partitions: 64,
      saturated: false,
      p50Ms: 6,
      p99Ms: 14,
      p999Ms: 20,
      floorP50Ms: 5,
      floorP99Ms: 12,
      cdf: cdf(rateMbPerSecond),
      floorCdf: cdf(rateMbPerSecond / 2),
    })),
    sweep: [256 * 1024, 1024 * 1024].map((uploadBytes, index) => ({
      rateMbPerSecond: 100,
      uploadBytes,
      uploadIntervalMs: 5,
      saturated: index === 0,
      p50Ms: 8,
      p99Ms: 20 + index,
      modelP99Ms: 15,
      putsPerGb: 4000 / (index + 1),
      totalUsdPerGb: 0.0078,
      usdPerMonth: 1900 + index,
      isDefault: index === 1,
      isChosen: index === 1,
    })),
  },
  broker: {
    messageBytes: 1024,
    throughput: [
      { target: 'ferry file', isPeer: false, mbPerSecond: 80, minMbPerSecond: 75, maxMbPerSecond: 85 },
      { target: 'librdkafka mock', isPeer: true, mbPerSecond: 200, minMbPerSecond: 190, maxMbPerSecond: 210 },
    ],
    peerUnavailable: null,
  },
  follower: {
    catchUpBytes: 128 * 2 ** 20,
    catchUp: [
      { reader: 'follower engine (prefetch 16)', isRawGet: false, mbPerSecond: 40, minMbPerSecond: 35, maxMbPerSecond: 45, ioCeilingMbPerSecond: 1800 },
      { reader: 'raw GET, 16 in flight', isRawGet: true, mbPerSecond: 150, minMbPerSecond: 140, maxMbPerSecond: 160, ioCeilingMbPerSecond: 2100 },
    ],
  },
  consume: {
    messageBytes: 1024,
    segmentBytes: 202_000_000,
    throughput: [
      { target: 'ferry', kind: 'ferry', mbPerSecond: 650, minMbPerSecond: 600, maxMbPerSecond: 700, ferryOverThis: null },
      { target: 'raw read', kind: 'raw read', mbPerSecond: 6500, minMbPerSecond: 6000, maxMbPerSecond: 7000, ferryOverThis: 0.1 },
      { target: 'librdkafka mock', kind: 'peer', mbPerSecond: 700, minMbPerSecond: 650, maxMbPerSecond: 750, ferryOverThis: 0.929 },
    ],
    peerUnavailable: null,
  },
  soak: {
    minutes: 2,
    rateMbPerSecond: 50,
    trendFromS: 60,
    startRssMib: 70,
    peakRssMib: 190,
    boundRssMib: 1200,
    floorSlopeMibPerMinute: 0.25,
    floorSlopeStandardErrorMibPerMinute: 0.5,
    medianSlopeMibPerMinute: 1.5,
    sampleSlopeMibPerMinute: -0.5,
    slopeGoalMibPerMinute: 1,
    perMinute: [0, 1].map((minute) => ({
      minute,
      rssMinMib: 150 + minute,
      rssMedianMib: 170,
      rssMaxMib: 190,
      heapUsedMib: 60,
      offeredMbPerSecond: 50,
      appendedMbPerSecond: 49.9,
      diskMib: 3400 * (minute + 1),
      tierDeletes: 0,
      walGcDeletes: 900,
    })),
    floor: [60, 90].map((atS) => ({ atS, mib: 150 })),
    rss: Array.from({ length: 120 }, (_, second) => ({ atS: second + 1, mib: 150 + (second % 10) * 4 })),
  },
};

/** Well-formed XML: every tag closed in order, nothing outside the root, an <svg> root. */
function checkSvg(text: string): void {
  expect(text.trimStart().startsWith('<svg')).toBe(true);
  const open: string[] = [];
  for (const match of text.matchAll(/<(\/?)([A-Za-z][\w:-]*)[^>]*?(\/?)>/g)) {
    const [, closing, name, selfClosing] = match;
    if (selfClosing === '/') continue;
    if (closing === '/') expect(open.pop()).toBe(name);
    else open.push(name!);
  }
  expect(open).toEqual([]);
  expect(text.trimEnd().endsWith('</svg>')).toBe(true);
}

const escaped = (text: string): string => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

describe('writeReport', async () => {
  const written = await writeReport(directory, RESULTS);
  const report = readFileSync(join(directory, REPORT_FILE), 'utf8');

  test('report.md shows every plot and was written with it', () => {
    for (const file of Object.values(PLOT_FILES)) {
      expect(written).toContain(file);
      expect(report).toContain(`](${file})`);
    }
  });

  test.each([
    [PLOT_FILES.latencyCdf, [AXIS.latencyMs, AXIS.percentile, 'store PUT p50 4 ms']],
    [PLOT_FILES.latencyCost, [AXIS.usdPerMonth, AXIS.p99Ms, 'WarpStream S3E1Z p99 169 ms', 'WarpStream Lightning p99 50 ms', 'Aiven diskless p99 1.6 s', 'S2 Express p99 &lt; 50 ms']],
    [PLOT_FILES.throughput, [AXIS.target, AXIS.throughputMbPerSecond, 'librdkafka mock']],
    [PLOT_FILES.catchUp, [AXIS.reader, AXIS.catchUpMbPerSecond, 'raw GET, 16 in flight', 'follower engine (prefetch 16)']],
    [PLOT_FILES.consume, [AXIS.target, AXIS.consumeMbPerSecond, 'raw read of the segment (baseline)', 'librdkafka mock']],
    [PLOT_FILES.targets, [AXIS.targetScore, 'broker: kcat acks=all vs mock, file store']],
    [PLOT_FILES.cost, [AXIS.deployment, AXIS.billUsdPerMonth, 'classic Kafka', 'large: 1 GiB/s, 1,024 partitions, 12 brokers']],
    [PLOT_FILES.soakRss, [AXIS.soakMinutes, AXIS.soakMib, 'RSS (every sample)', 'RSS floor (minimum of each window)', 'RSS floor slope 0.25 MiB/min after 60 s']],
  ])('%s is an SVG with its axis titles', (file, texts) => {
    const svg = readFileSync(join(directory, file), 'utf8');
    checkSvg(svg);
    for (const text of texts) expect(svg).toContain(text.includes('&lt;') ? text : escaped(text));
  });

  test("the tables carry the results' numbers and the cost section the model's bills", () => {
    expect(report).toContain('| ferry file | 80 | 75-85 | 0.4 |');
    expect(report).toContain('| raw read | 6,500 | 6,000-7,000 | 0.1 |');
    expect(report).toContain('| librdkafka mock | 700 | 650-750 | 0.929 |');
    expect(report).toContain('256 KiB / 5 ms');
    expect(report).toContain('1,024 KiB / 5 ms (default) <- chosen');
    expect(report).toContain('large: 1 GiB/s');
    expect(report).toContain('docs/cost-model.md');
    expect(report).toContain('| broker | kcat acks=all vs mock, file store | >= 0.8x | 0.62x | **no** |');
    expect(report).toContain('| broker | ack p99 vs floor p99 | <= 1.2x | 1.1x | yes |');
    expect(report).toContain('| 2 | 151 | 170 | 190 | 60 | 50 | 49.9 | 6,800 |');
    expect(report).toContain("0.25 MiB/min (standard error 0.5) against a goal of at most 1 (each window's median: 1.5; every sample: -0.5)");
  });
});

describe('a bench that did not run', async () => {
  const partial = join(directory, 'partial');
  const { wal: _wal, ...withoutWal } = RESULTS;
  await writeReport(partial, withoutWal);
  const report = readFileSync(join(partial, REPORT_FILE), 'utf8');

  test('its section says so and its plots are not written; the others are', () => {
    expect(report).toContain('Not in this run: wal.bench.ts');
    expect(existsSync(join(partial, PLOT_FILES.targets))).toBe(true);
    expect(existsSync(join(partial, PLOT_FILES.latencyCdf))).toBe(false);
    expect(existsSync(join(partial, PLOT_FILES.latencyCost))).toBe(false);
    expect(existsSync(join(partial, PLOT_FILES.throughput))).toBe(true);
    expect(existsSync(join(partial, PLOT_FILES.cost))).toBe(true);
  });
});

describe('a run without the soak (not in the default set)', async () => {
  const withoutSoakDirectory = join(directory, 'without-soak');
  const { soak: _soak, ...withoutSoak } = RESULTS;
  await writeReport(withoutSoakDirectory, withoutSoak);
  const report = readFileSync(join(withoutSoakDirectory, REPORT_FILE), 'utf8');

  test('its section says how to run it and its plot is not written', () => {
    expect(report).toContain('Not in this run: soak.bench.ts runs only when named or with `--long`');
    expect(existsSync(join(withoutSoakDirectory, PLOT_FILES.soakRss))).toBe(false);
  });
});
