/**
 * What one `record()` costs on the hot path, in ns per value: Ferry's histograms (64-bit counts,
 * clamping, exact sum/min/max) beside a bare hdr-histogram-js JS-build histogram fed the same
 * integers, plus Counter.add and RateMeter.mark. Each mitata call records a block of
 * VALUES_PER_CALL precomputed values, so the call overhead is spread thin; the table divides
 * mitata's median (p50) time per call by the block size. The bare hdr baselines get the same
 * values as integer microseconds (no rounding to do), once straight from the loop (docs/design.md,
 * "Hot-path facts": ~14 ns/value) and once through a one-line function: what any wrapper costs.
 *
 * Only 64-bit counts are timed: a second hdr class behind the same call sites would make them
 * polymorphic for whichever case runs later, which Ferry's histograms are not in the engine.
 */
import * as hdr from 'hdr-histogram-js';
import { bench, do_not_optimize, run } from 'mitata';
import { Counter, LATENCY_MS_MAX, LatencyHistogram, MICROSECONDS_PER_MS, RateMeter, SIZE_BYTES_LAYOUT, ValueHistogram } from '../src/metrics/index.ts';
import { ManualClock } from '../src/util/clock.ts';
import { SeededRandom } from '../src/util/random.ts';
import { parseBenchArgs } from './lib/args.ts';
import { printTable } from './lib/table.ts';
import { KIB_BYTES, MIB_BYTES } from './lib/units.ts';

const USAGE = `
bun bench/metrics.bench.ts [--quick]

Times record() of the metrics histograms, Counter.add and RateMeter.mark with mitata (~15 s;
--quick: the latency histogram and the bare hdr baselines only, ~5 s) and prints ns per value.`;

/** Values per mitata call: enough to drown the call overhead, few enough to stay in L1 (32 KiB). */
const VALUES_PER_CALL = 4096;
const SEED = 1176;
/** Latencies drawn log-normal around a 4 ms median (S3 Express PUT p50), sigma 0.6: p99 ~16 ms. */
const LATENCY_MEDIAN_MS = 4;
const LATENCY_SIGMA = 0.6;
/** Object sizes log-uniform between these. */
const SIZE_BYTES_MIN = KIB_BYTES;
const SIZE_BYTES_MAX = 8 * MIB_BYTES;

interface Case {
  readonly label: string;
  readonly quick: boolean;
  readonly recordBlock: () => unknown;
}

function gaussian(random: SeededRandom): number {
  const u = 1 - random.next(); // (0, 1]: log(0) would be -Infinity
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random.next());
}

function latenciesMs(random: SeededRandom): Float64Array {
  const values = new Float64Array(VALUES_PER_CALL);
  for (let i = 0; i < values.length; i++) {
    values[i] = Math.min(LATENCY_MS_MAX, LATENCY_MEDIAN_MS * Math.exp(LATENCY_SIGMA * gaussian(random)));
  }
  return values;
}

function sizesBytes(random: SeededRandom): Float64Array {
  const values = new Float64Array(VALUES_PER_CALL);
  const logSpan = Math.log(SIZE_BYTES_MAX / SIZE_BYTES_MIN);
  for (let i = 0; i < values.length; i++) values[i] = Math.round(SIZE_BYTES_MIN * Math.exp(logSpan * random.next()));
  return values;
}

function bareHdr(): hdr.Histogram {
  return hdr.build({
    bitBucketSize: 64,
    autoResize: false,
    lowestDiscernibleValue: 1,
    highestTrackableValue: LATENCY_MS_MAX * MICROSECONDS_PER_MS,
    numberOfSignificantValueDigits: 3,
    useWebAssembly: false,
  });
}

/**
 * A bare hdr histogram fed from the loop directly, or through a one-line function: the second is
 * the same call depth as Ferry's record(), and JSC inlines hdr's call chain only in the first.
 */
function bareHdrCase(label: string, microseconds: Float64Array, throughFunction: boolean): Case {
  const histogram = bareHdr();
  const recordValue = (value: number): void => histogram.recordValue(value);
  const direct = (): unknown => {
    for (let i = 0; i < microseconds.length; i++) histogram.recordValue(microseconds[i]!);
    return histogram;
  };
  const viaFunction = (): unknown => {
    for (let i = 0; i < microseconds.length; i++) recordValue(microseconds[i]!);
    return histogram;
  };
  return { label, quick: true, recordBlock: throughFunction ? viaFunction : direct };
}

function recordCase(label: string, quick: boolean, histogram: ValueHistogram, values: Float64Array): Case {
  return {
    label,
    quick,
    recordBlock: () => {
      for (let i = 0; i < values.length; i++) histogram.record(values[i]!);
      return histogram;
    },
  };
}

function cases(): Case[] {
  const random = new SeededRandom(SEED);
  const latencies = latenciesMs(random);
  const microseconds = latencies.map((ms) => Math.round(ms * MICROSECONDS_PER_MS));
  const sizes = sizesBytes(random);
  const counter = new Counter();
  const rate = new RateMeter(new ManualClock());
  return [
    recordCase('LatencyHistogram.record (ms, 3 digits, 64-bit)', true, new LatencyHistogram(), latencies),
    bareHdrCase('bare hdr JS 64-bit, through a one-line function', microseconds, true),
    bareHdrCase('bare hdr JS 64-bit, straight from the loop', microseconds, false),
    recordCase('ValueHistogram.record (bytes, 2 digits, 64-bit)', false, new ValueHistogram(SIZE_BYTES_LAYOUT), sizes),
    {
      label: 'Counter.add',
      quick: false,
      recordBlock: () => {
        for (let i = 0; i < sizes.length; i++) counter.add(sizes[i]!);
        return counter;
      },
    },
    {
      label: 'RateMeter.mark (ManualClock)',
      quick: false,
      recordBlock: () => {
        for (let i = 0; i < sizes.length; i++) rate.mark(sizes[i]!);
        return rate;
      },
    },
  ];
}

const { quick } = parseBenchArgs(process.argv.slice(2), USAGE);
const chosen = cases().filter((entry) => !quick || entry.quick);
for (const entry of chosen) bench(entry.label, () => do_not_optimize(entry.recordBlock()));
const { benchmarks } = await run();
const medianNs = new Map<string, number>();
for (const trial of benchmarks) {
  const stats = trial.runs[0]?.stats;
  if (stats !== undefined) medianNs.set(trial.alias, stats.p50);
}
printTable(
  `Metrics hot path, ns per value (mitata median per ${VALUES_PER_CALL}-value block / ${VALUES_PER_CALL})`,
  [{ title: 'operation', align: 'left' }, { title: 'ns/value' }],
  chosen.map((entry) => {
    const ns = medianNs.get(entry.label);
    return [entry.label, ns === undefined ? '-' : (ns / VALUES_PER_CALL).toFixed(1)];
  }),
);
