import { ControlStore } from '../control/control-store.ts';
import { Engine, type EngineOptions, type OpenedEngine } from '../engine/index.ts';
import { RecordLogger } from '../observability/record-logger.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { SeededRandom } from '../util/random.ts';
import { SIM_DATA_DIRECTORY, tierLogSettings, walWriterConfig } from './broker-process.ts';
import type { SequentialWrites } from './sequential-writes.ts';
import type { ClockRates } from './clock-rates.ts';
import type { SimDisk } from './disk.ts';
import type { EmbeddedScenario } from './embedded-scenario.ts';
import type { RetentionDeletes } from './retention-deletes.ts';
import { ProcessGate, SimClock, type SimScheduler } from './scheduler.ts';
import { SimStoreView, UNREACHABLE_FAIL_MS_MAX } from './store.ts';
import type { WalWrites } from './wal-audit.ts';

/** The node id the history gives the embedded engine (the checker's ops name a node). */
export const EMBEDDED_NODE_ID = 1;
/** An open that failed is tried again after this, as the application's supervisor would restart it. */
const SUPERVISOR_RESTART_MS = 1_000;

export interface SimEmbeddedSettings {
  readonly walStore: ObjectStore;
  /** Where this host's write requests to the WAL store are noted (the WAL audit). */
  readonly walWrites: WalWrites;
  /** Each process's own clock rate, and the rates it ran with. */
  readonly clockRates: ClockRates;
  /** Where each retention pass that deleted segments is noted (retention-kept). */
  readonly retentionDeletes: RetentionDeletes;
  readonly uploadIntervalMs: number;
  readonly embedded: EmbeddedScenario;
  /** The WAL store view offers sequential writes, and WAL objects past its threshold stream (sequential-writes.ts); null: neither. */
  readonly sequentialWrites: SequentialWrites | null;
}

/**
 * The host of an embedded engine (the library use, no broker): a disk that outlives its processes,
 * and the process that runs on it now, an application that opened `Engine` with a WAL store (the
 * shared WAL store through this process's view, the tier and its records in it too, as a lone
 * broker keeps them) and no cluster. The log settings name no flush policy: the WAL's default,
 * 'none' (withWalFlushDefault), is what is under test. Each start is a new process with a new
 * gate: killing it drops everything the old one had pending, the application's calls included.
 */
export class SimEmbeddedHost {
  readonly settings = { nodeId: EMBEDDED_NODE_ID };
  readonly host = 'app-1';
  readonly disk: SimDisk;
  readonly #config: SimEmbeddedSettings;
  readonly #scheduler: SimScheduler;
  readonly #log: (line: string) => void;
  #incarnation = 0;
  #gate: ProcessGate | null = null;
  #clock: SimClock | null = null;
  #walView: SimStoreView | null = null;
  /** A closing process (a clean stop): a start waits for it to exit. */
  #stopping: ProcessGate | null = null;
  #startAfterStop = false;
  /** The current process's engine from the moment it exists (ReplicaEndRecorder reads its log ends); null once the process is gone. */
  engine: OpenedEngine | null = null;
  /** The current process's engine once its open finished: what the application calls. */
  serving: Engine | null = null;
  /** Faults of this host that outlive a restart (the host's, not the process's). */
  readonly faults = { skewMs: 0, walUnreachable: false, corruptReadRate: 0, diskFull: false, clockRate: null as number | null };
  #ownClockRate = 1;
  /** Told each time the host's health changes (see `healthy`). */
  onHealth: (healthy: boolean) => void = () => {};
  /** Told when a process ends (killed, or stopped): its calls in flight will never be answered. */
  onExit: () => void = () => {};
  #healthy = false;
  /** Until then, requests sent while the store was unreachable may still fail. */
  #storeFailuresUntilMs = 0;

  constructor(config: SimEmbeddedSettings, disk: SimDisk, scheduler: SimScheduler, log: (line: string) => void) {
    this.#config = config;
    this.disk = disk;
    this.#scheduler = scheduler;
    this.#log = log;
  }

  /** Serves (its open finished), is not paused, reaches the WAL store (no request sent while it could not is still failing), and its disk has room. */
  get healthy(): boolean {
    const storeFailing = this.faults.walUnreachable || this.#scheduler.nowMs < this.#storeFailuresUntilMs;
    return this.state === 'running' && !storeFailing && !this.faults.diskFull;
  }

  get state(): 'down' | 'starting' | 'running' | 'paused' {
    if (this.#gate === null || !this.#gate.alive) return 'down';
    if (this.#gate.state === 'paused') return 'paused';
    return this.serving === null ? 'starting' : 'running';
  }

  /** A clean stop still closing. */
  get stopping(): boolean {
    return this.#stopping !== null && this.#stopping === this.#gate;
  }

  /** Starts a new process that opens the engine; an open that fails is logged and tried again after SUPERVISOR_RESTART_MS. */
  start(): void {
    if (this.stopping && this.#gate!.alive) {
      this.#startAfterStop = true;
      return;
    }
    if (this.#gate?.alive === true) return;
    const gate = new ProcessGate(`${this.host}#${++this.#incarnation}`);
    const clock = new SimClock(this.#scheduler, gate);
    clock.skewMs = this.faults.skewMs;
    this.#ownClockRate = this.#config.clockRates.draw();
    clock.rate = this.faults.clockRate ?? this.#ownClockRate;
    this.#config.clockRates.note(gate.name, clock.rate);
    const random = new SeededRandom(Math.floor(this.#scheduler.random.next() * 0x1_0000_0000));
    const viewRandom = new SeededRandom(Math.floor(this.#scheduler.random.next() * 0x1_0000_0000));
    this.#walView = new SimStoreView(this.#config.walStore, gate, this.#scheduler, viewRandom, this.#config.walWrites, null, this.#config.sequentialWrites);
    this.#applyStoreFaults();
    this.#gate = gate;
    this.#clock = clock;
    this.engine = null;
    this.serving = null;
    Engine.open(this.#engineOptions(gate, clock, random)).then(
      (engine) => {
        if (this.#gate !== gate || !gate.alive) return;
        this.serving = engine;
        this.#noteHealth();
      },
      (error: unknown) => {
        this.#log(`${gate.name} failed to open: ${error instanceof Error ? error.message : String(error)}`);
        if (this.#gate !== gate) return;
        this.#kill();
        this.#scheduler.schedule(SUPERVISOR_RESTART_MS, () => {
          if (this.#gate === gate) this.start(); // unless something else started or stopped it since
        });
      },
    );
  }

  /** kill -9 and a power loss: the process is gone, the disk keeps what was synced (its last write perhaps torn). */
  crash(): void {
    this.#kill();
    this.disk.crash();
  }

  /** A clean stop: the application closes the engine (its WAL's last flush, the shipped checkpoint), then exits. */
  async stop(): Promise<void> {
    const engine = this.serving;
    const gate = this.#gate;
    if (engine === null || gate === null || gate.state !== 'running') return this.#kill();
    this.#stopping = gate;
    await engine.close().catch((error: unknown) => this.#log(`${gate.name} close failed: ${String(error)}`));
    if (this.#gate !== gate) return; // killed while closing: whatever killed it restarts it
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

  /** The run is over: the process stops where it is, health unchanged, so the audit reads the stores as the final logs were collected. */
  freeze(): void {
    if (this.#gate?.state === 'running') this.#gate.pause();
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

  /** Every process of this host runs its clock at `rate` (null: each at its own again). */
  setClockRate(rate: number | null): void {
    this.faults.clockRate = rate;
    if (this.#clock === null || this.#gate?.alive !== true) return;
    this.#clock.rate = rate ?? this.#ownClockRate;
    this.#config.clockRates.note(this.#gate.name, this.#clock.rate);
  }

  setStoreFaults(faults: Partial<Pick<SimEmbeddedHost['faults'], 'walUnreachable' | 'corruptReadRate'>>): void {
    const healed = this.faults.walUnreachable && faults.walUnreachable === false;
    Object.assign(this.faults, faults);
    this.#applyStoreFaults();
    if (healed) {
      // Requests sent while the store was unreachable still fail until UNREACHABLE_FAIL_MS_MAX after the heal (SimStoreView).
      this.#storeFailuresUntilMs = this.#scheduler.nowMs + UNREACHABLE_FAIL_MS_MAX;
      this.#scheduler.complete(UNREACHABLE_FAIL_MS_MAX, () => this.#noteHealth());
    }
    this.#noteHealth();
  }

  #applyStoreFaults(): void {
    if (this.#walView === null) return;
    this.#walView.unreachable = this.faults.walUnreachable;
    this.#walView.corruptReadRate = this.faults.corruptReadRate;
  }

  #noteHealth(): void {
    const healthy = this.healthy;
    if (healthy === this.#healthy) return;
    this.#healthy = healthy;
    this.onHealth(healthy);
  }

  #kill(): void {
    this.#stopping = null;
    this.#startAfterStop = false;
    const wasAlive = this.#gate?.alive === true;
    if (wasAlive) this.disk.crash({ keepPageCache: true }); // the process is gone: its descriptors and locks with it
    this.#gate?.kill();
    this.engine = null;
    this.serving = null;
    this.#noteHealth();
    if (wasAlive) this.onExit();
  }

  /** As an application embedding Ferry with a WAL and a tier in one bucket: small segments, the tier's timings of the run, and no flush policy (the WAL's default). */
  #engineOptions(gate: ProcessGate, clock: SimClock, random: SeededRandom): EngineOptions {
    const { embedded, retentionDeletes, uploadIntervalMs } = this.#config;
    const { tier } = embedded;
    const walView = this.#walView!;
    return {
      directory: SIM_DATA_DIRECTORY,
      onOpen: (engine) => {
        if (this.#gate === gate) this.engine = engine;
      },
      onRetention: retentionDeletes.recorderOf(EMBEDDED_NODE_ID, this.disk),
      disk: this.disk,
      clock,
      random,
      logger: new RecordLogger('trace', (record) => this.#log(`${gate.name}: ${String(record.fields.component ?? '-')} ${record.msg}`)),
      log: tierLogSettings(tier),
      tier: {
        store: walView,
        control: new ControlStore(walView, '', { random }),
        intervalMs: tier.intervalMs,
        ...(tier.tailMaxBytes === null ? {} : { tailMaxBytes: tier.tailMaxBytes }),
        ...(tier.lifecycle === undefined ? {} : { sweepIntervalMs: tier.lifecycle.sweepIntervalMs, orphanDelayMs: tier.lifecycle.orphanDelayMs }),
      },
      walGcIntervalMs: embedded.walGcIntervalMs,
      ...(tier.lifecycle === undefined ? {} : { walGcIdlePassMs: tier.lifecycle.walGcIdlePassMs }),
      retentionCheckIntervalMs: tier.retentionCheckIntervalMs,
      wal: { store: walView, writerId: this.host, seed: random.nextInt(0x1_0000_0000), config: walWriterConfig(uploadIntervalMs, this.#config.sequentialWrites) },
    };
  }
}
