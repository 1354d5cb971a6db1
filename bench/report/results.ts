/**
 * What a bench hands the report (bench/report/write-report.ts): plain JSON, one file per bench,
 * written only when bench/run.ts --report asks for it (the FERRY_BENCH_RESULTS directory). The
 * shapes here are the contract between the benches and the report; numbers are what the bench's
 * own tables print, before formatting.
 */

/** A latency distribution as (percentile, ms) points, for a CDF plot. */
export interface CdfPoint {
  readonly percentile: number;
  readonly ms: number;
}

/** wal.bench.ts: produce-to-durable at one rate with the default writer knobs, beside its floor. */
export interface WalRateResult {
  readonly rateMbPerSecond: number;
  readonly partitions: number;
  /** The producer could not keep the schedule: latency is queueing on this machine. */
  readonly saturated: boolean;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
  readonly floorP50Ms: number;
  readonly floorP99Ms: number;
  readonly cdf: readonly CdfPoint[];
  /** The floor per batch: its ideal batching wait plus one PUT of the mean object, same run. */
  readonly floorCdf: readonly CdfPoint[];
}

/** wal.bench.ts: one uploadBytes x uploadIntervalMs case of the sweep. */
export interface WalSweepResult {
  readonly rateMbPerSecond: number;
  readonly uploadBytes: number;
  readonly uploadIntervalMs: number;
  readonly saturated: boolean;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** The in-order model's p99 (measured PUTs, no CPU cost): the guide when the run was CPU-bound. */
  readonly modelP99Ms: number;
  readonly putsPerGb: number;
  /** Measured WAL bill per GB produced (request fees + upload fee) at S3 Express prices. */
  readonly totalUsdPerGb: number;
  /** That bill for a 30-day month at this rate. */
  readonly usdPerMonth: number;
  readonly isDefault: boolean;
  readonly isChosen: boolean;
}

export interface WalResults extends WithTargets {
  readonly profile: string;
  /** The store model's PUT latency floor: a small object's PUT p50 and p99 (src/store/latency.ts). */
  readonly storePutP50Ms: number;
  readonly storePutP99Ms: number;
  readonly rates: readonly WalRateResult[];
  readonly sweep: readonly WalSweepResult[];
}

/** broker.bench.ts: kcat -P throughput per target, medians and ranges over rounds. */
export interface ThroughputResult {
  readonly target: string;
  readonly isPeer: boolean;
  readonly mbPerSecond: number;
  readonly minMbPerSecond: number;
  readonly maxMbPerSecond: number;
}

export interface BrokerResults extends WithTargets {
  readonly messageBytes: number;
  readonly throughput: readonly ThroughputResult[];
  /** Why the librdkafka mock cluster is missing, when it is. */
  readonly peerUnavailable: string | null;
}

/** follower.bench.ts: catch-up MB/s per reader, beside raw GETs of the same objects. */
export interface CatchUpResult {
  readonly reader: string;
  readonly isRawGet: boolean;
  readonly mbPerSecond: number;
  readonly minMbPerSecond: number;
  readonly maxMbPerSecond: number;
  readonly ioCeilingMbPerSecond: number;
}

export interface FollowerResults extends WithTargets {
  readonly catchUpBytes: number;
  readonly catchUp: readonly CatchUpResult[];
}

/** consume.bench.ts: kcat -C MB/s from a partition's start, Ferry beside a raw read of its segments and the mock. */
export interface ConsumeThroughputResult {
  readonly target: string;
  /** Ferry's broker, the raw read of its segment files (the baseline), or the reference peer. */
  readonly kind: 'ferry' | 'raw read' | 'peer';
  readonly mbPerSecond: number;
  readonly minMbPerSecond: number;
  readonly maxMbPerSecond: number;
  /** Median over rounds of Ferry's MB/s over this row's, paired per round; null on Ferry's own row. */
  readonly ferryOverThis: number | null;
}

export interface ConsumeResults extends WithTargets {
  readonly messageBytes: number;
  /** Bytes of Ferry's segment files holding the messages (what the raw read reads). */
  readonly segmentBytes: number;
  readonly throughput: readonly ConsumeThroughputResult[];
  /** Why the librdkafka mock cluster is missing, when it is. */
  readonly peerUnavailable: string | null;
}

/** soak.bench.ts: one minute of the run. */
export interface SoakMinute {
  /** 0 for the first minute. */
  readonly minute: number;
  readonly rssMinMib: number;
  readonly rssMedianMib: number;
  readonly rssMaxMib: number;
  /** The broker's JS heap in use at the minute's end (its own metric); null when not scraped. */
  readonly heapUsedMib: number | null;
  readonly offeredMbPerSecond: number;
  readonly appendedMbPerSecond: number;
  /** The broker's data directory (local logs, WAL and tier objects) at the minute's end. */
  readonly diskMib: number;
  readonly tierDeletes: number;
  readonly walGcDeletes: number;
}

/** soak.bench.ts: a broker's RSS over a long steady produce load. */
export interface SoakResults extends WithTargets {
  readonly minutes: number;
  readonly rateMbPerSecond: number;
  /** The trend (slope, min, median, max) is taken from here on. */
  readonly trendFromS: number;
  readonly startRssMib: number;
  readonly peakRssMib: number;
  readonly boundRssMib: number;
  /**
   * Least squares after trendFromS, MiB/min (null with fewer than two points): through each
   * window's minimum (the floor, RSS after a collection: the target), each window's median, and
   * every sample.
   */
  readonly floorSlopeMibPerMinute: number | null;
  /** The floor's slope's standard error: within about two of it of zero, these points cannot tell it from flat. */
  readonly floorSlopeStandardErrorMibPerMinute: number | null;
  readonly medianSlopeMibPerMinute: number | null;
  readonly sampleSlopeMibPerMinute: number | null;
  readonly slopeGoalMibPerMinute: number;
  readonly perMinute: readonly SoakMinute[];
  /** Each trend window's minimum: seconds since the producer started at the window's start, MiB. */
  readonly floor: readonly { readonly atS: number; readonly mib: number }[];
  /** Every RSS sample: seconds since the producer started, MiB. */
  readonly rss: readonly { readonly atS: number; readonly mib: number }[];
}

/**
 * One of issue 27's performance goals beside this run's measurement (bench/lib/targets.ts).
 * `score` is normalized so that 1 or more is met: measured / goal for an at-least goal, goal /
 * measured for an at-most goal.
 */
export interface TargetResult {
  readonly bench: string;
  readonly name: string;
  /** The goal as printed, e.g. ">= 0.8x mock". */
  readonly goal: string;
  readonly measured: string;
  readonly score: number;
  readonly met: boolean;
}

/** Every bench's results may carry the targets it judged. */
export interface WithTargets {
  readonly targets?: readonly TargetResult[];
}

/** Everything one `bench/run.ts --report` collected; a bench that did not run is absent. */
export interface BenchResults {
  readonly quick: boolean;
  readonly bunVersion: string;
  readonly startedAt: string;
  readonly wal?: WalResults;
  readonly broker?: BrokerResults;
  readonly follower?: FollowerResults;
  readonly consume?: ConsumeResults;
  readonly soak?: SoakResults;
  /** The targets every bench of the run judged (also those the report draws no section for). */
  readonly targets: readonly TargetResult[];
}

export type ReportedBench = 'wal' | 'broker' | 'follower' | 'consume' | 'soak';
export const REPORTED_BENCHES: readonly ReportedBench[] = ['wal', 'broker', 'follower', 'consume', 'soak'];
