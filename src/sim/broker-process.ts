import { RecordLogger } from '../observability/record-logger.ts';
import { Broker, type BrokerOptions } from '../broker/broker.ts';
import { ControlStore } from '../control/control-store.ts';
import type { EngineOptions, OpenedEngine } from '../engine/index.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { SeededRandom } from '../util/random.ts';
import type { SimDisk } from './disk.ts';
import type { SimNetwork } from './network.ts';
import type { TierLifecycle, TierScenario } from './scenario.ts';
import type { LogConfig } from '../log/config.ts';
import { brokerSecurityOptions, type SimSecurity } from './security-setup.ts';
import { ProcessGate, SimClock, type SimScheduler } from './scheduler.ts';
import { SimStoreView, UNREACHABLE_FAIL_MS_MAX, type WriteDelays } from './store.ts';
import type { WalWrites } from './wal-audit.ts';
import type { RetentionDeletes } from './retention-deletes.ts';
import type { ClockRates } from './clock-rates.ts';
import type { LeaseWrites } from './lease-writes.ts';
import { SIM_WAL_GC_INTERVAL_MS } from './wal-gc.ts';
import type { SequentialWrites } from './sequential-writes.ts';

/** Where every simulated broker keeps its data, on its own simulated disk. */
export const SIM_DATA_DIRECTORY = '/ferry/data';
/** The port every simulated broker listens on, on its own simulated host. */
export const SIM_BROKER_PORT = 9092;
/** A broker whose start failed is started again after this, as a supervisor (systemd, Kubernetes) would. */
const SUPERVISOR_RESTART_MS = 1_000;

export interface SimBrokerSettings {
  readonly nodeId: number;
  /**
   * Shares partitions through control records in `controlStore` (cluster mode); a single broker
   * otherwise. `ambiguousConditionalRate`: how often this host's view of the control store loses
   * the answer to a conditional put (SimStoreView), the case CW1 is about.
   */
  readonly cluster: { readonly controlStore: ObjectStore; readonly leaseMs: number; readonly scanIntervalMs: number; readonly ambiguousConditionalRate: number } | null;
  /** A lone broker (cluster null) is a cluster of one over the WAL store: the run's lease and scan, so pauses lapse it too. */
  readonly lone: { readonly leaseMs: number; readonly scanIntervalMs: number };
  readonly walStore: ObjectStore;
  /** Where this host's write requests to the WAL store are noted (the WAL audit). */
  readonly walWrites: WalWrites;
  /** Where each process's writes of broker and partition records are noted as they are sent (leader-within-lease); null: not recorded. */
  readonly leaseWrites: LeaseWrites | null;
  /** Each process's own clock rate, and the rates it ran with. */
  readonly clockRates: ClockRates;
  /** Where each retention pass that deleted segments is noted (retention-kept); null: not recorded. */
  readonly retentionDeletes: RetentionDeletes | null;
  readonly uploadIntervalMs: number;
  readonly minInsyncReplicas: number;
  readonly defaultReplicationFactor: number;
  /** Tier rolled segments into the WAL store (prefix '', keys tier/...), tier records beside the cluster's control records; null: no tier. */
  readonly tier: TierScenario | null;
  /** SASL listeners and an authorizer (issue 13, security-setup.ts); null: one PLAINTEXT listener, no authorizer. */
  readonly security: SimSecurity | null;
  /** The WAL store views offer sequential writes, and WAL objects past its threshold stream (sequential-writes.ts); null: neither. */
  readonly sequentialWrites: SequentialWrites | null;
}

/**
 * One broker host of the simulation: a disk that outlives its processes, and the process that
 * runs on it now (a real Broker, started on simulated clock, network, disk and store views). Each
 * start is a new process with a new gate: killing it drops everything the old one had pending.
 */
export class SimBrokerHost {
  readonly settings: SimBrokerSettings;
  readonly host: string;
  readonly disk: SimDisk;
  readonly #scheduler: SimScheduler;
  readonly #network: SimNetwork;
  readonly #log: (line: string) => void;
  #incarnation = 0;
  #gate: ProcessGate | null = null;
  #clock: SimClock | null = null;
  #walView: SimStoreView | null = null;
  #controlView: SimStoreView | null = null;
  /** A SIGTERM'd process still flushing: a start waits for it to exit. */
  #stopping: ProcessGate | null = null;
  #startAfterStop = false;
  /** The running broker, once its start finished. */
  broker: Broker | null = null;
  /** The current process's engine from the moment it exists (it adopts and follows partitions while the broker still starts); null once the process is gone. */
  engine: OpenedEngine | null = null;
  /**
   * Faults of this host that outlive a restart (they are the host's, not the process's).
   * `clockRate`: the clock-drift fault's rate (null: each process runs at its own);
   * `controlWriteDelays`: the extra time of its control-record writes (slow renewals).
   */
  readonly faults = {
    skewMs: 0,
    walUnreachable: false,
    controlUnreachable: false,
    corruptReadRate: 0,
    isolated: false,
    diskFull: false,
    clockRate: null as number | null,
    controlWriteDelays: null as WriteDelays | null,
  };
  /** The current process's own clock rate (drawn at its start). */
  #ownClockRate = 1;
  /** Told each time the host's health changes (see `healthy`). */
  onHealth: (healthy: boolean) => void = () => {};
  #healthy = false;
  /** Until then, requests sent while a store was unreachable may still fail (setStoreFaults). */
  #storeFailuresUntilMs = 0;
  /** Told each time the host becomes stranded or stops being so (see `stranded`). */
  onStranded: (stranded: boolean) => void = () => {};
  #stranded = false;

  constructor(settings: SimBrokerSettings, disk: SimDisk, scheduler: SimScheduler, network: SimNetwork, log: (line: string) => void) {
    this.settings = settings;
    this.host = `broker-${settings.nodeId}`;
    this.disk = disk;
    this.#scheduler = scheduler;
    this.#network = network;
    this.#log = log;
  }

  /**
   * Serves, is not paused, reaches both stores (no request sent while it could not is still
   * failing) at their usual speed (its control-record writes are not held up: it keeps its lease)
   * and every other host, and its disk has room.
   */
  get healthy(): boolean {
    const { walUnreachable, controlUnreachable, isolated, diskFull, controlWriteDelays } = this.faults;
    const storeFailing = walUnreachable || controlUnreachable || controlWriteDelays !== null || this.#scheduler.nowMs < this.#storeFailuresUntilMs;
    return this.state === 'running' && !storeFailing && !isolated && !diskFull;
  }

  /**
   * Runs and reaches the control store, but no other host: it keeps renewing its lease, so it keeps
   * leading what it leads, while no client reaches it (see StrandedChange in history.ts).
   */
  get stranded(): boolean {
    const { isolated, controlUnreachable } = this.faults;
    return (this.state === 'running' || this.state === 'starting') && isolated && !controlUnreachable;
  }

  #noteHealth(): void {
    const healthy = this.healthy;
    if (healthy !== this.#healthy) {
      this.#healthy = healthy;
      this.onHealth(healthy);
    }
    const stranded = this.stranded;
    if (stranded !== this.#stranded) {
      this.#stranded = stranded;
      this.onStranded(stranded);
    }
  }

  /** A SIGTERM'd process still flushing before it exits. */
  get stopping(): boolean {
    return this.#stopping !== null && this.#stopping === this.#gate;
  }

  get state(): 'down' | 'starting' | 'running' | 'paused' {
    if (this.#gate === null || !this.#gate.alive) return 'down';
    if (this.#gate.state === 'paused') return 'paused';
    return this.broker === null ? 'starting' : 'running';
  }

  /** Starts a new process; resolves when it serves, or never if it dies first. A start that fails is logged and leaves the host down. */
  start(): void {
    if (this.#stopping !== null && this.#stopping === this.#gate && this.#gate.alive) {
      this.#startAfterStop = true;
      return;
    }
    if (this.#gate?.alive === true) return;
    const gate = new ProcessGate(`${this.host}#${++this.#incarnation}`);
    const clock = new SimClock(this.#scheduler, gate);
    clock.skewMs = this.faults.skewMs;
    this.#ownClockRate = this.settings.clockRates.draw();
    clock.rate = this.faults.clockRate ?? this.#ownClockRate;
    this.settings.clockRates.note(gate.name, clock.rate);
    const random = new SeededRandom(Math.floor(this.#scheduler.random.next() * 0x1_0000_0000));
    // A lone broker's control records live in its WAL store.
    const { leaseWrites } = this.settings;
    this.#walView = this.#view(this.settings.walStore, gate, this.settings.walWrites, this.settings.cluster === null ? leaseWrites : null, this.settings.sequentialWrites);
    this.#controlView = this.settings.cluster === null ? null : this.#view(this.settings.cluster.controlStore, gate, null, leaseWrites, null);
    if (this.#controlView !== null) this.#controlView.ambiguousConditionalRate = this.settings.cluster!.ambiguousConditionalRate;
    this.#applyStoreFaults();
    this.#gate = gate;
    this.#clock = clock;
    this.broker = null;
    this.engine = null;
    const options = this.#brokerOptions(gate, clock, random);
    Broker.start(options).then(
      (broker) => {
        this.broker = broker;
        this.#noteHealth();
      },
      (error: unknown) => {
        this.#log(`${gate.name} failed to start: ${error instanceof Error ? error.message : String(error)}`);
        if (this.#gate !== gate) return;
        this.#kill();
        this.#scheduler.schedule(SUPERVISOR_RESTART_MS, () => {
          if (this.#gate === gate) this.start(); // unless something else started or stopped it since
        });
      },
    );
  }

  /** kill -9 and a power loss: the process is gone, the disk keeps what was synced. */
  crash(): void {
    this.#kill();
    this.disk.crash();
  }

  /** The host's disk is lost with the process (a replaced instance). */
  wipe(): void {
    this.#kill();
    this.disk.wipe();
  }

  /** SIGTERM: the broker flushes and resigns; resolves when it has stopped (or at once if it is not running). */
  async stop(): Promise<void> {
    const broker = this.broker;
    const gate = this.#gate;
    if (broker === null || gate === null || gate.state !== 'running') return this.#kill();
    this.#stopping = gate;
    await broker.stop().catch((error: unknown) => this.#log(`${gate.name} stop failed: ${String(error)}`));
    if (this.#gate !== gate) return; // killed while stopping: whatever killed it restarts it
    const restart = this.#startAfterStop;
    this.#kill();
    if (restart) this.start();
  }

  pause(): void {
    if (this.#gate?.state === 'running') this.#gate.pause();
    this.#noteHealth();
  }

  resume(): void {
    if (this.#gate?.state === 'paused') this.#gate.resume();
    this.#noteHealth();
  }

  /**
   * The run is over: the process stops where it is (SIGSTOP), health unchanged (what happens now
   * is no longer the run's), so an audit that takes simulated time reads the stores as the final
   * logs were collected, not as tiering moved them on meanwhile.
   */
  freeze(): void {
    if (this.#gate?.state === 'running') this.#gate.pause();
  }

  /** Cut from every other host (clients included), or joined again. */
  setIsolated(isolated: boolean): void {
    this.faults.isolated = isolated;
    if (isolated) this.#network.isolate(this.host);
    else this.#network.rejoin(this.host);
    this.#noteHealth();
  }

  /** A disk with no room left (at what it holds now), or room again. */
  setDiskFull(full: boolean): void {
    this.faults.diskFull = full;
    this.disk.setCapacity(full ? this.disk.usedBytes : Number.POSITIVE_INFINITY);
    this.#noteHealth();
  }

  setSkew(skewMs: number): void {
    this.faults.skewMs = skewMs;
    if (this.#clock !== null) this.#clock.skewMs = skewMs;
  }

  /** The clock-drift fault: every process of this host runs its clock at `rate` (null: each at its own again). */
  setClockRate(rate: number | null): void {
    this.faults.clockRate = rate;
    if (this.#clock === null || this.#gate?.alive !== true) return;
    this.#clock.rate = rate ?? this.#ownClockRate;
    this.settings.clockRates.note(this.#gate.name, this.#clock.rate);
  }

  /**
   * Slow renewals: this host's control-record writes take the extra time `delays` draws (null:
   * none again). Writes sent before a heal still take theirs: the host counts as unhealthy until
   * `tailMs` after it.
   */
  setControlWriteDelays(delays: WriteDelays | null, tailMs = 0): void {
    const healed = this.faults.controlWriteDelays !== null && delays === null;
    this.faults.controlWriteDelays = delays;
    this.#applyStoreFaults();
    if (healed) {
      this.#storeFailuresUntilMs = Math.max(this.#storeFailuresUntilMs, this.#scheduler.nowMs + tailMs);
      this.#scheduler.complete(tailMs, () => this.#noteHealth());
    }
    this.#noteHealth();
  }

  setStoreFaults(faults: Partial<Pick<SimBrokerHost['faults'], 'walUnreachable' | 'controlUnreachable' | 'corruptReadRate'>>): void {
    const healed = (this.faults.walUnreachable && faults.walUnreachable === false) || (this.faults.controlUnreachable && faults.controlUnreachable === false);
    Object.assign(this.faults, faults);
    this.#applyStoreFaults();
    if (healed) {
      // Requests sent while the store was unreachable still fail until UNREACHABLE_FAIL_MS_MAX after
      // the heal (SimStoreView): a scan waiting on one is as cut off as before (sim seed 121406).
      this.#storeFailuresUntilMs = this.#scheduler.nowMs + UNREACHABLE_FAIL_MS_MAX;
      this.#scheduler.complete(UNREACHABLE_FAIL_MS_MAX, () => this.#noteHealth());
    }
    this.#noteHealth();
  }

  #applyStoreFaults(): void {
    if (this.#walView !== null) {
      this.#walView.unreachable = this.faults.walUnreachable;
      this.#walView.corruptReadRate = this.faults.corruptReadRate;
      this.#walView.controlWriteDelays = this.faults.controlWriteDelays; // a lone broker's control records
    }
    if (this.#controlView !== null) {
      this.#controlView.unreachable = this.faults.controlUnreachable;
      this.#controlView.controlWriteDelays = this.faults.controlWriteDelays;
    }
  }

  #kill(): void {
    this.#stopping = null;
    this.#startAfterStop = false;
    if (this.#gate?.alive === true) this.disk.crash({ keepPageCache: true }); // the process is gone: its descriptors and locks with it
    this.#gate?.kill();
    this.#network.kill(this.host);
    this.broker = null;
    this.engine = null;
    this.#noteHealth();
  }

  #view(store: ObjectStore, gate: ProcessGate, writes: WalWrites | null, sends: LeaseWrites | null, sequential: SequentialWrites | null): SimStoreView {
    return new SimStoreView(store, gate, this.#scheduler, new SeededRandom(Math.floor(this.#scheduler.random.next() * 0x1_0000_0000)), writes, sends, sequential);
  }

  /**
   * As `ferry broker` without --tier-store: the tier is the WAL store (this process's view of it,
   * so its faults apply), the tier records are control records beside the cluster's (or, alone,
   * in the WAL store). Without a tier: the log settings as before tiering.
   */
  #tierOptions(random: SeededRandom): Pick<EngineOptions, 'log' | 'tier' | 'retentionCheckIntervalMs' | 'walGcIntervalMs' | 'walGcIdlePassMs'> {
    const flush = { kind: 'none' } as const; // as `ferry broker`: durability comes from the WAL objects
    const tier = this.settings.tier;
    if (tier === null) return { log: { flush } };
    const lifecycle = tier.lifecycle;
    return {
      log: { flush, ...tierLogSettings(tier) },
      tier: {
        store: this.#walView!,
        control: new ControlStore(this.#controlView ?? this.#walView!, '', { random }),
        intervalMs: tier.intervalMs,
        ...(tier.tailMaxBytes === null ? {} : { tailMaxBytes: tier.tailMaxBytes }),
        ...(lifecycle === undefined ? {} : { sweepIntervalMs: lifecycle.sweepIntervalMs, orphanDelayMs: lifecycle.orphanDelayMs }),
      },
      walGcIntervalMs: SIM_WAL_GC_INTERVAL_MS,
      ...(lifecycle === undefined ? {} : { walGcIdlePassMs: lifecycle.walGcIdlePassMs }),
      retentionCheckIntervalMs: tier.retentionCheckIntervalMs,
    };
  }

  #brokerOptions(gate: ProcessGate, clock: SimClock, random: SeededRandom): BrokerOptions {
    const { nodeId, cluster } = this.settings;
    // Every level, as text: the component, then the message; no wall-clock time (the run prefixes simulated time).
    const log = new RecordLogger('trace', (record) => this.#log(`${gate.name}: ${String(record.fields.component ?? '-')} ${record.msg}`));
    return {
      listenHost: this.host,
      listenPort: SIM_BROKER_PORT,
      nodeId,
      autoCreateTopics: false,
      defaultReplicationFactor: this.settings.defaultReplicationFactor,
      minInsyncReplicas: this.settings.minInsyncReplicas,
      clock,
      random,
      network: this.#network.host(this.host, gate),
      log,
      engine: {
        directory: SIM_DATA_DIRECTORY,
        onOpen: (engine) => {
          if (this.#gate === gate) this.engine = engine;
        },
        ...(this.settings.retentionDeletes === null ? {} : { onRetention: this.settings.retentionDeletes.recorderOf(nodeId, this.disk) }),
        disk: this.disk,
        random,
        ...this.#tierOptions(random),
        wal: { store: this.#walView!, writerId: this.host, seed: random.nextInt(0x1_0000_0000), config: walWriterConfig(this.settings.uploadIntervalMs, this.settings.sequentialWrites) },
      },
      ...(cluster === null ? { lone: this.settings.lone } : { cluster: { store: this.#controlView!, leaseMs: cluster.leaseMs, scanIntervalMs: cluster.scanIntervalMs } }),
      ...(this.settings.security === null ? {} : brokerSecurityOptions(this.settings.security, this.host, SIM_BROKER_PORT)),
    };
  }
}

/** The log settings a tiering run gives every broker (the defaults where it sets none): small segments, its local retention and its retention. */
export function tierLogSettings(tier: TierScenario): Pick<Partial<LogConfig>, 'segmentBytes' | 'localRetentionBytes' | 'retentionMs' | 'retentionBytes'> {
  return { segmentBytes: tier.segmentBytes, ...(tier.localRetentionBytes === null ? {} : { localRetentionBytes: tier.localRetentionBytes }), ...retentionOf(tier.lifecycle) };
}

/** The WAL writer's settings in a run: its upload interval, and with sequential writes a stream threshold that objects of a run reach. */
export function walWriterConfig(uploadIntervalMs: number, sequential: SequentialWrites | null): { uploadIntervalMs: number; multipartPartBytes?: number } {
  return sequential === null ? { uploadIntervalMs } : { uploadIntervalMs, multipartPartBytes: sequential.walStreamBytes };
}

/** A tier lifecycle's retention of the whole log, as log settings (the defaults where it sets none). */
function retentionOf(lifecycle: TierLifecycle | undefined): { retentionMs?: number; retentionBytes?: number } {
  if (lifecycle === undefined) return {};
  return { ...(lifecycle.retentionMs === null ? {} : { retentionMs: lifecycle.retentionMs }), ...(lifecycle.retentionBytes === null ? {} : { retentionBytes: lifecycle.retentionBytes }) };
}
