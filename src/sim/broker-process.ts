import { RecordLogger } from '../observability/record-logger.ts';
import { Broker, type BrokerOptions } from '../broker/broker.ts';
import { ControlStore } from '../control/control-store.ts';
import type { EngineOptions } from '../engine/index.ts';
import type { ObjectStore } from '../store/object-store.ts';
import type { SeededRandom } from '../util/random.ts';
import type { SimDisk } from './disk.ts';
import type { SimNetwork } from './network.ts';
import type { TierLifecycle, TierScenario } from './scenario.ts';
import type { LogConfig } from '../log/config.ts';
import { brokerSecurityOptions, type SimSecurity } from './security-setup.ts';
import type { ProcessGate, SimClock, SimScheduler } from './scheduler.ts';
import { SimProcessHost } from './sim-process.ts';
import { SimStoreView, type WriteDelays } from './store.ts';
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
  readonly uploadWhenIdle: boolean;
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
 * One broker host of the simulation (sim-process.ts), whose processes run a real Broker, started
 * on simulated clock, network, disk and store views.
 */
export class SimBrokerHost extends SimProcessHost {
  readonly settings: SimBrokerSettings;
  readonly #network: SimNetwork;
  #walView: SimStoreView | null = null;
  #controlView: SimStoreView | null = null;
  /** The running broker, once its start finished. */
  broker: Broker | null = null;
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
  /** Told each time the host becomes stranded or stops being so (see `stranded`). */
  onStranded: (stranded: boolean) => void = () => {};
  #stranded = false;

  constructor(settings: SimBrokerSettings, disk: SimDisk, scheduler: SimScheduler, network: SimNetwork, log: (line: string) => void) {
    super({ host: `broker-${settings.nodeId}`, disk, scheduler, clockRates: settings.clockRates, log, verbs: { start: 'start', stop: 'stop' } });
    this.settings = settings;
    this.#network = network;
  }

  /**
   * Serves, is not paused, reaches both stores (no request sent while it could not is still
   * failing) at their usual speed (its control-record writes are not held up: it keeps its lease)
   * and every other host, and its disk has room.
   */
  get healthy(): boolean {
    const { walUnreachable, controlUnreachable, isolated, diskFull, controlWriteDelays } = this.faults;
    const storeFailing = walUnreachable || controlUnreachable || controlWriteDelays !== null || this.storeRequestsFailing;
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

  protected override noteHealth(): void {
    super.noteHealth();
    const stranded = this.stranded;
    if (stranded !== this.#stranded) {
      this.#stranded = stranded;
      this.onStranded(stranded);
    }
  }

  protected get started(): boolean {
    return this.broker !== null;
  }

  /** A lone broker's control records live in its WAL store. */
  protected openStoreViews(gate: ProcessGate): void {
    const { leaseWrites } = this.settings;
    this.#walView = this.#view(this.settings.walStore, gate, this.settings.walWrites, this.settings.cluster === null ? leaseWrites : null, this.settings.sequentialWrites);
    this.#controlView = this.settings.cluster === null ? null : this.#view(this.settings.cluster.controlStore, gate, null, leaseWrites, null);
    if (this.#controlView !== null) this.#controlView.ambiguousConditionalRate = this.settings.cluster!.ambiguousConditionalRate;
    this.#applyStoreFaults();
  }

  protected launch(gate: ProcessGate, clock: SimClock, random: SeededRandom): void {
    this.broker = null;
    Broker.start(this.#brokerOptions(gate, clock, random)).then(
      (broker) => {
        this.broker = broker;
        this.noteHealth();
      },
      (error: unknown) => this.restartAfterFailure(gate, error),
    );
  }

  /** SIGTERM: the broker flushes and resigns. */
  protected stopProgram(): Promise<void> {
    return this.broker!.stop();
  }

  protected forgetProgram(): void {
    this.#network.kill(this.host);
    this.broker = null;
  }

  /** The host's disk is lost with the process (a replaced instance). */
  wipe(): void {
    this.kill();
    this.disk.wipe();
  }

  /** Cut from every other host (clients included), or joined again. */
  setIsolated(isolated: boolean): void {
    this.faults.isolated = isolated;
    if (isolated) this.#network.isolate(this.host);
    else this.#network.rejoin(this.host);
    this.noteHealth();
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
      this.storeFailuresUntilMs = Math.max(this.storeFailuresUntilMs, this.scheduler.nowMs + tailMs);
      this.scheduler.complete(tailMs, () => this.noteHealth());
    }
    this.noteHealth();
  }

  setStoreFaults(faults: Partial<Pick<SimBrokerHost['faults'], 'walUnreachable' | 'controlUnreachable' | 'corruptReadRate'>>): void {
    const healed = (this.faults.walUnreachable && faults.walUnreachable === false) || (this.faults.controlUnreachable && faults.controlUnreachable === false);
    Object.assign(this.faults, faults);
    this.#applyStoreFaults();
    // A scan waiting on a request sent before the heal is as cut off as before (sim seed 121406).
    if (healed) this.noteStoreHealed();
    this.noteHealth();
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

  #view(store: ObjectStore, gate: ProcessGate, writes: WalWrites | null, sends: LeaseWrites | null, sequential: SequentialWrites | null): SimStoreView {
    return new SimStoreView(store, gate, this.scheduler, this.drawRandom(), writes, sends, sequential);
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
    const log = new RecordLogger('trace', (record) => this.log(`${gate.name}: ${String(record.fields.component ?? '-')} ${record.msg}`));
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
          if (this.isCurrent(gate)) this.engine = engine;
        },
        ...(this.settings.retentionDeletes === null ? {} : { onRetention: this.settings.retentionDeletes.recorderOf(nodeId, this.disk) }),
        disk: this.disk,
        random,
        ...this.#tierOptions(random),
        wal: {
          store: this.#walView!,
          writerId: this.host,
          seed: random.nextInt(0x1_0000_0000),
          config: walWriterConfig(this.settings.uploadIntervalMs, this.settings.uploadWhenIdle, this.settings.sequentialWrites),
        },
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

/** The WAL writer's settings in a run: its upload schedule, and with sequential writes a stream threshold that objects of a run reach. */
export function walWriterConfig(
  uploadIntervalMs: number,
  uploadWhenIdle: boolean,
  sequential: SequentialWrites | null,
): { uploadIntervalMs: number; uploadWhenIdle: boolean; multipartPartBytes?: number } {
  return sequential === null ? { uploadIntervalMs, uploadWhenIdle } : { uploadIntervalMs, uploadWhenIdle, multipartPartBytes: sequential.walStreamBytes };
}

/** A tier lifecycle's retention of the whole log, as log settings (the defaults where it sets none). */
function retentionOf(lifecycle: TierLifecycle | undefined): { retentionMs?: number; retentionBytes?: number } {
  if (lifecycle === undefined) return {};
  return { ...(lifecycle.retentionMs === null ? {} : { retentionMs: lifecycle.retentionMs }), ...(lifecycle.retentionBytes === null ? {} : { retentionBytes: lifecycle.retentionBytes }) };
}
