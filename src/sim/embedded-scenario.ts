/**
 * A run of a stand-alone embedded engine (issue 27's review): the library use, `Engine.open` with
 * a WAL store and no cluster, no broker in front. Drawn from a random stream of its own (run.ts
 * salts it), so that a run that is not embedded draws everything else as it did before.
 *
 * With a WAL the local log's flush policy defaults to 'none' (withWalFlushDefault): acks=all waits
 * for the WAL object and no local fsync, so a power loss takes the unsynced tail of the local log,
 * and what the engine counts durable at its next open (the shipped checkpoint, the WAL objects
 * after it, the tier's end) decides whether that tail is rebuilt. The run is shaped to reach the
 * case where only the tier's end knows it: records acknowledged after the last shipped checkpoint,
 * tiered from inside the active segment at once ([T2]), their WAL objects collected by GC, and a
 * power loss soon after a collection.
 */
import type { SeededRandom } from '../util/random.ts';
import type { TierScenario } from './scenario.ts';

export interface EmbeddedScenario {
  /** The application's one topic, `t0`, with two to four partitions. */
  readonly topics: readonly { readonly name: string; readonly partitions: number }[];
  /** How the engine tiers: always, small segments, the active segment tiered every few hundred bytes or less. */
  readonly tier: TierScenario;
  /** How often WAL GC runs (EngineOptions.walGcIntervalMs). */
  readonly walGcIntervalMs: number;
  /** Of the WAL objects GC deletes, the share each of which is followed by a power loss within POWER_LOSS_AFTER_GC_MS_MAX. */
  readonly powerLossAfterGcRate: number;
  /** Produce calls the application keeps in flight at most. */
  readonly inFlightMax: number;
  /** Produce calls the application sends to one partition, at most, before it turns to another (a partition that goes quiet is tiered and collected whole). */
  readonly burstMax: number;
}

/** The share of runs that run an embedded engine instead of brokers. */
export const EMBEDDED_SHARE = 0.15;
/** After a WAL object delete drawn to be followed by one: the power loss comes this soon (simulated ms), before the next shipped checkpoint (every second) is likely. */
export const POWER_LOSS_AFTER_GC_MS_MAX = 400;
/** Partitions of the embedded topic: two at least, so that one goes quiet while another's writes let GC take the quiet one's objects (the stream's highest object stays). */
const PARTITIONS_MIN = 2;
const PARTITIONS_MAX = 4;
const SEGMENT_BYTES_MIN = 2 * 1024;
const SEGMENT_BYTES_MAX = 16 * 1024;
/** A tier round every 100-500 ms: a record is tiered well within the second between two shipped checkpoints. */
const TIER_INTERVAL_MS_MIN = 100;
const TIER_INTERVAL_MS_MAX = 500;
/** The active segment is tiered once this much above the tiered end is committed ([T2]): 1 byte tiers whatever is committed. */
const TAIL_MAX_BYTES = [1, 256, 1024];
const WAL_GC_INTERVALS_MS = [100, 200, 300];
const WAL_GC_IDLE_PASSES_MS = [300, 1_000];
const RETENTION_CHECK_INTERVALS_MS = [500, 1_000, 3_000];
/** A small local retention in half the runs (none or one segment kept): reads below it reach the tier. */
const LOCAL_RETENTION_SEGMENTS = [null, null, 0, 1];
const SWEEP_INTERVALS_MS = [1_000, 3_000];
const ORPHAN_DELAYS_MS = [2_000, 5_000, 10_000];
/** None in some runs: the scheduled power losses alone are seen too. */
const POWER_LOSS_AFTER_GC_RATES = [0, 0.02, 0.05, 0.1];
const IN_FLIGHT_MAX = [1, 2, 4];
const BURST_MAX = [1, 4, 16];

function pick<T>(random: SeededRandom, values: readonly T[]): T {
  return values[random.nextInt(values.length)]!;
}

/** Whether this run is embedded, and how (null: brokers, as before). */
export function drawEmbedded(random: SeededRandom): EmbeddedScenario | null {
  if (random.next() >= EMBEDDED_SHARE) return null;
  const segmentBytes = SEGMENT_BYTES_MIN + random.nextInt(SEGMENT_BYTES_MAX - SEGMENT_BYTES_MIN + 1);
  const localSegments = pick(random, LOCAL_RETENTION_SEGMENTS);
  const tier: TierScenario = {
    segmentBytes,
    intervalMs: TIER_INTERVAL_MS_MIN + random.nextInt(TIER_INTERVAL_MS_MAX - TIER_INTERVAL_MS_MIN + 1),
    localRetentionBytes: localSegments === null ? null : localSegments * segmentBytes,
    retentionCheckIntervalMs: pick(random, RETENTION_CHECK_INTERVALS_MS),
    tailMaxBytes: pick(random, TAIL_MAX_BYTES),
    lifecycle: {
      retentionMs: null,
      retentionBytes: null,
      sweepIntervalMs: pick(random, SWEEP_INTERVALS_MS),
      orphanDelayMs: pick(random, ORPHAN_DELAYS_MS),
      walGcIdlePassMs: pick(random, WAL_GC_IDLE_PASSES_MS),
    },
  };
  return {
    topics: [{ name: 't0', partitions: PARTITIONS_MIN + random.nextInt(PARTITIONS_MAX - PARTITIONS_MIN + 1) }],
    tier,
    walGcIntervalMs: pick(random, WAL_GC_INTERVALS_MS),
    powerLossAfterGcRate: pick(random, POWER_LOSS_AFTER_GC_RATES),
    inFlightMax: pick(random, IN_FLIGHT_MAX),
    burstMax: pick(random, BURST_MAX),
  };
}

export function describeEmbedded(embedded: EmbeddedScenario): string {
  const afterGc = embedded.powerLossAfterGcRate === 0 ? '' : `, a power loss after ${embedded.powerLossAfterGcRate * 100}% of WAL GC's deletes`;
  return `embedded engine (no broker), WAL GC every ${embedded.walGcIntervalMs} ms${afterGc}, ${embedded.inFlightMax} produce calls in flight, bursts of up to ${embedded.burstMax}`;
}
