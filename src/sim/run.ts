import { loadXxh64Stream } from '../wal/bytes.ts';
import { MemoryStore } from '../store/memory.ts';
import { deletedWalRecords, WalDeleteRecorder } from './wal-gc.ts';
import { SeededRandom } from '../util/random.ts';
import { SimBrokerHost } from './broker-process.ts';
import { RetentionDeletes } from './retention-deletes.ts';
import { SimDisk } from './disk.ts';
import { type ActiveFault, drawFaultKind, faultEvent } from './faults.ts';
import type { ClientOp, FaultEvent, History, ProbeResult, ReplicaLog, StrandedChange } from './history.ts';
import { SimNetwork } from './network.ts';
import { type Scenario, drawScenario } from './scenario.ts';
import { ProcessGate, SimClock, SimScheduler } from './scheduler.ts';
import { ReplicaEndRecorder } from './replica-ends.ts';
import { PARTITIONS_MAX } from './topic-admin-load.ts';
import { auditTier, type TierAuditTarget, TierRecordWrites } from './tier-audit.ts';
import { collectUncaught, runViolations, type SimRunResult, simRunResult } from './run-result.ts';
import { FrameStraddles } from './frame-straddles.ts';
import { auditWal, WalWrites } from './wal-audit.ts';
import { SimStoreView } from './store.ts';
import { SimWorkload } from './workload.ts';
import { FAILED_AUTHENTICATION_DELAY_MS_DEFAULT } from '../broker/auth/listener-security.ts';
import { ACL_PROPAGATION_MS, SUPER_USERS, simSecurity, type SimSecurity, writeScramCredentials } from './security-setup.ts';
import { LeaseWrites } from './lease-writes.ts';
import { ClockRates } from './clock-rates.ts';
import { readReplicaLog } from './replica-log-read.ts';
import {
  CLOCK_RATE_SALT,
  DRAIN_MS,
  EMBEDDED_SALT,
  EVENTS_MAX,
  FAULT_SALT,
  LIVENESS_BOUND_MS,
  onTimeBase,
  retentionDefaultsOf,
  SCHEDULE_SALT,
  STARTUP_MS_MAX,
  STORE_FAULTS,
  STORE_SALT,
} from './run-settings.ts';
import { runEmbeddedSeed } from './embedded-run.ts';
import { NO_SEQUENTIAL_WRITES, SequentialWrites } from './sequential-writes.ts';

/** Once the clients stopped: the group's committed offsets are read within this (every broker runs: a coordinator answers in seconds). */
const COMMITTED_OFFSETS_READ_MS_MAX = 15_000;
/**
 * Before the audit: the cluster settles (`settled`), or this passed. Leadership moves through
 * leases and scans, so a broker may lead, in its engine, a partition another broker took meanwhile
 * until its next scan: one cut off from the control store until the quiet (not acknowledging: its
 * lease lapsed), or one whose lease was renewed just as a slow scan of another broker, which read
 * it as dead, claimed the partition (the seal fences its stream). Read then, it looks like a second
 * leader; a partition mid-takeover has none. Generous (leases renew every leaseMs / 3, a scan may
 * rebuild): a cluster not settled by then is audited as it is, and the invariants report it.
 */
const SETTLE_MS_MAX = 30_000;
/** Keeps the streams of the seed's draws apart, so adding a draw to one does not shift the others (run-settings.ts holds those an embedded run draws too). */
const SCENARIO_SALT = 0x5ce7a210;
const TOPIC_ADMIN_SALT = 0xad312;
const SECURITY_SALT = 0x5ec0de;
const AMBIGUOUS_SALT = 0xa4b16;
const SHAPES_SALT = 0x5a4e5;
const PRODUCE_SHAPES_SALT = 0xb47c4;
const CONFIG_CHANGE_SALT = 0xc0f1c;
const GROUP_SALT = 0x6a0b5;
/** Whether the WAL store offers sequential writes (sequential-writes.ts). */
const SEQUENTIAL_WRITE_SALT = 0x5e9a1;
const UPLOAD_WHEN_IDLE_SALT = 0x1d1e5;
/**
 * How often a broker's view of the control store loses the answer to a conditional put (CW1,
 * docs/cluster-protocol.md), drawn per run from its own stream: none in a third of the runs, so
 * the background faults alone are seen too.
 */
const CONTROL_AMBIGUOUS_RATES = [0, 0.05, 0.25];
/** Writing the SCRAM credentials before the brokers start: the wait between tries a store fault failed. */
const CREDENTIALS_RETRY_MS = 100;

export interface SimRunOptions {
  readonly seed: number;
  /** Override the drawn scenario (tests). */
  readonly scenario?: Partial<Scenario>;
  /** Only these fault kinds (all when absent). */
  readonly faults?: ReadonlySet<string>;
  /** Broker and simulation log lines (a run is silent otherwise). */
  readonly log?: (line: string) => void;
}

export async function runSeed(options: SimRunOptions): Promise<SimRunResult> {
  const { seed } = options;
  // Real asynchronous work under the simulated clock breaks replay: the tierer's first round loads
  // the streaming XXH64 (a WASM compile), and when it finished depended on the machine and on what
  // ran before in the process (seeds 4 and 29 gave a new trace at each run). Loaded before the run,
  // every later load is a settled promise.
  await loadXxh64Stream();
  const securityRandom = new SeededRandom(seed ^ SECURITY_SALT);
  const drawn = drawScenario(
    new SeededRandom(seed ^ SCENARIO_SALT),
    securityRandom,
    new SeededRandom(seed ^ SHAPES_SALT),
    new SeededRandom(seed ^ EMBEDDED_SALT),
    new SeededRandom(seed ^ SEQUENTIAL_WRITE_SALT),
    new SeededRandom(seed ^ UPLOAD_WHEN_IDLE_SALT),
  );
  const scenario: Scenario = { ...drawn, ...options.scenario };
  if (scenario.embedded !== null) return runEmbeddedSeed({ ...options, scenario, embedded: scenario.embedded });
  const security: SimSecurity | null =
    scenario.security === null
      ? null
      : simSecurity(
          scenario.security,
          scenario.producers.map((producer) => producer.name),
          securityRandom,
        );
  const scheduler = new SimScheduler(new SeededRandom(seed ^ SCHEDULE_SALT));
  const log = options.log ?? (() => {});
  const uncaught = collectUncaught(scheduler);
  const network = new SimNetwork(scheduler);
  const storeClock = new SimClock(scheduler, new ProcessGate('object-store'));
  const startMs = scheduler.nowMs;
  const tierWrites = scenario.tier === null ? null : new TierRecordWrites(() => scheduler.nowMs - startMs);
  const straddles = new FrameStraddles();
  // Leases and claims live in the control store, a lone broker's in its WAL store.
  const leaseWrites = new LeaseWrites(() => scheduler.nowMs - startMs);
  const retentionDeletes = new RetentionDeletes(() => scheduler.nowMs - startMs);
  const onPut = (leases: boolean) => ({
    onPut: (key: string, body: Uint8Array) => {
      tierWrites?.put(key, body);
      walDeletes?.written(key);
      straddles.put(key, body);
      if (leases) leaseWrites.put(key, body);
    },
  });
  let walDeletes: WalDeleteRecorder | null = null;
  const onDelete =
    scenario.tier === null
      ? {}
      : {
          onDelete: (key: string, body: Uint8Array) => {
            walDeletes!.deleted(key, body);
            straddles.deleted(key);
          },
        };
  const walStore = new MemoryStore({ latency: 's3-express', seed: seed ^ STORE_SALT, clock: storeClock, faults: STORE_FAULTS, ...onPut(!scenario.cluster), ...onDelete });
  const controlStore = new MemoryStore({ latency: 's3-express', seed: (seed ^ STORE_SALT) + 1, clock: storeClock, faults: STORE_FAULTS, ...onPut(scenario.cluster) });
  const clockRates = new ClockRates(new SeededRandom(seed ^ CLOCK_RATE_SALT));
  const walWrites = new WalWrites();
  const sequentialWrites = scenario.sequentialWrites === null ? null : new SequentialWrites(scenario.sequentialWrites);
  const ambiguousRandom = new SeededRandom(seed ^ AMBIGUOUS_SALT);
  const ambiguousConditionalRate = CONTROL_AMBIGUOUS_RATES[ambiguousRandom.nextInt(CONTROL_AMBIGUOUS_RATES.length)]!;
  const timed = (line: string) => log(`[${((scheduler.nowMs - startMs) / 1000).toFixed(3)}] ${line}`);
  const hosts = Array.from({ length: scenario.brokers }, (_, i) => {
    const settings = {
      nodeId: i + 1,
      cluster: scenario.cluster ? { controlStore, leaseMs: scenario.leaseMs, scanIntervalMs: scenario.scanIntervalMs, ambiguousConditionalRate } : null,
      lone: { leaseMs: scenario.leaseMs, scanIntervalMs: scenario.scanIntervalMs },
      walStore,
      walWrites,
      leaseWrites,
      clockRates,
      retentionDeletes,
      uploadIntervalMs: scenario.uploadIntervalMs,
      uploadWhenIdle: scenario.uploadWhenIdle,
      minInsyncReplicas: scenario.minInsyncReplicas,
      defaultReplicationFactor: scenario.replicationFactor,
      tier: scenario.tier,
      security,
      sequentialWrites,
    };
    return new SimBrokerHost(settings, new SimDisk({ random: new SeededRandom(Math.floor(scheduler.random.next() * 0x1_0000_0000)) }), scheduler, network, timed);
  });
  if (scenario.tier !== null) walDeletes = walDeleteRecorder(walStore, controlStore, scenario.cluster, () => scheduler.nowMs - startMs);
  // Every partition a topic may grow to (CreatePartitions, topic-admin-load.ts): one not there yet is served nowhere, and records nothing.
  const replicaEndTopics = scenario.topics.map((topic) => ({ name: topic.name, partitions: Math.max(topic.partitions, PARTITIONS_MAX) }));
  const replicaEnds = new ReplicaEndRecorder(hosts, replicaEndTopics, () => scheduler.nowMs - startMs);
  scheduler.afterEvent = () => replicaEnds.sample();
  const faults: FaultEvent[] = [];
  const health: { node: number; atMs: number; healthy: boolean }[] = [];
  for (const host of hosts) host.onHealth = (healthy) => health.push({ node: host.settings.nodeId, atMs: scheduler.nowMs - startMs, healthy });
  const stranded: StrandedChange[] = [];
  for (const host of hosts) host.onStranded = (now) => stranded.push({ node: host.settings.nodeId, atMs: scheduler.nowMs - startMs, stranded: now });
  const ops: ClientOp[] = [];
  const overBudget = () => scheduler.eventsRun > EVENTS_MAX;
  const runFor = (ms: number, done: () => boolean = () => false) => scheduler.run(scheduler.nowMs + ms, () => done() || overBudget());

  if (security !== null) {
    // As `ferry users add` before the cluster starts: every broker reads the credentials at its start.
    const view = new SimStoreView(scenario.cluster ? controlStore : walStore, new ProcessGate('setup'), scheduler, new SeededRandom(seed));
    let written = false;
    void writeScramCredentials(view, security, securityRandom, () => new Promise((resolve) => void scheduler.schedule(CREDENTIALS_RETRY_MS, resolve))).then(() => void (written = true));
    await runFor(STARTUP_MS_MAX, () => written);
  }
  for (const host of hosts) host.start();
  await runFor(STARTUP_MS_MAX, () => hosts.every((host) => host.state === 'running'));
  const workload = new SimWorkload({
    scenario,
    scheduler,
    network,
    hosts,
    record: (op) => ops.push(op),
    log: timed,
    random: new SeededRandom(seed),
    adminRandom: new SeededRandom(seed ^ TOPIC_ADMIN_SALT),
    shapesRandom: new SeededRandom(seed ^ PRODUCE_SHAPES_SALT),
    configRandom: new SeededRandom(seed ^ CONFIG_CHANGE_SALT),
    security,
    securityRandom,
    groupRandom: new SeededRandom(seed ^ GROUP_SALT),
  });
  await workload.setup(runFor);

  // chaos: faults at seeded moments, on seeded hosts, each healing after its drawn time
  const faultRandom = new SeededRandom(seed ^ FAULT_SALT);
  const active = new Set<ActiveFault>();
  const chaosEndMs = scheduler.nowMs + scenario.chaosMs;
  let faultsInjected = 0;
  const scheduleFault = (): void => {
    const waitMs = faultRandom.nextExponential(scenario.faultIntervalMs);
    if (scheduler.nowMs + waitMs >= chaosEndMs) return;
    scheduler.schedule(waitMs, () => {
      injectOne();
      scheduleFault();
    });
  };
  const injectOne = (): void => {
    const host = hosts[faultRandom.nextInt(hosts.length)]!;
    const kind = drawFaultKind(faultRandom, scenario.cluster, options.faults ?? null);
    if (kind === null) return; // none of the faults asked for applies to this shape
    if ([...active].some((fault) => fault.host === host.host && fault.kind === kind.name)) return;
    const injected = kind.inject({ host, hosts, leaseMs: scenario.leaseMs }, faultRandom);
    if (injected === null) return;
    faultsInjected++;
    faults.push(faultEvent(scheduler.nowMs - startMs, kind.name, `${host.host}${injected.detail === '' ? '' : ` (${injected.detail})`}`));
    timed(`fault ${kind.name} on ${host.host} ${injected.detail}`);
    const fault: ActiveFault = { kind: kind.name, host: host.host, heal: () => {} };
    const heal = () => {
      if (!active.delete(fault)) return;
      injected.heal();
      faults.push(faultEvent(scheduler.nowMs - startMs, `heal ${kind.name}`, host.host));
    };
    (fault as { heal: () => void }).heal = heal;
    active.add(fault);
    scheduler.schedule(injected.lastsMs, heal);
  };
  workload.start();
  scheduleFault();
  await scheduler.run(chaosEndMs, overBudget);

  // quiet: every fault heals, every host runs; then each partition must take a write and serve it
  for (const fault of [...active]) fault.heal();
  for (const host of hosts) {
    host.resume();
    host.start();
  }
  const quietFromMs = scheduler.nowMs;
  timed(`quiet: faults healed; ${hosts.map((host) => `${host.host} ${host.state}`).join(', ')}`);
  await runFor(LIVENESS_BOUND_MS, () => hosts.every((host) => host.state === 'running' && !host.stopping)); // a SIGTERM'd broker finishes stopping and starts again
  const probes: ProbeResult[] = await workload.probe(quietFromMs, LIVENESS_BOUND_MS, runFor);
  await workload.stop(DRAIN_MS, runFor);
  await workload.readCommittedOffsets(COMMITTED_OFFSETS_READ_MS_MAX, runFor);
  await runFor(SETTLE_MS_MAX, () => settled(hosts, workload.finalTopics()));
  timed(`audit: ${hosts.map((host) => `${host.host} ${host.state}`).join(', ')}`);
  const replicaLogs = collectReplicaLogs(hosts, workload.finalTopics());
  const tierTargets = tierAuditTargets(hosts, workload.finalTopics());
  // A leader that tiers would go on tiering (and dropping local segments) while the audit reads: the tier is read as the logs were collected.
  if (tierWrites !== null) for (const host of hosts) host.freeze();
  const walAuditView = new SimStoreView(walStore, new ProcessGate('audit'), scheduler, new SeededRandom(seed));
  const walRecords = [...auditWal(walStore, walWrites, startMs), ...(walDeletes === null ? [] : deletedWalRecords(walDeletes, walWrites, startMs))];
  const controlAuditView = () => (scenario.cluster ? new SimStoreView(controlStore, new ProcessGate('audit'), scheduler, new SeededRandom(seed)) : walAuditView);
  const tiered = tierWrites === null ? null : await auditTier(walAuditView, controlAuditView(), tierTargets, runFor);
  const history: History = {
    seed,
    startMs: 0, // the ops' base: traces print times as the fault list and the invariants' messages do
    ops: ops.map((op) => onTimeBase(op, startMs)),
    faults,
    replicaLogs,
    walRecords,
    replicaEnds: replicaEnds.ends,
    probes,
    quietFromMs: quietFromMs - startMs,
    shape: {
      brokers: scenario.brokers,
      cluster: scenario.cluster,
      replicationFactor: scenario.replicationFactor,
      minInsyncReplicas: scenario.minInsyncReplicas,
      leaseMs: scenario.leaseMs,
      scanIntervalMs: scenario.scanIntervalMs,
    },
    health,
    stranded,
    livenessBoundMs: LIVENESS_BOUND_MS,
    ...(tiered === null || tierWrites === null ? {} : { tiered, tierWrites: tierWrites.writes }),
    ...(walDeletes === null ? {} : { walDeletes: walDeletes.deletes }),
    leases: { renewals: leaseWrites.renewals, partitionWrites: leaseWrites.partitionWrites, clockRateErrors: clockRates.errors },
    retentionDeletes: retentionDeletes.deletes,
    retentionDefaults: retentionDefaultsOf(scenario.tier),
    wallClockAtZeroMs: startMs,
    ...(security === null
      ? {}
      : { security: { users: workload.users(), superUsers: [...SUPER_USERS], aclPropagationMs: ACL_PROPAGATION_MS, failedAuthenticationDelayMs: FAILED_AUTHENTICATION_DELAY_MS_DEFAULT } }),
  };
  const violations = runViolations(history, uncaught, overBudget(), scheduler.nowMs - startMs);
  for (const host of hosts) host.crash(); // ends every process: nothing of this run outlives it
  return simRunResult({
    seed,
    scenario,
    history,
    violations,
    simulatedMs: scheduler.nowMs - startMs,
    faultsInjected,
    eventsRun: scheduler.eventsRun,
    straddles: straddles.stats,
    sequentialWrites: sequentialWrites?.stats ?? NO_SEQUENTIAL_WRITES,
  });
}

/**
 * Records the WAL collector's deletes (wal-gc-needed). A cluster's topics are its topic records;
 * a single broker's are its engine's registry, the last engine's while the broker is down (a delete
 * it sent before it died may still take effect).
 */
function walDeleteRecorder(walStore: MemoryStore, controlStore: MemoryStore, cluster: boolean, nowMs: () => number): WalDeleteRecorder {
  return new WalDeleteRecorder({ walStore, controlStore: cluster ? controlStore : walStore, nowMs });
}

/** Every running broker acknowledges (its lease held and confirmed), and every partition has exactly one leader among them. */
function settled(hosts: readonly SimBrokerHost[], topics: readonly { readonly name: string; readonly partitions: number }[]): boolean {
  const running = hosts.flatMap((host) => (host.broker === null ? [] : [host.broker]));
  if (!running.every((broker) => broker.acknowledging)) return false;
  return topics.every((topic) =>
    Array.from({ length: topic.partitions }, (_, partition) => partition).every((partition) => running.filter((broker) => broker.context.engine.leads(topic.name, partition)).length === 1),
  );
}

/** Every replica's log of every partition of the topics as they are at the end, from the engines themselves. */
function collectReplicaLogs(hosts: readonly SimBrokerHost[], topics: readonly { readonly name: string; readonly partitions: number }[]): ReplicaLog[] {
  const logs: ReplicaLog[] = [];
  for (const host of hosts) {
    const engine = host.broker?.context.engine;
    if (engine === undefined) continue;
    for (const topic of topics) {
      for (let partition = 0; partition < topic.partitions; partition++) {
        if (!engine.serves(topic.name, partition)) continue;
        logs.push(readReplicaLog(host.settings.nodeId, engine, topic.name, partition));
      }
    }
  }
  return logs;
}

/** Each partition of the final topics with the incarnation its final leader serves (partitions without one have no tier to judge against). */
function tierAuditTargets(hosts: readonly SimBrokerHost[], topics: readonly { readonly name: string; readonly partitions: number }[]): TierAuditTarget[] {
  const targets: TierAuditTarget[] = [];
  for (const topic of topics) {
    for (let partition = 0; partition < topic.partitions; partition++) {
      const engine = hosts.map((host) => host.broker?.context.engine).find((candidate) => candidate?.leads(topic.name, partition) === true);
      const topicId = engine?.topics().find((description) => description.name === topic.name)?.id;
      if (topicId !== undefined) targets.push({ topic: topic.name, partition, topicId });
    }
  }
  return targets;
}
