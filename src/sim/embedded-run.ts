import { MemoryStore } from '../store/memory.ts';
import { SeededRandom } from '../util/random.ts';
import { parseWalObjectKey } from '../wal/keys.ts';
import { ClockRates } from './clock-rates.ts';
import { SimDisk } from './disk.ts';
import { EmbeddedApp } from './embedded-app.ts';
import { drawEmbeddedFaultKind, type EmbeddedFaultKind, POWER_LOSS_AFTER_GC, powerLoss } from './embedded-faults.ts';
import { EMBEDDED_NODE_ID, SimEmbeddedHost } from './embedded-host.ts';
import { type EmbeddedScenario, POWER_LOSS_AFTER_GC_MS_MAX } from './embedded-scenario.ts';
import { faultEvent } from './faults.ts';
import { FrameStraddles } from './frame-straddles.ts';
import type { ClientOp, FaultEvent, History, ReplicaLog } from './history.ts';
import { readReplicaLog } from './replica-log-read.ts';
import { ReplicaEndRecorder } from './replica-ends.ts';
import { RetentionDeletes } from './retention-deletes.ts';
import { collectUncaught, runViolations, type SimRunResult, simRunResult } from './run-result.ts';
import { CLOCK_RATE_SALT, DRAIN_MS, EVENTS_MAX, FAULT_SALT, LIVENESS_BOUND_MS, onTimeBase, retentionDefaultsOf, SCHEDULE_SALT, STARTUP_MS_MAX, STORE_FAULTS, STORE_SALT } from './run-settings.ts';
import type { Scenario } from './scenario.ts';
import { ProcessGate, SimClock, SimScheduler } from './scheduler.ts';
import { SimStoreView } from './store.ts';
import { auditTier, type TierAuditTarget, TierRecordWrites } from './tier-audit.ts';
import { auditWal, WalWrites } from './wal-audit.ts';
import { deletedWalRecords, WalDeleteRecorder } from './wal-gc.ts';
import { NO_SEQUENTIAL_WRITES, SequentialWrites } from './sequential-writes.ts';

/** Draws which WAL GC deletes a power loss follows, and how soon: a stream of its own, so the scheduled faults stay as they are. */
const POWER_LOSS_AFTER_GC_SALT = 0x9c10;
/** The application's draws (which partition, how many records, when). */
const APP_SALT = 0xa99;

export interface EmbeddedRunOptions {
  readonly seed: number;
  /** The seed's scenario: of it, an embedded run takes only the timings (Scenario.embedded). */
  readonly scenario: Scenario;
  readonly embedded: EmbeddedScenario;
  /** Only these fault kinds (all when absent); POWER_LOSS_AFTER_GC among them enables the power losses after GC. */
  readonly faults?: ReadonlySet<string>;
  readonly log?: (line: string) => void;
}

/**
 * One seed's run of a stand-alone embedded engine (embedded-scenario.ts): the engine on its host
 * (embedded-host.ts) and the application calling it (embedded-app.ts), faults on a schedule and
 * power losses after WAL GC's deletes, then the quiet, the probes, and the same audit and checker
 * as a broker run (run.ts): the final log, the WAL and the tier as the stores hold them.
 */
export async function runEmbeddedSeed(options: EmbeddedRunOptions): Promise<SimRunResult> {
  const { seed, scenario, embedded } = options;
  const { topics, tier } = embedded;
  const scheduler = new SimScheduler(new SeededRandom(seed ^ SCHEDULE_SALT));
  const log = options.log ?? (() => {});
  const uncaught = collectUncaught(scheduler);
  const startMs = scheduler.nowMs;
  const nowMs = () => scheduler.nowMs - startMs;
  const timed = (line: string) => log(`[${(nowMs() / 1000).toFixed(3)}] ${line}`);
  const tierWrites = new TierRecordWrites(nowMs);
  const straddles = new FrameStraddles();
  const retentionDeletes = new RetentionDeletes(nowMs);
  const faults: FaultEvent[] = [];
  let afterGc: ((key: string) => void) | null = null;
  let walDeletes: WalDeleteRecorder | null = null;
  const walStore = new MemoryStore({
    latency: 's3-express',
    seed: seed ^ STORE_SALT,
    clock: new SimClock(scheduler, new ProcessGate('object-store')),
    faults: STORE_FAULTS,
    onPut: (key, body) => {
      tierWrites.put(key, body);
      walDeletes?.written(key);
      straddles.put(key, body);
    },
    onDelete: (key, body) => {
      walDeletes!.deleted(key, body);
      straddles.deleted(key);
      afterGc?.(key);
    },
  });
  walDeletes = new WalDeleteRecorder({ walStore, controlStore: walStore, nowMs });
  const clockRates = new ClockRates(new SeededRandom(seed ^ CLOCK_RATE_SALT));
  const walWrites = new WalWrites();
  const sequentialWrites = scenario.sequentialWrites === null ? null : new SequentialWrites(scenario.sequentialWrites);
  const disk = new SimDisk({ random: new SeededRandom(Math.floor(scheduler.random.next() * 0x1_0000_0000)) });
  const host = new SimEmbeddedHost(
    { walStore, walWrites, clockRates, retentionDeletes, uploadIntervalMs: scenario.uploadIntervalMs, uploadWhenIdle: scenario.uploadWhenIdle, embedded, sequentialWrites },
    disk,
    scheduler,
    timed,
  );
  const replicaEnds = new ReplicaEndRecorder([host], topics, nowMs);
  scheduler.afterEvent = () => replicaEnds.sample();
  const health: { node: number; atMs: number; healthy: boolean }[] = [];
  host.onHealth = (healthy) => health.push({ node: EMBEDDED_NODE_ID, atMs: nowMs(), healthy });
  const ops: ClientOp[] = [];
  const overBudget = () => scheduler.eventsRun > EVENTS_MAX;
  const runFor = (ms: number, done: () => boolean = () => false) => scheduler.run(scheduler.nowMs + ms, () => done() || overBudget());

  host.start();
  await runFor(STARTUP_MS_MAX, () => host.state === 'running');
  const app = new EmbeddedApp({ scheduler, host, topics, embedded, record: (op) => ops.push(op), random: new SeededRandom(seed ^ APP_SALT) });
  await app.setup(runFor, STARTUP_MS_MAX);

  const chaos = new EmbeddedChaos({ scheduler, host, faults, enabled: options.faults ?? null, nowMs, log: timed, random: new SeededRandom(seed ^ FAULT_SALT) });
  const chaosEndMs = scheduler.nowMs + scenario.chaosMs;
  if (embedded.powerLossAfterGcRate > 0 && (options.faults === undefined || options.faults.has(POWER_LOSS_AFTER_GC))) {
    const random = new SeededRandom(seed ^ POWER_LOSS_AFTER_GC_SALT);
    afterGc = (key) => {
      if (scheduler.nowMs >= chaosEndMs || parseWalObjectKey('', key) === null || random.next() >= embedded.powerLossAfterGcRate) return;
      const afterGcKind: EmbeddedFaultKind = { name: POWER_LOSS_AFTER_GC, weight: 0, inject: (target, draw) => powerLoss(target, draw, `after WAL GC deleted ${key}`) };
      // Due after the chaos ended, it would strike the quiet and never heal (seed 400074: no engine at the end).
      scheduler.schedule(random.next() * POWER_LOSS_AFTER_GC_MS_MAX, () => scheduler.nowMs < chaosEndMs && chaos.inject(afterGcKind, random));
    };
  }
  app.start();
  chaos.schedule(scenario.faultIntervalMs, chaosEndMs);
  await scheduler.run(chaosEndMs, overBudget);

  // quiet: every fault heals, the process runs; then each partition must take a write and serve it
  afterGc = null;
  chaos.healAll();
  host.resume();
  host.start();
  const quietFromMs = scheduler.nowMs;
  timed(`quiet: faults healed; ${host.host} ${host.state}`);
  await runFor(LIVENESS_BOUND_MS, () => host.state === 'running' && !host.stopping);
  const probes = await app.probe(quietFromMs, LIVENESS_BOUND_MS, runFor);
  await app.stop(DRAIN_MS, runFor);
  timed(`audit: ${host.host} ${host.state}`);
  const { replicaLogs, tierTargets } = finalLogs(host, topics);
  host.freeze(); // the tierer would go on tiering (and dropping local segments) while the audit reads
  const auditView = new SimStoreView(walStore, new ProcessGate('audit'), scheduler, new SeededRandom(seed));
  const walRecords = [...auditWal(walStore, walWrites, startMs), ...deletedWalRecords(walDeletes, walWrites, startMs)];
  const tiered = await auditTier(auditView, auditView, tierTargets, runFor);
  const history: History = {
    seed,
    startMs: 0,
    ops: ops.map((op) => onTimeBase(op, startMs)),
    faults,
    replicaLogs,
    walRecords,
    replicaEnds: replicaEnds.ends,
    probes,
    quietFromMs: quietFromMs - startMs,
    shape: { brokers: 1, cluster: false, replicationFactor: 1, minInsyncReplicas: 1, leaseMs: scenario.leaseMs, scanIntervalMs: scenario.scanIntervalMs },
    health,
    stranded: [],
    livenessBoundMs: LIVENESS_BOUND_MS,
    tiered,
    tierWrites: tierWrites.writes,
    walDeletes: walDeletes.deletes,
    leases: { renewals: [], partitionWrites: [], clockRateErrors: clockRates.errors },
    retentionDeletes: retentionDeletes.deletes,
    retentionDefaults: retentionDefaultsOf(tier),
    wallClockAtZeroMs: startMs,
  };
  const violations = runViolations(history, uncaught, overBudget(), nowMs());
  host.crash(); // ends the process: nothing of this run outlives it
  return simRunResult({
    seed,
    scenario,
    history,
    violations,
    simulatedMs: nowMs(),
    faultsInjected: chaos.injected,
    eventsRun: scheduler.eventsRun,
    straddles: straddles.stats,
    sequentialWrites: sequentialWrites?.stats ?? NO_SEQUENTIAL_WRITES,
  });
}

/** The engine's final log of every partition, and the incarnation each is of (what the tier audit reads). */
function finalLogs(host: SimEmbeddedHost, topics: readonly { readonly name: string; readonly partitions: number }[]): { replicaLogs: ReplicaLog[]; tierTargets: TierAuditTarget[] } {
  const engine = host.serving;
  const replicaLogs: ReplicaLog[] = [];
  const tierTargets: TierAuditTarget[] = [];
  if (engine === null) return { replicaLogs, tierTargets };
  for (const topic of topics) {
    const topicId = engine.topics().find((description) => description.name === topic.name)?.id;
    for (let partition = 0; partition < topic.partitions; partition++) {
      if (!engine.serves(topic.name, partition)) continue;
      replicaLogs.push(readReplicaLog(EMBEDDED_NODE_ID, engine, topic.name, partition));
      if (topicId !== undefined) tierTargets.push({ topic: topic.name, partition, topicId });
    }
  }
  return { replicaLogs, tierTargets };
}

interface EmbeddedChaosOptions {
  readonly scheduler: SimScheduler;
  readonly host: SimEmbeddedHost;
  /** Where each fault and heal is noted (the history's). */
  readonly faults: FaultEvent[];
  readonly enabled: ReadonlySet<string> | null;
  readonly nowMs: () => number;
  readonly log: (line: string) => void;
  readonly random: SeededRandom;
}

/** The faults of an embedded run: each injected on the host, noted, and healed after its drawn time (or at the quiet). */
class EmbeddedChaos {
  readonly #options: EmbeddedChaosOptions;
  readonly #active = new Set<{ readonly kind: string; readonly heal: () => void }>();
  injected = 0;

  constructor(options: EmbeddedChaosOptions) {
    this.#options = options;
  }

  /** Faults at exponentially drawn gaps of mean `intervalMs`, until `untilMs` (simulated). */
  schedule(intervalMs: number, untilMs: number): void {
    const { scheduler, random, enabled } = this.#options;
    const waitMs = random.nextExponential(intervalMs);
    if (scheduler.nowMs + waitMs >= untilMs) return;
    scheduler.schedule(waitMs, () => {
      const kind = drawEmbeddedFaultKind(random, enabled);
      if (kind !== null) this.inject(kind);
      this.schedule(intervalMs, untilMs);
    });
  }

  /** Injects one fault of `kind` unless one of it is in force or it does not apply now; `random` draws how it goes (default: the schedule's stream). */
  inject(kind: EmbeddedFaultKind, random: SeededRandom = this.#options.random): void {
    const { host, faults, nowMs, log, scheduler } = this.#options;
    if ([...this.#active].some((fault) => fault.kind === kind.name)) return;
    const injected = kind.inject(host, random);
    if (injected === null) return;
    this.injected++;
    faults.push(faultEvent(nowMs(), kind.name, `${host.host}${injected.detail === '' ? '' : ` (${injected.detail})`}`));
    log(`fault ${kind.name} on ${host.host} ${injected.detail}`);
    const fault = {
      kind: kind.name,
      heal: () => {
        if (!this.#active.delete(fault)) return;
        injected.heal();
        faults.push(faultEvent(nowMs(), `heal ${kind.name}`, host.host));
      },
    };
    this.#active.add(fault);
    scheduler.schedule(injected.lastsMs, fault.heal);
  }

  healAll(): void {
    for (const fault of [...this.#active]) fault.heal();
  }
}
