import { DEFAULT_LOG_CONFIG } from '../log/config.ts';
import { tierLogSettings } from './broker-process.ts';
import type { ClientOp, RetentionDefaults } from './history.ts';
import type { TierScenario } from './scenario.ts';

/**
 * What every run shares, a broker run (run.ts) or an embedded engine's (embedded-run.ts): the
 * bounds it is held to, the salts of the random streams both draw, the background store faults,
 * and how its history is put on the ops' time base.
 */

/** Brokers (or the embedded engine) must serve within this after their first start (or the run reports it). */
export const STARTUP_MS_MAX = 30_000;
/** After faults stop: every partition must take an acks=all write and serve it back within this. */
export const LIVENESS_BOUND_MS = 60_000;
/** After the probes: clients finish what they have in flight (their request timeouts are shorter). */
export const DRAIN_MS = 15_000;
/** A run that takes more events than this is spinning (a zero-delay timer loop): reported, not waited out. */
export const EVENTS_MAX = 3_000_000;
/** Keeps the streams of the seed's draws apart, so adding a draw to one does not shift the others. */
export const SCHEDULE_SALT = 0x0ddba11;
export const FAULT_SALT = 0xfa017;
export const STORE_SALT = 0x570e;
export const CLOCK_RATE_SALT = 0xc10c4;
/** Whether a run is an embedded engine's, and its shape (embedded-scenario.ts). */
export const EMBEDDED_SALT = 0xe3bed;

/** Background store faults, on every request of every process: rare, since partitions and spells add the heavy ones. */
export const STORE_FAULTS = { throttledRate: 0.002, unavailableRate: 0.002, timeoutRate: 0.002 };

/** The retention every topic of the run starts with: the log settings of a run that tiers as `tier` says (none: as before tiering) over Kafka's defaults. */
export function retentionDefaultsOf(tier: TierScenario | null): RetentionDefaults {
  const log = { ...DEFAULT_LOG_CONFIG, ...(tier === null ? {} : tierLogSettings(tier)) };
  return { bytes: log.retentionBytes, ms: log.retentionMs, localBytes: log.localRetentionBytes, localMs: log.localRetentionMs };
}

/** An op with its times on the history's base (simulated ms since the run's start). */
export function onTimeBase(op: ClientOp, startMs: number): ClientOp {
  const shifted = { ...op, startMs: op.startMs - startMs, endMs: op.endMs - startMs };
  if ((shifted.kind !== 'produce' && shifted.kind !== 'fetch') || shifted.answeredBy === undefined) return shifted;
  return { ...shifted, answeredBy: { ...shifted.answeredBy, atMs: shifted.answeredBy.atMs - startMs } };
}
