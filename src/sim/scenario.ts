import type { SeededRandom } from '../util/random.ts';
import { describeSecurity, drawSecurity, type SecurityScenario } from './security-scenario.ts';
import { describeShapes, drawWorkloadShapes, type WorkloadShapes } from './workload-shapes.ts';
import { describeEmbedded, drawEmbedded, type EmbeddedScenario } from './embedded-scenario.ts';
import { describeSequentialWrites, drawSequentialWrites, type SequentialWriteScenario } from './sequential-writes.ts';

/**
 * The shape of one run, drawn from its seed: how many brokers, whether they form a cluster,
 * replication, timings, topics, clients and how hard faults come. Everything a run does follows
 * from this and the seed.
 */
export interface Scenario {
  readonly brokers: number;
  /** Brokers share partitions through control records; false: one broker with a WAL store (`ferry broker`). */
  readonly cluster: boolean;
  readonly replicationFactor: number;
  readonly minInsyncReplicas: number;
  readonly leaseMs: number;
  readonly scanIntervalMs: number;
  readonly uploadIntervalMs: number;
  readonly topics: readonly { readonly name: string; readonly partitions: number }[];
  /** Whether an admin deletes and re-creates a topic during the run. */
  readonly recreateTopics: boolean;
  readonly producers: readonly { readonly name: string; readonly idempotent: boolean; readonly acks: 0 | 1 | -1 }[];
  readonly partitionConsumers: number;
  readonly groupConsumers: number;
  /** Simulated ms of faults and load, before the quiet phase. */
  readonly chaosMs: number;
  /** Mean simulated ms between two faults. */
  readonly faultIntervalMs: number;
  /** Rolled segments go to a tier (docs/tier-protocol.md); null: no tier, as before tiering. */
  readonly tier: TierScenario | null;
  /** SASL listeners, ACLs and intruders (issue 13, security-scenario.ts); null: PLAINTEXT without an authorizer, as before. */
  readonly security: SecurityScenario | null;
  /** How the producers shape requests and batches, and the topics' max.message.bytes (workload-shapes.ts). */
  readonly shapes: WorkloadShapes;
  /**
   * A stand-alone embedded engine with a WAL store instead of brokers (embedded-scenario.ts); null:
   * brokers, as before. An embedded run takes of the rest only its timings (chaosMs,
   * faultIntervalMs, uploadIntervalMs; leaseMs and scanIntervalMs for the resume bound): the
   * broker draw stays as it is, so `embedded: null` over a seed's scenario runs its broker twin.
   */
  readonly embedded: EmbeddedScenario | null;
  /** The WAL store offers sequential writes, which the tier and large WAL objects stream through (sequential-writes.ts); null: it does not, as before. Broker and embedded runs alike. */
  readonly sequentialWrites: SequentialWriteScenario | null;
  /** The WAL writers upload an idle writer's frames at once ([W8], the production default); false: only at the interval or size, as before. Broker and embedded runs alike. */
  readonly uploadWhenIdle: boolean;
}

/** How a tiering run tiers: small segments so they roll within a run, and often a small local retention so reads reach the tier. */
export interface TierScenario {
  /** segment.bytes of every topic. */
  readonly segmentBytes: number;
  /** How often each leader looks for a rolled segment to tier. */
  readonly intervalMs: number;
  /** local.retention.bytes of every topic; null: Kafka's default (-2, the same as retention.bytes: everything stays). */
  readonly localRetentionBytes: number | null;
  /** How often retention runs, so local segments go within a run. */
  readonly retentionCheckIntervalMs: number;
  /** Committed bytes above the tiered end that are tiered from inside the active segment ([T2]); null: the default, never reached in a run. */
  readonly tailMaxBytes: number | null;
  /** What the tier does with time, shortened into a run (absent: the production defaults, none of it reached in a run). */
  readonly lifecycle?: TierLifecycle;
}

/**
 * Tier retention ([T7]), the orphan sweep ([T6]) and WAL GC's idle bound, shortened so that they
 * happen within a run, through the settings the broker takes (issue 25, item 3).
 */
export interface TierLifecycle {
  /** retention.ms and retention.bytes of every topic (the whole log, tier included); null: Kafka's defaults (7 days, unlimited). */
  readonly retentionMs: number | null;
  readonly retentionBytes: number | null;
  /** How often a leader sweeps each partition's tier prefix for orphans, and how long an orphan stays. */
  readonly sweepIntervalMs: number;
  readonly orphanDelayMs: number;
  /** The longest WAL GC skips passes while nothing changed (GC_IDLE_PASS_MS in production). */
  readonly walGcIdlePassMs: number;
}

const CHAOS_MS_MIN = 20_000;
const CHAOS_MS_MAX = 60_000;
const BROKERS_MAX = 5;
/** The share of runs that tier. */
const TIER_SHARE = 0.5;
/** A run's partitions take some 20-60 KiB each: segments this small roll several times in one. */
const TIER_SEGMENT_BYTES_MIN = 2 * 1024;
const TIER_SEGMENT_BYTES_MAX = 24 * 1024;
const TIER_INTERVAL_MS_MIN = 200;
const TIER_INTERVAL_MS_MAX = 2_000;
/** The share of tiering runs whose local disks keep little of what is tiered. */
const SMALL_LOCAL_RETENTION_SHARE = 0.5;
/** A small local retention, in segments: none (only the active segment stays) or one; older reads reach the tier. */
const LOCAL_RETENTION_SEGMENTS = [0, 1];
const RETENTION_CHECK_INTERVALS_MS = [500, 1_000, 3_000];
/**
 * Retention of the whole log in tiering runs ([T7]): none in half, else a time or a size. Ten seconds
 * at least, so that a record lives past its read-back (the probes read theirs at once); sizes of
 * many segments and of several batches near max.message.bytes, for the same reason.
 */
const RETENTIONS_MS = [null, null, 10_000, 30_000];
const RETENTIONS_BYTES = [null, null, 128 * 1024, 512 * 1024];
/** The orphan sweep ([T6]) within a run: a sweep every few seconds, orphans gone a few seconds after they are seen. */
const SWEEP_INTERVALS_MS = [1_000, 3_000];
const ORPHAN_DELAYS_MS = [2_000, 5_000, 10_000];
/** WAL GC's idle bound within a run (the simulation collects every SIM_WAL_GC_INTERVAL_MS). */
const WAL_GC_IDLE_PASSES_MS = [1_000, 3_000, 10_000];
/** The share of tiering runs that tier from inside the active segment, and how much of a segment it takes then ([T2]). */
const TAIL_TIERING_SHARE = 0.5;
const TAIL_MAX_SEGMENT_FRACTIONS = [0.25, 0.5];

/** The share of runs whose WAL writers upload when idle ([W8]): half, so the interval alone is seen too. */
const UPLOAD_WHEN_IDLE_SHARE = 0.5;

function pick<T>(random: SeededRandom, values: readonly T[]): T {
  return values[random.nextInt(values.length)]!;
}

/**
 * `securityRandom`: the security's own stream (none: not secured), so that it shifts no other draw;
 * `shapesRandom`: the workload shapes' and the tier lifecycle's own (none: plain producers, the tier's defaults);
 * `embeddedRandom`: whether the run is an embedded engine's, and its shape (none: never);
 * `sequentialRandom`: whether its WAL store offers sequential writes (none: never);
 * `idleRandom`: whether its WAL writers upload when idle (none: never, as before [W8]).
 */
export function drawScenario(
  random: SeededRandom,
  securityRandom: SeededRandom | null = null,
  shapesRandom: SeededRandom | null = null,
  embeddedRandom: SeededRandom | null = null,
  sequentialRandom: SeededRandom | null = null,
  idleRandom: SeededRandom | null = null,
): Scenario {
  const scenario = drawBrokerScenario(random, securityRandom, shapesRandom);
  return {
    ...scenario,
    embedded: embeddedRandom === null ? null : drawEmbedded(embeddedRandom),
    sequentialWrites: sequentialRandom === null ? null : drawSequentialWrites(sequentialRandom),
    uploadWhenIdle: idleRandom !== null && idleRandom.next() < UPLOAD_WHEN_IDLE_SHARE,
  };
}

function drawBrokerScenario(random: SeededRandom, securityRandom: SeededRandom | null, shapesRandom: SeededRandom | null): Scenario {
  const cluster = random.next() < 0.8;
  const brokers = cluster ? 2 + random.nextInt(BROKERS_MAX - 1) : 1;
  const replicationFactor = cluster ? 1 + random.nextInt(Math.min(3, brokers)) : 1;
  const minInsyncReplicas = replicationFactor === 1 ? 1 : 1 + random.nextInt(replicationFactor);
  const topicCount = 1 + random.nextInt(2);
  const topics = Array.from({ length: topicCount }, (_, i) => ({ name: `t${i}`, partitions: 1 + random.nextInt(3) }));
  const producerCount = 1 + random.nextInt(3);
  const producers = Array.from({ length: producerCount }, (_, i) => {
    const idempotent = random.next() < 0.6;
    // The first producer always waits for acks=all: without one, a run acknowledges nothing the durability invariants judge.
    const acks: 0 | 1 | -1 = idempotent || i === 0 ? -1 : pick(random, [0, 1, -1, -1] as const);
    return { name: `p${i}`, idempotent, acks };
  });
  const drawn = {
    brokers,
    cluster,
    replicationFactor,
    minInsyncReplicas,
    leaseMs: pick(random, [1_000, 1_500, 2_000, 3_000]),
    scanIntervalMs: pick(random, [100, 200, 300]),
    uploadIntervalMs: pick(random, [2, 5, 10, 20]),
    topics,
    recreateTopics: random.next() < 0.3,
    producers,
    partitionConsumers: 1 + random.nextInt(2),
    groupConsumers: random.next() < 0.5 ? 0 : 2,
    chaosMs: CHAOS_MS_MIN + random.nextInt(CHAOS_MS_MAX - CHAOS_MS_MIN),
    faultIntervalMs: pick(random, [1_500, 3_000, 5_000]),
    tier: drawTier(random), // drawn last: a run that does not tier draws everything else as before tiering was in the simulation
    security: securityRandom === null ? null : drawSecurity(securityRandom),
    embedded: null,
    sequentialWrites: null,
    uploadWhenIdle: false,
  };
  if (shapesRandom === null) return { ...drawn, shapes: plainShapes(producers.length) };
  const tier = drawn.tier === null ? null : { ...drawn.tier, lifecycle: drawTierLifecycle(shapesRandom) };
  return { ...drawn, tier, shapes: drawWorkloadShapes(shapesRandom, producers.length) };
}

function drawTier(random: SeededRandom): TierScenario | null {
  if (random.next() >= TIER_SHARE) return null;
  const segmentBytes = TIER_SEGMENT_BYTES_MIN + random.nextInt(TIER_SEGMENT_BYTES_MAX - TIER_SEGMENT_BYTES_MIN + 1);
  const intervalMs = TIER_INTERVAL_MS_MIN + random.nextInt(TIER_INTERVAL_MS_MAX - TIER_INTERVAL_MS_MIN + 1);
  const localRetentionBytes = random.next() < SMALL_LOCAL_RETENTION_SHARE ? segmentBytes * pick(random, LOCAL_RETENTION_SEGMENTS) : null;
  const retentionCheckIntervalMs = pick(random, RETENTION_CHECK_INTERVALS_MS);
  const tailMaxBytes = random.next() < TAIL_TIERING_SHARE ? Math.round(segmentBytes * pick(random, TAIL_MAX_SEGMENT_FRACTIONS)) : null;
  return { segmentBytes, intervalMs, localRetentionBytes, retentionCheckIntervalMs, tailMaxBytes };
}

function drawTierLifecycle(random: SeededRandom): TierLifecycle {
  return {
    retentionMs: pick(random, RETENTIONS_MS),
    retentionBytes: pick(random, RETENTIONS_BYTES),
    sweepIntervalMs: pick(random, SWEEP_INTERVALS_MS),
    orphanDelayMs: pick(random, ORPHAN_DELAYS_MS),
    walGcIdlePassMs: pick(random, WAL_GC_IDLE_PASSES_MS),
  };
}

/** Every producer plain: one small batch per request, as before issue 25. */
function plainShapes(producers: number): WorkloadShapes {
  return { producers: Array.from({ length: producers }, () => ({ lingerMs: 0, burstMax: 1, compression: 'none' as const, batchBytesMax: 0 })), maxMessageBytes: null };
}

export function describeScenario(scenario: Scenario): string {
  if (scenario.embedded !== null) return describeEmbeddedScenario(scenario, scenario.embedded);
  const shape = scenario.cluster ? `${scenario.brokers} brokers, RF ${scenario.replicationFactor}, min.insync ${scenario.minInsyncReplicas}, lease ${scenario.leaseMs} ms` : '1 broker';
  const topics = scenario.topics.map((t) => `${t.name}×${t.partitions}`).join(' ');
  const producers = scenario.producers.map((p) => `${p.name}(${p.idempotent ? 'idempotent' : 'plain'}, acks ${p.acks})`).join(' ');
  return `${shape}; topics ${topics}${scenario.recreateTopics ? ' (re-created)' : ''}; producers ${producers}; ${scenario.partitionConsumers} partition consumers, ${scenario.groupConsumers} group consumers; ${Math.round(scenario.chaosMs / 1000)} s of faults every ~${scenario.faultIntervalMs / 1000} s${describeTier(scenario.tier)}${describeSecurity(scenario.security)}${describeShapes(scenario.shapes)}${describeSequentialWrites(scenario.sequentialWrites)}${describeUploadWhenIdle(scenario)}`;
}

function describeEmbeddedScenario(scenario: Scenario, embedded: EmbeddedScenario): string {
  const topics = embedded.topics.map((t) => `${t.name}×${t.partitions}`).join(' ');
  return `${describeEmbedded(embedded)}; topics ${topics}; ${Math.round(scenario.chaosMs / 1000)} s of faults every ~${scenario.faultIntervalMs / 1000} s${describeTier(embedded.tier)}${describeSequentialWrites(scenario.sequentialWrites)}${describeUploadWhenIdle(scenario)}`;
}

function describeUploadWhenIdle(scenario: Scenario): string {
  return scenario.uploadWhenIdle ? '; WAL uploads when idle' : '';
}

function describeTier(tier: TierScenario | null): string {
  if (tier === null) return '';
  const local = tier.localRetentionBytes === null ? 'local retention as retention' : `local.retention.bytes ${tier.localRetentionBytes}`;
  const tail = tier.tailMaxBytes === null ? '' : `, the active segment tiered every ${tier.tailMaxBytes} bytes`;
  return `; tiered: segment.bytes ${tier.segmentBytes}, every ${tier.intervalMs} ms${tail}, ${local}, retention checked every ${tier.retentionCheckIntervalMs} ms${describeLifecycle(tier.lifecycle)}`;
}

function describeLifecycle(lifecycle: TierLifecycle | undefined): string {
  if (lifecycle === undefined) return '';
  const retention = [lifecycle.retentionMs === null ? '' : `retention.ms ${lifecycle.retentionMs}`, lifecycle.retentionBytes === null ? '' : `retention.bytes ${lifecycle.retentionBytes}`].filter(
    (part) => part !== '',
  );
  return `${retention.length === 0 ? '' : `, ${retention.join(', ')}`}, orphans swept every ${lifecycle.sweepIntervalMs} ms after ${lifecycle.orphanDelayMs} ms, WAL GC idle at most ${lifecycle.walGcIdlePassMs} ms`;
}
