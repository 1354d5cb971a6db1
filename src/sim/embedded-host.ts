import { ControlStore } from '../control/control-store.ts';
import { Engine, type EngineOptions } from '../engine/index.ts';
import { RecordLogger } from '../observability/record-logger.ts';
import type { ObjectStore } from '../store/object-store.ts';
import type { SeededRandom } from '../util/random.ts';
import { SIM_DATA_DIRECTORY, tierLogSettings, walWriterConfig } from './broker-process.ts';
import type { SequentialWrites } from './sequential-writes.ts';
import type { ClockRates } from './clock-rates.ts';
import type { SimDisk } from './disk.ts';
import type { EmbeddedScenario } from './embedded-scenario.ts';
import type { RetentionDeletes } from './retention-deletes.ts';
import type { ProcessGate, SimClock, SimScheduler } from './scheduler.ts';
import { SimProcessHost } from './sim-process.ts';
import { SimStoreView } from './store.ts';
import type { WalWrites } from './wal-audit.ts';

/** The node id the history gives the embedded engine (the checker's ops name a node). */
export const EMBEDDED_NODE_ID = 1;
/** The host the application runs on. */
const EMBEDDED_HOST = 'app-1';

export interface SimEmbeddedSettings {
  readonly walStore: ObjectStore;
  /** Where this host's write requests to the WAL store are noted (the WAL audit). */
  readonly walWrites: WalWrites;
  /** Each process's own clock rate, and the rates it ran with. */
  readonly clockRates: ClockRates;
  /** Where each retention pass that deleted segments is noted (retention-kept). */
  readonly retentionDeletes: RetentionDeletes;
  readonly uploadIntervalMs: number;
  readonly uploadWhenIdle: boolean;
  readonly embedded: EmbeddedScenario;
  /** The WAL store view offers sequential writes, and WAL objects past its threshold stream (sequential-writes.ts); null: neither. */
  readonly sequentialWrites: SequentialWrites | null;
}

/**
 * The host of an embedded engine (the library use, no broker; sim-process.ts): its processes run
 * an application that opened `Engine` with a WAL store (the shared WAL store through this
 * process's view, the tier and its records in it too, as a lone broker keeps them) and no cluster.
 * The log settings name no flush policy: the WAL's default, 'none' (withWalFlushDefault), is what
 * is under test. Killing a process drops the application's calls in flight too (onExit).
 */
export class SimEmbeddedHost extends SimProcessHost {
  readonly settings = { nodeId: EMBEDDED_NODE_ID };
  readonly #config: SimEmbeddedSettings;
  #walView: SimStoreView | null = null;
  /** The current process's engine once its open finished: what the application calls. */
  serving: Engine | null = null;
  /** Faults of this host that outlive a restart (the host's, not the process's). */
  readonly faults = { skewMs: 0, walUnreachable: false, corruptReadRate: 0, diskFull: false, clockRate: null as number | null };

  constructor(config: SimEmbeddedSettings, disk: SimDisk, scheduler: SimScheduler, log: (line: string) => void) {
    super({ host: EMBEDDED_HOST, disk, scheduler, clockRates: config.clockRates, log, verbs: { start: 'open', stop: 'close' } });
    this.#config = config;
  }

  /** Serves (its open finished), is not paused, reaches the WAL store (no request sent while it could not is still failing), and its disk has room. */
  get healthy(): boolean {
    const storeFailing = this.faults.walUnreachable || this.storeRequestsFailing;
    return this.state === 'running' && !storeFailing && !this.faults.diskFull;
  }

  protected get started(): boolean {
    return this.serving !== null;
  }

  protected openStoreViews(gate: ProcessGate): void {
    this.#walView = new SimStoreView(this.#config.walStore, gate, this.scheduler, this.drawRandom(), this.#config.walWrites, null, this.#config.sequentialWrites);
    this.#applyStoreFaults();
  }

  /** The application opens the engine; an open that fails is tried again as its supervisor would restart it. */
  protected launch(gate: ProcessGate, clock: SimClock, random: SeededRandom): void {
    this.serving = null;
    Engine.open(this.#engineOptions(gate, clock, random)).then(
      (engine) => {
        if (!this.isCurrent(gate) || !gate.alive) return;
        this.serving = engine;
        this.noteHealth();
      },
      (error: unknown) => this.restartAfterFailure(gate, error),
    );
  }

  /** The application closes the engine (its WAL's last flush, the shipped checkpoint), then exits. */
  protected stopProgram(): Promise<void> {
    return this.serving!.close();
  }

  protected forgetProgram(): void {
    this.serving = null;
  }

  setStoreFaults(faults: Partial<Pick<SimEmbeddedHost['faults'], 'walUnreachable' | 'corruptReadRate'>>): void {
    const healed = this.faults.walUnreachable && faults.walUnreachable === false;
    Object.assign(this.faults, faults);
    this.#applyStoreFaults();
    if (healed) this.noteStoreHealed();
    this.noteHealth();
  }

  #applyStoreFaults(): void {
    if (this.#walView === null) return;
    this.#walView.unreachable = this.faults.walUnreachable;
    this.#walView.corruptReadRate = this.faults.corruptReadRate;
  }

  /** As an application embedding Ferry with a WAL and a tier in one bucket: small segments, the tier's timings of the run, and no flush policy (the WAL's default). */
  #engineOptions(gate: ProcessGate, clock: SimClock, random: SeededRandom): EngineOptions {
    const { embedded, retentionDeletes, uploadIntervalMs, uploadWhenIdle } = this.#config;
    const { tier } = embedded;
    const walView = this.#walView!;
    return {
      directory: SIM_DATA_DIRECTORY,
      onOpen: (engine) => {
        if (this.isCurrent(gate)) this.engine = engine;
      },
      onRetention: retentionDeletes.recorderOf(EMBEDDED_NODE_ID, this.disk),
      disk: this.disk,
      clock,
      random,
      logger: new RecordLogger('trace', (record) => this.log(`${gate.name}: ${String(record.fields.component ?? '-')} ${record.msg}`)),
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
      wal: { store: walView, writerId: this.host, seed: random.nextInt(0x1_0000_0000), config: walWriterConfig(uploadIntervalMs, uploadWhenIdle, this.#config.sequentialWrites) },
    };
  }
}
