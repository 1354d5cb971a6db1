import type { OpenedEngine } from '../engine/index.ts';
import { SeededRandom } from '../util/random.ts';
import type { ClockRates } from './clock-rates.ts';
import type { SimDisk } from './disk.ts';
import { ProcessGate, SimClock, type SimScheduler } from './scheduler.ts';
import { UNREACHABLE_FAIL_MS_MAX } from './store.ts';

/** A process whose start failed is started again after this, as a supervisor (systemd, Kubernetes, the application's) would. */
const SUPERVISOR_RESTART_MS = 1_000;

/** The faults of a host that every process of it runs under, whatever it runs. */
export interface ProcessFaults {
  skewMs: number;
  diskFull: boolean;
  /** The clock-drift fault's rate (null: each process runs at its own). */
  clockRate: number | null;
}

/** How a host's log names its program's start and stop ("failed to open", "close failed"). */
export interface ProgramVerbs {
  readonly start: string;
  readonly stop: string;
}

export interface SimProcessHostParts {
  readonly host: string;
  readonly disk: SimDisk;
  readonly scheduler: SimScheduler;
  /** Each process's own clock rate, and the rates it ran with. */
  readonly clockRates: ClockRates;
  readonly log: (line: string) => void;
  readonly verbs: ProgramVerbs;
}

/**
 * A simulated host: a disk that outlives its processes, and the process that runs on it now. Each
 * start is a new process with a new gate and clock: killing it drops everything the old one had
 * pending. What the process runs (a broker, an application with an embedded engine) is the
 * subclass's: its store views, its start, its stop and its health.
 */
export abstract class SimProcessHost {
  readonly host: string;
  readonly disk: SimDisk;
  protected readonly scheduler: SimScheduler;
  protected readonly log: (line: string) => void;
  readonly #clockRates: ClockRates;
  readonly #verbs: ProgramVerbs;
  abstract readonly faults: ProcessFaults;
  #incarnation = 0;
  #gate: ProcessGate | null = null;
  #clock: SimClock | null = null;
  /** A process stopping cleanly (SIGTERM, a close): a start waits for it to exit. */
  #stopping: ProcessGate | null = null;
  #startAfterStop = false;
  /** The current process's own clock rate (drawn at its start). */
  #ownClockRate = 1;
  /** The current process's engine from the moment it exists (a broker's adopts and follows partitions while the broker still starts); null once the process is gone. */
  engine: OpenedEngine | null = null;
  /** Told each time the host's health changes (see `healthy`). */
  onHealth: (healthy: boolean) => void = () => {};
  /** Told when a process ends (killed, or stopped): its calls in flight will never be answered. */
  onExit: () => void = () => {};
  #healthy = false;
  /** Until then, requests sent while a store was unreachable may still fail (storeRequestsFailFor). */
  protected storeFailuresUntilMs = 0;

  constructor(parts: SimProcessHostParts) {
    this.host = parts.host;
    this.disk = parts.disk;
    this.scheduler = parts.scheduler;
    this.log = parts.log;
    this.#clockRates = parts.clockRates;
    this.#verbs = parts.verbs;
  }

  abstract get healthy(): boolean;

  /** The current process's program finished starting (it serves). */
  protected abstract get started(): boolean;

  /** The new process's views of the stores, the host's store faults applied to them. */
  protected abstract openStoreViews(gate: ProcessGate): void;

  /** Starts the program on the new process; a start that fails calls restartAfterFailure. */
  protected abstract launch(gate: ProcessGate, clock: SimClock, random: SeededRandom): void;

  /** The program's clean stop (only called once it started). */
  protected abstract stopProgram(): Promise<void>;

  /** Forgets what the dead process ran (its program, its network). */
  protected abstract forgetProgram(): void;

  get state(): 'down' | 'starting' | 'running' | 'paused' {
    if (this.#gate === null || !this.#gate.alive) return 'down';
    if (this.#gate.state === 'paused') return 'paused';
    return this.started ? 'running' : 'starting';
  }

  /** A clean stop still under way. */
  get stopping(): boolean {
    return this.#stopping !== null && this.#stopping === this.#gate;
  }

  /** Starts a new process (while a clean stop is under way: once it exited); a start that fails is logged and tried again after SUPERVISOR_RESTART_MS. */
  start(): void {
    if (this.stopping && this.#gate!.alive) {
      this.#startAfterStop = true;
      return;
    }
    if (this.#gate?.alive === true) return;
    const gate = new ProcessGate(`${this.host}#${++this.#incarnation}`, this.scheduler);
    const clock = this.#clockOf(gate);
    const random = this.drawRandom();
    this.openStoreViews(gate);
    this.#gate = gate;
    this.#clock = clock;
    this.engine = null;
    this.launch(gate, clock, random);
  }

  /** kill -9 and a power loss: the process is gone, the disk keeps what was synced (its last write perhaps torn). */
  crash(): void {
    this.kill();
    this.disk.crash();
  }

  /** A clean stop; resolves when the process has exited (at once if it is not running), and starts it again if asked meanwhile. */
  async stop(): Promise<void> {
    const gate = this.#gate;
    if (!this.started || gate === null || gate.state !== 'running') return this.kill();
    this.#stopping = gate;
    await this.stopProgram().catch((error: unknown) => this.log(`${gate.name} ${this.#verbs.stop} failed: ${String(error)}`));
    if (this.#gate !== gate) return; // killed while stopping: whatever killed it restarts it
    const restart = this.#startAfterStop;
    this.kill();
    if (restart) this.start();
  }

  pause(): void {
    if (this.#gate?.state === 'running') this.#gate.pause();
    this.noteHealth();
  }

  resume(): void {
    if (this.#gate?.state === 'paused') this.#gate.resume();
    this.noteHealth();
  }

  /**
   * The run is over: the process stops where it is (SIGSTOP), health unchanged (what happens now
   * is no longer the run's), so an audit that takes simulated time reads the stores as the final
   * logs were collected, not as tiering moved them on meanwhile.
   */
  freeze(): void {
    if (this.#gate?.state === 'running') this.#gate.pause();
  }

  /** A disk with no room left (at what it holds now), or room again. */
  setDiskFull(full: boolean): void {
    this.faults.diskFull = full;
    this.disk.setCapacity(full ? this.disk.usedBytes : Number.POSITIVE_INFINITY);
    this.noteHealth();
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
    this.#clockRates.note(this.#gate.name, this.#clock.rate);
  }

  /** The current process is `gate`'s (no later start or kill replaced it). */
  protected isCurrent(gate: ProcessGate): boolean {
    return this.#gate === gate;
  }

  /** A seeded stream of its own, drawn from the run's. */
  protected drawRandom(): SeededRandom {
    return new SeededRandom(Math.floor(this.scheduler.random.next() * 0x1_0000_0000));
  }

  /** Requests sent while a store was unreachable still fail until UNREACHABLE_FAIL_MS_MAX after the heal (SimStoreView). */
  protected noteStoreHealed(): void {
    this.storeFailuresUntilMs = this.scheduler.nowMs + UNREACHABLE_FAIL_MS_MAX;
    this.scheduler.complete(UNREACHABLE_FAIL_MS_MAX, () => this.noteHealth());
  }

  /** Some request sent while a store could not be reached may still fail. */
  protected get storeRequestsFailing(): boolean {
    return this.scheduler.nowMs < this.storeFailuresUntilMs;
  }

  /** The program of `gate` failed to start: logged, the process killed, and started again later as a supervisor would. */
  protected restartAfterFailure(gate: ProcessGate, error: unknown): void {
    this.log(`${gate.name} failed to ${this.#verbs.start}: ${error instanceof Error ? error.message : String(error)}`);
    if (this.#gate !== gate) return;
    this.kill();
    this.scheduler.schedule(SUPERVISOR_RESTART_MS, () => {
      if (this.#gate === gate) this.start(); // unless something else started or stopped it since
    });
  }

  protected noteHealth(): void {
    const healthy = this.healthy;
    if (healthy === this.#healthy) return;
    this.#healthy = healthy;
    this.onHealth(healthy);
  }

  protected kill(): void {
    this.#stopping = null;
    this.#startAfterStop = false;
    const wasAlive = this.#gate?.alive === true;
    if (wasAlive) this.disk.crash({ keepPageCache: true }); // the process is gone: its descriptors and locks with it
    this.#gate?.kill();
    this.forgetProgram();
    this.engine = null;
    this.noteHealth();
    if (wasAlive) this.onExit();
  }

  /** The new process's clock: the host's skew, and its clock-drift rate or the process's own. */
  #clockOf(gate: ProcessGate): SimClock {
    const clock = new SimClock(this.scheduler, gate);
    clock.skewMs = this.faults.skewMs;
    this.#ownClockRate = this.#clockRates.draw();
    clock.rate = this.faults.clockRate ?? this.#ownClockRate;
    this.#clockRates.note(gate.name, clock.rate);
    return clock;
  }
}
